// SPDX-License-Identifier: GPL-3.0-or-later
//
// The numbers of a run: per rank, per metric name, a series of (step, wall time, value), every
// point as it came unless a history budget folds the old ones (below). Thread-safe (the run
// controller appends, views poll on a timer through the generation counter and get value types
// back). When a rank's steps go backwards (a restart from a checkpoint) the series starts a new
// segment, so plots never draw a zig-zag across it. Plots ask for curve(): smoothed on the points
// held (debiased EMA, cached per weight), then min/max bucketed with an incremental index, so
// replotting millions of points stays cheap.
//
// With a directory open, every point is also appended to <dir>/metrics.csv (the CsvExport
// format) and flushed, so a reopened run gets its curves back.
//
// With a HistoryBudget (setHistoryBudget(), as every run's store has), a series keeps its newest
// points as they came and folds the older ones into min/max groups (HistoryFold), so a run that
// prints for days holds a bounded number of points per series in memory; metrics.csv keeps every
// point. pointCount() and readPoints() still count every point appended.
//
// Each series also knows what its x counts (XBasis: steps, epochs or reports), set by its first
// point; a series that is not on steps is written to <dir>/metrics-x.csv (`rank,metric,x`),
// so the plot of a reopened run still says which.
#pragma once

#include "store/historyfold.h"
#include "stream/workerevent.h"
#include "stream/xbasis.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <span>

class QFile;

namespace rankdeck {

// Metric names the store fills from `step` events (the wire field names).
namespace metric {
inline const QString Loss = QStringLiteral("loss");
inline const QString LearningRate = QStringLiteral("lr");
inline const QString SamplesPerSec = QStringLiteral("samples_per_s");
inline const QString StepTimeMs = QStringLiteral("step_ms");
inline const QString CommWaitMs = QStringLiteral("comm_wait_ms");
// step_ms − comm_wait_ms of the same step, derived here: the rank's own work. In synchronous
// DDP every rank's step lasts as long as the slowest one's, so step time shows every rank alike;
// this shows the straggler as the long one.
inline const QString ComputeMs = QStringLiteral("compute_ms");
inline const QString GpuMemBytes = QStringLiteral("gpu_mem");
} // namespace metric

enum class MetricXAxis
{
    Step,
    RelativeTime,
    WallTime
};

struct MetricPoint
{
    qint64 step = 0;
    qint64 wallTimeUs = 0;
    double value = 0.0;
    friend bool operator==(const MetricPoint &, const MetricPoint &) = default;
};

struct MetricSegment
{
    QList<MetricPoint> points; // steps strictly increasing within a segment
};

struct MetricCurve
{
    // Segments are separated by one point with y = NaN (QCustomPlot breaks the line there).
    // On the step axis a later segment may start left of the earlier one (a restart): draw with
    // the keys unsorted (QCPCurve), or one graph per segment using segmentStarts.
    QList<double> x;
    QList<double> y;
    QList<qsizetype> segmentStarts; // index in x/y where each segment begins (after its NaN)
    QList<double> nanX;             // where the raw series holds NaN (a diverged loss): mark them
    QList<double> infX;
    QList<double> infY;      // +Inf / -Inf
    qint64 sourcePoints = 0; // full-resolution points behind this curve
};

class MetricsStore
{
public:
    // Curves across ranks, asked for in place of a rank (see curve()).
    static constexpr int MeanCurve = -1;
    static constexpr int MinCurve = -2;
    static constexpr int MaxCurve = -3;

    MetricsStore();
    ~MetricsStore();
    MetricsStore(const MetricsStore &) = delete;
    MetricsStore &operator=(const MetricsStore &) = delete;

    // What a run's store keeps in memory per series (at most 1,408 points, ~60 KB): the newest
    // 512 to 640 as they came, the history before them folded into at most 768 points (384
    // groups and more: TensorBoard keeps 1,000 points a series, sampled at random).
    static constexpr HistoryBudget kRunHistory{512, 768};
    // Before open(), so that loading a long record is bounded too. The default keeps everything.
    void setHistoryBudget(const HistoryBudget &budget);

    // Appends to <directory>/metrics.csv from now on; loads what the file already holds.
    bool open(const QString &directory, QString *errorMessage = nullptr);
    void close();
    // For a store opened on a record that another process writes (a run followed from the run
    // list): takes in the points it appended to metrics.csv since open() or the last call (its
    // complete rows). false when there were none.
    bool readAppended();

    // basis: what `step` counts; a series keeps the basis of its first point.
    void append(int rank, const QString &name, qint64 step, qint64 wallTimeUs, double value,
                XBasis basis = XBasis::Step);
    // Between the two, append() keeps its rows for one write of metrics.csv at endBatch(): a
    // batch of printed lines holds a point per line, and a write each was most of what the
    // launcher spent on them.
    void beginBatch();
    void endBatch();
    // Takes every metric of a `step` event (loss, lr, samples_per_s, …); other events ignored.
    void appendEvent(const WorkerEvent &event);
    void appendEvents(const QList<WorkerEvent> &events);
    void clear();

    quint64 generation() const { return m_generation.load(std::memory_order_acquire); }

    QList<int> ranks() const; // ascending
    QList<int> ranks(const QString &name) const;
    QStringList metricNames() const; // sorted
    // Points appended to the series, folded or not.
    qint64 pointCount(int rank, const QString &name) const;
    // Of those, the ones its folded history stands for (0 without a budget).
    qint64 foldedCount(int rank, const QString &name) const;
    qint64 totalPoints() const;
    int segmentCount(int rank, const QString &name) const;
    // What the series' x counts (Step when there is no such series).
    XBasis xBasis(int rank, const QString &name) const;
    // Wall time of the first point of the run (relative-time origin), 0 when empty.
    qint64 startTimeUs() const;
    // The points held (every point, unless a budget folded the history).
    QList<MetricSegment> segments(int rank, const QString &name) const;
    // The last point, if any.
    bool lastPoint(int rank, const QString &name, MetricPoint *point) const;
    // The last n points of the last segment (after a restart: of the resumed steps only),
    // without copying the series.
    QList<MetricPoint> tail(int rank, const QString &name, int n) const;
    // The smallest and largest step of the series (over all its segments); false when empty.
    bool stepRange(int rank, const QString &name, qint64 *first, qint64 *last) const;
    // The points from the from-th appended on, in the order they were appended (every segment; a
    // series only grows, so a reader that remembers how many it has read gets only the new ones
    // next time), as the store's own columns, without a copy: read() is called once with them,
    // not at all when there are none, under the store's lock (it must not call the store).
    // Returns how many points were appended to the series. from == 0 reads every point held; a
    // `from` inside the folded history (0 < from < foldedCount()) reads nothing and returns 0:
    // the points after it are no longer held one by one, so the reader starts over.
    using PointColumns =
        std::function<void(std::span<const qint64> steps, std::span<const qint64> timesUs,
                           std::span<const double> values)>;
    qint64 readPoints(int rank, const QString &name, qint64 from, const PointColumns &read) const;

    // A plottable curve: smoothed on the full data with the debiased EMA weight (0 = raw, per
    // segment), then min/max bucketed into ~buckets buckets over [xMin, xMax] of the chosen
    // axis (xMin >= xMax: everything; buckets <= 0: no bucketing). Relative time is in seconds
    // since startTimeUs(), wall time in seconds since the Unix epoch. rank == MeanCurve: the
    // per-step mean over the ranks that reported that step (NaN if any of them sent NaN),
    // smoothed, then bucketed. MinCurve / MaxCurve: likewise the per-step smallest / largest
    // value of those ranks (NaN where the mean is NaN), each smoothed on its own; the EMA is a
    // weighted average with positive weights, so min <= mean <= max holds after smoothing too.
    MetricCurve curve(int rank, const QString &name, MetricXAxis axis, double smoothingWeight,
                      double xMin, double xMax, int buckets) const;

    // The x extent of the metric over all ranks and segments on the chosen axis (as curve()
    // computes it); false when there is no point. O(restart segments).
    bool xRange(const QString &name, MetricXAxis axis, double *xMin, double *xMax) const;

    // Whether a series' history is folded (points of it are in metrics.csv only), and the record
    // directory the store was opened on (empty: none): an export reads every point from there.
    bool folded() const;
    QString directory() const;
    // Where the points of a metric that every rank still holds as they came begin, on the chosen
    // axis: left of *x some rank's curve is its folded history, each group of up to *span steps
    // drawn as its lowest and highest value. false when no series of the metric is folded.
    bool foldedBefore(const QString &name, MetricXAxis axis, double *x, qint64 *span) const;

    QString lastError() const;
    // metrics.csv could not be written (a full disk): it holds the rows up to the last write
    // that succeeded whole, nothing more is written, and missingPoints() counts the rest.
    bool diskFailed() const;
    QString diskError() const;
    qint64 missingPoints() const;

private:
    struct Series;
    Series *seriesLocked(int rank, const QString &name, bool create);
    const Series *seriesLocked(int rank, const QString &name) const;
    void appendLocked(int rank, const QString &name, qint64 step, qint64 wallTimeUs, double value,
                      bool persist, XBasis basis = XBasis::Step);
    bool writeBasisLocked(int rank, const QString &name, XBasis basis);
    MetricCurve curveLocked(const Series &s, MetricXAxis axis, double weight, double xMin,
                            double xMax, int buckets) const;
    void smoothEveryRankLocked(const QString &name, double weight) const;
    struct MeanSeries;
    qint64 acrossRanksExtentLocked(MeanSeries &mean, MetricXAxis axis, double *lo,
                                   double *hi) const;
    MetricCurve acrossRanksCurveLocked(int which, const QString &name, MetricXAxis axis,
                                       double weight, double xMin, double xMax, int buckets) const;

    void flushLocked();
    // What metrics-x.csv says the series' x counts, for those not on steps.
    void readBasesLocked();

    mutable QMutex m_mutex;
    QHash<int, QHash<QString, std::shared_ptr<Series>>> m_series;
    QHash<QString, std::shared_ptr<MeanSeries>> m_means;
    HistoryBudget m_budget;
    QByteArray m_pendingCsv;
    int m_batchDepth = 0; // beginBatch() minus endBatch()
    qint64 m_startTimeUs = 0;
    qint64 m_total = 0;
    // The store's generation at the last smoothEveryRankLocked() scan of a name and weight: every
    // rank's curve() of one plot refresh asks for it, and a scan of every rank each time made a
    // refresh of 512 live curves O(ranks²).
    mutable quint64 m_smoothScanGeneration = 0;
    mutable QString m_smoothScanName;
    mutable double m_smoothScanWeight = -1;
    std::unique_ptr<QFile> m_file;
    std::unique_ptr<QFile> m_basisFile; // metrics-x.csv
    qint64 m_recordedSize = 0;          // bytes of metrics.csv written whole
    bool m_mendCutRow = false;          // check for a crash's cut row before the first write
    QString m_directory;
    qint64 m_readOffset = 0; // bytes of metrics.csv read back (open(), readAppended())
    qint64 m_missingPoints = 0;
    QString m_diskError;
    QString m_lastError;
    std::atomic<quint64> m_generation{0};
};

} // namespace rankdeck
