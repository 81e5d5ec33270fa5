// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/runcontroller.h"

#include "diagnosis/pythonfailure.h"
#include "run/flightrecordercollector.h"
#include "run/pipelinestages.h"
#include "run/rankeventhandlers.h"
#include "run/reattachplan.h"
#include "run/recordfollower.h"
#include "run/runfailures.h"
#include "run/runstatewriter.h"
#include "run/runwatch.h"
#include "run/stopescalation.h"
#include "run/transportreports.h"
#include "run/transportsetup.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "stream/logmetricextractor.h"
#include "transport/factory/transportfactory.h"
#include "util/clock.h"
#include "util/logging.h"
#include "util/signalname.h"

#include <csignal>

namespace rankdeck {

RunController::RunController(QObject *parent)
    : QObject(parent), m_stops(new StopEscalation(0, 0, this)),
      m_collector(new FlightRecorderCollector(this)),
      m_failures(new RunFailures(m_run, *this, *m_collector, *m_stops)),
      m_writer(new RunStateWriter(m_run, *this, *m_collector, false)),
      m_events(new RankEventHandlers(m_run, *this, *m_failures, *m_writer, *m_collector, false)),
      m_watch(new RunWatch(m_run, *this, *m_collector, {}, this))
{}

RunController::RunController(const Profile &profile, const TrainingConfig &config,
                             const Options &options, QObject *parent)
    : QObject(parent), m_options(options),
      m_stops(new StopEscalation(options.stopGraceMs, options.termGraceMs, this)),
      m_collector(new FlightRecorderCollector(this)),
      m_failures(new RunFailures(m_run, *this, *m_collector, *m_stops)),
      m_writer(new RunStateWriter(m_run, *this, *m_collector, options.detach)),
      m_events(new RankEventHandlers(m_run, *this, *m_failures, *m_writer, *m_collector,
                                     options.detach)),
      m_watch(new RunWatch(
          m_run, *this, *m_collector,
          {options.hangTimeoutSec, options.storeTimeoutSec, options.autoDumpStacks}, this))
{
    m_run.setUp(profile, config);
    connect(m_stops, &StopEscalation::message, this, &RunController::note);
    connect(m_collector, &FlightRecorderCollector::message, this, &RunController::note);
    connect(m_collector, &FlightRecorderCollector::verdictChanged, this,
            [this] { m_failures->applyCollectiveVerdict(); });
    connect(m_collector, &FlightRecorderCollector::stacksWanted, this, [this](const QList<int> &r) {
        for (int rank : r)
            dumpStacks(rank);
    });
    connect(this, &RunController::stacksReceived, m_collector,
            &FlightRecorderCollector::stacksReceived);
}

RunController::~RunController()
{
    // Never leave ranks behind when the controller goes away mid-run.
    if (m_transport && !m_run.readOnly && !m_run.released && !isTerminal(m_run.state)) {
        for (int r = 0; r < m_run.ranks.size(); ++r) {
            if (m_run.runtime[r].started && !m_run.runtime[r].exited)
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
    m_stops->setTransport(transport);
    if (transport)
        transport->setParent(this);
}

bool RunController::start(QString *error)
{
    if (m_run.readOnly || m_run.startedUs != 0) {
        *error = tr("this run was already started");
        return false;
    }
    const QString runsDir = m_options.runsDirectory.isEmpty() ? RunRecord::defaultRunsDirectory()
                                                              : m_options.runsDirectory;
    const QString runId = m_options.runId.isEmpty()
                              ? RunRecord::newRunId(m_run.config.effectiveName())
                              : m_options.runId;
    if (!m_run.record.create(runsDir, runId, m_run.config.effectiveName(), m_run.profile,
                             m_run.config, error))
        return false;
    // On a node: in the home directory, which each transport makes absolute there (a relative
    // path would be taken from the program's working directory, a --sync copy's).
    const QString nodeDir = m_run.profile.isLocal()
                                ? m_run.record.nodeRunDirectory()
                                : QStringLiteral("~/.cache/rankdeck/runs/") + runId;
    m_run.plan = LaunchPlan::create(m_run.profile, m_run.config, runId, nodeDir);
    if (!m_run.plan.isValid()) {
        *error = m_run.plan.error();
        m_run.errorMessage = *error;
        m_run.state = RunState::Failed;
        m_run.rootCauseSummary = *error;
        writeState();
        return false;
    }
    m_run.addPlannedRanks();
    openPipelines();

    if (!m_transport) {
        QString transportError;
        Transport *t = TransportFactory::create(m_run.profile, runId, m_options.sshInteraction,
                                                this, &transportError);
        if (!t) {
            *error = transportError;
            failRun(transportError);
            return false;
        }
        m_transport = t;
    }
    m_stops->setTransport(m_transport);
    for (const QString &line : TransportSetup::apply(*m_transport, m_run.config, m_options.detach))
        note(line);
    if (m_transport->can(Transport::Capability::Reattach))
        m_stages.openOffsetsFile(m_run.record.directory());
    connectTransport();
    setupFlightRecorder();
    m_run.startedUs = nowUs();
    m_run.state = RunState::Preparing;
    writeState();
    // A user's program runs under the supervisor, which the transport deploys instead.
    const QString binary = m_run.config.isProgram() && !m_options.supervisorPath.isEmpty()
                               ? m_options.supervisorPath
                               : m_options.workerPath;
    note(tr("run %1: profile %2, %3 ranks on %4 node(s), %5 %6")
             .arg(runId, m_run.profile.name, QString::number(m_run.plan.worldSize()),
                  QString::number(m_run.profile.nodes.size()),
                  m_run.config.isProgram() ? tr("supervisor") : tr("worker"), binary));
    m_watch->start();
    m_transport->prepare(binary);
    return true;
}

void RunController::connectTransport()
{
    connect(m_transport, &Transport::prepared, this, &RunController::onPrepared);
    connect(m_transport, &Transport::prepareFailed, this, &RunController::onPrepareFailed);
    connect(m_transport, &Transport::rankStarted, this, &RunController::onRankStarted);
    connect(m_transport, &Transport::rankOutput, this, &RunController::onRankOutput);
    connect(m_transport, &Transport::rankExited, this, &RunController::onRankExited);
    if (!m_reports) {
        QStringList hosts;
        for (const ProfileNode &node : std::as_const(m_run.profile.nodes))
            hosts << node.host;
        m_reports = new TransportReports(hosts, &m_run.record, this);
        connect(m_reports, &TransportReports::message, this, &RunController::note);
        connect(m_reports, &TransportReports::nodeProgress, this, &RunController::nodeProgress);
        connect(m_reports, &TransportReports::artifactKept, this, &RunController::artifactKept);
        connect(m_reports, &TransportReports::clockMeasured, this,
                [this](int node, const NodeClock &clock) {
                    m_run.clocks.insert(node, clock);
                    m_run.stateDirty = true;
                });
        connect(m_reports, &TransportReports::clockNoted, this, &RunController::nodeClocksChanged);
    }
    m_reports->follow(m_transport);
}

void RunController::onPrepared()
{
    if (m_run.finalized)
        return;
    if (m_reattaching) {
        attachRanks();
        return;
    }
    if (m_run.userStop) {
        for (int r = 0; r < m_run.ranks.size(); ++r)
            setRankState(r, RankState::Stopped, tr("not started"));
        checkAllDone();
        return;
    }
    launchAttempt();
}

void RunController::onPrepareFailed(const QString &message)
{
    if (m_run.finalized)
        return;
    // Transports name the node in their messages already.
    failRun(message);
}

void RunController::failRun(const QString &message)
{
    m_run.errorMessage = message;
    m_run.rootCauseSummary = message;
    note(message);
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        if (!isTerminal(m_run.ranks[r].state) && !m_run.runtime[r].started)
            setRankState(r, RankState::Stopped, tr("not started"));
    }
    m_run.policy.markFailed();
    checkAllDone();
    if (!m_run.finalized && m_run.ranks.isEmpty())
        finalize();
}

void RunController::launchAttempt()
{
    const qint64 t = nowUs();
    m_run.masterPort = 0;
    m_stops->reset();
    restartStatuses(t);
    setState(RunState::Starting);
    // Rank 0 first: it binds the store on a free port and tells us which (no port race).
    m_run.rank0StartUs = t;
    startRank(0, 0);
}

void RunController::restartStatuses(qint64 now)
{
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        m_run.pipelines[r]->restart();
        m_run.restartRank(r, now);
        emit rankChanged(r);
    }
}

void RunController::startRank(int rank, int masterPort)
{
    RankRuntime &rt = m_run.runtime[rank];
    if (rt.started)
        return;
    rt.started = true;
    m_run.pipelines[rank]->restartOffsets();
    const bool resume = m_run.attempt > 0 && !m_run.config.checkpointDir().isEmpty();
    RankLaunchSpec spec = m_run.plan.spec(
        rank, m_transport->workerPath(m_run.plan.rank(rank).nodeIndex), masterPort, resume);
    // torchrun's restart contract: a user's script resumes from its checkpoint by these.
    spec.environment.insert(QStringLiteral("TORCHELASTIC_RESTART_COUNT"),
                            QString::number(m_run.attempt));
    spec.environment.insert(QStringLiteral("TORCHELASTIC_MAX_RESTARTS"),
                            QString::number(m_run.config.maxRestarts));
    if (!m_run.config.syncDirectory.isEmpty())
        spec.workingDirectory = LaunchPlan::workingDirectoryIn(
            m_transport->syncedDirectory(spec.nodeIndex), m_run.config.workingDirectory);
    m_run.ranks[rank].lastHeartbeatUs = nowUs();
    setRankState(rank, RankState::Starting);
    m_transport->startRank(spec);
}

void RunController::onRankStarted(int rank, qint64 pid)
{
    if (rank < 0 || rank >= m_run.ranks.size())
        return;
    m_run.ranks[rank].pid = pid;
    m_run.ranks[rank].pidStartTicks = m_transport->rankStartTicks(rank);
    // A re-attach reports the start again; the process is the one that started back then.
    if (!m_run.runtime[rank].pidKnown || m_run.ranks[rank].startTimeUs == 0)
        m_run.ranks[rank].startTimeUs = nowUs();
    m_run.ranks[rank].lastHeartbeatUs = nowUs();
    m_run.runtime[rank].pidKnown = true;
    m_run.stateDirty = true;
    emit rankChanged(rank);
    if (!m_ranksStartedSent && allRanksStarted()) {
        m_ranksStartedSent = true;
        writeState();
        emit ranksStarted();
    }
    // A stop that came while the process was being created reaches it now.
    if (m_run.runtime[rank].launcherStopped)
        m_transport->writeStdin(rank, QByteArray("stop\n"));
}

void RunController::onRankOutput(int rank, StreamKind stream, const QByteArray &chunk)
{
    if (rank < 0 || rank >= int(m_run.pipelines.size()))
        return;
    m_run.pipelines[rank]->feed(stream, chunk);
}

void RunController::onRankExited(int rank, const RankExit &exit)
{
    if (rank < 0 || rank >= m_run.ranks.size() || m_run.runtime[rank].exited)
        return;
    if (rank < int(m_run.pipelines.size()))
        m_run.pipelines[rank]->finish();
    m_failures->rankExited(rank, exit);
    m_run.stateDirty = true;
    checkAllDone();
}

void RunController::stop()
{
    if (m_run.readOnly || isTerminal(m_run.state) || m_run.finalized)
        return;
    if (!m_run.userStop)
        note(tr("stop requested"));
    m_run.userStop = true;
    setState(RunState::Stopping);
    if (m_run.startedUs == 0)
        return;
    for (int r = 0; r < m_run.ranks.size(); ++r)
        stopRank(r, false);
    checkAllDone();
}

void RunController::kill()
{
    if (m_run.readOnly || isTerminal(m_run.state))
        return;
    m_run.userStop = true;
    note(tr("kill requested"));
    setState(RunState::Stopping);
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        RankRuntime &rt = m_run.runtime[r];
        if (!rt.started) {
            setRankState(r, RankState::Stopped, tr("not started"));
            continue;
        }
        if (!rt.exited) {
            rt.launcherStopped = true;
            m_stops->kill(r);
        }
    }
    checkAllDone();
}

void RunController::dumpStacks(int rank)
{
    if (m_run.readOnly || !m_transport)
        return;
    if (rank < 0)
        m_collector->collect(FlightRecorderCollector::Trigger::Stacks, nowUs());
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        if ((rank < 0 || r == rank) && m_run.runtime[r].started && !m_run.runtime[r].exited)
            m_transport->writeStdin(r, QByteArray("dump-stacks\n"));
    }
}

QString RunController::rootCauseSummary() const
{
    return m_writer->rootCauseSummary();
}

void RunController::recordFailure(const RankFailure &failure, const QString &pythonText)
{
    m_failures->record(failure, pythonText);
}

void RunController::stopRank(int rank, bool consequence)
{
    m_failures->stopRank(rank, consequence);
}

void RunController::writeState()
{
    m_writer->write();
}

void RunController::checkAllDone()
{
    if (m_run.finalized || m_run.startedUs == 0)
        return;
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        if (!isTerminal(m_run.ranks[r].state))
            return;
        if (m_run.runtime[r].started && !m_run.runtime[r].exited)
            return;
    }
    // Ranks may still deliver events (a crash event just before exiting); finish in the next
    // turn of the event loop so that everything queued is handled first.
    QTimer::singleShot(0, this, [this] {
        if (m_run.finalized)
            return;
        for (const RankStatus &s : std::as_const(m_run.ranks)) {
            if (!isTerminal(s.state))
                return;
        }
        finalize();
    });
}

void RunController::finalize()
{
    const bool ownFailure = m_run.policy.anyOwnFailure() || !m_run.errorMessage.isEmpty();

    if (ownFailure && !m_run.userStop && m_run.errorMessage.isEmpty() &&
        m_run.attempt < m_run.config.maxRestarts) {
        m_run.archiveAttempt(nowUs());
        m_stages.forgetPython(m_run);
        m_collector->reset();
        note(tr("restarting the whole gang: attempt %1 of %2%3")
                 .arg(m_run.attempt + 1)
                 .arg(m_run.config.maxRestarts + 1)
                 .arg(m_run.config.checkpointDir().isEmpty()
                          ? tr(" (no --checkpoint-dir: from scratch)")
                          : tr(" (resuming from the last checkpoint)")));
        launchAttempt();
        return;
    }

    m_run.finalized = true;
    m_run.endedUs = nowUs();
    m_watch->stop();
    const RunState final = m_run.finalState(ownFailure);
    if (!m_run.policy.report().isEmpty())
        m_run.record.writeFailureReport(m_run.policy.report().toJson(),
                                        m_run.policy.report().toText());
    m_run.state = final;
    if (!m_run.recordProblem.isEmpty())
        note(m_writer->recordGapSummary());
    note(tr("run %1: %2").arg(m_run.record.id(), runStateName(final)));
    writeState();
    m_run.closeRecord();
    emit stateChanged(final);
    emit finished(final);
}

void RunController::setState(RunState state)
{
    if (m_run.state == state)
        return;
    qCDebug(lcRun).noquote() << m_run.record.id() << runStateName(m_run.state) << "->"
                             << runStateName(state);
    m_run.state = state;
    writeState();
    emit stateChanged(state);
}

void RunController::setRankState(int rank, RankState state, const QString &detail)
{
    RankStatus &s = m_run.ranks[rank];
    if (s.state == state && detail.isEmpty())
        return;
    s.state = state;
    if (!detail.isEmpty() || isTerminal(state))
        s.detail = detail;
    // state.json is rewritten by the watch timer (at most every 0.5 s) and when the run ends:
    // writing it here made 512 ranks ending cost 512 whole-run rewrites, each with an fsync.
    m_run.stateDirty = true;
    emit rankChanged(rank);
}

void RunController::note(const QString &message)
{
    qCDebug(lcRun).noquote() << m_run.record.id() << message;
    if (!m_run.record.directory().isEmpty())
        m_run.record.appendLauncherLog(message);
    emit launcherMessage(message);
}

bool RunController::canDetach() const
{
    return !m_run.readOnly && !m_run.released && !m_run.finalized && !isTerminal(m_run.state) &&
           m_options.detach && m_transport && m_transport->can(Transport::Capability::Detach) &&
           allRanksStarted();
}

bool RunController::detachAndRelease(QString *error)
{
    if (!canDetach()) {
        QString why;
        if (m_run.readOnly || m_run.finalized || isTerminal(m_run.state))
            why = tr("run %1 is not running here").arg(m_run.record.id());
        else if (!m_options.detach || !m_transport ||
                 !m_transport->can(Transport::Capability::Detach))
            why = tr("run %1 was not launched detachable (a transport that can detach, and detach)")
                      .arg(m_run.record.id());
        else
            why = tr("run %1: not every rank has started yet").arg(m_run.record.id());
        if (error)
            *error = why;
        return false;
    }
    m_run.released = true;
    m_run.finalized = true;
    m_watch->stop();
    note(tr("detached: the ranks go on on the nodes; re-attach with: rankdeck-cli attach %1")
             .arg(m_run.record.id()));
    writeState();
    m_run.closeStores();
    // Nothing the sessions still deliver may reach the record: the offsets above are final.
    Transport *t = m_transport.data();
    t->disconnect(this);
    t->disconnect(m_reports);
    m_transport = nullptr;
    if (!m_transportInjected)
        t->deleteLater();
    emit detached();
    return true;
}

RunController *RunController::reattach(const QString &runDirectory, const Options &options,
                                       QObject *parent, QString *error)
{
    ReattachPlan plan;
    if (!plan.load(runDirectory, error))
        return nullptr;
    const RunRecord &record = plan.record();
    const RunStateFile &st = plan.state();

    Options o = options;
    o.detach = true;
    o.runId = record.id();
    auto *c = new RunController(record.profile(), record.config(), o, parent);
    c->m_run.restoreFrom(plan, nowUs());
    c->openPipelines();
    for (int r = 0; r < c->m_run.ranks.size(); ++r)
        c->m_run.pipelines[r]->setOffsets(st.streams.value(r));
    c->m_stages.openOffsetsFile(record.directory());
    c->setupFlightRecorder();
    c->m_collector->restoreStateJson(st.flightRecorder);

    QString transportError;
    Transport *t = TransportFactory::create(c->m_run.profile, record.id(), o.sshInteraction, c,
                                            &transportError);
    if (!t || !t->can(Transport::Capability::Reattach)) {
        *error =
            t ? tr("run %1: its transport (%2) cannot re-attach").arg(record.id(), t->describe())
              : transportError;
        delete t;
        delete c;
        return nullptr;
    }
    // This launcher may go away too: the ranks keep running, as when the run was launched.
    t->setDetached(true);
    c->m_transport = t;
    c->m_stops->setTransport(t);
    c->m_reattaching = true;
    c->connectTransport();
    c->note(tr("re-attaching to run %1 (%2 ranks on %3 node(s))")
                .arg(record.id(), QString::number(c->m_run.ranks.size()),
                     QString::number(c->m_run.profile.nodes.size())));
    c->writeState();
    c->m_watch->start();
    t->prepare(QString());
    return c;
}

void RunController::attachRanks()
{
    m_reattaching = false;
    const QList<int> neverStarted = ReattachPlan::attach(
        *m_transport, m_run.plan, m_run.runtime, m_writer->streamOffsets(), m_run.masterPort);
    for (int r : neverStarted)
        setRankState(r, RankState::Stopped, tr("not started"));
    checkAllDone();
}

void RunController::openPipelines()
{
    for (const QString &problem : m_stages.open(m_run, m_events.get()))
        note(problem);
}

void RunController::setupFlightRecorder()
{
    m_collector->setRun(
        int(m_run.ranks.size()),
        [this](int rank, const QByteArray &line) {
            if (m_transport)
                m_transport->writeStdin(rank, line);
        },
        [this] { return m_run.livingRanks(); });
    m_collector->setRunDirectory(m_run.record.directory());
    m_collector->setOffReason(LaunchPlan::flightRecorderOffReason(m_run.profile, m_run.config));
    setupProfiler();
}

RunController *RunController::reopen(const QString &runDirectory, QObject *parent, QString *error)
{
    auto *c = new RunController(parent);
    RunStateFile st;
    if (!c->m_run.reopen(runDirectory, &st, error)) {
        delete c;
        return nullptr;
    }
    c->m_collector->setRunDirectory(c->m_run.record.directory());
    c->m_collector->restoreStateJson(st.flightRecorder);
    if (!isTerminal(c->m_run.state)) { // recorded by rankdeck-cli, another GUI, a detached launcher
        auto *f = new RecordFollower(c->m_run, *c, *c->m_collector, c);
        connect(f, &RecordFollower::stateChanged, c, &RunController::stateChanged);
        connect(f, &RecordFollower::nodeClocksChanged, c, &RunController::nodeClocksChanged);
        connect(f, &RecordFollower::finished, c, &RunController::finished);
        f->start();
    }
    return c;
}

} // namespace rankdeck
