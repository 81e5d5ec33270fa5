// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Ranks:" part of `show`: one line per rank for a run that fits a screen (or with
// --all-ranks), else ranks that are alike as one line of ranges (issue 31: a 512-rank job's
// reader looks for the three ranks that matter, not for 512 lines).
#pragma once

#include "record/runstate.h"
#include "record/shownstate.h"

#include <QList>
#include <QTextStream>

namespace rankdeck::cli {

class RankOutput
{
public:
    // Up to this many ranks, `show` prints each as before: every line fits a terminal.
    static constexpr int MaxRanksEach = 16;

    // One line per rank: host, pid, state, step, loss, time, detail, collective, root cause.
    // Each rank's state as the GUI's rank table reads it (record/shownstate.h).
    static void printEach(QTextStream &out, const QList<RankStatus> &ranks, RunState runState,
                          const RunVerdictFacts &facts);
    // One line per RankGroups group: its ranges, its label, and what its ranks share (or span:
    // steps, hosts).
    static void printGrouped(QTextStream &out, const QList<RankStatus> &ranks);
};

} // namespace rankdeck::cli
