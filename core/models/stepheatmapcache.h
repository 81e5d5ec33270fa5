// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview heatmap's grid (StepHeatmap), kept up to date from the points each rank appended
// since the last update instead of every point of every rank: at 512 ranks × 100k steps a live
// refresh reads a few points per rank and changes each rank's last column or two, where a
// rebuild reads 51 million points. Exact, not an approximation: a cell is its bucket's maximum,
// and when the steps outgrow the grid the column width doubles and pairs of columns merge
// (max, counts summed), so the grid equals StepHeatmap::compute() of the same points however
// they arrived (tests/core/models/tst_stepheatmapcache.cpp). A rank that appears inserts its
// row; a new metric, another capacity or a store that lost points (cleared) starts over.
#pragma once

#include "models/stepheatmap.h"

#include <span>
#include <vector>

namespace rankdeck {

class MetricsStore;

class StepHeatmapCache
{
public:
    // Reads what is new in `store` for `metric` into a grid of at most maxColumns columns.
    // Returns the first column whose cells (of any row) may have changed: 0 when the whole grid
    // did (the first update, new rows, a doubled width, steps before the first column, another
    // metric or capacity), heatmap().columns when nothing did.
    int update(const MetricsStore &store, const QString &metric, int maxColumns);
    const StepHeatmap &heatmap() const { return m_heatmap; }
    // Points the last update() read (every rank): the new ones only, unless it started over.
    qint64 lastReadPoints() const { return m_lastRead; }
    void clear();

private:
    bool syncRows(const QList<int> &ranks);
    void fitSteps(qint64 first, qint64 last);
    int readRow(int row, std::span<const qint64> steps, std::span<const double> values);

    StepHeatmap m_heatmap;
    std::vector<qint64> m_read; // per row: points of its series read so far
    qint64 m_lastRead = 0;
    bool m_wholeGridChanged = true;
};

} // namespace rankdeck
