// SPDX-License-Identifier: GPL-3.0-or-later
// RunController::verdictFacts(): apart from runcontroller.cpp, which is long enough, and the
// only part of the controller that reads the verdicts' own types.
#include "run/runcontroller.h"

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/failureverdict.h"
#include "run/flightrecordercollector.h"

namespace rankdeck {

RunVerdictFacts RunController::verdictFacts(int straggler) const
{
    const RunController &run = *this;
    RunVerdictFacts f;
    f.stuck = run.isHung();
    f.userStop = run.userStopped();
    f.straggler = straggler >= 0 ? straggler : run.straggler();
    const FailureReport &report = run.failureReport();
    if (const RankFailure *root = report.rootCause())
        f.rootCauseRank = root->rank;
    for (const RankStatus &s : run.rankStatuses())
        f.stuck = f.stuck || (!isTerminal(s.state) && (s.hung || s.silent));
    if (const CollectiveVerdict *v = run.flightRecorder().shownVerdict()) {
        f.desynced = v->kind() == CollectiveVerdict::Kind::Desync;
        // Without a hang these kinds mean nothing (a healthy run dumped at any moment shows
        // ranks a collective apart); the collector shows them only once one is suspected.
        f.stuck = f.stuck || v->kind() == CollectiveVerdict::Kind::MissingRanks ||
                  v->kind() == CollectiveVerdict::Kind::AllEnteredNoneCompleted;
        f.culprits = v->culprits();
    }
    for (const RankFailure &failure : report.failures) {
        if (failure.rootCause)
            continue;
        if (failure.kind == QLatin1String("consequence") ||
            FailureVerdict::looksLikePeerFailure(failure))
            f.consequences.append(failure.rank);
    }
    return f;
}

} // namespace rankdeck
