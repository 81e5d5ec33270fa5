// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/downsampler.h"

#include <algorithm>
#include <cmath>

namespace rankdeck {

namespace {
const auto noMid = [](qsizetype) { return 0.0; };
} // namespace

void Downsampler::clear()
{
    m_levels.clear();
    m_count = 0;
}

void Downsampler::truncate(qsizetype n)
{
    if (n >= m_count)
        return;
    const size_t blocks = size_t(std::max<qsizetype>(n, 0) / kBlock);
    for (size_t level = 0; level < m_levels.size(); ++level)
        m_levels[level].resize(std::min(m_levels[level].size(), blocks >> level));
    while (!m_levels.empty() && m_levels.back().empty())
        m_levels.pop_back();
    m_count = qsizetype(blocks) * kBlock;
}

void Downsampler::mergePoint(std::span<const double> values, std::uint32_t i, Block &acc)
{
    const double v = values[i];
    if (std::isnan(v)) {
        if (acc.nanIndex == kNone)
            acc.nanIndex = i;
        return;
    }
    if (std::isinf(v)) {
        if (acc.infIndex == kNone)
            acc.infIndex = i;
        return;
    }
    // Strict comparisons keep the earliest of equal values: points are merged left to right.
    if (acc.minIndex == kNone || v < acc.minValue) {
        acc.minIndex = i;
        acc.minValue = v;
    }
    if (acc.maxIndex == kNone || v > acc.maxValue) {
        acc.maxIndex = i;
        acc.maxValue = v;
    }
}

void Downsampler::mergeBlock(const Block &b, Block &acc)
{
    if (b.minIndex != kNone && (acc.minIndex == kNone || b.minValue < acc.minValue)) {
        acc.minIndex = b.minIndex;
        acc.minValue = b.minValue;
    }
    if (b.maxIndex != kNone && (acc.maxIndex == kNone || b.maxValue > acc.maxValue)) {
        acc.maxIndex = b.maxIndex;
        acc.maxValue = b.maxValue;
    }
    if (acc.nanIndex == kNone)
        acc.nanIndex = b.nanIndex;
    if (acc.infIndex == kNone)
        acc.infIndex = b.infIndex;
}

void Downsampler::update(std::span<const double> values)
{
    const qsizetype n = qsizetype(values.size());
    if (n < m_count) // the column was replaced: start over
        clear();
    while (m_count + kBlock <= n && m_count + kBlock < qsizetype(kNone)) {
        Block b{0.0, 0.0, kNone, kNone, kNone, kNone};
        // Finite blocks (nearly all) in a tight loop: a new smoothing weight re-indexes every
        // point of every rank. Strict comparisons keep the earliest of equal values, as
        // mergePoint() does.
        const double *p = values.data() + m_count;
        bool finite = std::isfinite(p[0]);
        int lo = 0, hi = 0;
        for (int k = 1; k < kBlock && finite; ++k) {
            finite = std::isfinite(p[k]);
            lo = p[k] < p[lo] ? k : lo;
            hi = p[k] > p[hi] ? k : hi;
        }
        if (finite) {
            b = Block{p[lo], p[hi], std::uint32_t(m_count + lo), std::uint32_t(m_count + hi),
                      kNone, kNone};
        } else {
            for (qsizetype i = m_count; i < m_count + kBlock; ++i)
                mergePoint(values, std::uint32_t(i), b);
        }
        if (m_levels.empty())
            m_levels.emplace_back();
        // Grown by an eighth, not doubled: 128 pyramids of a million points each add up.
        if (m_levels[0].size() == m_levels[0].capacity())
            m_levels[0].reserve(m_levels[0].size() + m_levels[0].size() / 8 + 8);
        m_levels[0].push_back(b);
        m_count += kBlock;
        // Each completed pair of nodes completes their parent, up the pyramid.
        for (size_t level = 0; m_levels[level].size() % 2 == 0; ++level) {
            const std::vector<Block> &below = m_levels[level];
            Block parent = below[below.size() - 2];
            mergeBlock(below.back(), parent);
            if (m_levels.size() == level + 1)
                m_levels.emplace_back();
            m_levels[level + 1].push_back(parent);
        }
    }
}

namespace {
constexpr int kBlockShift = 6;
static_assert(Downsampler::kBlock == 1 << kBlockShift);
} // namespace

// The largest pyramid level whose node starting at i (a block start) ends within [i, end).
// Greedy left to right, this takes at most two nodes per level over a whole range.
inline size_t Downsampler::levelAt(qsizetype i, qsizetype end) const
{
    const size_t levels = m_levels.size();
    size_t level = 0;
    while (level + 1 < levels) {
        const int shift = kBlockShift + int(level) + 1;
        if ((i & ((qsizetype(1) << shift) - 1)) != 0 || i + (qsizetype(1) << shift) > end ||
            size_t(i >> shift) >= m_levels[level + 1].size())
            break;
        ++level;
    }
    return level;
}

void Downsampler::rangeMinMax(std::span<const double> values, qsizetype begin, qsizetype end,
                              Block &acc) const
{
    const size_t blocks = m_levels.empty() ? 0 : m_levels[0].size();
    qsizetype i = begin;
    while (i < end) {
        if ((i & (kBlock - 1)) != 0 || i + kBlock > end || size_t(i >> kBlockShift) >= blocks) {
            mergePoint(values, std::uint32_t(i), acc);
            ++i;
            continue;
        }
        // Merged left to right, so that ties keep the earliest index.
        const size_t level = levelAt(i, end);
        mergeBlock(m_levels[level][size_t(i >> (kBlockShift + int(level)))], acc);
        i += qsizetype(kBlock) << level;
    }
}

void Downsampler::prefetchRange(qsizetype begin, qsizetype end) const
{
    const size_t blocks = m_levels.empty() ? 0 : m_levels[0].size();
    qsizetype i = (begin + kBlock - 1) & ~qsizetype(kBlock - 1);
    while (i + kBlock <= end && size_t(i >> kBlockShift) < blocks) {
        const size_t level = levelAt(i, end);
        __builtin_prefetch(&m_levels[level][size_t(i >> (kBlockShift + int(level)))]);
        i += qsizetype(kBlock) << level;
    }
}

DownsampledPoints Downsampler::bucket(const XFunction &xAt, std::span<const double> values,
                                      qsizetype begin, qsizetype end, double xMin, double xMax,
                                      int buckets) const
{
    return bucketImpl(xAt, nullptr, noMid, 0, values, begin, end, xMin, xMax, buckets);
}

DownsampledPoints Downsampler::bucket(std::span<const qint64> x, double offset, double divisor,
                                      std::span<const double> values, qsizetype begin,
                                      qsizetype end, double xMin, double xMax, int buckets,
                                      std::span<const qint64> xMid) const
{
    end = qMin(end, qsizetype(x.size()));
    const auto xAt = [x, offset, divisor](qsizetype i) {
        return (double(x[size_t(i)]) - offset) / divisor;
    };
    // The same arithmetic as xAt, so that comparisons with a bucket edge agree exactly.
    const auto midAt = [xMid, offset, divisor](qsizetype j) {
        return (double(xMid[size_t(j)]) - offset) / divisor;
    };
    return bucketImpl(xAt, x.data(), midAt, qsizetype(xMid.size()), values, begin, end, xMin, xMax,
                      buckets);
}

void Downsampler::midSamples(std::span<const qint64> x, std::vector<qint64> &mid, qsizetype from)
{
    const size_t count = x.size() >= size_t(kMid) + 1 ? (x.size() - kMid - 1) / kBlock + 1 : 0;
    size_t j = mid.size();
    if (from >= 0)
        j = std::min(j, size_t(from) / kBlock);
    if (mid.capacity() < count)
        mid.reserve(count + count / 8 + 8);
    mid.resize(count);
    for (; j < count; ++j)
        mid[j] = x[j * kBlock + kMid];
}

template <typename XAt, typename MidAt>
DownsampledPoints Downsampler::bucketImpl(const XAt &xAt, const qint64 *xColumn, const MidAt &midAt,
                                          qsizetype midCount, std::span<const double> values,
                                          qsizetype begin, qsizetype end, double xMin, double xMax,
                                          int buckets) const
{
    DownsampledPoints out;
    end = qMin(end, qsizetype(values.size()));
    if (begin < 0)
        begin = 0;
    if (begin >= end)
        return out;

    auto put = [&](qsizetype i) {
        const double v = values[size_t(i)];
        if (std::isnan(v)) {
            out.nanX.append(xAt(i));
        } else if (std::isinf(v)) {
            out.infX.append(xAt(i));
            out.infY.append(v);
        } else {
            out.x.append(xAt(i));
            out.y.append(v);
        }
    };

    if (buckets <= 0) {
        for (qsizetype i = begin; i < end; ++i) {
            const double x = xAt(i);
            if (xMin < xMax && (x < xMin || x > xMax))
                continue;
            put(i);
        }
        return out;
    }

    if (!(xMin < xMax)) {
        xMin = xAt(begin);
        xMax = xAt(end - 1);
        if (!(xMin < xMax))
            xMax = xMin + 1.0; // one x value: everything falls in the first bucket
    }

    // First index in [lo, end) whose x is >= edge (x is non-decreasing).
    auto lowerBound = [&](qsizetype lo, double edge) {
        qsizetype hi = end;
        while (lo < hi) {
            const qsizetype mid = lo + (hi - lo) / 2;
            if (xAt(mid) < edge)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    };
    qsizetype first = lowerBound(begin, xMin);
    qsizetype last = first; // first index with x > xMax
    {
        qsizetype lo = first, hi = end;
        while (lo < hi) {
            const qsizetype mid = lo + (hi - lo) / 2;
            if (xAt(mid) <= xMax)
                lo = mid + 1;
            else
                hi = mid;
        }
        last = lo;
    }

    // The neighbours just outside the view keep the line running to its edges.
    if (first > begin)
        put(first - 1);

    // Bucket borders: a binary search over the whole segment would miss the cache at every
    // probe (64 ranks × 1M points). Guess the border by interpolation (exact for evenly spaced
    // steps), then search outwards from the guess, touching only nearby memory.
    const double xLast = last > first ? xAt(last - 1) : 0.0;
    auto border = [&](qsizetype lo, double edge) -> qsizetype {
        // First index in [lo, last) whose x is >= edge.
        if (lo >= last || xAt(lo) >= edge)
            return lo;
        if (xLast < edge)
            return last;
        const double xLo = xAt(lo);
        qsizetype guess = lo + 1;
        if (xLast > xLo)
            guess = lo + qsizetype((edge - xLo) / (xLast - xLo) * double(last - 1 - lo));
        guess = qBound(lo + 1, guess, last - 1);
        qsizetype below; // x[below] < edge
        qsizetype above; // x[above] >= edge
        if (xAt(guess) >= edge) {
            above = guess;
            below = lo;
            for (qsizetype stepSize = 1;; stepSize *= 2) {
                const qsizetype probe = guess - stepSize;
                if (probe <= lo)
                    break;
                if (xAt(probe) < edge) {
                    below = probe;
                    break;
                }
                above = probe;
            }
        } else {
            below = guess;
            above = last - 1; // x[last - 1] >= edge, checked above
            for (qsizetype stepSize = 1;; stepSize *= 2) {
                const qsizetype probe = guess + stepSize;
                if (probe >= last - 1)
                    break;
                if (xAt(probe) >= edge) {
                    above = probe;
                    break;
                }
                below = probe;
            }
        }
        qsizetype l = below + 1, h = above;
        while (l < h) {
            const qsizetype mid = l + (h - l) / 2;
            if (xAt(mid) < edge)
                l = mid + 1;
            else
                h = mid;
        }
        return l;
    };
    const double width = xMax - xMin;
    // When buckets hold several index blocks, their inner borders move to the nearest block
    // border, so that bucketing reads whole blocks of the index instead of scanning points at
    // every border. Each point still lands in exactly one bucket (no extreme is lost) and the
    // points keep their own x; only which of two neighbouring buckets a border point joins
    // changes. The rule depends on the data alone, so the index and a plain scan agree.
    const bool snap = (last - first) / buckets >= 4 * qsizetype(kBlock);
    // Snapped borders straight from the mid samples: with e the first index in [start, last)
    // whose x reaches the edge (last if none), the border e rounded to the nearest block start
    // is kBlock·j for the first j whose mid index j·kBlock + kMid is >= e, that is, lies at or
    // past last or has x >= edge. Found by galloping over the samples from the previous border.
    const qsizetype jLast =
        (last - kMid + kBlock - 1) / kBlock; // first j with j·kBlock + kMid >= last
    const bool midBorders = snap && midCount >= jLast;
    auto snappedBorder = [&](qsizetype from, double edge) -> qsizetype {
        qsizetype lo = (from - kMid + kBlock - 1) / kBlock; // first j whose mid index >= from
        if (from < kMid)
            lo = 0;
        if (lo >= jLast || midAt(lo) >= edge)
            return lo * kBlock;
        if (midAt(jLast - 1) < edge)
            return jLast * kBlock;
        // midAt(lo) < edge <= midAt(jLast - 1). Guess by interpolation (exact for evenly spaced
        // steps: one probe, not a dozen), gallop from the guess, then bisect.
        qsizetype hi = jLast - 1;
        const double xLo = midAt(lo), xHi = midAt(hi);
        qsizetype guess = lo + qsizetype((edge - xLo) / (xHi - xLo) * double(hi - lo));
        guess = qBound(lo + 1, guess, hi);
        if (midAt(guess) >= edge) {
            hi = guess;
            for (qsizetype stepSize = 1; guess - stepSize > lo; stepSize *= 2) {
                if (midAt(guess - stepSize) < edge) {
                    lo = guess - stepSize;
                    break;
                }
                hi = guess - stepSize;
            }
        } else {
            lo = guess;
            for (qsizetype stepSize = 1; guess + stepSize < hi; stepSize *= 2) {
                if (midAt(guess + stepSize) >= edge) {
                    hi = guess + stepSize;
                    break;
                }
                lo = guess + stepSize;
            }
        }
        // midAt(lo) < edge, and hi == jLast or midAt(hi) >= edge.
        while (hi - lo > 1) {
            const qsizetype mid = lo + (hi - lo) / 2;
            if (midAt(mid) >= edge)
                hi = mid;
            else
                lo = mid;
        }
        return hi * kBlock;
    };
    // Borders first, then the extremes: knowing where the next buckets lie lets their pyramid
    // nodes be fetched from memory while this one is merged (64 ranks × 1M points do not fit in
    // any cache; the nodes a bucket reads are kilobytes apart).
    std::vector<qsizetype> stops;
    stops.reserve(size_t(std::max(buckets, 0)));
    for (qsizetype start = first; qsizetype(stops.size()) < buckets && start < last;) {
        const int k = int(stops.size());
        qsizetype stop = last;
        if (k + 1 < buckets) {
            const double edge = xMin + width * double(k + 1) / double(buckets);
            if (snap && midBorders)
                stop = qBound(start, snappedBorder(start, edge), last);
            else
                stop = border(start, edge);
            if (snap && !midBorders)
                stop = qBound(start, (stop + kBlock / 2) / kBlock * kBlock, last);
        }
        stops.push_back(stop);
        start = std::max(start, stop);
    }
    constexpr size_t kAhead = 2;
    // The extremes' x are filled in after the loop: their indices are stored meanwhile and the
    // x column prefetched, so that the misses overlap instead of stalling one by one.
    out.x.reserve(out.x.size() + 2 * qsizetype(stops.size()) + 1);
    out.y.reserve(out.x.capacity());
    const qsizetype pendingFrom = out.x.size();
    qsizetype start = first;
    for (size_t k = 0; k < stops.size(); ++k) {
        if (k + kAhead < stops.size() && snap)
            prefetchRange(stops[k + kAhead - 1], stops[k + kAhead]);
        const qsizetype stop = stops[k];
        if (stop <= start)
            continue;
        Block acc{0.0, 0.0, kNone, kNone, kNone, kNone};
        rangeMinMax(values, start, stop, acc);
        if (acc.minIndex != kNone) {
            const bool minFirst = acc.minIndex <= acc.maxIndex;
            const std::uint32_t a = minFirst ? acc.minIndex : acc.maxIndex;
            const std::uint32_t b = minFirst ? acc.maxIndex : acc.minIndex;
            if (xColumn)
                __builtin_prefetch(xColumn + a);
            out.x.append(double(a));
            out.y.append(minFirst ? acc.minValue : acc.maxValue);
            if (b != a) {
                if (xColumn)
                    __builtin_prefetch(xColumn + b);
                out.x.append(double(b));
                out.y.append(minFirst ? acc.maxValue : acc.minValue);
            }
        }
        if (acc.nanIndex != kNone)
            out.nanX.append(xAt(acc.nanIndex));
        if (acc.infIndex != kNone) {
            out.infX.append(xAt(acc.infIndex));
            out.infY.append(values[acc.infIndex]);
        }
        start = stop;
    }
    for (qsizetype p = pendingFrom; p < out.x.size(); ++p)
        out.x[p] = xAt(qsizetype(out.x[p]));

    if (last < end)
        put(last);
    return out;
}

DownsampledPoints Downsampler::bucket(const XFunction &xAt, std::span<const double> values,
                                      double xMin, double xMax, int buckets) const
{
    return bucket(xAt, values, 0, qsizetype(values.size()), xMin, xMax, buckets);
}

DownsampledPoints Downsampler::bucket(std::span<const double> x, std::span<const double> values,
                                      double xMin, double xMax, int buckets) const
{
    const qsizetype n = qsizetype(std::min(x.size(), values.size()));
    const auto xAt = [x](qsizetype i) { return x[size_t(i)]; };
    return bucketImpl(xAt, nullptr, noMid, 0, values, 0, n, xMin, xMax, buckets);
}

DownsampledPoints Downsampler::bucketScan(std::span<const double> x, std::span<const double> values,
                                          double xMin, double xMax, int buckets)
{
    // An empty index makes bucket() look at every point.
    const Downsampler none;
    return none.bucket(x, values, xMin, xMax, buckets);
}

} // namespace rankdeck
