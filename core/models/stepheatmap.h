// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ranks × steps of one metric (step_ms or comm_wait_ms) as a grid of cells for the Overview's
// heatmap: one row per rank, `columns` buckets over the common step range, each cell the
// largest value of its bucket (a slow step never averages away). Built from the store's min/max
// pyramid, so 512 ranks × 100k steps cost 512 bucketings of a few hundred cells, never a scan
// of the points; a short run (at most 8 steps a column) is read point by point.
#pragma once

#include <QList>
#include <QString>

#include <vector>

namespace rankdeck {

class MetricsStore;

struct StepHeatmap
{
    QList<int> ranks; // row r is ranks[r]
    int columns = 0;
    qint64 firstStep = 0; // the step range the columns split
    qint64 lastStep = 0;
    std::vector<float> cells; // ranks.size() × columns, row-major; NaN: no step in the bucket
    float low = 0.0f;         // the smallest and largest cell, for the colour scale
    float high = 0.0f;

    float at(int row, int column) const
    {
        return cells[size_t(row) * size_t(columns) + size_t(column)];
    }
    bool isEmpty() const { return ranks.isEmpty() || columns <= 0; }

    static StepHeatmap compute(const MetricsStore &store, const QString &metric, int columns);
};

} // namespace rankdeck
