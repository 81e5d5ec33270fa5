// SPDX-License-Identifier: GPL-3.0-or-later
#include "launchcommand.h"

#include "cliutil.h"
#include "config/launchrequest.h"
#include "config/profilestore.h"
#include "launchflags.h"
#include "record/runrecord.h"
#include "run/runcontroller.h"
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

} // namespace

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
    const SplitArguments args = SplitArguments::of(argsIn);
    QCommandLineParser parser;
    parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
    const LaunchFlags opts;
    opts.addTo(&parser);
    parser.addPositionalArgument(
        QStringLiteral("--"),
        CliUtil::tr("With --exec: your program and its arguments, e.g. -- python train.py --lr "
                    "3e-4. Without: the worker's own flags, e.g. -- --task linear --steps 20."),
        QStringLiteral("--exec -- PROGRAM ARGS... | -- WORKER-ARGS..."));
    int code = 0;
    if (!CliUtil::parse(
            parser, args.own,
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
    const QString cmd = args.own.value(0);
    if (!parser.positionalArguments().isEmpty())
        return CliUtil::usageError(
            CliUtil::tr("unexpected argument \"%1\" (your program goes after --exec --, worker "
                        "flags after --)")
                .arg(parser.positionalArguments().constFirst()),
            cmd);

    Profile profile;
    RunController::Options options;
    if (const auto failed = opts.loadProfile(parser, cmd, &profile, &options))
        return *failed;
    if (const auto failed = opts.checkCombinations(parser, args.afterDashes, cmd))
        return *failed;
    LaunchRequest request;
    if (const auto failed = opts.request(parser, args.afterDashes, cmd, &request))
        return *failed;
    TrainingConfig config = request.config(profile);
    if (!parseConsoleRanks(parser, opts.follow.ranks, cmd, &config.consoleRanks, &code))
        return code;

    options.workerPath = parser.isSet(opts.worker)
                             ? parser.value(opts.worker)
                             : bundledBinary("RANKDECK_WORKER", QStringLiteral("rankdeck-worker"));
    options.supervisorPath =
        bundledBinary("RANKDECK_SUPERVISOR", QStringLiteral("rankdeck-supervisor"));
    options.runId = parser.value(opts.runId);
    if (parser.isSet(opts.detach) && !profile.isLocal()) {
        // The ranks outlive this launcher on the nodes: start them, then leave.
        options.detach = true;
        m_detachWhenStarted = true;
    } else if (parser.isSet(opts.detach)) {
        QStringList rest = args.own;
        rest.removeAll(QStringLiteral("--detach"));
        rest << QStringLiteral("--quiet") << QStringLiteral("--no-progress");
        if (args.hasDashes)
            rest << QStringLiteral("--") << args.afterDashes;
        const QString runId =
            options.runId.isEmpty() ? RunRecord::newRunId(config.effectiveName()) : options.runId;
        return detach(rest, runId);
    }
    followAs(parser, opts.follow, m_detachWhenStarted);
    options.sshInteraction = m_interaction.get();
    return start(profile, config, options);
}

int LaunchCommand::start(const Profile &profile, const TrainingConfig &config,
                         const RunController::Options &options)
{
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
