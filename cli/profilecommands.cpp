// SPDX-License-Identifier: GPL-3.0-or-later
#include "profilecommands.h"

#include "cliutil.h"
#include "config/metricpattern.h"
#include "config/profilekind.h"
#include "config/profilestore.h"
#include "terminalsshinteraction.h"
#include "transport/factory/connectioncheck.h"
#include "util/bundledbinary.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QTimer>

#include <memory>

namespace rankdeck::cli {

namespace {

bool oneName(QCommandLineParser &parser, const QString &cmd, int *code)
{
    if (parser.positionalArguments().size() != 1) {
        *code = CliUtil::usageError(parser.positionalArguments().isEmpty()
                                        ? CliUtil::tr("missing profile NAME")
                                        : CliUtil::tr("expected one profile NAME"),
                                    cmd);
        return false;
    }
    return true;
}

int printErrors(const QList<ProfileError> &errors)
{
    for (const ProfileError &e : errors)
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << e.toString() << '\n';
    CliUtil::err().flush();
    return ExitFailed;
}

} // namespace

int ProfileCommands::run(const QStringList &args)
{
    // args: ["rankdeck-cli profiles", SUB, ...]
    const QString sub = args.value(1);
    const QString base = args.value(0);
    QStringList rest = args.mid(2);
    rest.prepend(base + QLatin1Char(' ') + sub);
    if (sub == QLatin1String("list"))
        return list(rest);
    if (sub == QLatin1String("show"))
        return show(rest);
    if (sub == QLatin1String("check"))
        return check(rest);
    if (sub == QLatin1String("add"))
        return add(rest);
    if (sub == QLatin1String("remove"))
        return remove(rest);
    if (sub == QLatin1String("--help") || sub == QLatin1String("-h") || sub.isEmpty()) {
        QTextStream &out = sub.isEmpty() ? CliUtil::err() : CliUtil::out();
        out << CliUtil::tr("Usage: %1 list|show|check|add|remove ...\n\n"
                           "Cluster profiles, stored in %2 (one TOML file each).\n\n"
                           "  list              the profiles (\"local\" is built in)\n"
                           "  show NAME         the profile as stored\n"
                           "  check NAME        read it, report problems as file:line: field, and "
                           "reach its nodes\n"
                           "  add NAME ...      create a profile (see add --help)\n"
                           "  remove NAME       delete a profile's file\n")
                   .arg(base, ProfileStore::defaultDirectory());
        out.flush();
        return sub.isEmpty() ? ExitUsage : ExitOk;
    }
    return CliUtil::usageError(CliUtil::tr("unknown profiles command \"%1\"").arg(sub), base);
}

int ProfileCommands::list(const QStringList &args)
{
    QCommandLineParser parser;
    int code = 0;
    if (!CliUtil::parse(parser, args, CliUtil::tr("List the cluster profiles."), &code))
        return code;
    ProfileStore store;
    QTextStream &out = CliUtil::out();
    int status = ExitOk;
    for (const QString &name : store.names()) {
        Profile p;
        QList<ProfileError> errors;
        if (store.load(name, &p, &errors)) {
            QStringList hosts;
            for (const ProfileNode &n : p.nodes)
                hosts << n.host;
            out << QStringLiteral("%1  %2  %3 rank(s)  %4\n")
                       .arg(name, -16)
                       .arg(p.transport, -5)
                       .arg(p.worldSize(), 4)
                       .arg(hosts.join(QLatin1Char(',')));
        } else {
            out << QStringLiteral("%1  %2\n")
                       .arg(name, -16)
                       .arg(CliUtil::tr("BROKEN: %1").arg(errors.first().toString()));
            status = ExitFailed;
        }
    }
    out.flush();
    return status;
}

int ProfileCommands::show(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("NAME"), CliUtil::tr("Profile name."));
    int code = 0;
    if (!CliUtil::parse(parser, args, CliUtil::tr("Show a cluster profile."), &code))
        return code;
    if (!oneName(parser, args.value(0), &code))
        return code;
    ProfileStore store;
    Profile p;
    QList<ProfileError> errors;
    if (!store.load(parser.positionalArguments().constFirst(), &p, &errors))
        return printErrors(errors);
    CliUtil::out() << ProfileStore::serialize(p);
    CliUtil::out().flush();
    return ExitOk;
}

int ProfileCommands::check(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption offlineOpt(
        QStringLiteral("offline"), CliUtil::tr("Only check the file, do not reach the nodes."));
    const QCommandLineOption workerOpt(
        QStringLiteral("worker"),
        CliUtil::tr("Worker binary to deploy for the check (default: $RANKDECK_WORKER, else "
                    "the one installed with this program)."),
        QStringLiteral("PATH"));
    const QCommandLineOption acceptOpt(QStringLiteral("accept-new-host-keys"),
                                       CliUtil::tr("Trust and remember unknown SSH host keys."));
    parser.addOptions({offlineOpt, workerOpt, acceptOpt});
    parser.addPositionalArgument(QStringLiteral("NAME"), CliUtil::tr("Profile name."));
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Check a cluster profile: its file, then its nodes."), &code))
        return code;
    if (!oneName(parser, args.value(0), &code))
        return code;
    ProfileStore store;
    Profile p;
    QList<ProfileError> errors;
    if (!store.load(parser.positionalArguments().constFirst(), &p, &errors))
        return printErrors(errors);
    QTextStream &out = CliUtil::out();
    out << CliUtil::tr("%1: file ok (%2 node(s), %3 rank(s))")
               .arg(p.name)
               .arg(p.nodes.size())
               .arg(p.worldSize())
        << '\n';
    out.flush();
    if (parser.isSet(offlineOpt))
        return ExitOk;
    const QString worker =
        parser.isSet(workerOpt)
            ? parser.value(workerOpt)
            : bundledBinary("RANKDECK_WORKER", QStringLiteral("rankdeck-worker"));
    TerminalSshInteraction interaction(parser.isSet(acceptOpt));
    ConnectionCheck check(p, &interaction);
    QEventLoop loop;
    QObject::connect(&check, &ConnectionCheck::progress, &loop,
                     [&](int node, const QString &name, const QString &stage, int percent) {
                         out << CliUtil::tr("node %1 (%2): %3").arg(node).arg(name, stage)
                             << (percent >= 0 ? QStringLiteral(" %1%").arg(percent) : QString())
                             << '\n';
                         out.flush();
                     });
    QObject::connect(&check, &ConnectionCheck::finished, &loop, &QEventLoop::quit);
    QString error;
    if (!check.start(worker, &error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    loop.exec();
    // What each node turned out to be (its system, CPUs, GPUs), then the verdict.
    for (const QString &line : check.nodeLines())
        out << line << '\n';
    out.flush();
    if (!check.succeeded()) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: %1: %2").arg(p.name, check.error()) << '\n';
        return ExitFailed;
    }
    out << QStringLiteral("%1: %2").arg(p.name, check.summary()) << '\n';
    return ExitOk;
}

int ProfileCommands::add(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption nodeOpt(
        QStringLiteral("node"), CliUtil::tr("A node, HOST or HOST:PORT (repeat for more nodes)."),
        QStringLiteral("HOST[:PORT]"));
    const QCommandLineOption userOpt(
        QStringLiteral("user"), CliUtil::tr("SSH user for every node."), QStringLiteral("USER"));
    const QCommandLineOption identityOpt(QStringLiteral("identity"),
                                         CliUtil::tr("SSH identity file for every node."),
                                         QStringLiteral("FILE"));
    const QCommandLineOption nprocOpt(QStringLiteral("nproc-per-node"),
                                      CliUtil::tr("Ranks per node (default 1)."),
                                      QStringLiteral("N"), QStringLiteral("1"));
    const QCommandLineOption gpusOpt(QStringLiteral("gpus-per-node"),
                                     CliUtil::tr("GPUs per node (default 0: CPU)."),
                                     QStringLiteral("N"), QStringLiteral("0"));
    // Each kind's flag that picks it (Slurm's --slurm) is a default too.
    QStringList defaults{CliUtil::tr("ssh with --node")};
    for (const QString &name : ProfileKinds::names())
        if (const QString flag = ProfileKinds::find(name)->selectingOption(); !flag.isEmpty())
            defaults << CliUtil::tr("%1 with --%2").arg(name, flag);
    defaults << CliUtil::tr("else local");
    const QCommandLineOption transportOpt(
        QStringLiteral("transport"),
        CliUtil::tr("%1 (default: %2).")
            .arg(ProfileKinds::list(false), defaults.join(QStringLiteral(", "))),
        QStringLiteral("KIND"));
    const QCommandLineOption rdzvOpt(
        QStringLiteral("rendezvous-address"),
        CliUtil::tr("Address the ranks reach rank 0 on (default: the first node)."),
        QStringLiteral("ADDR"));
    const QCommandLineOption backendOpt(QStringLiteral("backend"),
                                        CliUtil::tr("auto, nccl or gloo."), QStringLiteral("NAME"),
                                        QStringLiteral("auto"));
    const QCommandLineOption envOpt(QStringLiteral("env"),
                                    CliUtil::tr("Environment variable for the ranks (repeatable)."),
                                    QStringLiteral("NAME=VALUE"));
    const QCommandLineOption libtorchOpt(
        QStringLiteral("libtorch"),
        CliUtil::tr("libtorch directory on the nodes (default: from the nodes' python torch)."),
        QStringLiteral("DIR"));
    const QCommandLineOption workerDirOpt(QStringLiteral("worker-dir"),
                                          CliUtil::tr("Where the worker is cached on the nodes."),
                                          QStringLiteral("DIR"));
    const QCommandLineOption forceOpt(QStringLiteral("force"),
                                      CliUtil::tr("Replace an existing (readable) profile."));
    const QCommandLineOption metricOpt(
        QStringLiteral("metric"),
        CliUtil::tr("A scalar to find in the lines of a user's program on this cluster, as "
                    "launch --metric (repeatable)."),
        QStringLiteral("NAME=REGEX"));
    const QCommandLineOption warmOpt(
        QStringLiteral("warm"),
        CliUtil::tr("Start a user's Python program warm on this cluster (as launch --warm)."));
    const QCommandLineOption connectTimeoutOpt(
        QStringLiteral("connect-timeout"),
        CliUtil::tr("Seconds to connect to a node (default 10); a lost node is retried for 3 "
                    "times that, at least 30 s."),
        QStringLiteral("S"), QStringLiteral("10"));
    const QCommandLineOption orphanGraceOpt(
        QStringLiteral("orphan-grace"),
        CliUtil::tr("Seconds a run that was not detached outlives its launcher or its link on a "
                    "node (default 4)."),
        QStringLiteral("S"), QStringLiteral("4"));
    parser.addOptions({nodeOpt, userOpt, identityOpt, nprocOpt, gpusOpt, transportOpt, rdzvOpt,
                       backendOpt, envOpt, libtorchOpt, workerDirOpt, forceOpt, metricOpt, warmOpt,
                       connectTimeoutOpt, orphanGraceOpt});
    // Each kind's own flags (Slurm's --login, --partition, …), after the command's.
    for (const QString &name : ProfileKinds::names())
        parser.addOptions(ProfileKinds::find(name)->addOptions());
    parser.addPositionalArgument(QStringLiteral("NAME"), CliUtil::tr("Profile name."));
    int code = 0;
    if (!CliUtil::parse(parser, args, CliUtil::tr("Create a cluster profile."), &code))
        return code;
    if (!oneName(parser, args.value(0), &code))
        return code;
    const QString cmd = args.value(0);
    Profile p;
    p.name = parser.positionalArguments().constFirst();
    if (!ProfileStore::isValidName(p.name))
        return CliUtil::usageError(
            CliUtil::tr("\"%1\" is not a valid profile name (letters, digits, '.', '_', '-')")
                .arg(p.name),
            cmd);
    int nproc = 1, gpus = 0;
    if (!CliUtil::parseInt(parser.value(nprocOpt), 1, 4096, &nproc))
        return CliUtil::usageError(
            CliUtil::tr("--nproc-per-node: \"%1\" is not a number from 1 to 4096")
                .arg(parser.value(nprocOpt)),
            cmd);
    if (!CliUtil::parseInt(parser.value(gpusOpt), 0, 4096, &gpus))
        return CliUtil::usageError(
            CliUtil::tr("--gpus-per-node: \"%1\" is not a number from 0 to 4096")
                .arg(parser.value(gpusOpt)),
            cmd);
    const struct
    {
        const QCommandLineOption &option;
        int *value;
    } seconds[] = {{connectTimeoutOpt, &p.connectTimeoutSec}, {orphanGraceOpt, &p.orphanGraceSec}};
    for (const auto &s : seconds) {
        if (!CliUtil::parseInt(parser.value(s.option), 1, 86400, s.value))
            return CliUtil::usageError(
                CliUtil::tr("--%1: \"%2\" is not a number of seconds from 1 to 86400")
                    .arg(s.option.names().constFirst(), parser.value(s.option)),
                cmd);
    }
    p.warmPython = parser.isSet(warmOpt);
    const QStringList nodes = parser.values(nodeOpt);
    p.transport = nodes.isEmpty() ? QStringLiteral("local") : QStringLiteral("ssh");
    for (const QString &name : ProfileKinds::names())
        if (const QString flag = ProfileKinds::find(name)->selectingOption();
            !flag.isEmpty() && parser.isSet(flag)) {
            p.transport = name;
            break;
        }
    if (parser.isSet(transportOpt))
        p.transport = parser.value(transportOpt);
    const ProfileKind *kind = ProfileKinds::find(p.transport);
    if (!kind)
        return CliUtil::usageError(CliUtil::tr("--transport: \"%1\" is not %2")
                                       .arg(p.transport, ProfileKinds::list(false)),
                                   cmd);
    // A kind that picks the nodes itself refuses --node at once.
    if (const QString why = kind->nodesProblem(!nodes.isEmpty(), true);
        kind->choosesNodes() && !why.isEmpty())
        return CliUtil::usageError(why, cmd);
    p.rendezvousAddress = parser.value(rdzvOpt);
    p.backend = parser.value(backendOpt);
    p.libtorchPath = parser.value(libtorchOpt);
    p.workerDirectory = parser.value(workerDirOpt);
    for (const QString &kv : parser.values(envOpt)) {
        const int eq = kv.indexOf(QLatin1Char('='));
        if (eq <= 0)
            return CliUtil::usageError(CliUtil::tr("--env \"%1\": expected NAME=VALUE").arg(kv),
                                       cmd);
        p.environment.insert(kv.left(eq), kv.mid(eq + 1));
    }
    for (const QString &spec : parser.values(metricOpt)) {
        MetricPattern pattern;
        QString why;
        if (!parseMetricPattern(spec, &pattern, &why))
            return CliUtil::usageError(why, cmd);
        p.metricPatterns << spec;
    }
    if (const QString why = kind->nodesProblem(!nodes.isEmpty(), true);
        !kind->choosesNodes() && !why.isEmpty())
        return CliUtil::usageError(why, cmd);
    for (const QString &spec : kind->choosesNodes() ? QStringList() : nodes) {
        ProfileNode n;
        QString why;
        if (!parseHostPort(spec, &n.host, &n.port, &why))
            return CliUtil::usageError(QStringLiteral("--node %1: %2").arg(spec, why), cmd);
        n.user = parser.value(userOpt);
        n.identityFile = parser.value(identityOpt);
        n.ranksPerNode = nproc;
        n.gpusPerNode = gpus;
        p.nodes.append(n);
    }
    if (p.nodes.isEmpty() && !kind->choosesNodes()) {
        ProfileNode n;
        n.host = QStringLiteral("localhost");
        n.ranksPerNode = nproc;
        n.gpusPerNode = gpus;
        p.nodes.append(n);
    }
    // The kind's own table from its flags (and a Slurm profile's placeholder nodes).
    QString why;
    if (!kind->applyOptions(parser, &p, &why))
        return CliUtil::usageError(why, cmd);
    return saveNew(p, parser.isSet(forceOpt));
}

int ProfileCommands::saveNew(const Profile &p, bool force)
{
    const QList<ProfileError> problems = ProfileStore::validate(p);
    if (!problems.isEmpty()) {
        for (const ProfileError &e : problems)
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << e.field << QStringLiteral(": ")
                           << e.message << '\n';
        return ExitUsage;
    }
    ProfileStore store;
    QString error;
    if (!store.save(p, force, &error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    CliUtil::out() << CliUtil::tr("profile %1 written to %2").arg(p.name, store.filePath(p.name))
                   << '\n';
    return ExitOk;
}

int ProfileCommands::remove(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("NAME"), CliUtil::tr("Profile name."));
    int code = 0;
    if (!CliUtil::parse(parser, args, CliUtil::tr("Remove a cluster profile's file."), &code))
        return code;
    if (!oneName(parser, args.value(0), &code))
        return code;
    ProfileStore store;
    QString error;
    if (!store.remove(parser.positionalArguments().constFirst(), &error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    CliUtil::out()
        << CliUtil::tr("profile %1 removed").arg(parser.positionalArguments().constFirst()) << '\n';
    return ExitOk;
}

} // namespace rankdeck::cli
