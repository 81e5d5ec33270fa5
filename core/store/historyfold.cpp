// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/historyfold.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rankdeck {

namespace {

qint64 floorDiv(qint64 a, qint64 b)
{
    const qint64 q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// What one group keeps: per criterion its lowest and highest finite value, and the first of each
// kind of non-finite value; indices into the series, npos where there is none.
struct Group
{
    static constexpr size_t npos = std::numeric_limits<size_t>::max();

    explicit Group(size_t criteria) : lowest(criteria, npos), highest(criteria, npos) {}

    std::vector<size_t> lowest, highest;
    size_t nan = npos, plusInf = npos, minusInf = npos;

    void add(const HistoryFold::Series &series, size_t i)
    {
        for (size_t c = 0; c < series.criteria.size(); ++c) {
            const double v = series.criteria[c](i);
            if (std::isnan(v)) {
                nan = std::min(nan, i);
            } else if (std::isinf(v)) {
                size_t &first = v > 0 ? plusInf : minusInf;
                first = std::min(first, i);
            } else {
                // Ties keep the earlier point: the same series folded twice keeps the same one.
                if (lowest[c] == npos || v < series.criteria[c](lowest[c]))
                    lowest[c] = i;
                if (highest[c] == npos || v > series.criteria[c](highest[c]))
                    highest[c] = i;
            }
        }
    }

    void emit(std::vector<size_t> &out) const
    {
        const size_t from = out.size();
        for (size_t c = 0; c < lowest.size(); ++c) {
            for (size_t i : {lowest[c], highest[c]}) {
                if (i != npos)
                    out.push_back(i);
            }
        }
        for (size_t i : {nan, plusInf, minusInf}) {
            if (i != npos)
                out.push_back(i);
        }
        std::sort(out.begin() + qsizetype(from), out.end());
        out.erase(std::unique(out.begin() + qsizetype(from), out.end()), out.end());
    }
};

} // namespace

std::vector<size_t> HistoryFold::foldOnce(const Series &series, std::span<const size_t> points,
                                          qint64 span)
{
    std::vector<size_t> out;
    out.reserve(points.size());
    Group group(series.criteria.size());
    bool open = false;
    size_t segment = 0;     // segment of the group being filled
    qint64 groupKey = 0;    // floor(step / span) of it
    size_t nextSegment = 0; // index into segmentStarts of the next segment's start
    for (size_t i : points) {
        while (nextSegment < series.segmentStarts.size() && series.segmentStarts[nextSegment] <= i)
            ++nextSegment;
        const qint64 key = floorDiv(series.step(i), span);
        if (open && (nextSegment != segment || key != groupKey)) {
            group.emit(out);
            group = Group(series.criteria.size());
        }
        open = true;
        segment = nextSegment;
        groupKey = key;
        group.add(series, i);
    }
    if (open)
        group.emit(out);
    return out;
}

std::vector<size_t> HistoryFold::fold(const Series &series, size_t end, qint64 *span,
                                      size_t maxKept)
{
    std::vector<size_t> all(end);
    for (size_t i = 0; i < end; ++i)
        all[i] = i;
    *span = std::max<qint64>(1, *span);
    std::vector<size_t> kept = foldOnce(series, all, *span);
    if (kept.empty())
        return kept;
    qint64 lo = series.step(kept.front()), hi = lo;
    for (size_t i : kept) {
        lo = std::min(lo, series.step(i));
        hi = std::max(hi, series.step(i));
    }
    // Once a group spans every step, doubling merges nothing more.
    while (kept.size() > maxKept && *span <= hi - lo && *span < (qint64(1) << 61)) {
        *span *= 2;
        kept = foldOnce(series, kept, *span);
    }
    return kept;
}

} // namespace rankdeck
