// SPDX-License-Identifier: GPL-3.0-or-later
//
// Min/max-per-bucket downsampling for plots: each x bucket contributes the points where the
// value is lowest and highest (in their original order, at their own x), so spikes stay visible
// however far the view is zoomed out; a NaN or ±Inf in a bucket is reported too. No random
// sampling. Built incrementally as points arrive, as a min/max pyramid (a mip-map of extremes):
// level 0 summarises blocks of kBlock points, level k blocks of kBlock·2^k points, each node the
// merge of its two children, appended as soon as both exist. Any index range then splits into at
// most two nodes per level, so bucketing N points into B buckets costs O(B · log(N / B)) node
// reads instead of a scan of N. Nodes cost 32 bytes each: 32/64 · (1 + 1/2 + 1/4 + …) < 1 byte
// per point. When a bucket spans several blocks its inner borders snap to block borders (see
// bucket()): every point still counts in exactly one bucket, at its own x.
#pragma once

#include <QList>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace rankdeck {

struct DownsampledPoints
{
    QList<double> x;
    QList<double> y;    // finite values only
    QList<double> nanX; // x of NaN values (one per bucket that holds any)
    QList<double> infX; // x of ±Inf values (one per bucket that holds any)
    QList<double> infY; // their sign: +Inf or -Inf
};

class Downsampler
{
public:
    static constexpr int kBlock = 64;

    Downsampler() = default;

    // Index the value column as it grows: call with the whole column after each append
    // (only the new tail is indexed). Values must not change once indexed.
    void update(std::span<const double> values);
    // Forgets every summary that covers index n or later, so that values from n on may change
    // (a mean whose latest steps got another rank's report) and be indexed again by update().
    void truncate(qsizetype n);
    void clear();
    qsizetype indexedCount() const { return m_count; }

    // x of point i; must be non-decreasing in i (one segment of a series).
    using XFunction = std::function<double(qsizetype)>;

    // `values` indexed by update(). Buckets split [xMin, xMax] into `buckets` equal parts;
    // points outside are ignored, except the nearest point on each side, kept so that the line
    // reaches the edges of the view. xMin >= xMax (or NaN) means the whole range of x.
    DownsampledPoints bucket(const XFunction &xAt, std::span<const double> values, double xMin,
                             double xMax, int buckets) const;
    DownsampledPoints bucket(std::span<const double> x, std::span<const double> values, double xMin,
                             double xMax, int buckets) const;
    // Only the points [begin, end) of the indexed column (one segment); xAt takes absolute
    // indices.
    DownsampledPoints bucket(const XFunction &xAt, std::span<const double> values, qsizetype begin,
                             qsizetype end, double xMin, double xMax, int buckets) const;

    // x given as integers mapped by (x - offset) / divisor (steps, or µs times to seconds):
    // the fast path the metrics store uses.
    // xMid (optional): x[j·kBlock + kMid] for every j where that index exists (see
    // midSamples()). With it, the bucket borders are found in this small array (64 times
    // shorter, read in order) instead of by probing the x column at every border, one cache
    // miss each at 64 ranks × 1M points. Same result either way.
    DownsampledPoints bucket(std::span<const qint64> x, double offset, double divisor,
                             std::span<const double> values, qsizetype begin, qsizetype end,
                             double xMin, double xMax, int buckets,
                             std::span<const qint64> xMid = {}) const;
    static constexpr int kMid = kBlock / 2 - 1;
    // Brings `mid` up to date with a grown (or, from `from` on, changed) x column.
    static void midSamples(std::span<const qint64> x, std::vector<qint64> &mid,
                           qsizetype from = -1);

    // Without an index: the same result computed by a plain scan (the reference for tests).
    static DownsampledPoints bucketScan(std::span<const double> x, std::span<const double> values,
                                        double xMin, double xMax, int buckets);

private:
    // The extremes' values are kept next to their indices: bucketing then reads the index
    // sequentially instead of jumping into the value column (64 ranks × 1M points do not fit
    // in any cache).
    struct Block
    {
        double minValue = 0.0;
        double maxValue = 0.0;
        std::uint32_t minIndex = 0; // absolute index of the smallest finite value, or kNone
        std::uint32_t maxIndex = 0;
        std::uint32_t nanIndex = 0; // first NaN
        std::uint32_t infIndex = 0; // first ±Inf
    };
    static constexpr std::uint32_t kNone = 0xffffffffu;

    template <typename XAt, typename MidAt>
    DownsampledPoints bucketImpl(const XAt &xAt, const qint64 *xColumn, const MidAt &midAt,
                                 qsizetype midCount, std::span<const double> values,
                                 qsizetype begin, qsizetype end, double xMin, double xMax,
                                 int buckets) const;
    void rangeMinMax(std::span<const double> values, qsizetype begin, qsizetype end,
                     Block &acc) const;
    size_t levelAt(qsizetype i, qsizetype end) const;
    void prefetchRange(qsizetype begin, qsizetype end) const;
    static void mergePoint(std::span<const double> values, std::uint32_t i, Block &acc);
    static void mergeBlock(const Block &b, Block &acc);

    // m_levels[k][j] covers points [j·kBlock·2^k, (j+1)·kBlock·2^k); complete nodes only.
    std::vector<std::vector<Block>> m_levels;
    qsizetype m_count = 0; // points covered by complete level-0 blocks
};

} // namespace rankdeck
