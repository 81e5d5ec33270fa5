// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the loss legend's filter box means: rank numbers and ranges ("3", "0-7", "3,5,8-11",
// spaces allowed) pick ranks by number, so that "1" is rank 1 and not every rank with a 1 in
// it; anything else is a case-insensitive part of the curve's name (a run's name when runs are
// compared, or "epoch" for ranks whose x counts epochs).
#pragma once

#include <QList>
#include <QPair>
#include <QString>

namespace rankdeck {

class RankFilter
{
public:
    RankFilter() = default;
    explicit RankFilter(const QString &text);

    bool isEmpty() const { return m_text.isEmpty(); }
    // Whether the text reads as rank numbers and ranges.
    bool isRankList() const { return !m_ranges.isEmpty(); }
    // A rank's curve, by its number or (no rank list) by what the legend calls it.
    bool matches(int rank, const QString &name) const;
    // A curve that is no rank (a compared run, the mean), by its name only.
    bool matchesName(const QString &name) const;

private:
    QString m_text;
    QList<QPair<int, int>> m_ranges; // inclusive
};

} // namespace rankdeck
