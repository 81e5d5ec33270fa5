// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which failure of an attempt is the root cause and which are only its consequences, from what
// was observed alone (the failures, the flight recorder's verdict, the ranks' stacks):
//   - the earliest failure by the ranks' own timestamps is the root cause (FailureReport::build);
//   - a failure that reads like the echo of another rank's death (peer closed the connection,
//     collective timeout) is a consequence whenever some rank failed for a reason of its own;
//   - a desync, or ranks missing from a collective while the others wait, names the culprits:
//     each gets an entry of kind "collective", and the victims' own failures become consequences.
// FailurePolicy (run/) feeds it as the attempt goes and marks the rank table; a test, `show` or a
// second GUI can judge a run from its files the same way.
#pragma once

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/failurereport.h"
#include "record/runstate.h"

#include <QHash>
#include <QList>
#include <QString>

namespace rankdeck {

class FailureVerdict
{
public:
    // observed: every failure seen, one per rank (a rank's later reports merged into its first).
    // collective: the flight recorder's verdict (nullptr: none), seen at collectiveUs. ranks:
    // the rank table, for a culprit's host and for a hung rank's stacks.
    static FailureVerdict judge(QList<RankFailure> observed, const CollectiveVerdict *collective,
                                qint64 collectiveUs, const QList<RankStatus> &ranks,
                                const QHash<int, QString> &stacks);

    // Peer closed the connection, collective timed out, Gloo's pair read/write error, c10d's
    // DistBackendError/DistNetworkError, NCCL's communicator abort, … : an echo of another
    // rank's death.
    static bool looksLikePeerFailure(const QString &text);
    // Same, on the failure's message, exception type and the Python exception that ended it.
    static bool looksLikePeerFailure(const RankFailure &failure);
    // "rank 1 (node-a): exit code 3: bad batch" for the report's root cause; empty without one.
    static QString summaryOf(const FailureReport &report);

    const FailureReport &report() const { return m_report; }
    // The rank of the root cause; -1 when nothing failed.
    int rootCauseRank() const;
    // A victim of the collective's culprits failed by itself (its failure is now a consequence).
    bool victimFailed() const { return m_victimFailed; }

private:
    FailureReport m_report;
    bool m_victimFailed = false;
};

} // namespace rankdeck
