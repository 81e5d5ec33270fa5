// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/stepheatmapcache.h"

#include "store/metricsstore.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace rankdeck {

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int kNothing = std::numeric_limits<int>::max();

void mergeCell(float &cell, quint32 &count, float value, quint32 n)
{
    if (n == 0)
        return;
    if (std::isnan(cell) || value > cell)
        cell = value;
    count += n;
}
} // namespace

void StepHeatmapCache::clear()
{
    m_heatmap = StepHeatmap{};
    m_read.clear();
    m_wholeGridChanged = true;
}

int StepHeatmapCache::update(const MetricsStore &store, const QString &metric, int maxColumns)
{
    StepHeatmap &h = m_heatmap;
    if (metric != h.metric || maxColumns != h.capacity || maxColumns <= 0) {
        clear();
        h.metric = metric;
        h.capacity = std::max(0, maxColumns);
        if (maxColumns <= 0)
            return 0;
    }
    m_lastRead = 0;
    const QList<int> ranks = store.ranks(metric);
    if (!syncRows(ranks)) {
        // A rank went away: the store was cleared. Start over.
        clear();
        return update(store, metric, maxColumns);
    }
    const int columnsBefore = h.columns;
    int changedFrom = kNothing;
    for (int row = 0; row < int(h.ranks.size()); ++row) {
        const qint64 held =
            store.readPoints(h.ranks[row], metric, m_read[size_t(row)],
                             [&](std::span<const qint64> steps, std::span<const qint64>,
                                 std::span<const double> values) {
                                 changedFrom = std::min(changedFrom, readRow(row, steps, values));
                                 m_lastRead += qint64(steps.size());
                             });
        if (held < m_read[size_t(row)]) {
            // Fewer points than were read: the store was cleared and refilled, or folded the
            // points after the last read into its history. Start over.
            clear();
            return update(store, metric, maxColumns);
        }
        m_read[size_t(row)] = held;
    }
    if (h.columns > columnsBefore)
        changedFrom = std::min(changedFrom, columnsBefore); // new columns, some of them empty
    const bool whole = std::exchange(m_wholeGridChanged, false);
    if (whole || changedFrom != kNothing)
        h.updateScale();
    return whole ? 0 : std::min(changedFrom, h.columns);
}

// Rows for `ranks` (ascending), keeping the ones there are; false when one of them is gone.
bool StepHeatmapCache::syncRows(const QList<int> &ranks)
{
    StepHeatmap &h = m_heatmap;
    if (ranks == h.ranks)
        return true;
    for (int rank : std::as_const(h.ranks)) {
        if (!std::binary_search(ranks.cbegin(), ranks.cend(), rank))
            return false;
    }
    const size_t stride = size_t(h.capacity);
    std::vector<float> cells(size_t(ranks.size()) * stride, kNaN);
    std::vector<quint32> counts(cells.size(), 0);
    std::vector<qint64> read(size_t(ranks.size()), 0);
    for (qsizetype old = 0, row = 0; old < h.ranks.size(); ++old) {
        while (ranks[row] != h.ranks[old])
            ++row;
        std::copy_n(h.cells.begin() + old * qsizetype(stride), stride,
                    cells.begin() + row * qsizetype(stride));
        std::copy_n(h.counts.begin() + old * qsizetype(stride), stride,
                    counts.begin() + row * qsizetype(stride));
        read[size_t(row)] = m_read[size_t(old)];
    }
    h.ranks = ranks;
    h.cells = std::move(cells);
    h.counts = std::move(counts);
    m_read = std::move(read);
    m_wholeGridChanged = true;
    return true;
}

// Widens the grid to steps first..last (a superset of what it holds): a larger shift merges
// columns pairwise (or 4, 8, … at once), an earlier first column moves them right.
void StepHeatmapCache::fitSteps(qint64 first, qint64 last)
{
    StepHeatmap &h = m_heatmap;
    const int shift = StepHeatmap::shiftFor(first, last, h.capacity);
    const qint64 firstColumn = first >> shift;
    if (h.columns == 0) {
        m_wholeGridChanged = true;
    } else if (shift != h.stepShift || firstColumn != h.firstColumn) {
        const int merge = shift - h.stepShift; // never negative: the range only grows
        const size_t stride = size_t(h.capacity);
        std::vector<float> oldCells(size_t(h.columns));
        std::vector<quint32> oldCounts(size_t(h.columns));
        for (size_t row = 0; row < size_t(h.ranks.size()); ++row) {
            float *cells = h.cells.data() + row * stride;
            quint32 *counts = h.counts.data() + row * stride;
            std::copy_n(cells, oldCells.size(), oldCells.begin());
            std::copy_n(counts, oldCounts.size(), oldCounts.begin());
            std::fill_n(cells, stride, kNaN);
            std::fill_n(counts, stride, 0u);
            for (int c = 0; c < h.columns; ++c) {
                const qint64 to = ((h.firstColumn + c) >> merge) - firstColumn;
                mergeCell(cells[to], counts[to], oldCells[size_t(c)], oldCounts[size_t(c)]);
            }
        }
        m_wholeGridChanged = true;
    }
    h.stepShift = shift;
    h.firstColumn = firstColumn;
    h.firstStep = first;
    h.lastStep = last;
    h.columns = int((last >> shift) - firstColumn + 1);
}

// New points of one row into the grid; the first column they touched.
int StepHeatmapCache::readRow(int row, std::span<const qint64> steps,
                              std::span<const double> values)
{
    StepHeatmap &h = m_heatmap;
    const auto [lo, hi] = std::minmax_element(steps.begin(), steps.end());
    if (h.columns == 0)
        fitSteps(*lo, *hi);
    else if (*lo < h.firstStep || *hi > h.lastStep)
        fitSteps(std::min(*lo, h.firstStep), std::max(*hi, h.lastStep));
    const int shift = h.stepShift;
    const qint64 firstColumn = h.firstColumn;
    float *cells = h.cells.data() + size_t(row) * size_t(h.capacity);
    quint32 *counts = h.counts.data() + size_t(row) * size_t(h.capacity);
    qint64 from = std::numeric_limits<qint64>::max();
    for (size_t i = 0; i < steps.size(); ++i) {
        const qint64 c = (steps[i] >> shift) - firstColumn;
        from = std::min(from, c);
        if (std::isfinite(values[i]))
            mergeCell(cells[c], counts[c], StepHeatmap::cellValue(values[i]), 1);
    }
    return int(from);
}

} // namespace rankdeck
