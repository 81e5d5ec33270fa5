// SPDX-License-Identifier: GPL-3.0-or-later
#include "launchflags.h"

#include "cliutil.h"
#include "config/profilestore.h"

#include <QCommandLineParser>

namespace rankdeck::cli {

namespace {

// The flag a LaunchRequest problem is about, as the user typed it.
QString flagOf(LaunchRequest::Field field)
{
    using Field = LaunchRequest::Field;
    switch (field) {
    case Field::Program:
        return QStringLiteral("--exec");
    case Field::Environment:
        return QStringLiteral("--env");
    case Field::Metric:
        return QStringLiteral("--metric");
    case Field::WorkingDirectory:
        return QStringLiteral("--workdir");
    case Field::SyncFolder:
        return QStringLiteral("--sync");
    case Field::SyncLimit:
        return QStringLiteral("--sync-limit");
    case Field::WorkerArguments:
        return CliUtil::tr("the worker's flags after --");
    case Field::Name:
        return QStringLiteral("--name");
    }
    return {};
}

} // namespace

LaunchFlags::LaunchFlags()
{
    runId.setFlags(QCommandLineOption::HiddenFromHelp);
}

void LaunchFlags::addTo(QCommandLineParser *parser) const
{
    parser->addOptions({profile,
                        nproc,
                        gpus,
                        name,
                        detach,
                        follow.ranks,
                        restarts,
                        worker,
                        heartbeat,
                        hang,
                        follow.accept,
                        follow.quiet,
                        follow.noProgress,
                        exec,
                        workdir,
                        env,
                        metric,
                        tensorBoard,
                        sync,
                        syncLimit,
                        warm,
                        noFlightRecorder,
                        runId});
}

SplitArguments SplitArguments::of(const QStringList &args)
{
    SplitArguments split{args, {}, false};
    const int dashes = int(args.indexOf(QStringLiteral("--")));
    if (dashes >= 0) {
        split.afterDashes = args.mid(dashes + 1);
        split.own = args.mid(0, dashes);
        split.hasDashes = true;
    }
    return split;
}

std::optional<int> LaunchFlags::loadProfile(const QCommandLineParser &parser, const QString &cmd,
                                            Profile *out, RunController::Options *options) const
{
    ProfileStore store;
    QList<ProfileError> errors;
    if (!store.load(parser.value(profile), out, &errors)) {
        for (const ProfileError &e : errors)
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << e.toString() << '\n';
        CliUtil::err().flush();
        return errors.size() == 1 && errors.first().message == CliUtil::tr("no such profile")
                   ? ExitUsage
                   : ExitFailed;
    }
    int n = 0;
    if (parser.isSet(nproc)) {
        if (!CliUtil::parseInt(parser.value(nproc), 1, 4096, &n))
            return CliUtil::usageError(
                CliUtil::tr("--nproc-per-node: \"%1\" is not a number from 1 to 4096")
                    .arg(parser.value(nproc)),
                cmd);
        out->setRanksPerNode(n);
    }
    if (parser.isSet(gpus)) {
        if (!CliUtil::parseInt(parser.value(gpus), 0, 4096, &n))
            return CliUtil::usageError(
                CliUtil::tr("--gpus-per-node: \"%1\" is not a number from 0 to 4096")
                    .arg(parser.value(gpus)),
                cmd);
        for (ProfileNode &node : out->nodes)
            node.gpusPerNode = n;
    }
    if (parser.isSet(heartbeat)) {
        if (!CliUtil::parseInt(parser.value(heartbeat), 1, 86400, &n))
            return CliUtil::usageError(
                CliUtil::tr("--heartbeat-timeout: \"%1\" is not a number of seconds")
                    .arg(parser.value(heartbeat)),
                cmd);
        out->heartbeatTimeoutSec = n;
    }
    if (parser.isSet(hang)) {
        if (!CliUtil::parseInt(parser.value(hang), 1, 86400 * 7, &n))
            return CliUtil::usageError(
                CliUtil::tr("--hang-timeout: \"%1\" is not a number of seconds")
                    .arg(parser.value(hang)),
                cmd);
        options->hangTimeoutSec = n;
    }
    return std::nullopt;
}

std::optional<int> LaunchFlags::checkCombinations(const QCommandLineParser &parser,
                                                  const QStringList &afterDashes,
                                                  const QString &cmd) const
{
    if (parser.isSet(exec)) {
        if (afterDashes.isEmpty() || afterDashes.first().isEmpty())
            return CliUtil::usageError(
                CliUtil::tr("--exec needs a program after --, e.g. -- python3 train.py"), cmd);
        if (parser.isSet(syncLimit) && !parser.isSet(sync))
            return CliUtil::usageError(CliUtil::tr("--sync-limit needs --sync"), cmd);
        if (parser.isSet(sync) && parser.value(sync).isEmpty())
            return CliUtil::usageError(CliUtil::tr("--sync: the directory to copy is missing"),
                                       cmd);
        return std::nullopt;
    }
    if (parser.isSet(workdir) || parser.isSet(env) || parser.isSet(metric) ||
        parser.isSet(tensorBoard))
        return CliUtil::usageError(
            CliUtil::tr("--metric, --workdir, --env and --tensorboard-dir need --exec"), cmd);
    if (parser.isSet(sync) || parser.isSet(syncLimit))
        return CliUtil::usageError(CliUtil::tr("--sync and --sync-limit need --exec"), cmd);
    if (parser.isSet(warm))
        return CliUtil::usageError(CliUtil::tr("--warm needs --exec"), cmd);
    // Every worker flag starts with '-': a first word that does not is a program, and the
    // user forgot --exec (the worker would only say "unknown flag" once every rank started).
    if (!afterDashes.isEmpty() && !afterDashes.first().startsWith(QLatin1Char('-')))
        return CliUtil::usageError(
            CliUtil::tr("\"%1\" after -- is not a worker flag; to run your own program, put "
                        "--exec before --: rankdeck-cli launch ... --exec -- %2")
                .arg(afterDashes.first(), afterDashes.mid(0, 3).join(QLatin1Char(' '))),
            cmd);
    return std::nullopt;
}

std::optional<int> LaunchFlags::request(const QCommandLineParser &parser,
                                        const QStringList &afterDashes, const QString &cmd,
                                        LaunchRequest *out) const
{
    out->runsProgram = parser.isSet(exec);
    out->command = afterDashes;
    out->environment = parser.values(env);
    out->metricPatterns = parser.values(metric);
    out->workingDirectory = parser.value(workdir);
    out->syncFolder = parser.value(sync);
    out->syncLimit = parser.value(syncLimit);
    out->tensorBoardDir = parser.value(tensorBoard);
    out->warmPython = parser.isSet(warm);
    out->name = parser.value(name);
    out->flightRecorder = !parser.isSet(noFlightRecorder);
    if (!CliUtil::parseInt(parser.value(restarts), 0, 1000, &out->maxRestarts))
        return CliUtil::usageError(
            CliUtil::tr("--max-restarts: \"%1\" is not a number from 0 to 1000")
                .arg(parser.value(restarts)),
            cmd);
    if (const QList<LaunchRequest::Problem> problems = out->problems(); !problems.isEmpty())
        return CliUtil::usageError(
            LaunchRequest::text(problems.first(), flagOf(problems.first().field)), cmd);
    return std::nullopt;
}

} // namespace rankdeck::cli
