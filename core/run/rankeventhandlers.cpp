// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankeventhandlers.h"

#include "diagnosis/rankstackdump.h"
#include "run/flightrecordercollector.h"
#include "run/rankeventtracker.h"
#include "run/runactions.h"
#include "run/runfailures.h"
#include "run/runstatewriter.h"
#include "store/samplewindow.h"
#include "util/clock.h"
#include "util/translation.h"
#include "wire/wireprotocol.h"

#include <algorithm>

namespace rankdeck {

RankEventHandlers::RankEventHandlers(RunData &run, RunActions &actions, RunFailures &failures,
                                     RunStateWriter &writer, FlightRecorderCollector &collector,
                                     bool detach)
    : m_run(run), m_actions(actions), m_failures(failures), m_writer(writer),
      m_collector(collector), m_detach(detach), m_starter(run, actions)
{}

void RankEventHandlers::pipelineRecorded()
{
    m_writer.checkRecord();
}

void RankEventHandlers::pipelineOffsetsMoved(int)
{
    if (m_detach)
        m_run.stateDirty = true;
}

void RankEventHandlers::pipelinePrintedLoss(int rank, double value, qint64 step)
{
    if (rank >= m_run.ranks.size())
        return;
    m_run.ranks[rank].loss = value;
    m_run.ranks[rank].printedStep = step;
    m_run.stateDirty = true;
    m_actions.announceRank(rank);
}

void RankEventHandlers::pipelineLoggedLoss(int rank, double value)
{
    m_run.ranks[rank].loss = value;
    m_run.stateDirty = true;
    m_actions.announceRank(rank);
}

void RankEventHandlers::pipelineLines(const QList<LogLine> &lines)
{
    m_actions.announceLines(lines);
}

void RankEventHandlers::pipelineEventDone(const WorkerEvent &event)
{
    m_actions.announceEvent(event);
}

void RankEventHandlers::pipelineMessage(const QString &message)
{
    m_actions.note(message);
}

void RankEventHandlers::pipelineActivity(int rank)
{
    if (rank >= m_run.runtime.size())
        return;
    // What a user's program prints is its progress (the hang watch judges it by that).
    RankRuntime &rt = m_run.runtime[rank];
    const qint64 now = nowUs();
    if (rt.lastActivityUs > 0)
        rt.maxActivityIntervalUs = std::max(rt.maxActivityIntervalUs, now - rt.lastActivityUs);
    rt.lastActivityUs = now;
    RankStatus &s = m_run.ranks[rank];
    // What a rank prints while the launcher stops it (a survivor's "Connection closed by peer"
    // traceback, torch's shutdown warnings) is no progress: it must not clear the hang that
    // the stop ends, or `runs` loses why the run stopped (issue 27, defect 5).
    if (s.hung && !s.silent && !isTerminal(s.state) && !rt.launcherStopped && !m_run.userStop) {
        s.hung = false;
        s.detail.clear();
        m_run.runtime[rank].dumpRequested = false;
        m_actions.note(tr("rank %1 prints again").arg(rank));
        m_run.stateDirty = true;
        m_actions.announceRank(rank);
    }
}

const QHash<int, RankEventHandlers::EventHandler> &RankEventHandlers::eventHandlers()
{
    // What the run does with an event beyond what the tracker reads from it; the rank's own
    // pipeline has taken what its stages need (a Step's metric names, a TfEvents' bytes).
    static const QHash<int, EventHandler> handlers{
        {int(WorkerEvent::Type::Hello), &RankEventHandlers::onHello},
        {int(WorkerEvent::Type::Store), &RankEventHandlers::onStore},
        {int(WorkerEvent::Type::Error), &RankEventHandlers::onFailureEvent},
        {int(WorkerEvent::Type::Crash), &RankEventHandlers::onFailureEvent},
        {int(WorkerEvent::Type::FlightRecorder), &RankEventHandlers::onFlightRecorder},
        {int(WorkerEvent::Type::Stacks), &RankEventHandlers::onStacks},
        {int(WorkerEvent::Type::Samples), &RankEventHandlers::onSamples},
        {int(WorkerEvent::Type::Profile), &RankEventHandlers::onProfile},
    };
    return handlers;
}

void RankEventHandlers::pipelineEvent(int rank, const WorkerEvent &e)
{
    RankStatus &s = m_run.ranks[rank];
    RankRuntime &rt = m_run.runtime[rank];
    const RankEventTracker::Result tracked = RankEventTracker::apply(e, nowUs(), s, rt);
    if (tracked.heartbeatsResumed)
        m_actions.note(tr("rank %1 is sending heartbeats again").arg(rank));
    if (tracked.progressResumed)
        m_actions.note(tr("rank %1 makes progress again (step %2)").arg(rank).arg(s.step));
    if (tracked.newState)
        m_actions.setRankState(rank, *tracked.newState, QString());
    if (tracked.newState == RankState::Running && m_run.state == RunState::Starting) {
        bool all = true;
        for (const RankStatus &o : m_run.ranks)
            all = all && o.state == RankState::Running;
        if (all)
            m_actions.setState(RunState::Running);
    }
    if (tracked.stepChanged) {
        m_run.stateDirty = true;
        m_actions.announceRank(rank);
    }
    if (const EventHandler handler = eventHandlers().value(int(e.type())))
        (this->*handler)(rank, e);
}

void RankEventHandlers::onHello(int, const WorkerEvent &e)
{
    // torchrun's warning, once per run: the supervisor set OMP_NUM_THREADS=1 on a node with
    // several ranks because the user had not set it.
    if (!m_ompNoticeGiven && e.string(wire::field::EnvironmentDefaults)
                                 .split(QLatin1Char(','))
                                 .contains(QStringLiteral("OMP_NUM_THREADS=1"))) {
        m_ompNoticeGiven = true;
        m_actions.note(
            tr("OMP_NUM_THREADS=1 on each rank of a node with several ranks, as torchrun "
               "sets it, so that they do not overload its cores; tune it with --env "
               "OMP_NUM_THREADS=N"));
    }
}

void RankEventHandlers::onStore(int rank, const WorkerEvent &e)
{
    if (rank == 0 && e.port() > 0 && m_run.masterPort == 0 && !m_run.policy.failureSeen() &&
        !m_run.userStop) {
        m_run.masterPort = e.port();
        m_actions.note(tr("rank 0 serves the rendezvous store on %1:%2")
                           .arg(m_run.plan.masterAddress())
                           .arg(m_run.masterPort));
        m_starter.startOthers(m_run.masterPort);
        m_run.stateDirty = true;
    }
}

void RankEventHandlers::onFailureEvent(int rank, const WorkerEvent &e)
{
    const RankStatus &s = m_run.ranks[rank];
    m_run.runtime[rank].ownFailure = true;
    // A supervised Python program: the supervisor's `python` field (torchelastic's error
    // file) is exact; otherwise what the rank printed on its stderr.
    m_failures.record(
        FailurePolicy::failureFromEvent(e, s, nowUs(), m_run.clocks.value(s.nodeIndex)),
        e.string("python"));
}

void RankEventHandlers::onFlightRecorder(int rank, const WorkerEvent &e)
{
    m_collector.handleEvent(rank, e, nowUs());
}

void RankEventHandlers::onStacks(int rank, const WorkerEvent &e)
{
    // A user's Python program answers with its Python threads too (the supervisor's
    // faulthandler dump); they travel with the native ones.
    const QString dump = RankStackDump{e.stack(), e.string("python")}.joined();
    m_run.stacks.insert(rank, dump);
    m_run.record.appendStacks(rank, e.timeUs(), e.string("reason"), dump);
    m_actions.announceStacks(rank, dump);
}

void RankEventHandlers::onSamples(int rank, const WorkerEvent &e)
{
    m_run.samples.add(rank, SampleWindow::fromEvent(e));
}

void RankEventHandlers::onProfile(int rank, const WorkerEvent &e)
{
    m_actions.profileEvent(rank, e);
}

void RankEventHandlers::pipelinePythonChanged(int rank)
{
    m_failures.pythonChanged(rank);
}

} // namespace rankdeck
