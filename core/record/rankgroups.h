// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ranks that are alike, as ranges: "ranks 0–16, 18–39, 42–511 finished; ranks 40, 41 hung; rank 17
// failed (exit 1, root cause)" (issue 31). A 512-rank job's reader looks for the three ranks that
// matter; one line per rank hides them. Ranks are alike when they agree on their state, on hung and
// silent, on the root-cause mark and, for ranks that ended by themselves (failed, lost), on the
// exit code or signal. Step, loss and host do not count: they differ between ranks that are fine.
#pragma once

#include "record/runstate.h"

#include <QList>
#include <QString>

namespace rankdeck {

struct RankGroup
{
    RankState state = RankState::Pending;
    bool hung = false;
    bool silent = false;
    bool rootCause = false;
    int exitCode = 0; // failed and lost ranks only; 0 for the rest
    int signal = 0;   // failed and lost ranks only; 0 for the rest
    QList<int> ranks; // ascending

    // "finished", "hung", "stopped (hung)", "failed (exit 1)", "failed (SIGSEGV, root cause)".
    QString label() const;
    // "rank 17" / "ranks 40, 41" / "ranks 3–16, 18–511" (at most `maxPieces` ranges, then how
    // many more ranks).
    QString rankText(int maxPieces = 8) const;
    // rankText() + ' ' + label().
    QString text(int maxPieces = 8) const;
    bool operator==(const RankGroup &) const = default;
};

class RankGroups
{
public:
    // The groups, largest first (the majority, then the ranks that stand out); groups of the
    // same size by their first rank. O(ranks · log ranks).
    static QList<RankGroup> group(const QList<RankStatus> &ranks);
    // The group `status` belongs to, with only its rank in it (for one rank's label).
    static RankGroup groupOf(const RankStatus &status);
    // The groups' texts joined by "; ".
    static QString summary(const QList<RankGroup> &groups, int maxPieces = 8);
    // Ranges of ranks: {1, 2, 3, 5, 7, 8, 9, 11, 12} → "1–3, 5, 7–9, 11, 12" (sorted, each once,
    // three or more in a row as a range with an en dash, two as a pair); past `maxPieces` pieces
    // (0: no limit) "… (N ranks)" says how many there are in all.
    static QString ranges(QList<int> ranks, int maxPieces = 0);
};

} // namespace rankdeck
