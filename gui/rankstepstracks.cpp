// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankstepstracks.h"

#include "store/metricsstore.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <utility>

namespace rankdeck {

void RankStepTracks::clear()
{
    startOver(-1, 0);
}

void RankStepTracks::startOver(qint64 originUs, int capacity)
{
    m_rows.clear();
    m_series.clear();
    m_capacity = capacity;
    m_shift = kMinShift;
    m_columns = 0;
    m_originUs = originUs;
    m_maxTimeUs = -1;
    m_changedFrom = 0;
    m_more = false;
    m_low.assign(size_t(capacity), -1);
    m_median.assign(size_t(capacity), -1);
    m_high.assign(size_t(capacity), -1);
    m_slowestRank = m_fastestRank = -1;
    m_slowestStep = m_fastestStep = m_medianStep = -1;
    m_behind = false;
}

int RankStepTracks::rowOf(int rank) const
{
    const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), rank,
                                     [](const Row &row, int r) { return row.rank < r; });
    return it != m_rows.end() && it->rank == rank ? int(it - m_rows.begin()) : -1;
}

RankStepTracks::Row &RankStepTracks::rowFor(int rank)
{
    const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), rank,
                                     [](const Row &row, int r) { return row.rank < r; });
    if (it != m_rows.end() && it->rank == rank)
        return *it;
    // A rank without a point yet adds nothing to any column's band: its row needs no redraw of
    // the columns before its first point (which addPoint() marks changed).
    Row row;
    row.rank = rank;
    row.cells.assign(size_t(m_capacity), -1);
    row.reached.assign(size_t(m_capacity), -1);
    return *m_rows.insert(it, std::move(row));
}

qint64 RankStepTracks::reachedAt(int row, int column) const
{
    return m_rows[size_t(row)].reached[size_t(column)];
}

qint64 RankStepTracks::lowestStep() const
{
    qint64 low = -1;
    for (int c = 0; c < m_columns; ++c) {
        if (m_low[size_t(c)] >= 0 && (low < 0 || m_low[size_t(c)] < low))
            low = m_low[size_t(c)];
    }
    return low;
}

qint64 RankStepTracks::highestStep() const
{
    qint64 high = -1;
    for (int c = 0; c < m_columns; ++c)
        high = std::max(high, m_high[size_t(c)]);
    return high;
}

bool RankStepTracks::update(const MetricsStore &store, int maxColumns, qint64 budget)
{
    const int capacity = std::clamp(maxColumns, 16, 8192);
    const qint64 origin = store.startTimeUs();
    bool startedOver = false;
    // Buckets are aligned to the run's first point: when an earlier one arrives (another node's
    // corrected clock) every bucket moves, and only a fresh read places the points right.
    if (capacity != m_capacity || origin != m_originUs) {
        startedOver = !isEmpty() || m_capacity != capacity;
        startOver(origin, capacity);
    }
    const int oldColumns = m_columns;
    m_changedFrom = std::numeric_limits<int>::max();
    m_lastRead = 0;
    m_more = false;
    auto readAll = [&] {
        qint64 left = budget;
        const QStringList names = store.metricNames();
        for (const QString &name : names) {
            const QList<int> ranks = store.ranks(name);
            for (int rank : ranks) {
                if (left <= 0 && m_lastRead > 0) {
                    m_more = true;
                    return true;
                }
                if (!readSeries(store, rank, name, &left))
                    return false;
            }
        }
        return true;
    };
    if (!readAll()) {
        // The store lost points (cleared and filled again): what was read is no longer there.
        startedOver = true;
        startOver(store.startTimeUs(), capacity);
        m_lastRead = 0;
        readAll();
    }
    m_columns = m_rows.empty() || m_maxTimeUs < 0 ? 0 : int(m_maxTimeUs >> m_shift) + 1;
    const bool changed = startedOver || m_lastRead > 0 || m_columns != oldColumns;
    if (changed)
        summarize(startedOver ? 0 : std::min(m_changedFrom, oldColumns));
    return changed;
}

bool RankStepTracks::readSeries(const MetricsStore &store, int rank, const QString &name,
                                qint64 *budget)
{
    SeriesRead &series = m_series[rank][name];
    if (!series.checked) {
        // Epochs and reports count something else than steps: a line on them would mix units.
        series.counted = store.xBasis(rank, name) == XBasis::Step;
        series.checked = true;
    }
    if (!series.counted) {
        series.read = std::max(series.read, store.pointCount(rank, name));
        return true;
    }
    // Every new point, in the order they came, across restarts. Under the store's lock: this
    // only adds to the tracks.
    qint64 added = 0;
    const qint64 count = store.readPoints(
        rank, name, series.read,
        [&](std::span<const qint64> steps, std::span<const qint64> times, std::span<const double>) {
            Row &row = rowFor(rank);
            for (size_t i = 0; i < steps.size(); ++i)
                addPoint(row, series, steps[i], times[i]);
            added = qint64(steps.size());
        });
    if (count < series.read)
        return false; // cleared, or folded past what was read: start over
    series.read = count;
    *budget -= added;
    m_lastRead += added;
    return true;
}

void RankStepTracks::addPoint(Row &row, SeriesRead &series, qint64 step, qint64 wallTimeUs)
{
    const qint64 t = std::max<qint64>(0, wallTimeUs - m_originUs);
    if ((t >> m_shift) >= m_capacity)
        widen(t >> m_shift);
    const int column = int(t >> m_shift);
    qint64 &cell = row.cells[size_t(column)];
    cell = std::max(cell, step);
    if (series.lastStep >= 0 && step > series.lastStep)
        series.stride = step - series.lastStep;
    series.lastStep = step;
    m_maxTimeUs = std::max(m_maxTimeUs, t);
    m_changedFrom = std::min(m_changedFrom, column);
}

// Wider buckets, merged by their maximum: the grid is the one the points would have built had
// the buckets been this wide from the start.
void RankStepTracks::widen(qint64 column)
{
    int by = 1;
    while ((column >> by) >= m_capacity)
        ++by;
    for (Row &row : m_rows) {
        for (size_t c = 0; c < row.cells.size(); ++c) {
            const qint64 v = std::exchange(row.cells[c], -1);
            qint64 &into = row.cells[c >> by];
            into = std::max(into, v);
        }
    }
    m_shift += by;
    m_changedFrom = 0;
}

void RankStepTracks::summarize(int from)
{
    from = std::clamp(from, 0, m_columns);
    for (Row &row : m_rows) {
        qint64 reached = from > 0 ? row.reached[size_t(from - 1)] : -1;
        for (int c = from; c < m_columns; ++c) {
            if (row.cells[size_t(c)] >= 0)
                reached = row.cells[size_t(c)];
            row.reached[size_t(c)] = reached;
        }
    }
    for (int c = from; c < m_columns; ++c) {
        m_scratch.clear();
        for (const Row &row : m_rows) {
            if (row.reached[size_t(c)] >= 0)
                m_scratch.push_back(row.reached[size_t(c)]);
        }
        if (m_scratch.empty()) {
            m_low[size_t(c)] = m_median[size_t(c)] = m_high[size_t(c)] = -1;
            continue;
        }
        const auto [low, high] = std::minmax_element(m_scratch.begin(), m_scratch.end());
        m_low[size_t(c)] = *low;
        m_high[size_t(c)] = *high;
        const auto mid = m_scratch.begin() + qsizetype(m_scratch.size() / 2);
        std::nth_element(m_scratch.begin(), mid, m_scratch.end());
        m_median[size_t(c)] = *mid;
    }

    m_slowestRank = m_fastestRank = -1;
    m_slowestStep = m_fastestStep = m_medianStep = -1;
    m_behind = false;
    if (m_columns <= 0)
        return;
    const size_t last = size_t(m_columns - 1);
    int ranks = 0;
    for (const Row &row : m_rows) {
        const qint64 v = row.reached[last];
        if (v < 0)
            continue;
        ++ranks;
        if (m_slowestRank < 0 || v < m_slowestStep) {
            m_slowestRank = row.rank;
            m_slowestStep = v;
        }
        if (m_fastestRank < 0 || v > m_fastestStep) {
            m_fastestRank = row.rank;
            m_fastestStep = v;
        }
    }
    m_medianStep = m_median[last];
    if (ranks < 2)
        return;
    // How finely the slowest rank's steps are known: the smallest step between two reports of
    // any of its series.
    qint64 stride = 0;
    const QHash<QString, SeriesRead> slowest = m_series.value(m_slowestRank);
    for (const SeriesRead &series : slowest) {
        if (series.counted && series.stride > 0 && (stride == 0 || series.stride < stride))
            stride = series.stride;
    }
    qint64 spread = 0;
    if (ranks >= 3) {
        m_scratch.clear();
        for (const Row &row : m_rows) {
            if (row.reached[last] >= 0)
                m_scratch.push_back(std::abs(row.reached[last] - m_medianStep));
        }
        const auto mid = m_scratch.begin() + qsizetype(m_scratch.size() / 2);
        std::nth_element(m_scratch.begin(), mid, m_scratch.end());
        spread = *mid;
    }
    m_behind = lag() > std::max({qint64(2), 2 * stride, 3 * spread});
}

} // namespace rankdeck
