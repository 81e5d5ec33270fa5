// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a run does about failures: a rank's failure recorded with its Python side (the rank's
// pipeline has it) and the report rebuilt; the first one's consequences, after the living
// ranks' flight recorders were collected (a desync shows only there): every other rank stopped
// (StopEscalation), a rank never started counted as a consequence; a rank's exit judged
// (FailurePolicy::classifyExit: the launcher's doing, the rank's own failure, a consequence);
// and the collective verdict folded into the report, even one that comes after the end.
// The decisions are FailurePolicy's; this applies them to the run (RunActions).
#pragma once

#include "diagnosis/failurereport.h"
#include "run/failurepolicy.h"
#include "run/rundata.h"
#include "transport/transport.h"

#include <QString>

namespace rankdeck {

class FlightRecorderCollector;
class RunActions;
class StopEscalation;

class RunFailures
{
public:
    RunFailures(RunData &run, RunActions &actions, FlightRecorderCollector &collector,
                StopEscalation &stops);

    // pythonText: the traceback of torchelastic's error file (a supervised program's `error`
    // event), which wins over what the rank printed.
    void record(const RankFailure &given, const QString &pythonText = {});
    // The rank's traceback or faulthandler dump completed after its failure was recorded.
    void pythonChanged(int rank);
    // The launcher stops the rank (consequence: because another one failed).
    void stopRank(int rank, bool consequence);
    // The rank ended (its pipeline has flushed): its exit judged and recorded.
    void rankExited(int rank, const RankExit &exit);
    void applyCollectiveVerdict();

private:
    RankFailure withPython(RankFailure failure, const QString &pythonText = {});
    void rebuildReport();
    void triggerFailurePolicy(int failedRank);
    void stopOthers(int failedRank);
    void applyExit(int rank, const FailurePolicy::ExitVerdict &verdict);

    RunData &m_run;
    RunActions &m_actions;
    FlightRecorderCollector &m_collector;
    StopEscalation &m_stops;
};

} // namespace rankdeck
