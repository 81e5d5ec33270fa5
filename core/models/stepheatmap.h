// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ranks × steps of one metric (step_ms or comm_wait_ms) as a grid of cells for the Overview's
// heatmap: one row per rank, each cell the largest value of its bucket of steps (a slow step
// never averages away, and a maximum merges exactly: see below).
//
// The buckets are aligned to step numbers: a column spans 2^stepShift steps, column k (absolute)
// holds steps [k·2^stepShift, (k+1)·2^stepShift), and the grid shows the columns from
// firstColumn on that the run's steps reach, at most `capacity` of them. stepShift is the
// smallest that fits the run's step range. So when the steps outgrow the grid, the width doubles
// and each new column is the merge (max, and the sum of counts) of two old ones: the grid of a
// set of points is the same whatever order and batches they arrived in, which is what lets
// StepHeatmapCache keep it up to date from the new points alone. compute() builds it from
// scratch, point by point (the reference the cache is tested against).
//
// The colour scale (low, high) is robust and stable rather than the extremes: the 2nd and 98th
// percentile of the cells, widened to take in every row's median (so a straggler's row keeps its
// own colour however few ranks it is among), then rounded outwards to a 1-1.2-1.5-2-2.5-3-4-5-
// 6-8 series, so that it moves only when the data move a step of that series, not with every
// new column. Cells beyond it take its end colours.
#pragma once

#include <QList>
#include <QString>

#include <algorithm>
#include <limits>
#include <vector>

namespace rankdeck {

class MetricsStore;

struct StepHeatmap
{
    QString metric;
    QList<int> ranks;  // row r is ranks[r]
    int capacity = 0;  // columns the grid may use, and the row stride of `cells`
    int columns = 0;   // columns in use, from firstColumn on
    int stepShift = 0; // a column spans 2^stepShift steps
    qint64 firstColumn = 0;
    qint64 firstStep = 0; // the smallest and largest step of any point (finite or not)
    qint64 lastStep = 0;
    std::vector<float> cells;    // ranks.size() × capacity; NaN: no finite value in the bucket
    std::vector<quint32> counts; // finite values in each cell
    float low = 0.0f;            // the colour scale (see above)
    float high = 0.0f;
    float minCell = 0.0f; // the extremes of the cells, for the legend's "≤ low", "≥ high"
    float maxCell = 0.0f;

    float at(int row, int column) const
    {
        return cells[size_t(row) * size_t(capacity) + size_t(column)];
    }
    quint32 countAt(int row, int column) const
    {
        return counts[size_t(row) * size_t(capacity) + size_t(column)];
    }
    bool isEmpty() const { return ranks.isEmpty() || columns <= 0; }
    qint64 stepsPerColumn() const { return qint64(1) << stepShift; }
    // The steps column c covers (the first and last ones clipped to the steps that exist).
    qint64 columnFirstStep(int column) const;
    qint64 columnLastStep(int column) const;

    // A finite value as a cell holds it (beyond float's range: its largest value).
    static float cellValue(double v)
    {
        return float(std::clamp(v, double(-std::numeric_limits<float>::max()),
                                double(std::numeric_limits<float>::max())));
    }
    // The smallest shift with which steps first..last fit into maxColumns aligned columns.
    static int shiftFor(qint64 first, qint64 last, int maxColumns);
    // low, high, minCell, maxCell from the cells (sampled: at most a few ten thousand reads).
    void updateScale();

    // From scratch: every point of every rank of `metric`, into at most maxColumns columns.
    static StepHeatmap compute(const MetricsStore &store, const QString &metric, int maxColumns);
};

} // namespace rankdeck
