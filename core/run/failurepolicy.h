// SPDX-License-Identifier: GPL-3.0-or-later
//
// The failure policy of one attempt: what each rank's end means, and when the policy starts.
//   - The first failure of its own starts the policy (record() says so): the controller then
//     stops every other rank, and those are reported as consequences.
//   - Which failure is the root cause and which are consequences is FailureVerdict's judgement
//     (diagnosis/): the earliest by the ranks' own microsecond timestamps (not the order in which
//     the launcher noticed them, and not the lowest rank), echoes of a peer's death and a
//     desync's victims as consequences. This class feeds it as the attempt goes.
// No Qt objects, no timers: the controller feeds it observations, so that every rule is tested
// on plain data.
#pragma once

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/rankruntime.h"
#include "record/runstate.h"
#include "stream/workerevent.h"
#include "transport/transport.h"

#include <QHash>
#include <QList>
#include <QString>

#include <optional>

namespace rankdeck {

class FailurePolicy
{
public:
    // What a rank's exit means, and what to do with it.
    struct ExitVerdict
    {
        enum class Action
        {
            None,              // nothing to report (finished, or stopped by us alone)
            CompleteOwnReport, // it reported its own error/crash; the exit adds code/signal
            Consequence,       // stopped by us because another rank failed
            NewFailure,        // failed with nothing reported before (exit, signal, lost)
        };
        Action action = Action::None;
        RankState state = RankState::Finished;
        QString how;         // "exit code 3", "killed by SIGKILL", "connection to … lost"
        RankFailure failure; // for every action but None
    };

    // status: the rank's status with the exit applied (endTimeUs, exitCode, signal);
    // bySignalWeSent: the signal that ended it was one the launcher sent (for a signal the
    // transport could not name: the launcher sent it one).
    static ExitVerdict classifyExit(const RankExit &exit, const RankStatus &status,
                                    const RankRuntime &runtime, bool bySignalWeSent,
                                    const QString &stacks);
    // What a rank's own `error` or `crash` event says (nowUs: when its event has no time). The
    // event's time is the rank's clock: `clock` (its node's) puts it on the launcher's.
    static RankFailure failureFromEvent(const WorkerEvent &event, const RankStatus &status,
                                        qint64 nowUs, const NodeClock &clock = {});
    // One failure observed. One entry per rank and attempt: the first (most precise) report
    // wins, a later one (its exit after its crash event) adds code and signal. true when it is
    // the attempt's first failure of its own: the policy starts (stop everybody else).
    bool record(const RankFailure &failure, QList<RankStatus> &ranks,
                const QHash<int, QString> &stacks);
    // A rank stopped because of the failure (never starts the policy again).
    void addConsequence(const RankFailure &failure, QList<RankStatus> &ranks,
                        const QHash<int, QString> &stacks);
    // The run failed before any rank could (a node could not be prepared).
    void markFailed() { m_failureSeen = true; }
    // The flight recorder's verdict (nullptr: none). A desync, or ranks missing from a
    // collective while the others wait, names the root cause: each culprit gets an entry of
    // kind "collective" (which wins the root cause over the first failure by time, since under
    // a desync the first rank to die is a victim), and the failures of the victims become
    // consequences that say so. Other kinds change nothing. atUs: when it was seen.
    void setCollectiveVerdict(const CollectiveVerdict *verdict, qint64 atUs,
                              QList<RankStatus> &ranks, const QHash<int, QString> &stacks);

    bool failureSeen() const { return m_failureSeen; }
    int firstFailedRank() const { return m_firstFailedRank; }
    const FailureReport &report() const { return m_report; }
    // "rank 1 (node-a): exit code 3: bad batch"; empty when nothing failed.
    QString rootCauseSummary() const { return m_rootCauseSummary; }
    int rootCauseRank() const;
    // Any failure of a rank's own (not only consequences).
    bool anyOwnFailure() const;

    // A new attempt starts with nothing observed.
    void reset();
    // Re-attach: the report a previous launcher wrote, with its summary and root cause.
    void restore(const FailureReport &report);

private:
    void rebuild(QList<RankStatus> &ranks, const QHash<int, QString> &stacks);

    QList<RankFailure> m_failures; // observed in this attempt
    std::optional<CollectiveVerdict> m_collective;
    qint64 m_collectiveUs = 0;
    bool m_victimFailed = false; // a victim's own failure was made a consequence
    FailureReport m_report;
    QString m_rootCauseSummary;
    bool m_failureSeen = false;
    int m_firstFailedRank = -1;
};

} // namespace rankdeck
