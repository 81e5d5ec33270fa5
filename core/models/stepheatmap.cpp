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
    // In integers: step k of n in c columns is column k·c/n, never off by one from rounding.
    const qint64 steps = last - first + 1;
    const auto columnOf = [&](double x) {
        const qint64 k = std::llround(x) - first;
        return int(std::clamp<qint64>(k * h.columns / steps, 0, h.columns - 1));
    };
    // A few points a column: every point, read as it is. Many: the store's min/max buckets,
    // which hold each bucket's largest value at its own step (a cell's maximum lands in its
    // own column whichever bucket reported it).
    const bool raw = steps <= 8 * qint64(h.columns);
    for (qsizetype row = 0; row < h.ranks.size(); ++row) {
        float *cells = h.cells.data() + size_t(row) * size_t(h.columns);
        const auto add = [&](double x, double y) {
            if (!std::isfinite(y) || x < double(first) || x > double(last))
                return; // segment breaks, and the neighbours kept outside the range
            const float v = float(y);
            float &cell = cells[columnOf(x)];
            if (std::isnan(cell) || v > cell)
                cell = v;
        };
        if (raw) {
            for (const MetricSegment &seg : store.segments(h.ranks[row], metric))
                for (const MetricPoint &p : seg.points)
                    add(double(p.step), p.value);
            continue;
        }
        // Buckets over [first, last + 1): the store's buckets line up with our columns.
        const MetricCurve c = store.curve(h.ranks[row], metric, MetricXAxis::Step, 0.0,
                                          double(first), double(last + 1), h.columns);
        for (qsizetype i = 0; i < c.x.size(); ++i)
            add(c.x[i], c.y[i]);
    }
    float low = std::numeric_limits<float>::infinity();
    float high = -low;
    for (float v : h.cells) {
        if (!std::isnan(v)) {
            low = std::min(low, v);
            high = std::max(high, v);
        }
    }
    h.low = std::isfinite(low) ? low : 0.0f;
    h.high = std::isfinite(high) ? high : 0.0f;
    return h;
}

} // namespace rankdeck
