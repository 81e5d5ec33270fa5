// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/runfailures.h"

#include "diagnosis/failuregrouping.h"

#include "run/flightrecordercollector.h"
#include "run/rankpipeline.h"
#include "run/runactions.h"
#include "run/stopescalation.h"
#include "util/clock.h"
#include "util/translation.h"

#include <csignal>

namespace rankdeck {

RunFailures::RunFailures(RunData &run, RunActions &actions, FlightRecorderCollector &collector,
                         StopEscalation &stops)
    : m_run(run), m_actions(actions), m_collector(collector), m_stops(stops)
{}

RankFailure RunFailures::withPython(RankFailure failure, const QString &pythonText)
{
    if (!m_run.config.isProgram() || failure.rank < 0 ||
        failure.rank >= int(m_run.pipelines.size()))
        return failure;
    return m_run.pipelines[failure.rank]->withPython(failure, pythonText);
}

void RunFailures::pythonChanged(int rank)
{
    for (const RankFailure &f : m_run.policy.report().failures) {
        if (f.rank != rank)
            continue;
        const RankFailure enriched = withPython(f);
        if (enriched != f) {
            m_run.policy.record(enriched, m_run.ranks, m_run.stacks);
            rebuildReport();
        }
        return;
    }
}

void RunFailures::record(const RankFailure &given, const QString &pythonText)
{
    const RankFailure failure = withPython(given, pythonText);
    const bool starts = m_run.policy.record(failure, m_run.ranks, m_run.stacks);
    rebuildReport();
    if (starts)
        triggerFailurePolicy(failure.rank);
}

void RunFailures::rebuildReport()
{
    m_run.rootCauseSummary = m_run.policy.rootCauseSummary();
    m_run.stateDirty = true;
    m_actions.announceReport();
}

void RunFailures::triggerFailurePolicy(int failedRank)
{
    // The living ranks' flight recorders first: a desync that made this rank fail shows only
    // there, and stopping them would lose it. Their stop waits for that, at most 2 s.
    m_collector.collectThen(FlightRecorderCollector::Trigger::RankFailed, nowUs(),
                            [this, failedRank] { stopOthers(failedRank); });
}

void RunFailures::stopOthers(int failedRank)
{
    QList<int> others;
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        if (r != failedRank && !isTerminal(m_run.ranks[r].state) && !m_run.runtime[r].exited)
            others << r;
    }
    m_actions.note(
        others.isEmpty()
            ? tr("rank %1 failed").arg(failedRank)
            : tr("rank %1 failed; stopping %2").arg(failedRank).arg(formatRankList(others)));
    if (!isTerminal(m_run.state))
        m_actions.setState(RunState::Stopping);
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        if (r != failedRank)
            stopRank(r, true);
    }
    // The failed rank itself may still be alive (it sent an error and is tearing down): make
    // sure it ends too, without counting it as stopped by us.
    if (failedRank >= 0 && failedRank < m_run.ranks.size() && m_run.runtime[failedRank].started &&
        !m_run.runtime[failedRank].exited)
        m_stops.killIfStillRunningAfterGrace(failedRank);
}

void RunFailures::stopRank(int rank, bool consequence)
{
    RankRuntime &rt = m_run.runtime[rank];
    if (rt.exited || isTerminal(m_run.ranks[rank].state))
        return;
    if (!rt.started) {
        rt.launcherStopped = true;
        rt.consequence = consequence;
        m_actions.setRankState(rank, RankState::Stopped, tr("not started"));
        if (consequence && m_run.policy.firstFailedRank() >= 0) {
            RankFailure f;
            f.rank = rank;
            f.host = m_run.ranks[rank].host;
            f.localRank = m_run.ranks[rank].localRank;
            f.timeUs = nowUs();
            f.kind = QStringLiteral("consequence");
            f.reason =
                tr("never started: rank %1 failed first").arg(m_run.policy.firstFailedRank());
            m_run.policy.addConsequence(f, m_run.ranks, m_run.stacks);
            rebuildReport();
        }
        m_actions.checkAllDone();
        return;
    }
    if (rt.launcherStopped)
        return;
    rt.launcherStopped = true;
    rt.consequence = consequence;
    m_stops.stop(rank);
}

void RunFailures::rankExited(int rank, const RankExit &exit)
{
    RankRuntime &rt = m_run.runtime[rank];
    rt.exited = true;
    rt.started = true;
    m_stops.rankExited(rank);
    m_collector.rankExited(rank, nowUs());
    RankStatus &s = m_run.ranks[rank];
    s.endTimeUs = exit.timeUs > 0 ? exit.timeUs : nowUs();
    s.exitCode = exit.crashed ? 0 : exit.exitCode;
    s.signal = exit.crashed ? exit.signal : 0;
    // A wrapper reports a signal the rank died of as 128+N; a transport that cannot name the
    // signal says 0, and then any signal the launcher sent counts.
    // A rank asked to stop is ended by its supervisor's SIGTERM, then SIGKILL, which that
    // supervisor mirrors (-15, as torchrun reports it): those are the launcher's doing too.
    const int diedOf = exit.crashed ? exit.signal : exit.exitCode - 128;
    const bool byStop = rt.launcherStopped && (diedOf == SIGTERM || diedOf == SIGKILL);
    const bool bySignalWeSent = exit.crashed && exit.signal <= 0
                                    ? m_stops.sentAny(rank) || rt.launcherStopped
                                    : m_stops.sent(rank, diedOf) || byStop;
    applyExit(rank,
              FailurePolicy::classifyExit(exit, s, rt, bySignalWeSent, m_run.stacks.value(rank)));
    // Rank 0 gone before it told us its port: the others can never start.
    if (rank == 0 && m_run.masterPort == 0 && !m_run.policy.failureSeen() &&
        m_run.ranks.size() > 1 && !m_run.userStop) {
        RankFailure f;
        f.rank = 0;
        f.host = s.host;
        f.timeUs = s.endTimeUs;
        f.kind = QStringLiteral("exit");
        f.message = tr("rank 0 ended before it reported its rendezvous port");
        record(f);
    }
}

void RunFailures::applyExit(int rank, const FailurePolicy::ExitVerdict &v)
{
    using Action = FailurePolicy::ExitVerdict::Action;
    switch (v.action) {
    case Action::CompleteOwnReport:
        record(v.failure);
        m_actions.setRankState(rank, v.state, v.how);
        break;
    case Action::Consequence:
        m_run.policy.addConsequence(withPython(v.failure), m_run.ranks, m_run.stacks);
        rebuildReport();
        m_actions.setRankState(rank, v.state, v.how);
        break;
    case Action::NewFailure:
        m_actions.setRankState(rank, v.state, v.how);
        record(v.failure);
        break;
    case Action::None:
        m_actions.setRankState(rank, v.state, v.state == RankState::Finished ? QString() : v.how);
        break;
    }
}

void RunFailures::applyCollectiveVerdict()
{
    for (int r : m_collector.applyTo(m_run.ranks))
        m_actions.announceRank(r);
    m_run.policy.setCollectiveVerdict(m_collector.shownVerdict(), m_collector.verdictTimeUs(),
                                      m_run.ranks, m_run.stacks);
    rebuildReport();
    // The stop does not wait for the verdict: one that comes after the end goes in too.
    if (m_run.finalized && !m_run.readOnly && !m_run.policy.report().isEmpty())
        m_run.record.writeFailureReport(m_run.policy.report().toJson(),
                                        m_run.policy.report().toText());
    m_actions.writeState();
    m_actions.announceVerdict();
}

} // namespace rankdeck
