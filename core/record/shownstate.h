// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one state a person reads for a run and for each of its ranks, with its word, tone and
// icon, the same in the window title, the run list, the rank table, the banners, `runs` and
// `show`. RunState and RankState say what the processes did; this adds what the analysis found
// (a hang, a desync, a straggler, a root cause and its consequences), so that a stuck job never
// reads "running" in green once a verdict exists.
#pragma once

#include "record/runstate.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace rankdeck {

enum class ShownState
{
    Starting,
    Running,
    Stopping,
    Straggling,
    Stuck,
    Desynced,
    Failed,      // a rank: failed by itself (the root cause, or a failure of its own)
    Consequence, // a rank stopped or failed because another rank failed first
    Finished,
    Stopped, // a run ended by RankDeck itself (its hang policy, a limit), not the user
    StoppedByUser,
    Unknown
};

// How the views colour a state: each maps to a palette-derived colour in the GUI.
enum class StateTone
{
    Neutral, // starting, unknown
    Active,  // running
    Warning, // straggling, stuck, desynced
    Error,   // failed
    Muted,   // stopped (by the user, or as a consequence)
    Done     // finished
};

// What the analysis knows of a run beyond its processes' states. Filled from a live controller
// (RunView) or from state.json (fromStateJson()), so the record and the live run read alike.
struct RunVerdictFacts
{
    bool stuck = false;    // the hang watch fired, or the flight recorder found ranks waiting
    bool desynced = false; // the flight recorder found ranks in different collectives
    QList<int> culprits;   // ranks the verdict names (the others wait for them)
    int straggler = -1;    // the rank the others wait for in a running job
    bool userStop = false; // the user asked the run to stop
    int rootCauseRank = -1;
    // Ranks the failure report says ended because another failed first (kind "consequence",
    // or a peer's death echoed): from the report where the caller has one.
    QList<int> consequences;

    // state.json's "hung", "user_stop", "root_cause_rank", "straggler" and its flight
    // recorder's shown verdict.
    static RunVerdictFacts fromStateJson(const QJsonObject &state);
};

ShownState shownRunState(RunState state, const RunVerdictFacts &facts);
ShownState shownRankState(const RankStatus &rank, RunState runState, const RunVerdictFacts &facts);

// "stuck", "failed", "stopped (consequence)" (translated).
QString shownStateWord(ShownState state);
// "desynced", "stopped_by_user": stable, for JSON and for tests.
QString shownStateName(ShownState state);
StateTone shownStateTone(ShownState state);
// A freedesktop icon name for the state (the GUI falls back to its own drawing).
QString shownStateIconName(ShownState state);
// A rank's state as its row reads: the word, then its part in the verdict: "stuck (culprit)",
// "failed (root cause)".
QString shownRankText(const RankStatus &rank, RunState runState, const RunVerdictFacts &facts);
// Ranks that differ from the run's ordinary course (root cause, culprits, stuck, failed,
// straggling) sort before the others: a lower number first.
int shownStateUrgency(ShownState state, bool rootCauseOrCulprit);

} // namespace rankdeck
