// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: run() maps every launch flag onto the plan and checks
// it, which issue 28 moves into one core launch request; the rest (attach, follow, detach, the
// console's lines, progress and summary) is what a launch prints while it runs.
#include "launchcommand.h"

#include "cliutil.h"
#include "config/launchrequest.h"
#include "config/profilestore.h"
#include "run/runcontroller.h"
#include "run/runrecord.h"
#include "store/logstore.h"
#include "stream/logmetricextractor.h"
#include "stream/rankstream.h"
#include "terminalsshinteraction.h"
#include "util/bundledbinary.h"
#include "util/printabletext.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QProcess>
#include <QSocketNotifier>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

namespace rankdeck::cli {

namespace {
int s_signalPipe[2] = {-1, -1};

void onUnixSignal(int)
{
    const char c = 1;
    (void)::write(s_signalPipe[1], &c, 1);
}

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

// What every command that follows a run on the terminal (launch, attach) takes.
struct FollowOptions
{
    QCommandLineOption ranks{
        QStringLiteral("ranks"),
        CliUtil::tr("Print only these ranks' lines, e.g. 0,3 (all are recorded)."),
        QStringLiteral("LIST")};
    QCommandLineOption accept{
        QStringLiteral("accept-new-host-keys"),
        CliUtil::tr("Trust and remember unknown SSH host keys (never changed ones).")};
    QCommandLineOption quiet{QStringLiteral("quiet"),
                             CliUtil::tr("Do not print the ranks' lines, only the summary.")};
    QCommandLineOption noProgress{QStringLiteral("no-progress"),
                                  CliUtil::tr("No live progress line.")};
};

LaunchCommand::LaunchCommand(QObject *parent) : QObject(parent)
{
    m_progressTimer.setInterval(200);
    connect(&m_progressTimer, &QTimer::timeout, this, &LaunchCommand::drawProgress);
}

LaunchCommand::~LaunchCommand()
{
    delete m_controller;
}

int LaunchCommand::run(const QStringList &argsIn)
{
    // Everything after "--" belongs to the worker, untouched.
    QStringList args = argsIn;
    QStringList workerArgs;
    const int dashes = args.indexOf(QStringLiteral("--"));
    if (dashes >= 0) {
        workerArgs = args.mid(dashes + 1);
        args = args.mid(0, dashes);
    }

    QCommandLineParser parser;
    parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
    const QCommandLineOption profileOpt(QStringLiteral("profile"),
                                        CliUtil::tr("Cluster profile (default: local)."),
                                        QStringLiteral("NAME"), QStringLiteral("local"));
    const QCommandLineOption nprocOpt(QStringLiteral("nproc-per-node"),
                                      CliUtil::tr("Ranks per node (overrides the profile)."),
                                      QStringLiteral("N"));
    const QCommandLineOption gpusOpt(
        QStringLiteral("gpus-per-node"),
        CliUtil::tr("GPUs per node (overrides the profile; 0: CPU only)."), QStringLiteral("N"));
    const QCommandLineOption nameOpt(QStringLiteral("name"),
                                     CliUtil::tr("Run name (default: the task)."),
                                     QStringLiteral("NAME"));
    const QCommandLineOption detachOpt(
        QStringLiteral("detach"), CliUtil::tr("Start the run in the background and print its id."));
    const FollowOptions followOpts;
    const QCommandLineOption restartsOpt(
        QStringLiteral("max-restarts"),
        CliUtil::tr("Restart the whole gang up to N times after a failure (from the last "
                    "checkpoint with --checkpoint-dir)."),
        QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption workerOpt(QStringLiteral("worker"),
                                       CliUtil::tr("Worker binary (default: $RANKDECK_WORKER, else "
                                                   "the one installed with this program)."),
                                       QStringLiteral("PATH"));
    const QCommandLineOption hbOpt(
        QStringLiteral("heartbeat-timeout"),
        CliUtil::tr("Flag a rank silent after SEC without heartbeat (overrides the profile)."),
        QStringLiteral("SEC"));
    const QCommandLineOption hangOpt(
        QStringLiteral("hang-timeout"),
        CliUtil::tr("Flag the run hung after SEC without progress: with --exec, no output and no "
                    "new metric while the process lives; for the worker, no new step while its "
                    "heartbeats go on (default: the heartbeat timeout, and with --exec at least "
                    "3× the program's longest quiet gap and 120 s before its first line)."),
        QStringLiteral("SEC"));
    const QCommandLineOption execOpt(
        QStringLiteral("exec"),
        CliUtil::tr("Run your own program on every rank: everything after -- is PROGRAM ARGS "
                    "(a torchrun-style Python script, or any binary)."));
    const QCommandLineOption workdirOpt(
        QStringLiteral("workdir"),
        CliUtil::tr("--exec: working directory of the program (default: the current directory "
                    "for local profiles, the home directory on SSH nodes)."),
        QStringLiteral("DIR"));
    const QCommandLineOption envOpt(QStringLiteral("env"),
                                    CliUtil::tr("--exec: add NAME=VALUE to every rank's "
                                                "environment (repeatable)."),
                                    QStringLiteral("NAME=VALUE"));
    const QCommandLineOption metricOpt(
        QStringLiteral("metric"),
        CliUtil::tr("--exec: also plot NAME from the lines REGEX matches, its one capture group "
                    "being the value (repeatable; loss, val_loss, lr, acc… are found without)."),
        QStringLiteral("NAME=REGEX"));
    const QCommandLineOption tensorBoardOpt(
        QStringLiteral("tensorboard-dir"),
        CliUtil::tr("--exec: where the program writes TensorBoard event files (SummaryWriter); "
                    "their scalars become curves per rank, live. Relative to the program's "
                    "working directory (default: the program's --logdir/--log_dir/--log-dir "
                    "argument, else runs/)."),
        QStringLiteral("DIR"));
    const QCommandLineOption syncOpt(
        QStringLiteral("sync"),
        CliUtil::tr("--exec: upload DIR to every node before the run (only files changed since the "
                    "last upload; not .git/ or what .gitignore excludes) and run the program in "
                    "that copy, --workdir being relative to it; PROGRAM and script paths then "
                    "resolve there. Local profiles run in DIR itself."),
        QStringLiteral("DIR"));
    const QCommandLineOption warmOpt(
        QStringLiteral("warm"),
        CliUtil::tr("--exec: start a Python program (python SCRIPT or python -m MODULE) from a "
                    "warm interpreter on each node that imported torch already; the first --warm "
                    "launch starts it and runs cold, a program that cannot start warm starts "
                    "cold (the profile's warm_python = true does the same)."));
    const QCommandLineOption syncLimitOpt(
        QStringLiteral("sync-limit"),
        CliUtil::tr("--sync: the most DIR may hold, e.g. 500M or 2G (default 200M; 0: no limit)."),
        QStringLiteral("SIZE"));
    const QCommandLineOption noFlightRecorderOpt(
        QStringLiteral("no-flight-recorder"),
        CliUtil::tr("Do not record the ranks' collectives with torch's flight recorder (on by "
                    "default; a hang is then explained by the ranks' stacks alone). The "
                    "profile's flight_recorder = false does the same."));
    QCommandLineOption runIdOpt(QStringLiteral("run-id"),
                                CliUtil::tr("Use this run id (internal, for --detach)."),
                                QStringLiteral("ID"));
    runIdOpt.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOptions({profileOpt,
                       nprocOpt,
                       gpusOpt,
                       nameOpt,
                       detachOpt,
                       followOpts.ranks,
                       restartsOpt,
                       workerOpt,
                       hbOpt,
                       hangOpt,
                       followOpts.accept,
                       followOpts.quiet,
                       followOpts.noProgress,
                       execOpt,
                       workdirOpt,
                       envOpt,
                       metricOpt,
                       tensorBoardOpt,
                       syncOpt,
                       syncLimitOpt,
                       warmOpt,
                       noFlightRecorderOpt,
                       runIdOpt});
    parser.addPositionalArgument(
        QStringLiteral("--"),
        CliUtil::tr("With --exec: your program and its arguments, e.g. -- python train.py --lr "
                    "3e-4. Without: the worker's own flags, e.g. -- --task linear --steps 20."),
        QStringLiteral("--exec -- PROGRAM ARGS... | -- WORKER-ARGS..."));
    int code = 0;
    if (!CliUtil::parse(
            parser, args,
            CliUtil::tr("Launch a training run and follow it: every rank's lines as [rN] ..., a "
                        "live progress line on a "
                        "terminal, a summary at the end (root cause first when it failed).\n"
                        "Your own program on every rank, with torchrun's environment:\n"
                        "  rankdeck-cli launch --profile local --nproc-per-node 2 --exec -- "
                        "python train.py\n"
                        "RankDeck's libtorch worker:\n"
                        "  rankdeck-cli launch --profile local --nproc-per-node 2 -- --task "
                        "linear --steps 20\n"
                        "Exit status: 0 every rank finished, 1 the run failed or was stopped, 2 "
                        "usage error."),
            &code))
        return code;
    const QString cmd = args.value(0);
    if (!parser.positionalArguments().isEmpty())
        return CliUtil::usageError(
            CliUtil::tr("unexpected argument \"%1\" (your program goes after --exec --, worker "
                        "flags after --)")
                .arg(parser.positionalArguments().constFirst()),
            cmd);

    ProfileStore store;
    Profile profile;
    QList<ProfileError> errors;
    if (!store.load(parser.value(profileOpt), &profile, &errors)) {
        for (const ProfileError &e : errors)
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << e.toString() << '\n';
        CliUtil::err().flush();
        return errors.size() == 1 && errors.first().message == CliUtil::tr("no such profile")
                   ? ExitUsage
                   : ExitFailed;
    }
    int n = 0;
    if (parser.isSet(nprocOpt)) {
        if (!CliUtil::parseInt(parser.value(nprocOpt), 1, 4096, &n))
            return CliUtil::usageError(
                CliUtil::tr("--nproc-per-node: \"%1\" is not a number from 1 to 4096")
                    .arg(parser.value(nprocOpt)),
                cmd);
        profile.setRanksPerNode(n);
    }
    if (parser.isSet(gpusOpt)) {
        if (!CliUtil::parseInt(parser.value(gpusOpt), 0, 4096, &n))
            return CliUtil::usageError(
                CliUtil::tr("--gpus-per-node: \"%1\" is not a number from 0 to 4096")
                    .arg(parser.value(gpusOpt)),
                cmd);
        for (ProfileNode &node : profile.nodes)
            node.gpusPerNode = n;
    }
    if (parser.isSet(hbOpt)) {
        if (!CliUtil::parseInt(parser.value(hbOpt), 1, 86400, &n))
            return CliUtil::usageError(
                CliUtil::tr("--heartbeat-timeout: \"%1\" is not a number of seconds")
                    .arg(parser.value(hbOpt)),
                cmd);
        profile.heartbeatTimeoutSec = n;
    }
    RunController::Options options;
    if (parser.isSet(hangOpt)) {
        if (!CliUtil::parseInt(parser.value(hangOpt), 1, 86400 * 7, &n))
            return CliUtil::usageError(
                CliUtil::tr("--hang-timeout: \"%1\" is not a number of seconds")
                    .arg(parser.value(hangOpt)),
                cmd);
        options.hangTimeoutSec = n;
    }
    // What only the command line can get wrong; the launch's own rules are LaunchRequest's.
    if (parser.isSet(execOpt)) {
        if (workerArgs.isEmpty() || workerArgs.first().isEmpty())
            return CliUtil::usageError(
                CliUtil::tr("--exec needs a program after --, e.g. -- python3 train.py"), cmd);
        if (parser.isSet(syncLimitOpt) && !parser.isSet(syncOpt))
            return CliUtil::usageError(CliUtil::tr("--sync-limit needs --sync"), cmd);
        if (parser.isSet(syncOpt) && parser.value(syncOpt).isEmpty())
            return CliUtil::usageError(CliUtil::tr("--sync: the directory to copy is missing"),
                                       cmd);
    } else {
        if (parser.isSet(workdirOpt) || parser.isSet(envOpt) || parser.isSet(metricOpt) ||
            parser.isSet(tensorBoardOpt))
            return CliUtil::usageError(
                CliUtil::tr("--metric, --workdir, --env and --tensorboard-dir need --exec"), cmd);
        if (parser.isSet(syncOpt) || parser.isSet(syncLimitOpt))
            return CliUtil::usageError(CliUtil::tr("--sync and --sync-limit need --exec"), cmd);
        if (parser.isSet(warmOpt))
            return CliUtil::usageError(CliUtil::tr("--warm needs --exec"), cmd);
        // Every worker flag starts with '-': a first word that does not is a program, and the
        // user forgot --exec (the worker would only say "unknown flag" once every rank started).
        if (!workerArgs.isEmpty() && !workerArgs.first().startsWith(QLatin1Char('-')))
            return CliUtil::usageError(
                CliUtil::tr("\"%1\" after -- is not a worker flag; to run your own program, put "
                            "--exec before --: rankdeck-cli launch ... --exec -- %2")
                    .arg(workerArgs.first(), workerArgs.mid(0, 3).join(QLatin1Char(' '))),
                cmd);
    }
    LaunchRequest request;
    request.runsProgram = parser.isSet(execOpt);
    request.command = workerArgs;
    request.environment = parser.values(envOpt);
    request.metricPatterns = parser.values(metricOpt);
    request.workingDirectory = parser.value(workdirOpt);
    request.syncFolder = parser.value(syncOpt);
    request.syncLimit = parser.value(syncLimitOpt);
    request.tensorBoardDir = parser.value(tensorBoardOpt);
    request.warmPython = parser.isSet(warmOpt);
    request.name = parser.value(nameOpt);
    request.flightRecorder = !parser.isSet(noFlightRecorderOpt);
    if (!CliUtil::parseInt(parser.value(restartsOpt), 0, 1000, &request.maxRestarts))
        return CliUtil::usageError(
            CliUtil::tr("--max-restarts: \"%1\" is not a number from 0 to 1000")
                .arg(parser.value(restartsOpt)),
            cmd);
    if (const QList<LaunchRequest::Problem> problems = request.problems(); !problems.isEmpty())
        return CliUtil::usageError(
            LaunchRequest::text(problems.first(), flagOf(problems.first().field)), cmd);
    TrainingConfig config = request.config(profile);
    if (!parseConsoleRanks(parser, followOpts.ranks, cmd, &config.consoleRanks, &code))
        return code;

    options.workerPath = parser.isSet(workerOpt)
                             ? parser.value(workerOpt)
                             : bundledBinary("RANKDECK_WORKER", QStringLiteral("rankdeck-worker"));
    options.supervisorPath =
        bundledBinary("RANKDECK_SUPERVISOR", QStringLiteral("rankdeck-supervisor"));
    options.runId = parser.value(runIdOpt);
    if (parser.isSet(detachOpt) && !profile.isLocal()) {
        // The ranks outlive this launcher on the nodes: start them, then leave.
        options.detach = true;
        m_detachWhenStarted = true;
    } else if (parser.isSet(detachOpt)) {
        QStringList rest = args;
        rest.removeAll(QStringLiteral("--detach"));
        rest << QStringLiteral("--quiet") << QStringLiteral("--no-progress");
        if (dashes >= 0)
            rest << QStringLiteral("--") << workerArgs;
        const QString runId =
            options.runId.isEmpty() ? RunRecord::newRunId(config.effectiveName()) : options.runId;
        return detach(rest, runId);
    }
    followAs(parser, followOpts, m_detachWhenStarted);
    options.sshInteraction = m_interaction.get();

    m_controller = new RunController(profile, config, options);
    connect(m_controller, &RunController::linesAppended, this, &LaunchCommand::printLines);
    connect(m_controller, &RunController::launcherMessage, this, &LaunchCommand::printMessage);
    installSignalHandlers();

    QString error;
    if (!m_controller->start(&error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        CliUtil::err().flush();
        return ExitFailed;
    }
    CliUtil::err() << CliUtil::tr("[rankdeck] run %1 (%2 ranks), record in %3")
                          .arg(m_controller->runId())
                          .arg(m_controller->worldSize())
                          .arg(m_controller->runDirectory())
                   << '\n';
    CliUtil::err().flush();
    return follow();
}

bool LaunchCommand::parseConsoleRanks(const QCommandLineParser &parser,
                                      const QCommandLineOption &option, const QString &cmd,
                                      QList<int> *ranks, int *code)
{
    if (!parser.isSet(option))
        return true;
    for (const QString &part : parser.value(option).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        int r = 0;
        if (!CliUtil::parseInt(part.trimmed(), 0, 1 << 20, &r)) {
            *code = CliUtil::usageError(
                CliUtil::tr("--ranks: \"%1\" is not a rank number").arg(part), cmd);
            return false;
        }
        ranks->append(r);
        m_consoleRanks.insert(r);
    }
    return true;
}

void LaunchCommand::followAs(const QCommandLineParser &parser, const FollowOptions &options,
                             bool detachWhenStarted)
{
    // A launch that leaves once the ranks run shows neither their lines nor a progress line.
    m_quiet = parser.isSet(options.quiet) || detachWhenStarted;
    m_progress =
        !parser.isSet(options.noProgress) && CliUtil::stdoutIsTerminal() && !detachWhenStarted;
    m_interaction = std::make_unique<TerminalSshInteraction>(parser.isSet(options.accept));
}

int LaunchCommand::attach(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
    const FollowOptions followOpts;
    const QCommandLineOption detachOpt(
        QStringLiteral("detach"),
        CliUtil::tr("Only bring the record up to date, then leave the run running again."));
    parser.addOptions(
        {followOpts.ranks, followOpts.accept, followOpts.quiet, followOpts.noProgress, detachOpt});
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    int code = 0;
    if (!CliUtil::parse(
            parser, args,
            CliUtil::tr("Re-attach to a detached run (launch --detach on an SSH profile, or a "
                        "run whose "
                        "launcher died): reconnects to its nodes, resumes every rank's output "
                        "where the "
                        "record stops (no gap, no duplicate) and follows the run like launch.\n"
                        "Exit status: 0 every rank finished, 1 the run failed or was stopped "
                        "or cannot be "
                        "re-attached, 2 usage error."),
            &code))
        return code;
    const QString cmd = args.value(0);
    if (parser.positionalArguments().size() != 1)
        return CliUtil::usageError(CliUtil::tr("expected exactly one RUN"), cmd);
    QList<int> consoleRanks;
    if (!parseConsoleRanks(parser, followOpts.ranks, cmd, &consoleRanks, &code))
        return code;
    followAs(parser, followOpts, false);
    RunController::Options options;
    options.sshInteraction = m_interaction.get();
    QString error;
    const QString dir = RunRecord::resolve(RunRecord::defaultRunsDirectory(),
                                           parser.positionalArguments().constFirst(), &error);
    if (dir.isEmpty()) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    installSignalHandlers();
    m_controller = RunController::reattach(dir, options, nullptr, &error);
    if (!m_controller) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    connect(m_controller, &RunController::linesAppended, this, &LaunchCommand::printLines);
    connect(m_controller, &RunController::launcherMessage, this, &LaunchCommand::printMessage);
    m_detachWhenStarted = parser.isSet(detachOpt);
    return follow();
}

void LaunchCommand::installSignalHandlers()
{
    // Ctrl+C and SIGTERM (also what `rankdeck-cli stop` falls back to) stop the run in order.
    if (::pipe2(s_signalPipe, O_CLOEXEC | O_NONBLOCK) == 0) {
        m_signalNotifier = new QSocketNotifier(s_signalPipe[0], QSocketNotifier::Read, this);
        connect(m_signalNotifier, &QSocketNotifier::activated, this, &LaunchCommand::onSignal);
        struct sigaction sa
        {
        };
        sa.sa_handler = onUnixSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        ::sigaction(SIGINT, &sa, nullptr);
        ::sigaction(SIGTERM, &sa, nullptr);
        ::sigaction(SIGHUP, &sa, nullptr);
    }
    // A closed console must not kill the launcher mid-write; the run goes on and stays
    // recorded.
    ::signal(SIGPIPE, SIG_IGN);
}

int LaunchCommand::follow()
{
    if (m_progress)
        m_progressTimer.start();
    QEventLoop loop;
    connect(m_controller, &RunController::finished, &loop, &QEventLoop::quit);
    connect(m_controller, &RunController::detached, &loop, &QEventLoop::quit);
    if (m_detachWhenStarted) {
        auto release = [this] {
            QString why;
            if (!m_controller->isDetached() && !m_controller->detachAndRelease(&why))
                printMessage(why);
        };
        connect(m_controller, &RunController::ranksStarted, this, release);
        if (m_controller->canDetach())
            QTimer::singleShot(0, this, release);
    }
    if (!isTerminal(m_controller->state()) && !m_controller->isDetached())
        loop.exec();
    m_progressTimer.stop();
    clearProgress();
    if (m_controller->isDetached()) {
        CliUtil::out() << m_controller->runId() << '\n';
        CliUtil::out().flush();
        CliUtil::err() << CliUtil::tr(
                              "[rankdeck] run %1 goes on detached on its nodes; follow it with: "
                              "rankdeck-cli attach %1")
                              .arg(m_controller->runId())
                       << '\n';
        CliUtil::err().flush();
        return ExitOk;
    }
    printSummary();
    switch (m_controller->state()) {
    case RunState::Finished:
        return ExitOk;
    default:
        return ExitFailed;
    }
}

int LaunchCommand::detach(const QStringList &args, const QString &runId)
{
    QProcess p;
    p.setProgram(QCoreApplication::applicationFilePath());
    QStringList a = args.mid(1); // without "launch"'s program name
    a.prepend(QStringLiteral("launch"));
    const int dashes = a.indexOf(QStringLiteral("--"));
    a.insert(dashes >= 0 ? dashes : a.size(), QStringLiteral("--run-id"));
    a.insert(a.indexOf(QStringLiteral("--run-id")) + 1, runId);
    p.setArguments(a);
    p.setStandardInputFile(QProcess::nullDevice());
    p.setStandardOutputFile(QProcess::nullDevice());
    p.setStandardErrorFile(QProcess::nullDevice());
    // Its own session: closing this terminal does not hang it up.
    p.setChildProcessModifier([] { ::setsid(); });
    qint64 pid = 0;
    if (!p.startDetached(&pid)) {
        CliUtil::err() << CliUtil::tr("rankdeck-cli: cannot start the background launcher: %1")
                              .arg(p.errorString())
                       << '\n';
        return ExitFailed;
    }
    CliUtil::out() << runId << '\n';
    CliUtil::out().flush();
    CliUtil::err() << CliUtil::tr("[rankdeck] run %1 started in the background (launcher pid %2); "
                                  "follow it with: rankdeck-cli logs %1 --follow")
                          .arg(runId)
                          .arg(pid)
                   << '\n';
    return ExitOk;
}

void LaunchCommand::onSignal()
{
    char buf[16];
    while (::read(s_signalPipe[0], buf, sizeof buf) > 0)
        ++m_signals;
    if (!m_controller)
        return;
    if (m_signals == 1) {
        printMessage(CliUtil::tr("stopping the run (again to kill it)"));
        m_controller->stop();
    } else {
        printMessage(CliUtil::tr("killing the run"));
        m_controller->kill();
    }
}

void LaunchCommand::printLines(const QList<LogLine> &lines)
{
    if (m_quiet)
        return;
    clearProgress();
    QTextStream &out = CliUtil::out();
    for (const LogLine &l : lines) {
        if (l.partial || l.overdrawn) // a nested progress bar's redraw: what a terminal overdraws
            continue;
        if (!m_consoleRanks.isEmpty() && !m_consoleRanks.contains(l.rank))
            continue;
        out << QStringLiteral("[r%1] ").arg(l.rank) << l.text << '\n';
    }
    out.flush();
}

void LaunchCommand::printMessage(const QString &message)
{
    clearProgress();
    // The launcher's messages quote nodes and ranks (a failure's detail, a node's answer).
    CliUtil::err() << QStringLiteral("[rankdeck] ") << printableLines(message) << '\n';
    CliUtil::err().flush();
}

void LaunchCommand::clearProgress()
{
    if (!m_progressShown)
        return;
    CliUtil::out() << "\r\x1b[K";
    CliUtil::out().flush();
    m_progressShown = false;
}

void LaunchCommand::drawProgress()
{
    if (!m_controller || !m_progress)
        return;
    const QList<RankStatus> ranks = m_controller->rankStatuses();
    int running = 0;
    qint64 minStep = -1;
    qint64 total = 0;
    double lossSum = 0;
    int lossCount = 0;
    double samples = 0;
    for (const RankStatus &s : ranks) {
        if (s.state == RankState::Running)
            ++running;
        if (minStep < 0 || s.step < minStep)
            minStep = s.step;
        total = std::max(total, s.totalSteps);
        if (!qIsNaN(s.loss)) {
            lossSum += s.loss;
            ++lossCount;
        }
        samples += s.samplesPerSec;
    }
    const qint64 elapsed =
        m_controller->startedUs() > 0
            ? QDateTime::currentMSecsSinceEpoch() * 1000 - m_controller->startedUs()
            : 0;
    QString line = CliUtil::tr("%1 · %2/%3 running · %4")
                       .arg(runStateLabel(m_controller->state()))
                       .arg(running)
                       .arg(ranks.size())
                       .arg(CliUtil::formatStep(std::max<qint64>(minStep, 0), total));
    if (lossCount > 0)
        line += CliUtil::tr(" · loss %1").arg(lossSum / lossCount, 0, 'g', 5);
    if (samples > 0)
        line += CliUtil::tr(" · %1 samples/s").arg(samples, 0, 'f', 0);
    line += QStringLiteral(" · ") + CliUtil::formatDuration(elapsed);
    if (m_controller->isHung())
        line += CliUtil::tr(" · HUNG?");
    CliUtil::out() << "\r\x1b[K" << line;
    CliUtil::out().flush();
    m_progressShown = true;
}

void LaunchCommand::printSummary()
{
    QTextStream &out = CliUtil::out();
    const RunController &c = *m_controller;
    const qint64 duration = c.endedUs() > c.startedUs() ? c.endedUs() - c.startedUs() : 0;
    out << '\n';
    if (c.state() != RunState::Finished) {
        // Root cause first: it is what the user needs, the rest explains it.
        // Both quote the ranks' own output: made safe for the terminal like their lines.
        if (!c.failureReport().failures.isEmpty())
            out << printableLines(c.failureReport().toText()) << '\n';
        else if (!c.rootCauseSummary().isEmpty())
            out << CliUtil::tr("Root cause: %1").arg(printableLabel(c.rootCauseSummary(), 1000))
                << '\n';
    }
    out << CliUtil::tr("Run %1 %2 after %3 (%4 ranks%5)")
               .arg(c.runId(), runStateLabel(c.state()), CliUtil::formatDuration(duration))
               .arg(c.worldSize())
               .arg(c.attempt() > 0 ? CliUtil::tr(", %1 restarts").arg(c.attempt()) : QString())
        << '\n';
    for (const RankStatus &s : c.rankStatuses()) {
        QString line = QStringLiteral("  rank %1  %2  %3")
                           .arg(s.rank, 3)
                           .arg(s.host, -12)
                           .arg(rankStateLabel(s.state), -9);
        if (s.shownStep() >= 0)
            line += QStringLiteral("  ") + CliUtil::formatStep(s.shownStep(), s.totalSteps);
        if (!qIsNaN(s.loss))
            line += CliUtil::tr("  loss %1").arg(s.loss, 0, 'g', 6);
        if (!s.detail.isEmpty())
            line += QStringLiteral("  (") + printableLabel(s.detail, 1000) + QLatin1Char(')');
        if (s.rootCause)
            line += CliUtil::tr("  <- root cause");
        out << line << '\n';
    }
    out << CliUtil::tr("Record: %1").arg(c.runDirectory()) << '\n';
    out.flush();
}

} // namespace rankdeck::cli
