// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/stepheatmap.h"

#include "store/metricsstore.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rankdeck {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Cells the percentiles look at, and columns a row's median looks at: enough for a scale, and
// a bound on its cost however large the grid (512 ranks × 1,024 columns).
constexpr size_t kScaleSamples = 32768;
constexpr int kRowSamples = 64;

// The 1-1.2-1.5-2-2.5-3-4-5-6-8 series: v rounded up (or down) to it.
double niceRound(double v, bool up)
{
    if (v == 0.0 || !std::isfinite(v))
        return v;
    if (v < 0)
        return -niceRound(-v, !up);
    static constexpr double steps[] = {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0};
    const double decade = std::pow(10.0, std::floor(std::log10(v)));
    const double m = v / decade; // in [1, 10)
    if (up) {
        for (double s : steps) {
            if (s >= m * (1 - 1e-12))
                return s * decade;
        }
        return 10.0 * decade;
    }
    for (int i = int(std::size(steps)) - 1; i >= 0; --i) {
        if (steps[i] <= m * (1 + 1e-12))
            return steps[i] * decade;
    }
    return decade;
}

float nthOf(std::vector<float> &v, double fraction)
{
    const auto k =
        qsizetype(std::clamp(fraction * double(v.size() - 1), 0.0, double(v.size() - 1)));
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return v[size_t(k)];
}

} // namespace

qint64 StepHeatmap::columnFirstStep(int column) const
{
    return std::max(firstStep, (firstColumn + column) << stepShift);
}

qint64 StepHeatmap::columnLastStep(int column) const
{
    return std::min(lastStep, ((firstColumn + column + 1) << stepShift) - 1);
}

int StepHeatmap::shiftFor(qint64 first, qint64 last, int maxColumns)
{
    int shift = 0;
    // >> on a negative step floors, as the columns need; at shift 62 any range fits two columns.
    while (shift < 62 && (last >> shift) - (first >> shift) + 1 > qint64(std::max(1, maxColumns)))
        ++shift;
    return shift;
}

void StepHeatmap::updateScale()
{
    low = high = minCell = maxCell = 0.0f;
    if (isEmpty())
        return;
    const int rows = int(ranks.size());
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int r = 0; r < rows; ++r) {
        const float *row = cells.data() + size_t(r) * size_t(capacity);
        for (int c = 0; c < columns; ++c) {
            if (!std::isnan(row[c])) {
                lo = std::min(lo, row[c]);
                hi = std::max(hi, row[c]);
            }
        }
    }
    if (!std::isfinite(lo))
        return; // no finite cell
    minCell = lo;
    maxCell = hi;
    // Percentiles over an even sample of the cells.
    const size_t total = size_t(rows) * size_t(columns);
    const size_t stride = std::max<size_t>(1, (total + kScaleSamples - 1) / kScaleSamples);
    std::vector<float> sample;
    sample.reserve(total / stride + 1);
    for (size_t k = 0; k < total; k += stride) {
        const float v = at(int(k / size_t(columns)), int(k % size_t(columns)));
        if (!std::isnan(v))
            sample.push_back(v);
    }
    if (sample.empty()) // every sampled cell empty: the extremes alone
        sample = {lo, hi};
    double scaleLow = double(nthOf(sample, 0.02));
    double scaleHigh = double(nthOf(sample, 0.98));
    // Every row's median inside the scale: one slow rank of 512 is 0.2 % of the cells, far
    // beyond any percentile that ignores spikes.
    std::vector<float> row;
    row.reserve(kRowSamples);
    const int rowStride = std::max(1, (columns + kRowSamples - 1) / kRowSamples);
    for (int r = 0; r < rows; ++r) {
        row.clear();
        for (int c = 0; c < columns; c += rowStride) {
            if (!std::isnan(at(r, c)))
                row.push_back(at(r, c));
        }
        if (row.empty())
            continue;
        const double median = double(nthOf(row, 0.5));
        scaleLow = std::min(scaleLow, median);
        scaleHigh = std::max(scaleHigh, median);
    }
    low = float(niceRound(scaleLow, false));
    high = float(niceRound(scaleHigh, true));
    if (!(high > low)) // one value everywhere: a scale around it
        high = float(niceRound(low > 0 ? double(low) * 1.2 : double(low) + 1.0, true));
}

StepHeatmap StepHeatmap::compute(const MetricsStore &store, const QString &metric, int maxColumns)
{
    StepHeatmap h;
    h.metric = metric;
    if (maxColumns <= 0)
        return h;
    h.capacity = maxColumns;
    struct Row
    {
        int rank;
        QList<MetricSegment> segments;
    };
    std::vector<Row> rows;
    qint64 first = std::numeric_limits<qint64>::max();
    qint64 last = std::numeric_limits<qint64>::min();
    for (int rank : store.ranks(metric)) {
        Row row{rank, store.segments(rank, metric)};
        bool any = false;
        for (const MetricSegment &seg : std::as_const(row.segments)) {
            for (const MetricPoint &p : seg.points) {
                first = std::min(first, p.step);
                last = std::max(last, p.step);
                any = true;
            }
        }
        if (any)
            rows.push_back(std::move(row));
    }
    if (rows.empty())
        return h;
    h.firstStep = first;
    h.lastStep = last;
    h.stepShift = shiftFor(first, last, maxColumns);
    h.firstColumn = first >> h.stepShift;
    h.columns = int((last >> h.stepShift) - h.firstColumn + 1);
    h.cells.assign(rows.size() * size_t(h.capacity), kNaN);
    h.counts.assign(rows.size() * size_t(h.capacity), 0);
    for (size_t r = 0; r < rows.size(); ++r) {
        h.ranks.append(rows[r].rank);
        for (const MetricSegment &seg : std::as_const(rows[r].segments)) {
            for (const MetricPoint &p : seg.points) {
                if (!std::isfinite(p.value))
                    continue;
                const size_t i =
                    r * size_t(h.capacity) + size_t((p.step >> h.stepShift) - h.firstColumn);
                const float v = cellValue(p.value);
                if (std::isnan(h.cells[i]) || v > h.cells[i])
                    h.cells[i] = v;
                ++h.counts[i];
            }
        }
    }
    h.updateScale();
    return h;
}

} // namespace rankdeck
