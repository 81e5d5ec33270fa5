// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/runcontroller.h"

#include "util/translation.h"
#include "util/clock.h"

#include "store/logstore.h"
#include "stream/linesplitter.h"
#include "store/metricsstore.h"
#include "transport/transportfactory.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <chrono>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace rankdeck {

namespace {

QString signalName(int sig)
{
    if (sig <= 0)
        return QString();
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char *abbrev = sigabbrev_np(sig))
        return QStringLiteral("SIG") + QString::fromLatin1(abbrev);
#endif
    return QStringLiteral("signal %1").arg(sig);
}

// What RankStream's splitter keeps after `chunk` (a mirror of LineSplitter::feed): bytes after
// the last newline, less the full pieces a line that never ends was already handed out in.
qint64 pendingAfter(qint64 pending, const QByteArray &chunk)
{
    const qsizetype nl = chunk.lastIndexOf('\n');
    qint64 p = nl < 0 ? pending + chunk.size() : chunk.size() - nl - 1;
    const qint64 piece = LineSplitter::kDefaultMaxPieceBytes;
    if (p > piece)
        p = (p - 1) % piece + 1;
    return p;
}

} // namespace

RunController::RunController(QObject *parent) : QObject(parent) {}

RunController::RunController(const Profile &profile, const TrainingConfig &config, const Options &options,
                             QObject *parent)
    : QObject(parent), m_profile(profile), m_config(config), m_options(options)
{
    m_watchTimer.setInterval(500);
    connect(&m_watchTimer, &QTimer::timeout, this, &RunController::watch);
}

RunController::~RunController()
{
    // Never leave ranks behind when the controller goes away mid-run.
    if (m_transport && !m_readOnly && !m_released && !isTerminal(m_state)) {
        for (int r = 0; r < m_ranks.size(); ++r) {
            if (m_runtime[r].started && !m_runtime[r].exited)
                m_transport->signalRank(r, SIGKILL);
        }
    }
    if (m_transport && !m_transportInjected)
        delete m_transport.data();
}

void RunController::setTransport(Transport *transport)
{
    if (m_transport && m_transport != transport)
        delete m_transport.data();
    m_transport = transport;
    m_transportInjected = false;
    if (transport)
        transport->setParent(this);
}

bool RunController::start(QString *error)
{
    if (m_readOnly || m_startedUs != 0) {
        *error = tr("this run was already started");
        return false;
    }
    const QString runsDir = m_options.runsDirectory.isEmpty() ? RunRecord::defaultRunsDirectory()
                                                              : m_options.runsDirectory;
    const QString runId = m_options.runId.isEmpty() ? RunRecord::newRunId(m_config.effectiveName())
                                                    : m_options.runId;
    if (!m_record.create(runsDir, runId, m_config.effectiveName(), m_profile, m_config, error))
        return false;
    const QString nodeDir = m_profile.isLocal() ? m_record.nodeRunDirectory()
                                                : QStringLiteral(".cache/rankdeck/runs/") + runId;
    m_plan = LaunchPlan::create(m_profile, m_config, runId, nodeDir);
    if (!m_plan.isValid()) {
        *error = m_plan.error();
        m_errorMessage = *error;
        m_state = RunState::Failed;
        m_rootCauseSummary = *error;
        writeState();
        return false;
    }
    m_logs = std::make_unique<LogStore>();
    QString storeError;
    if (!m_logs->open(m_record.directory(), &storeError))
        note(tr("cannot write logs to the run record: %1").arg(storeError));
    m_metrics = std::make_unique<MetricsStore>();
    if (!m_metrics->open(m_record.directory(), &storeError))
        note(tr("cannot write metrics to the run record: %1").arg(storeError));

    for (const PlannedRank &p : m_plan.ranks()) {
        RankStatus s;
        s.rank = p.rank;
        s.nodeIndex = p.nodeIndex;
        s.localRank = p.localRank;
        s.host = p.host;
        s.totalSteps = m_config.totalSteps();
        m_ranks.append(s);
        m_runtime.append(RankRuntime());
        m_offsets.append(StreamOffsets());
    }

    if (!m_transport) {
        QString transportError;
        Transport *t = TransportFactory::create(m_profile, runId, m_options.sshInteraction, this, &transportError);
        if (!t) {
            *error = transportError;
            failRun(transportError);
            return false;
        }
        m_transport = t;
    }
    if (m_options.detach) {
        if (m_transport->can(Transport::Capability::Detach))
            m_transport->setDetached(true);
        else
            note(tr("detach: %1 ranks cannot outlive their launcher; this run stops with it")
                     .arg(m_transport->describe()));
    }
    connectTransport();
    m_startedUs = nowUs();
    m_state = RunState::Preparing;
    writeState();
    note(tr("run %1: profile %2, %3 ranks on %4 node(s), worker %5")
             .arg(runId, m_profile.name).arg(m_plan.worldSize()).arg(m_profile.nodes.size())
             .arg(m_options.workerPath));
    m_watchTimer.start();
    m_transport->prepare(m_options.workerPath);
    return true;
}

void RunController::connectTransport()
{
    connect(m_transport, &Transport::prepared, this, &RunController::onPrepared);
    connect(m_transport, &Transport::prepareFailed, this, &RunController::onPrepareFailed);
    connect(m_transport, &Transport::rankStarted, this, &RunController::onRankStarted);
    connect(m_transport, &Transport::rankOutput, this, &RunController::onRankOutput);
    connect(m_transport, &Transport::rankExited, this, &RunController::onRankExited);
    connect(m_transport, &Transport::nodeProgress, this, [this](int node, const QString &stage, int percent) {
        note(percent >= 0 ? tr("node %1: %2 (%3%)").arg(node).arg(stage).arg(percent)
                          : tr("node %1: %2").arg(node).arg(stage));
        const QString host = node >= 0 && node < m_profile.nodes.size() ? m_profile.nodes[node].host : QString();
        emit nodeProgress(node, host, stage, percent);
    });
}

void RunController::onPrepared()
{
    if (m_finalized)
        return;
    if (m_reattaching) {
        attachRanks();
        return;
    }
    if (m_userStop) {
        for (int r = 0; r < m_ranks.size(); ++r)
            setRankState(r, RankState::Stopped, tr("not started"));
        checkAllDone();
        return;
    }
    launchAttempt();
}

void RunController::onPrepareFailed(const QString &message)
{
    if (m_finalized)
        return;
    // Transports name the node in their messages already.
    failRun(message);
}

void RunController::failRun(const QString &message)
{
    m_errorMessage = message;
    m_rootCauseSummary = message;
    note(message);
    for (int r = 0; r < m_ranks.size(); ++r) {
        if (!isTerminal(m_ranks[r].state) && !m_runtime[r].started)
            setRankState(r, RankState::Stopped, tr("not started"));
    }
    m_failureSeen = true;
    checkAllDone();
    if (!m_finalized && m_ranks.isEmpty())
        finalize();
}

void RunController::launchAttempt()
{
    const qint64 t = nowUs();
    m_masterPort = 0;
    m_streams.clear();
    for (int r = 0; r < m_ranks.size(); ++r) {
        m_streams.push_back(std::make_unique<RankStream>(r));
        RankStatus &s = m_ranks[r];
        const RankStatus fresh = [&] {
            RankStatus n;
            n.rank = s.rank;
            n.nodeIndex = s.nodeIndex;
            n.localRank = s.localRank;
            n.host = s.host;
            n.totalSteps = s.totalSteps;
            return n;
        }();
        s = fresh;
        m_runtime[r] = RankRuntime();
        m_runtime[r].lastStepChangeUs = t;
        emit rankChanged(r);
    }
    setState(RunState::Starting);
    // Rank 0 first: it binds the store on a free port and tells us which (no port race).
    m_rank0StartUs = t;
    startRank(0, 0);
}

void RunController::startRank(int rank, int masterPort)
{
    RankRuntime &rt = m_runtime[rank];
    if (rt.started)
        return;
    rt.started = true;
    StreamOffsets &o = m_offsets[rank];
    o = StreamOffsets{o.attempt + 1, {0, 0}, {0, 0}};
    const bool resume = m_attempt > 0 && !m_config.checkpointDir().isEmpty();
    const RankLaunchSpec spec = m_plan.spec(rank, m_transport->workerPath(m_plan.rank(rank).nodeIndex),
                                            masterPort, resume);
    m_ranks[rank].lastHeartbeatUs = nowUs();
    setRankState(rank, RankState::Starting);
    m_transport->startRank(spec);
}

void RunController::onRankStarted(int rank, qint64 pid)
{
    if (rank < 0 || rank >= m_ranks.size())
        return;
    m_ranks[rank].pid = pid;
    // A re-attach reports the start again; the process is the one that started back then.
    if (!m_runtime[rank].pidKnown || m_ranks[rank].startTimeUs == 0)
        m_ranks[rank].startTimeUs = nowUs();
    m_ranks[rank].lastHeartbeatUs = nowUs();
    m_runtime[rank].pidKnown = true;
    m_stateDirty = true;
    emit rankChanged(rank);
    if (!m_ranksStartedSent && allRanksStarted()) {
        m_ranksStartedSent = true;
        writeState();
        emit ranksStarted();
    }
    // A stop that came while the process was being created reaches it now.
    if (m_runtime[rank].launcherStopped)
        m_transport->writeStdin(rank, QByteArray("stop\n"));
}

void RunController::onRankOutput(int rank, StreamKind stream, const QByteArray &chunk)
{
    if (rank < 0 || rank >= int(m_streams.size()))
        return;
    RankStream::Output out;
    m_streams[rank]->feed(stream, chunk, out);
    handleOutput(rank, out);
    // After the record has the lines: the offsets never run ahead of what is on disk.
    StreamOffsets &o = m_offsets[rank];
    const int s = stream == StreamKind::Stdout ? 0 : 1;
    o.received[s] += chunk.size();
    o.pending[s] = pendingAfter(o.pending[s], chunk);
    // state.json carries them; watch() writes it at most every 0.5 s.
    if (m_options.detach)
        m_stateDirty = true;
}

void RunController::handleOutput(int rank, RankStream::Output &out)
{
    // The run record first: a view or a console never sees a line the disk has not got.
    if (!out.lines.isEmpty()) {
        m_logs->append(out.lines);
    }
    if (!out.events.isEmpty()) {
        m_logs->appendEvents(rank, out.events);
        m_metrics->appendEvents(out.events);
    }
    if (!out.lines.isEmpty())
        emit linesAppended(out.lines);
    for (const WorkerEvent &e : out.events)
        handleEvent(rank, e);
}

void RunController::handleEvent(int rank, const WorkerEvent &e)
{
    RankStatus &s = m_ranks[rank];
    RankRuntime &rt = m_runtime[rank];
    const qint64 now = nowUs();
    s.lastHeartbeatUs = now;
    if (s.silent) {
        s.silent = false;
        note(tr("rank %1 is sending heartbeats again").arg(rank));
    }
    switch (e.type()) {
    case WorkerEvent::Type::Hello:
        if (!e.host().isEmpty())
            s.host = e.host();
        if (e.pid() > 0 && s.pid == 0)
            s.pid = e.pid();
        s.device = e.string("device");
        s.backend = e.string("backend");
        if (e.integer("total_steps") > 0)
            s.totalSteps = e.integer("total_steps");
        if (s.state == RankState::Starting)
            setRankState(rank, RankState::Rendezvous);
        break;
    case WorkerEvent::Type::Store:
        if (rank == 0 && e.port() > 0 && m_masterPort == 0 && !m_failureSeen && !m_userStop) {
            m_masterPort = e.port();
            note(tr("rank 0 serves the rendezvous store on %1:%2").arg(m_plan.masterAddress()).arg(m_masterPort));
            for (int r = 1; r < m_ranks.size(); ++r)
                startRank(r, m_masterPort);
            m_stateDirty = true;
        }
        break;
    case WorkerEvent::Type::Rendezvous:
        if (!e.string("backend").isEmpty())
            s.backend = e.string("backend");
        rt.lastStepChangeUs = now;
        if (s.state == RankState::Starting || s.state == RankState::Rendezvous)
            setRankState(rank, RankState::Running);
        if (m_state == RunState::Starting) {
            bool all = true;
            for (const RankStatus &o : m_ranks)
                all = all && o.state == RankState::Running;
            if (all)
                setState(RunState::Running);
        }
        break;
    case WorkerEvent::Type::Step: {
        const qint64 step = e.step();
        if (step != s.step) {
            if (s.step >= 0)
                rt.maxStepIntervalUs = std::max(rt.maxStepIntervalUs, now - rt.lastStepChangeUs);
            rt.lastStepChangeUs = now;
        }
        s.step = step;
        s.loss = e.loss();
        s.samplesPerSec = e.number("samples_per_s", 0);
        s.lastStepUs = now;
        if (s.hung) {
            s.hung = false;
            rt.dumpRequested = false;
            s.detail.clear();
            note(tr("rank %1 makes progress again (step %2)").arg(rank).arg(step));
        }
        if (s.state == RankState::Rendezvous || s.state == RankState::Starting)
            setRankState(rank, RankState::Running);
        m_stateDirty = true;
        emit rankChanged(rank);
        break;
    }
    case WorkerEvent::Type::Heartbeat:
        if (e.step() >= 0 && e.step() > s.step)
            s.step = e.step();
        break;
    case WorkerEvent::Type::Finished:
        if (e.step() >= 0)
            s.step = e.step();
        if (!qIsNaN(e.loss()))
            s.loss = e.loss();
        break;
    case WorkerEvent::Type::Error: {
        rt.ownFailure = true;
        RankFailure f;
        f.rank = rank;
        f.host = s.host;
        f.localRank = s.localRank;
        f.timeUs = e.timeUs() > 0 ? e.timeUs() : now;
        f.kind = QStringLiteral("error");
        f.exitCode = e.exitCode();
        f.message = e.message();
        recordFailure(f);
        break;
    }
    case WorkerEvent::Type::Crash: {
        rt.ownFailure = true;
        RankFailure f = failureFromCrashEvent(e.fields());
        f.rank = rank;
        if (f.host.isEmpty())
            f.host = s.host;
        f.localRank = s.localRank;
        if (f.timeUs <= 0)
            f.timeUs = e.timeUs() > 0 ? e.timeUs() : now;
        recordFailure(f);
        break;
    }
    case WorkerEvent::Type::Stacks: {
        const QString stack = e.stack();
        m_stacks.insert(rank, stack);
        QFile f(m_record.stacksPath(rank));
        if (f.open(QIODevice::Append)) {
            f.write(QStringLiteral("=== %1 (%2)\n").arg(e.timeUs()).arg(e.string("reason")).toUtf8());
            f.write(stack.toUtf8());
            f.write("\n");
        }
        emit stacksReceived(rank, stack);
        break;
    }
    default:
        break;
    }
    emit eventReceived(e);
}

bool RunController::looksLikePeerFailure(const QString &text)
{
    static const QRegularExpression re(
        QStringLiteral("closed by peer|reset by peer|connection (was )?(closed|reset|refused)|broken pipe|"
                       "ECONNRESET|EPIPE|timed? ?out|Watchdog caught|peer|remote process exited|"
                       "socket (closed|error)|store.*(closed|timeout)"),
        QRegularExpression::CaseInsensitiveOption);
    return re.match(text).hasMatch();
}

void RunController::recordFailure(const RankFailure &failure)
{
    // One entry per rank and attempt: the first (most precise) report wins, the exit adds to it.
    for (RankFailure &f : m_failures) {
        if (f.rank == failure.rank) {
            if (f.exitCode == 0 && failure.exitCode != 0)
                f.exitCode = failure.exitCode;
            if (f.signal == 0 && failure.signal != 0) {
                f.signal = failure.signal;
                f.signalName = failure.signalName;
            }
            rebuildReport();
            return;
        }
    }
    m_failures.append(failure);
    rebuildReport();
    if (failure.kind != QLatin1String("consequence"))
        triggerFailurePolicy(failure.rank);
}

void RunController::rebuildReport()
{
    // Echoes of another rank's death (peer closed the connection, collective timed out) are
    // consequences whenever some rank failed for a reason of its own.
    QList<RankFailure> observed = m_failures;
    bool anyOwn = false;
    for (const RankFailure &f : observed) {
        if (f.kind != QLatin1String("consequence") && !looksLikePeerFailure(f.message))
            anyOwn = true;
    }
    if (anyOwn) {
        for (RankFailure &f : observed) {
            if (f.kind != QLatin1String("consequence") && looksLikePeerFailure(f.message)) {
                f.reason = tr("a peer failed first (this rank's own %1 followed)").arg(f.kind);
                f.kind = QStringLiteral("consequence");
            }
        }
    }
    for (RankFailure &f : observed) {
        if (m_ranks.value(f.rank).hung && f.stack.isEmpty() && m_stacks.contains(f.rank))
            f.stack = m_stacks.value(f.rank).split(QLatin1Char('\n'));
    }
    m_report = FailureReport::build(observed);
    m_rootCauseSummary.clear();
    for (int r = 0; r < m_ranks.size(); ++r)
        m_ranks[r].rootCause = false;
    for (const RankFailure &f : m_report.failures) {
        if (!f.rootCause)
            continue;
        if (f.rank >= 0 && f.rank < m_ranks.size())
            m_ranks[f.rank].rootCause = true;
        QString what;
        if (f.kind == QLatin1String("crash") || f.kind == QLatin1String("signal"))
            what = f.signalName.isEmpty() ? tr("signal %1").arg(f.signal) : f.signalName;
        else if (f.kind == QLatin1String("exception"))
            what = f.exceptionType.isEmpty() ? tr("exception") : f.exceptionType;
        else if (f.kind == QLatin1String("exit") || f.kind == QLatin1String("error"))
            what = tr("exit code %1").arg(f.exitCode);
        else
            what = f.kind;
        m_rootCauseSummary = tr("rank %1 (%2): %3").arg(f.rank).arg(f.host, what);
        if (!f.message.isEmpty())
            m_rootCauseSummary += QStringLiteral(": ") + f.message.section(QLatin1Char('\n'), 0, 0);
        break;
    }
    m_stateDirty = true;
    emit failureReportChanged();
}

void RunController::triggerFailurePolicy(int failedRank)
{
    if (m_failureSeen)
        return;
    m_failureSeen = true;
    m_firstFailedRank = failedRank;
    QStringList others;
    for (int r = 0; r < m_ranks.size(); ++r) {
        if (r != failedRank && !isTerminal(m_ranks[r].state) && !m_runtime[r].exited)
            others << QString::number(r);
    }
    note(others.isEmpty() ? tr("rank %1 failed").arg(failedRank)
                          : tr("rank %1 failed; stopping rank(s) %2").arg(failedRank).arg(others.join(QStringLiteral(", "))));
    if (!isTerminal(m_state))
        setState(RunState::Stopping);
    for (int r = 0; r < m_ranks.size(); ++r) {
        if (r != failedRank)
            stopRank(r, true);
    }
    // The failed rank itself may still be alive (it sent an error and is tearing down): make
    // sure it ends too, without counting it as stopped by us.
    if (failedRank >= 0 && failedRank < m_ranks.size() && m_runtime[failedRank].started
        && !m_runtime[failedRank].exited) {
        const int serial = m_runtime[failedRank].stopSerial = ++m_stopSerial;
        QTimer::singleShot(m_options.stopGraceMs + m_options.termGraceMs, this, [this, failedRank, serial] {
            if (m_runtime.value(failedRank).exited || m_runtime[failedRank].stopSerial != serial)
                return;
            note(tr("rank %1 did not exit after its failure; killing it").arg(failedRank));
            m_runtime[failedRank].signalsSent.insert(SIGKILL);
            m_transport->signalRank(failedRank, SIGKILL);
        });
    }
}

void RunController::stopRank(int rank, bool consequence)
{
    RankRuntime &rt = m_runtime[rank];
    if (rt.exited || isTerminal(m_ranks[rank].state))
        return;
    if (!rt.started) {
        rt.launcherStopped = true;
        rt.consequence = consequence;
        setRankState(rank, RankState::Stopped, tr("not started"));
        if (consequence && m_firstFailedRank >= 0) {
            RankFailure f;
            f.rank = rank;
            f.host = m_ranks[rank].host;
            f.localRank = m_ranks[rank].localRank;
            f.timeUs = nowUs();
            f.kind = QStringLiteral("consequence");
            f.reason = tr("never started: rank %1 failed first").arg(m_firstFailedRank);
            m_failures.append(f);
            rebuildReport();
        }
        checkAllDone();
        return;
    }
    if (rt.launcherStopped)
        return;
    rt.launcherStopped = true;
    rt.consequence = consequence;
    const int serial = rt.stopSerial = ++m_stopSerial;
    m_transport->writeStdin(rank, QByteArray("stop\n"));
    QTimer::singleShot(m_options.stopGraceMs, this, [this, rank, serial] {
        if (m_runtime.value(rank).exited || m_runtime[rank].stopSerial != serial)
            return;
        note(tr("rank %1 did not stop within %2 ms; sending SIGTERM").arg(rank).arg(m_options.stopGraceMs));
        m_runtime[rank].signalsSent.insert(SIGTERM);
        m_transport->signalRank(rank, SIGTERM);
        QTimer::singleShot(m_options.termGraceMs, this, [this, rank, serial] {
            if (m_runtime.value(rank).exited || m_runtime[rank].stopSerial != serial)
                return;
            note(tr("rank %1 ignored SIGTERM for %2 ms; sending SIGKILL").arg(rank).arg(m_options.termGraceMs));
            m_runtime[rank].signalsSent.insert(SIGKILL);
            m_transport->signalRank(rank, SIGKILL);
        });
    });
}

void RunController::stop()
{
    if (m_readOnly || isTerminal(m_state) || m_finalized)
        return;
    if (!m_userStop)
        note(tr("stop requested"));
    m_userStop = true;
    setState(RunState::Stopping);
    if (m_startedUs == 0)
        return;
    for (int r = 0; r < m_ranks.size(); ++r)
        stopRank(r, false);
    checkAllDone();
}

void RunController::kill()
{
    if (m_readOnly || isTerminal(m_state))
        return;
    m_userStop = true;
    note(tr("kill requested"));
    setState(RunState::Stopping);
    for (int r = 0; r < m_ranks.size(); ++r) {
        RankRuntime &rt = m_runtime[r];
        if (!rt.started) {
            setRankState(r, RankState::Stopped, tr("not started"));
            continue;
        }
        if (!rt.exited) {
            rt.launcherStopped = true;
            rt.stopSerial = ++m_stopSerial;
            rt.signalsSent.insert(SIGKILL);
            m_transport->signalRank(r, SIGKILL);
        }
    }
    checkAllDone();
}

void RunController::dumpStacks(int rank)
{
    if (m_readOnly || !m_transport)
        return;
    for (int r = 0; r < m_ranks.size(); ++r) {
        if ((rank < 0 || r == rank) && m_runtime[r].started && !m_runtime[r].exited)
            m_transport->writeStdin(r, QByteArray("dump-stacks\n"));
    }
}

void RunController::onRankExited(int rank, const RankExit &exit)
{
    if (rank < 0 || rank >= m_ranks.size() || m_runtime[rank].exited)
        return;
    RankRuntime &rt = m_runtime[rank];
    if (rank < int(m_streams.size())) {
        RankStream::Output out;
        m_streams[rank]->finish(out);
        handleOutput(rank, out);
        m_offsets[rank].pending[0] = m_offsets[rank].pending[1] = 0;
    }
    rt.exited = true;
    rt.started = true;
    RankStatus &s = m_ranks[rank];
    s.endTimeUs = exit.timeUs > 0 ? exit.timeUs : nowUs();
    s.exitCode = exit.crashed ? 0 : exit.exitCode;
    s.signal = exit.crashed ? exit.signal : 0;
    const bool clean = !exit.crashed && exit.exitCode == 0;
    // Transports report a dropped connection as an exit without a code.
    const bool lost = !exit.crashed && exit.exitCode < 0 && !exit.detail.isEmpty()
        && !exit.detail.startsWith(QLatin1String("failed to start"), Qt::CaseInsensitive)
        && exit.detail.contains(QLatin1String("lost"), Qt::CaseInsensitive);

    QString how;
    if (exit.crashed)
        how = tr("killed by %1").arg(signalName(exit.signal));
    else if (!exit.detail.isEmpty() && exit.exitCode < 0)
        how = exit.detail;
    else
        how = tr("exit code %1").arg(exit.exitCode);

    // A rank the launcher was stopping can still have failed by itself first (its own exit
    // code, or a signal the launcher did not send): that is a failure, not a consequence.
    const bool byOurSignal = exit.crashed ? rt.signalsSent.contains(exit.signal)
                                          : rt.signalsSent.contains(exit.exitCode - 128);
    const bool ownExit = !clean && !byOurSignal;
    if (rt.ownFailure) {
        // It reported its own error/crash; the exit completes that report.
        RankFailure f;
        f.rank = rank;
        f.exitCode = exit.crashed ? 0 : exit.exitCode;
        f.signal = exit.crashed ? exit.signal : 0;
        f.signalName = signalName(f.signal);
        recordFailure(f);
        setRankState(rank, RankState::Failed, how);
    } else if (rt.launcherStopped && !ownExit) {
        if (rt.consequence) {
            RankFailure f;
            f.rank = rank;
            f.host = s.host;
            f.localRank = s.localRank;
            f.timeUs = s.endTimeUs;
            f.kind = s.hung ? QStringLiteral("hang") : QStringLiteral("consequence");
            f.exitCode = s.exitCode;
            f.signal = s.signal;
            f.signalName = signalName(s.signal);
            // build() names the root cause in the reason of every consequence.
            if (s.hung)
                f.reason = tr("hung, then stopped by the launcher (%1)").arg(how);
            if (s.hung && m_stacks.contains(rank))
                f.stack = m_stacks.value(rank).split(QLatin1Char('\n'));
            // A consequence never triggers the policy again.
            if (f.kind == QLatin1String("hang"))
                f.kind = QStringLiteral("consequence");
            m_failures.append(f);
            rebuildReport();
        }
        setRankState(rank, RankState::Stopped, how);
    } else if (clean) {
        setRankState(rank, RankState::Finished);
    } else {
        RankFailure f;
        f.rank = rank;
        f.host = s.host;
        f.localRank = s.localRank;
        // The exit is seen a little after the death; the rank's last word bounds it from below,
        // and its own events carry its clock, so prefer what the transport measured.
        f.timeUs = s.endTimeUs;
        if (lost) {
            f.kind = QStringLiteral("lost");
            f.message = exit.detail;
        } else if (exit.crashed) {
            f.kind = QStringLiteral("signal");
            f.signal = exit.signal;
            f.signalName = signalName(exit.signal);
        } else {
            f.kind = QStringLiteral("exit");
            f.exitCode = exit.exitCode;
            f.message = exit.detail;
        }
        setRankState(rank, lost ? RankState::Lost : RankState::Failed, how);
        recordFailure(f);
    }
    // Rank 0 gone before it told us its port: the others can never start.
    if (rank == 0 && m_masterPort == 0 && !m_failureSeen && m_ranks.size() > 1 && !m_userStop) {
        RankFailure f;
        f.rank = 0;
        f.host = s.host;
        f.timeUs = s.endTimeUs;
        f.kind = QStringLiteral("exit");
        f.message = tr("rank 0 ended before it reported its rendezvous port");
        recordFailure(f);
    }
    m_stateDirty = true;
    checkAllDone();
}

void RunController::watch()
{
    if (m_readOnly || m_finalized)
        return;
    if (!m_userStop && m_record.stopRequested()) {
        note(tr("stop requested through %1").arg(m_record.stopRequestPath()));
        stop();
    }
    if (m_record.takeStackDumpRequest()) {
        note(tr("stack dump requested"));
        dumpStacks(-1);
    }
    const qint64 now = nowUs();
    // Rank 0 must report its store port in time, or the others never start.
    const int storeTimeout = m_options.storeTimeoutSec > 0 ? m_options.storeTimeoutSec : m_profile.rendezvousTimeoutSec;
    if (m_state == RunState::Starting && m_masterPort == 0 && m_ranks.size() > 1 && !m_failureSeen
        && !m_userStop && m_runtime.value(0).started && !m_runtime[0].exited
        && now - m_rank0StartUs > qint64(storeTimeout) * 1'000'000) {
        RankFailure f;
        f.rank = 0;
        f.host = m_ranks[0].host;
        f.timeUs = now;
        f.kind = QStringLiteral("error");
        f.message = tr("rank 0 did not report its rendezvous port (store event) within %1 s").arg(storeTimeout);
        m_runtime[0].ownFailure = true;
        recordFailure(f);
        stopRank(0, false);
    }

    const qint64 heartbeatLimit = qint64(m_profile.heartbeatTimeoutSec) * 1'000'000;
    const qint64 hangLimit = qint64(m_options.hangTimeoutSec > 0 ? m_options.hangTimeoutSec
                                                                 : m_profile.heartbeatTimeoutSec) * 1'000'000;
    QList<int> newlyHung;
    for (int r = 0; r < m_ranks.size(); ++r) {
        RankStatus &s = m_ranks[r];
        RankRuntime &rt = m_runtime[r];
        if (!rt.started || rt.exited || isTerminal(s.state) || rt.launcherStopped)
            continue;
        if (s.state != RankState::Rendezvous && s.state != RankState::Running)
            continue;
        const qint64 quiet = now - s.lastHeartbeatUs;
        if (quiet > heartbeatLimit && !s.silent) {
            s.silent = true;
            s.detail = tr("no heartbeat for %1 s").arg(quiet / 1'000'000);
            note(tr("rank %1: no heartbeat for %2 s").arg(r).arg(quiet / 1'000'000));
            m_stateDirty = true;
            emit rankChanged(r);
            if (!s.hung) {
                s.hung = true;
                newlyHung << r;
                // The control channel may be stuck too; SIGUSR1 also makes the worker dump.
                if (m_options.autoDumpStacks && !rt.dumpRequested) {
                    rt.dumpRequested = true;
                    m_transport->signalRank(r, SIGUSR1);
                }
            }
        }
        if (s.state != RankState::Running || s.silent)
            continue;
        // Slow steps are not hangs: wait at least three times the slowest step seen so far.
        const qint64 limit = std::max(hangLimit, 3 * rt.maxStepIntervalUs);
        const qint64 stalled = now - rt.lastStepChangeUs;
        if (stalled > limit && !s.hung) {
            s.hung = true;
            s.detail = tr("no step for %1 s while heartbeats go on").arg(stalled / 1'000'000);
            newlyHung << r;
            m_stateDirty = true;
            emit rankChanged(r);
            if (m_options.autoDumpStacks && !rt.dumpRequested) {
                rt.dumpRequested = true;
                m_transport->writeStdin(r, QByteArray("dump-stacks\n"));
            }
        }
    }
    bool anyHung = false;
    for (const RankStatus &s : m_ranks)
        anyHung = anyHung || (s.hung && !isTerminal(s.state));
    if (anyHung != m_hung) {
        m_hung = anyHung;
        m_stateDirty = true;
    }
    if (!newlyHung.isEmpty()) {
        QStringList list;
        for (int r : newlyHung)
            list << QString::number(r);
        note(tr("run looks hung: rank(s) %1 make no progress; asked for their stacks").arg(list.join(QStringLiteral(", "))));
        emit hangDetected(newlyHung);
    }
    if (m_stateDirty)
        writeState();
}

void RunController::checkAllDone()
{
    if (m_finalized || m_startedUs == 0)
        return;
    for (int r = 0; r < m_ranks.size(); ++r) {
        if (!isTerminal(m_ranks[r].state))
            return;
        if (m_runtime[r].started && !m_runtime[r].exited)
            return;
    }
    // Ranks may still deliver events (a crash event just before exiting); finish in the next
    // turn of the event loop so that everything queued is handled first.
    QTimer::singleShot(0, this, [this] {
        if (m_finalized)
            return;
        for (int r = 0; r < m_ranks.size(); ++r) {
            if (!isTerminal(m_ranks[r].state))
                return;
        }
        finalize();
    });
}

void RunController::finalize()
{
    bool ownFailure = false;
    for (const RankFailure &f : m_report.failures)
        ownFailure = ownFailure || f.kind != QLatin1String("consequence");
    ownFailure = ownFailure || (!m_errorMessage.isEmpty() && m_ranks.isEmpty());
    if (!m_errorMessage.isEmpty())
        ownFailure = true;

    if (ownFailure && !m_userStop && m_errorMessage.isEmpty() && m_attempt < m_config.maxRestarts) {
        QJsonObject a;
        a[QStringLiteral("attempt")] = m_attempt;
        a[QStringLiteral("ended_us")] = nowUs();
        a[QStringLiteral("root_cause_summary")] = m_rootCauseSummary;
        a[QStringLiteral("failure")] = m_report.toJson();
        QJsonArray ranks;
        for (const RankStatus &s : m_ranks)
            ranks.append(s.toJson());
        a[QStringLiteral("ranks")] = ranks;
        m_attempts.append(a);
        ++m_attempt;
        m_failures.clear();
        m_report = FailureReport();
        m_failureSeen = false;
        m_firstFailedRank = -1;
        m_hung = false;
        note(tr("restarting the whole gang: attempt %1 of %2%3")
                 .arg(m_attempt + 1).arg(m_config.maxRestarts + 1)
                 .arg(m_config.checkpointDir().isEmpty() ? tr(" (no --checkpoint-dir: from scratch)")
                                                         : tr(" (resuming from the last checkpoint)")));
        launchAttempt();
        return;
    }

    m_finalized = true;
    m_endedUs = nowUs();
    m_watchTimer.stop();
    RunState final = RunState::Finished;
    if (ownFailure)
        final = RunState::Failed;
    else if (m_userStop)
        final = RunState::Stopped;
    else {
        for (const RankStatus &s : m_ranks) {
            if (s.state != RankState::Finished)
                final = RunState::Failed;
        }
    }
    if (!m_report.failures.isEmpty())
        m_record.writeFailureReport(m_report.toJson(), m_report.toText());
    m_state = final;
    note(tr("run %1: %2").arg(m_record.id(), runStateName(final)));
    writeState();
    if (m_logs)
        m_logs->close();
    if (m_metrics)
        m_metrics->close();
    QFile::remove(m_record.stopRequestPath());
    emit stateChanged(final);
    emit finished(final);
}

void RunController::setState(RunState state)
{
    if (m_state == state)
        return;
    m_state = state;
    writeState();
    emit stateChanged(state);
}

void RunController::setRankState(int rank, RankState state, const QString &detail)
{
    RankStatus &s = m_ranks[rank];
    if (s.state == state && detail.isEmpty())
        return;
    s.state = state;
    if (!detail.isEmpty() || isTerminal(state))
        s.detail = detail;
    // state.json is rewritten by the watch timer (at most every 0.5 s) and when the run ends:
    // writing it here made 512 ranks ending cost 512 whole-run rewrites, each with an fsync.
    m_stateDirty = true;
    emit rankChanged(rank);
}

void RunController::note(const QString &message)
{
    if (!m_record.directory().isEmpty())
        m_record.appendLauncherLog(message);
    emit launcherMessage(message);
}

QJsonObject RunController::stateJson() const
{
    QJsonObject o;
    o[QStringLiteral("id")] = m_record.id();
    o[QStringLiteral("name")] = m_record.name();
    o[QStringLiteral("state")] = runStateName(m_state);
    o[QStringLiteral("attempt")] = m_attempt;
    o[QStringLiteral("max_restarts")] = m_config.maxRestarts;
    o[QStringLiteral("world_size")] = int(m_ranks.size());
    o[QStringLiteral("launcher_pid")] = qint64(::getpid());
    o[QStringLiteral("launcher_host")] = QHostInfo::localHostName();
    o[QStringLiteral("created_us")] = m_record.createdUs();
    o[QStringLiteral("started_us")] = m_startedUs;
    o[QStringLiteral("ended_us")] = m_endedUs;
    o[QStringLiteral("master_addr")] = m_plan.masterAddress();
    o[QStringLiteral("master_port")] = m_masterPort;
    o[QStringLiteral("user_stop")] = m_userStop;
    o[QStringLiteral("hung")] = m_hung;
    o[QStringLiteral("error")] = m_errorMessage;
    o[QStringLiteral("root_cause_summary")] = m_rootCauseSummary;
    int root = -1;
    for (const RankFailure &f : m_report.failures)
        if (f.rootCause) {
            root = f.rank;
            break;
        }
    o[QStringLiteral("root_cause_rank")] = root;
    QJsonArray ranks;
    for (const RankStatus &s : m_ranks)
        ranks.append(s.toJson());
    o[QStringLiteral("ranks")] = ranks;
    QJsonArray attempts;
    for (const QJsonObject &a : m_attempts)
        attempts.append(a);
    o[QStringLiteral("attempts")] = attempts;
    o[QStringLiteral("detach")] = m_options.detach;
    o[QStringLiteral("detached")] = m_released;
    o[QStringLiteral("streams")] = streamsJson();
    return o;
}

QJsonArray RunController::streamsJson() const
{
    QJsonArray a;
    for (int r = 0; r < m_offsets.size(); ++r) {
        const StreamOffsets &o = m_offsets[r];
        QJsonObject j;
        j[QStringLiteral("rank")] = r;
        j[QStringLiteral("attempt")] = o.attempt;
        j[QStringLiteral("stdout_bytes")] = o.committed(0);
        j[QStringLiteral("stderr_bytes")] = o.committed(1);
        a.append(j);
    }
    return a;
}

bool RunController::allRanksStarted() const
{
    if (m_ranks.isEmpty())
        return false;
    for (int r = 0; r < m_ranks.size(); ++r) {
        if (!m_runtime[r].pidKnown && !m_runtime[r].exited)
            return false;
    }
    return true;
}

bool RunController::canDetach() const
{
    return !m_readOnly && !m_released && !m_finalized && !isTerminal(m_state) && m_options.detach
        && m_transport && m_transport->can(Transport::Capability::Detach) && allRanksStarted();
}

bool RunController::detachAndRelease(QString *error)
{
    if (!canDetach()) {
        QString why;
        if (m_readOnly || m_finalized || isTerminal(m_state))
            why = tr("run %1 is not running here").arg(m_record.id());
        else if (!m_options.detach || !m_transport || !m_transport->can(Transport::Capability::Detach))
            why = tr("run %1 was not launched detachable (a transport that can detach, and detach)")
                      .arg(m_record.id());
        else
            why = tr("run %1: not every rank has started yet").arg(m_record.id());
        if (error)
            *error = why;
        return false;
    }
    m_released = true;
    m_finalized = true;
    m_watchTimer.stop();
    note(tr("detached: the ranks go on on the nodes; re-attach with: rankdeck-cli attach %1").arg(m_record.id()));
    writeState();
    if (m_logs)
        m_logs->close();
    if (m_metrics)
        m_metrics->close();
    // Nothing the sessions still deliver may reach the record: the offsets above are final.
    Transport *t = m_transport.data();
    t->disconnect(this);
    m_transport = nullptr;
    if (!m_transportInjected)
        t->deleteLater();
    emit detached();
    return true;
}

RunController *RunController::reattach(const QString &runDirectory, const Options &options, QObject *parent,
                                       QString *error)
{
    RunRecord record;
    if (!record.open(runDirectory, error))
        return nullptr;
    const QJsonObject st = record.readState();
    const RunState state = runStateFromName(st.value(QStringLiteral("state")).toString());
    const RunInfo info = record.info();
    if (record.profile().isLocal()) {
        *error = tr("run %1 ran on the local profile: its ranks ended with their launcher, nothing to re-attach").arg(record.id());
        return nullptr;
    }
    if (st.isEmpty() || isTerminal(state)) {
        *error = tr("run %1 is not running (%2)").arg(record.id(), st.isEmpty() ? tr("no state") : runStateName(state));
        return nullptr;
    }
    if (!st.value(QStringLiteral("detached")).toBool() && !info.launcherGone) {
        *error = tr("run %1 is still followed by its launcher (pid %2 on %3)")
                     .arg(record.id())
                     .arg(st.value(QStringLiteral("launcher_pid")).toInteger())
                     .arg(st.value(QStringLiteral("launcher_host")).toString());
        return nullptr;
    }
    const QJsonArray streams = st.value(QStringLiteral("streams")).toArray();
    const QJsonArray ranks = st.value(QStringLiteral("ranks")).toArray();
    if (streams.size() != ranks.size() || ranks.isEmpty()) {
        *error = tr("%1: state.json has no stream offsets for its ranks (not a detachable run)")
                     .arg(record.directory());
        return nullptr;
    }

    Options o = options;
    o.detach = true;
    o.runId = record.id();
    auto *c = new RunController(record.profile(), record.config(), o, parent);
    c->m_record = record;
    c->m_plan = LaunchPlan::create(c->m_profile, c->m_config, record.id(),
                                   QStringLiteral(".cache/rankdeck/runs/") + record.id());
    if (!c->m_plan.isValid() || c->m_plan.worldSize() != ranks.size()) {
        *error = tr("run %1: its profile snapshot does not give the recorded ranks: %2")
                     .arg(record.id(), c->m_plan.error());
        delete c;
        return nullptr;
    }
    c->m_state = state;
    c->m_attempt = st.value(QStringLiteral("attempt")).toInt();
    c->m_startedUs = st.value(QStringLiteral("started_us")).toInteger();
    c->m_masterPort = st.value(QStringLiteral("master_port")).toInt();
    c->m_userStop = st.value(QStringLiteral("user_stop")).toBool();
    for (const QJsonValue &v : st.value(QStringLiteral("attempts")).toArray())
        c->m_attempts.append(v.toObject());
    const QJsonObject failure = record.readFailureReport();
    if (!failure.isEmpty()) {
        c->m_report = FailureReport::fromJson(failure);
        c->m_failures = c->m_report.failures;
        c->m_failureSeen = !c->m_failures.isEmpty();
    }
    const qint64 now = nowUs();
    for (int r = 0; r < ranks.size(); ++r) {
        c->m_ranks.append(RankStatus::fromJson(ranks[r].toObject()));
        RankRuntime rt;
        StreamOffsets off;
        const QJsonObject so = streams[r].toObject();
        off.attempt = so.value(QStringLiteral("attempt")).toInt();
        off.received[0] = so.value(QStringLiteral("stdout_bytes")).toInteger();
        off.received[1] = so.value(QStringLiteral("stderr_bytes")).toInteger();
        rt.lastStepChangeUs = now;
        if (isTerminal(c->m_ranks[r].state)) {
            rt.started = rt.exited = rt.pidKnown = true;
        } else if (off.attempt > 0) {
            rt.started = true;
        }
        c->m_ranks[r].lastHeartbeatUs = now;
        // A rank already seen ending is not attached, so the new transport cannot number its next
        // start after the old ones: no gang restart then (it would overwrite rank<R>.a1.*).
        if (rt.exited)
            c->m_config.maxRestarts = std::min(c->m_config.maxRestarts, c->m_attempt);
        c->m_runtime.append(rt);
        c->m_offsets.append(off);
        c->m_streams.push_back(std::make_unique<RankStream>(r));
    }
    c->m_logs = std::make_unique<LogStore>();
    QString storeError;
    if (!c->m_logs->open(record.directory(), &storeError))
        c->note(tr("cannot write logs to the run record: %1").arg(storeError));
    c->m_metrics = std::make_unique<MetricsStore>();
    if (!c->m_metrics->open(record.directory(), &storeError))
        c->note(tr("cannot write metrics to the run record: %1").arg(storeError));

    QString transportError;
    Transport *t = TransportFactory::create(c->m_profile, record.id(), o.sshInteraction, c, &transportError);
    if (!t || !t->can(Transport::Capability::Reattach)) {
        *error = t ? tr("run %1: its transport (%2) cannot re-attach").arg(record.id(), t->describe())
                   : transportError;
        delete t;
        delete c;
        return nullptr;
    }
    // This launcher may go away too: the ranks keep running, as when the run was launched.
    t->setDetached(true);
    c->m_transport = t;
    c->m_reattaching = true;
    c->connectTransport();
    c->note(tr("re-attaching to run %1 (%2 ranks on %3 node(s))")
                .arg(record.id()).arg(ranks.size()).arg(c->m_profile.nodes.size()));
    c->writeState();
    c->m_watchTimer.start();
    t->prepare(QString());
    return c;
}

void RunController::attachRanks()
{
    m_reattaching = false;
    for (int r = 0; r < m_ranks.size(); ++r) {
        RankRuntime &rt = m_runtime[r];
        if (rt.exited)
            continue;
        if (!rt.started) {
            // It never got a process before the launcher left (rank 0's port never came).
            setRankState(r, RankState::Stopped, tr("not started"));
            continue;
        }
        const StreamOffsets &o = m_offsets[r];
        const RankLaunchSpec spec = m_plan.spec(r, QString(), m_masterPort, false);
        m_transport->attachRank(spec, o.attempt, o.received[0], o.received[1]);
    }
    checkAllDone();
}

void RunController::writeState()
{
    m_stateDirty = false;
    if (m_readOnly || m_record.directory().isEmpty())
        return;
    m_record.writeState(stateJson());
}

RunController *RunController::reopen(const QString &runDirectory, QObject *parent, QString *error)
{
    auto *c = new RunController(parent);
    c->m_readOnly = true;
    if (!c->m_record.open(runDirectory, error)) {
        delete c;
        return nullptr;
    }
    c->m_profile = c->m_record.profile();
    c->m_config = c->m_record.config();
    const QJsonObject st = c->m_record.readState();
    c->m_state = runStateFromName(st.value(QStringLiteral("state")).toString());
    c->m_attempt = st.value(QStringLiteral("attempt")).toInt();
    c->m_startedUs = st.value(QStringLiteral("started_us")).toInteger();
    c->m_endedUs = st.value(QStringLiteral("ended_us")).toInteger();
    c->m_masterPort = st.value(QStringLiteral("master_port")).toInt();
    c->m_hung = st.value(QStringLiteral("hung")).toBool();
    c->m_errorMessage = st.value(QStringLiteral("error")).toString();
    c->m_rootCauseSummary = st.value(QStringLiteral("root_cause_summary")).toString();
    for (const QJsonValue &v : st.value(QStringLiteral("ranks")).toArray())
        c->m_ranks.append(RankStatus::fromJson(v.toObject()));
    for (const QJsonValue &v : st.value(QStringLiteral("attempts")).toArray())
        c->m_attempts.append(v.toObject());
    c->m_runtime.resize(c->m_ranks.size());
    const QJsonObject failure = c->m_record.readFailureReport();
    if (!failure.isEmpty())
        c->m_report = FailureReport::fromJson(failure);
    for (int r = 0; r < c->m_ranks.size(); ++r) {
        QFile f(runDirectory + QStringLiteral("/stacks-rank-%1.txt").arg(r));
        if (f.open(QIODevice::ReadOnly))
            c->m_stacks.insert(r, QString::fromUtf8(f.readAll()));
    }
    c->m_logs = std::make_unique<LogStore>();
    c->m_logs->open(c->m_record.directory());
    c->m_metrics = std::make_unique<MetricsStore>();
    c->m_metrics->open(c->m_record.directory());
    c->m_finalized = true;
    return c;
}

} // namespace rankdeck
