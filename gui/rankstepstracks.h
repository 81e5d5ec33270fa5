// SPDX-License-Identifier: GPL-3.0-or-later
//
// The step each rank reached over time, for the Overview of a run without step times (a user's
// program: its metrics carry steps, but none is a step time, so there is no heatmap to draw).
// Every point of a rank's step-counted series (loss, lr, …; not those on epochs or reports)
// says the rank had reached that step when the point arrived. Per rank the tracks keep the
// largest step reported in each time bucket since the run's first point; a bucket without a
// point carries the step before it forward, so each rank's line is the step it had reached.
//
// The buckets are aligned to the run's start and double in width when the run outgrows the
// columns (pairs merge by their maximum), so a grid kept up to date from the new points alone
// equals one read from every point, and a live refresh reads only what was appended since the
// last one. The columns are the view's pixel columns: 512 ranks cost 512 rows of at most one
// value a pixel, whatever the run's length. A first read of a long record is spread over
// several updates (a budget of points each), so the GUI thread never stalls on it.
//
// Across the ranks each column has its band (the lowest and highest step) and median, and the
// last column names the slowest and fastest rank; update() recomputes them from the first
// column that changed, not on every paint.
#pragma once

#include <QHash>
#include <QList>
#include <QString>

#include <vector>

namespace rankdeck {

class MetricsStore;

class RankStepTracks
{
public:
    static constexpr int kMinShift = 14; // the narrowest bucket: 2^14 µs, about 16 ms
    static constexpr qint64 kDefaultBudget = 2'000'000;

    // Reads what is new in `store` into at most maxColumns columns, at most about `budget`
    // points (always one series at least). Returns whether anything shown changed; another
    // maxColumns, a store that lost points (cleared) or another start time starts over.
    bool update(const MetricsStore &store, int maxColumns, qint64 budget = kDefaultBudget);
    // The last update() stopped at its budget: call it again for the rest.
    bool hasMore() const { return m_more; }
    void clear();

    bool isEmpty() const { return m_columns <= 0; }
    int rowCount() const { return int(m_rows.size()); }
    int rankAt(int row) const { return m_rows[size_t(row)].rank; }
    int rowOf(int rank) const;
    int capacity() const { return m_capacity; }
    int columns() const { return m_columns; } // in use, from the run's start on
    qint64 bucketUs() const { return qint64(1) << m_shift; }
    qint64 spanUs() const { return m_maxTimeUs; } // the last point's time since the first's
    // The step `row` had reached by the end of `column`; -1 before its first point.
    qint64 reachedAt(int row, int column) const;
    // Across the ranks that had reported by the end of `column`; -1 where none had.
    qint64 lowAt(int column) const { return m_low[size_t(column)]; }
    qint64 medianAt(int column) const { return m_median[size_t(column)]; }
    qint64 highAt(int column) const { return m_high[size_t(column)]; }
    qint64 lowestStep() const;  // of every column's band; -1 when empty
    qint64 highestStep() const; // likewise

    // At the last column: the rank furthest behind and the one furthest ahead (the lowest rank
    // number on a tie), each rank's step median, and how far the slowest is below it.
    int slowestRank() const { return m_slowestRank; }
    int fastestRank() const { return m_fastestRank; }
    qint64 slowestStep() const { return m_slowestStep; }
    qint64 fastestStep() const { return m_fastestStep; }
    qint64 medianStep() const { return m_medianStep; }
    qint64 lag() const { return m_medianStep - m_slowestStep; }
    // Whether the slowest rank is behind rather than in the ranks' usual spread: further from
    // the median than 2 steps, than twice the steps between its reports (a program printing
    // every 50 steps is 49 steps "behind" half of the time) and, from 3 ranks, than 3 times the
    // ranks' median distance from the median.
    bool slowestBehind() const { return m_behind; }
    // Points read by the last update().
    qint64 lastReadPoints() const { return m_lastRead; }

private:
    struct SeriesRead
    {
        qint64 read = 0;      // points of the series read so far
        qint64 lastStep = -1; // the step of the last point read
        qint64 stride = 0;    // the last increase between two of its points
        bool counted = true;  // on steps (not epochs or reports)
        bool checked = false; // its basis was looked up
    };
    struct Row
    {
        int rank = 0;
        std::vector<qint64> cells;   // the largest step in each bucket, -1: no point
        std::vector<qint64> reached; // cells carried forward
    };

    void startOver(qint64 originUs, int capacity);
    Row &rowFor(int rank);
    // false: the store lost points, start over.
    bool readSeries(const MetricsStore &store, int rank, const QString &name, qint64 *budget);
    void addPoint(Row &row, SeriesRead &series, qint64 step, qint64 wallTimeUs);
    void widen(qint64 column);
    void summarize(int from);

    std::vector<Row> m_rows;                         // by rank; only ranks with a point on steps
    QHash<int, QHash<QString, SeriesRead>> m_series; // every series looked at, by rank and name
    int m_capacity = 0;
    int m_shift = kMinShift;
    int m_columns = 0;
    qint64 m_originUs = -1;
    qint64 m_maxTimeUs = -1;
    int m_changedFrom = 0;
    bool m_more = false;
    qint64 m_lastRead = 0;
    std::vector<qint64> m_low, m_median, m_high;
    std::vector<qint64> m_scratch;
    int m_slowestRank = -1;
    int m_fastestRank = -1;
    qint64 m_slowestStep = -1;
    qint64 m_fastestStep = -1;
    qint64 m_medianStep = -1;
    bool m_behind = false;
};

} // namespace rankdeck
