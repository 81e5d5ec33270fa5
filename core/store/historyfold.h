// SPDX-License-Identifier: GPL-3.0-or-later
//
// A bounded history for a series that grows for days: its newest points stay as they came, its
// older part is folded into groups of `span` consecutive steps, each group keeping only the points
// a plot needs to draw it truthfully at any zoom that shows the whole group in a pixel or two:
// the lowest and the highest value (per criterion), and the first NaN, +Inf and -Inf. So a spike
// anywhere in the history stays on the plot, as with the min/max bucketing the plots already do
// (Downsampler), while memory stops growing with the run. Spans are powers of two and groups are
// aligned to multiples of the span, so folding a folded history again at twice the span merges
// its groups pairwise: the result is the same as folding the original points at that span.
// A group never crosses a segment border (a restart from a checkpoint).
//
// TensorBoard keeps 1,000 points a series by reservoir sampling (random: spikes get lost); W&B
// samples its charts too. The full record stays in metrics.csv for exports.
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <functional>
#include <span>
#include <vector>

namespace rankdeck {

struct HistoryBudget
{
    // A series keeps at least this many of its newest points as they came...
    int recentPoints = 0;
    // ...and its folded older part holds at most this many points. 0 and 0: keep every point.
    int foldedPoints = 0;

    bool bounded() const { return recentPoints > 0 && foldedPoints > 0; }
    // Folding is due once this many points came after the folded part: a quarter more than
    // recentPoints, so it happens once every recentPoints / 4 appends, not at each one, and a
    // series never holds much more than its budget (what it held at most is what its columns
    // keep allocated).
    size_t foldAt() const { return size_t(recentPoints) + std::max<size_t>(1, recentPoints / 4); }
};

class HistoryFold
{
public:
    using StepAt = std::function<qint64(size_t)>;
    using ValueAt = std::function<double(size_t)>;

    struct Series
    {
        StepAt step;                           // ascending within a segment
        std::vector<ValueAt> criteria;         // a group keeps the extremes of each
        std::span<const size_t> segmentStarts; // ascending; empty: one segment
    };

    // The points of [0, end) to keep, ascending, after folding at *span (at least 1), doubled as
    // often as it takes to keep at most maxKept (never fewer than one point per group that is
    // left: a history of more segments than maxKept keeps one point and more per segment).
    static std::vector<size_t> fold(const Series &series, size_t end, qint64 *span, size_t maxKept);

    // One pass: the points of `points` (ascending) to keep with groups of `span` steps.
    static std::vector<size_t> foldOnce(const Series &series, std::span<const size_t> points,
                                        qint64 span);
};

} // namespace rankdeck
