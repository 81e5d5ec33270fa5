// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/stepheatmap.h"

#include "store/metricsstore.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rankdeck {

StepHeatmap StepHeatmap::compute(const MetricsStore &store, const QString &metric, int columns)
{
    StepHeatmap h;
    if (columns <= 0)
        return h;
    h.ranks = store.ranks(metric);
    if (h.ranks.isEmpty())
        return h;
    qint64 first = std::numeric_limits<qint64>::max();
    qint64 last = std::numeric_limits<qint64>::min();
    for (int rank : std::as_const(h.ranks)) {
        qint64 lo = 0, hi = 0;
        if (store.stepRange(rank, metric, &lo, &hi)) {
            first = std::min(first, lo);
            last = std::max(last, hi);
        }
    }
    if (first > last) {
        h.ranks.clear();
        return h;
    }
    h.firstStep = first;
    h.lastStep = last;
    // Never more columns than steps: a cell is at least one step wide.
    h.columns = int(std::min<qint64>(columns, last - first + 1));
    h.cells.assign(size_t(h.ranks.size()) * size_t(h.columns),
                   std::numeric_limits<float>::quiet_NaN());
    const double span = double(last - first + 1);
    float low = std::numeric_limits<float>::infinity();
    float high = -low;
    for (qsizetype row = 0; row < h.ranks.size(); ++row) {
        // Buckets over [first, last + 1): the store's buckets line up with our columns.
        const MetricCurve c = store.curve(h.ranks[row], metric, MetricXAxis::Step, 0.0,
                                          double(first), double(last + 1), h.columns);
        float *cells = h.cells.data() + size_t(row) * size_t(h.columns);
        for (qsizetype i = 0; i < c.x.size(); ++i) {
            const double y = c.y[i];
            if (!std::isfinite(y) || c.x[i] < double(first) || c.x[i] > double(last))
                continue; // segment breaks, and the neighbours kept outside the range
            const int col =
                std::clamp(int((c.x[i] - double(first)) / span * h.columns), 0, h.columns - 1);
            const float v = float(y);
            float &cell = cells[col];
            if (std::isnan(cell) || v > cell)
                cell = v;
            low = std::min(low, v);
            high = std::max(high, v);
        }
    }
    h.low = std::isfinite(low) ? low : 0.0f;
    h.high = std::isfinite(high) ? high : 0.0f;
    return h;
}

} // namespace rankdeck
