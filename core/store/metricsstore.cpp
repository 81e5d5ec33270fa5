// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: the series, the mean series and their curve caches are
// private to the store, and their hot loops (append, smoothing, min/max bucketing) are kept in
// this one translation unit, where bench/run's plot_replot_ms_64x1m was measured.
#include "store/metricsstore.h"

#include "util/atomicfile.h"

#include "util/translation.h"

#include "store/csvexport.h"
#include "store/downsampler.h"
#include "store/historyfold.h"
#include "store/smoothing.h"

#include "wire/wireprotocol.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutexLocker>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace rankdeck {

namespace {

// Below this many points of one metric, smoothing each rank on demand beats a pool of threads.
constexpr qint64 kParallelSmoothingPoints = 1'000'000;

struct SmoothCache
{
    double weight = -1.0;
    std::vector<double> values;
    Downsampler index;
    Smoothing state = Smoothing(0.0);
    size_t segment = 0; // segment of the next value to smooth
    quint64 lastUse = 0;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Columns grow by an eighth instead of doubling: at 64 ranks × 1M points a doubled column is
// hundreds of MB reserved for nothing, and a derived column sized exactly to its source (a
// smoothed copy) would double on the very next point.
template <typename T> void growFor(std::vector<T> &column, size_t n)
{
    if (column.capacity() < n)
        column.reserve(n + std::max<size_t>(n / 8, 16)); // 512 ranks × 6 metrics start small
}

template <typename T> void pushBack(std::vector<T> &column, const T &value)
{
    growFor(column, column.size() + 1);
    column.push_back(value);
}

} // namespace

struct MetricsStore::Series
{
    XBasis basis = XBasis::Step;
    std::vector<qint64> steps;
    std::vector<qint64> times;
    std::vector<double> values;
    std::vector<size_t> segmentStarts;
    std::vector<qint64> stepMid, timeMid; // Downsampler::midSamples() of steps and times
    Downsampler rawIndex;
    // One smoothed column per series: the plot shows the raw curve (weight 0, not cached) and
    // one weight. A second slot would only keep the previous slider position, at 8 bytes per
    // point (512 MB at 64 × 1M).
    mutable std::array<SmoothCache, 1> caches;
    mutable quint64 useCounter = 0;
    qint64 received = 0;  // points appended
    qint64 folded = 0;    // of them, those the folded history [0, foldedEnd) stands for
    size_t foldedEnd = 0; // where the points kept as they came begin
    qint64 foldSpan = 1;  // steps per group of the folded history

    // Folds all but the newest budget.recentPoints points (HistoryFold), in place: the columns
    // keep their capacity, so a series at its budget allocates nothing more.
    void fold(const HistoryBudget &budget)
    {
        const size_t n = values.size();
        const size_t recent = std::min(n, size_t(budget.recentPoints));
        const size_t end = n - recent;
        const HistoryFold::Series view{[this](size_t i) { return steps[i]; },
                                       {[this](size_t i) { return values[i]; }},
                                       segmentStarts};
        std::vector<size_t> kept =
            HistoryFold::fold(view, end, &foldSpan, size_t(budget.foldedPoints));
        const size_t keptFolded = kept.size();
        for (size_t i = end; i < n; ++i)
            kept.push_back(i);
        std::vector<size_t> starts;
        size_t passed = 0; // segment starts at or before the point read
        size_t w = 0;
        for (size_t i : kept) {
            const size_t before = passed;
            while (passed < segmentStarts.size() && segmentStarts[passed] <= i)
                ++passed;
            if (passed != before)
                starts.push_back(w); // every segment keeps a point: none is merged away
            steps[w] = steps[i];
            times[w] = times[i];
            values[w] = values[i];
            ++w;
        }
        steps.resize(w);
        times.resize(w);
        values.resize(w);
        segmentStarts.assign(starts.begin(), starts.end());
        folded = received - qint64(recent);
        foldedEnd = keptFolded;
        rawIndex.clear();
        rawIndex.update(values);
        stepMid.clear();
        timeMid.clear();
        Downsampler::midSamples(steps, stepMid);
        Downsampler::midSamples(times, timeMid);
        for (SmoothCache &c : caches) {
            // Smoothed again from the first point at the next curve(): once per recentPoints
            // appends, over a bounded series.
            c.values.clear();
            c.index.clear();
            c.segment = 0;
            c.state = Smoothing(std::max(0.0, c.weight));
        }
    }

    bool hasSmoothed(double weight) const
    {
        return std::any_of(caches.begin(), caches.end(),
                           [weight](const SmoothCache &c) { return c.weight == weight; });
    }

    size_t segmentEnd(size_t s) const
    {
        return s + 1 < segmentStarts.size() ? segmentStarts[s + 1] : values.size();
    }

    // The smoothed column for `weight`, brought up to date incrementally.
    const SmoothCache &smoothed(double weight) const
    {
        SmoothCache *hit = nullptr;
        for (SmoothCache &c : caches) {
            if (c.weight == weight)
                hit = &c;
        }
        if (!hit) {
            hit = &*std::min_element(
                caches.begin(), caches.end(),
                [](const SmoothCache &a, const SmoothCache &b) { return a.lastUse < b.lastUse; });
            // The evicted column's memory is reused: freeing and faulting in 8 MB per rank again
            // at every slider step costs more than the smoothing itself.
            std::vector<double> buffer = std::move(hit->values);
            buffer.clear();
            *hit = SmoothCache{};
            hit->values = std::move(buffer);
            hit->weight = weight;
            hit->state = Smoothing(weight);
        }
        hit->lastUse = ++useCounter;
        SmoothCache &c = *hit;
        size_t i = c.values.size();
        const size_t n = values.size();
        growFor(c.values, n);
        c.values.resize(n);
        // The average in a local: kept in registers, not reloaded after every store into the
        // column (which could alias it as far as the compiler knows).
        Smoothing state = c.state;
        double *out = c.values.data();
        const double *in = values.data();
        while (i < n) {
            if (c.segment < segmentStarts.size() && segmentStarts[c.segment] == i) {
                state.reset(); // a restart begins a fresh average
                ++c.segment;
            }
            const size_t end =
                c.segment < segmentStarts.size() ? std::min(segmentStarts[c.segment], n) : n;
            for (; i < end; ++i)
                out[i] = state.next(in[i]);
        }
        c.state = state;
        c.index.update(c.values);
        return c;
    }
};

// The mean, min and max across ranks, kept up to date as points arrive: per step a running sum,
// count and extremes, so a refresh never walks every rank's points. The plottable columns (x,
// each statistic's values, their smoothed values and their min/max pyramids) are rebuilt only
// from the first step that changed since the last curve(): in a live run that is the last few
// steps, whatever the run's length. A statistic nobody asked for (min and max without a band
// on screen) gets no columns at all.
struct MetricsStore::MeanSeries
{
    enum Stat
    {
        Mean,
        Min,
        Max,
        StatCount
    };

    struct Point
    {
        qint64 step = 0;
        qint64 timeUs = 0;
        double sum = 0.0;
        double lo = std::numeric_limits<double>::infinity();
        double hi = -std::numeric_limits<double>::infinity();
        int count = 0;
        int nonFinite = 0;
        // NaN where any rank sent a non-finite value, for all three alike: the band then never
        // claims a step the mean leaves out, and min <= mean <= max holds wherever they are drawn.
        double value(Stat stat) const
        {
            if (nonFinite > 0 || count == 0)
                return kNaN;
            // A rounded sum can put the mean of equal values an ulp outside them: clamped.
            return stat == Min ? lo : stat == Max ? hi : std::clamp(sum / count, lo, hi);
        }
    };

    // One statistic's values for one weight, with the EMA state saved at every block start so
    // that a change at point k recomputes from the block holding k instead of from the first
    // point.
    struct Smoothed
    {
        double weight = -1.0;
        std::vector<double> values;
        std::vector<Smoothing> checkpoints; // state before point j·kBlock
        Smoothing state = Smoothing(0.0);   // state after the last of `values`
        Downsampler index;
        quint64 lastUse = 0;

        void invalidateFrom(size_t k)
        {
            if (k >= values.size())
                return;
            const size_t block = k / Downsampler::kBlock;
            state = checkpoints[block];
            checkpoints.resize(block);
            values.resize(block * Downsampler::kBlock);
            index.truncate(qsizetype(values.size()));
        }
        void extend(const std::vector<double> &raw)
        {
            size_t i = values.size();
            growFor(values, raw.size());
            values.resize(raw.size());
            Smoothing s = state; // in registers, see Series::smoothed()
            for (; i < raw.size(); ++i) {
                if (i % Downsampler::kBlock == 0)
                    checkpoints.push_back(s);
                values[i] = s.next(raw[i]);
            }
            state = s;
            index.update(values);
        }
    };

    // A statistic's plottable values: raw, and smoothed for the weights asked for.
    struct Column
    {
        std::vector<double> values;
        Downsampler index;
        std::array<Smoothed, 2> smoothed; // the plot asks for raw and one weight at a time
        size_t dirtyFrom = 0;             // first point whose values are stale
        quint64 useCounter = 0;

        void refresh(const std::vector<Point> &points, Stat stat)
        {
            const size_t n = points.size();
            const size_t from = std::min(dirtyFrom, n);
            if (from == n && values.size() == n)
                return;
            growFor(values, n);
            values.resize(n);
            for (size_t i = from; i < n; ++i)
                values[i] = points[i].value(stat);
            index.truncate(qsizetype(from));
            index.update(values);
            for (Smoothed &sm : smoothed)
                sm.invalidateFrom(from);
            dirtyFrom = n;
        }

        const Smoothed &smoothedFor(double weight)
        {
            Smoothed *hit = nullptr;
            for (Smoothed &sm : smoothed) {
                if (sm.weight == weight)
                    hit = &sm;
            }
            if (!hit) {
                hit = smoothed[0].lastUse <= smoothed[1].lastUse ? smoothed.data() : &smoothed[1];
                *hit = Smoothed{};
                hit->weight = weight;
                hit->state = Smoothing(weight);
            }
            hit->lastUse = ++useCounter;
            hit->extend(values);
            return *hit;
        }
    };

    struct Segment
    {
        std::vector<Point> points; // ascending steps
        size_t foldedEnd = 0;      // as Series::foldedEnd
        qint64 foldSpan = 1;
        size_t dirtyFrom = 0; // first point whose x columns below are stale
        // Columns for the bucketing fast path; times never decrease (see refresh()).
        std::vector<qint64> steps;
        std::vector<qint64> times;
        std::vector<qint64> stepMid, timeMid;
        std::array<Column, StatCount> stats;

        void markDirty(size_t i)
        {
            dirtyFrom = std::min(dirtyFrom, i);
            for (Column &c : stats)
                c.dirtyFrom = std::min(c.dirtyFrom, i);
        }

        // As Series::fold; a group keeps the steps of its lowest and highest mean and of its
        // band's extremes, so min <= mean <= max still holds at every step kept.
        void fold(const HistoryBudget &budget)
        {
            const size_t n = points.size();
            const size_t end = n - std::min(n, size_t(budget.recentPoints));
            const auto stat = [this](Stat which) {
                return [this, which](size_t i) { return points[i].value(which); };
            };
            const HistoryFold::Series view{[this](size_t i) { return points[i].step; },
                                           {stat(Mean), stat(Min), stat(Max)},
                                           {}};
            std::vector<size_t> kept =
                HistoryFold::fold(view, end, &foldSpan, size_t(budget.foldedPoints));
            foldedEnd = kept.size();
            size_t w = 0;
            for (size_t i : kept)
                points[w++] = points[i];
            for (size_t i = end; i < n; ++i)
                points[w++] = points[i];
            points.resize(w);
            markDirty(0);
        }

        void refreshX()
        {
            const size_t n = points.size();
            const size_t from = std::min(dirtyFrom, n);
            if (from < n || steps.size() != n) {
                growFor(steps, n);
                growFor(times, n);
                steps.resize(n);
                times.resize(n);
                for (size_t i = from; i < n; ++i) {
                    const Point &p = points[i];
                    steps[i] = p.step;
                    // Time order can differ from step order by a few µs across ranks; the
                    // bucketing needs non-decreasing x.
                    times[i] = i > 0 ? std::max(p.timeUs, times[i - 1]) : p.timeUs;
                }
                Downsampler::midSamples(steps, stepMid, qsizetype(from));
                Downsampler::midSamples(times, timeMid, qsizetype(from));
                dirtyFrom = n;
            }
        }
    };
    std::vector<Segment> segments;

    void add(size_t segment, qint64 step, qint64 timeUs, double value, const HistoryBudget &budget)
    {
        if (segments.size() <= segment)
            segments.resize(segment + 1);
        Segment &seg = segments[segment];
        std::vector<Point> &pts = seg.points;
        // Ranks report the same steps at about the same time: the slot is almost always last.
        auto it = pts.end();
        if (pts.empty() || pts.back().step < step) {
            pushBack(pts, Point{step, timeUs});
            it = pts.end() - 1;
        } else if (pts.back().step == step) {
            it = pts.end() - 1;
        } else {
            it = std::lower_bound(pts.begin(), pts.end(), step,
                                  [](const Point &p, qint64 s) { return p.step < s; });
            if (it == pts.end() || it->step != step) {
                // A step before the folded history's end (a rank far behind) joins it.
                if (size_t(it - pts.begin()) < seg.foldedEnd)
                    ++seg.foldedEnd;
                it = pts.insert(it, Point{step, timeUs});
            }
        }
        it->timeUs = std::min(it->timeUs, timeUs);
        if (std::isfinite(value)) {
            it->sum += value;
            it->lo = std::min(it->lo, value);
            it->hi = std::max(it->hi, value);
            ++it->count;
        } else {
            ++it->nonFinite;
        }
        seg.markDirty(size_t(it - pts.begin()));
        if (budget.bounded() && pts.size() - seg.foldedEnd >= budget.foldAt())
            seg.fold(budget);
    }
};

MetricsStore::MetricsStore() = default;

MetricsStore::~MetricsStore()
{
    close();
}

void MetricsStore::setHistoryBudget(const HistoryBudget &budget)
{
    QMutexLocker lock(&m_mutex);
    m_budget = budget;
}

bool MetricsStore::open(const QString &directory, QString *errorMessage)
{
    QMutexLocker lock(&m_mutex);
    auto fail = [&](const QString &why) {
        if (errorMessage)
            *errorMessage = why;
        m_lastError = why;
        return false;
    };
    if (m_file)
        return fail(tr("metrics store is already open on %1").arg(m_file->fileName()));
    if (!QDir().mkpath(directory))
        return fail(tr("cannot create directory %1").arg(directory));
    const QString path = QDir(directory).filePath(QStringLiteral("metrics.csv"));
    bool exists = QFile::exists(path);
    m_directory = directory;
    if (exists) {
        QList<CsvExport::Row> rows;
        QString why;
        const bool ok = CsvExport::readFrom(path, 0, &rows, &m_readOffset, &why);
        for (const CsvExport::Row &r : rows)
            appendLocked(r.rank, r.metric, r.step, r.wallTimeUs, r.value, false);
        if (!ok)
            m_lastError = why; // keep what could be read; appending goes on after it
        readBasesLocked();
        m_generation.fetch_add(1, std::memory_order_release);
    }
    auto file = std::make_unique<QFile>(path);
    if (!file->open(QIODevice::WriteOnly | QIODevice::Append))
        return fail(tr("cannot write %1: %2").arg(path, file->errorString()));
    if (file->size() == 0)
        file->write(CsvExport::header());
    // A row cut off by a crash must not glue itself to the next one; but only a store that
    // appends mends it, at its first row: one opened to look at (or follow) a record another
    // process still writes would otherwise split that process's row in two.
    m_mendCutRow = exists && file->size() > 0;
    if (!file->flush())
        return fail(tr("cannot write %1: %2").arg(path, file->errorString()));
    m_recordedSize = file->size();
    m_file = std::move(file);
    flushLocked();
    return true;
}

void MetricsStore::readBasesLocked()
{
    QFile bases(QDir(m_directory).filePath(QStringLiteral("metrics-x.csv")));
    if (!bases.open(QIODevice::ReadOnly))
        return;
    bases.readLine(); // header
    while (!bases.atEnd()) {
        const QString line = QString::fromUtf8(bases.readLine()).trimmed();
        QStringList f;
        XBasis basis = XBasis::Step;
        bool rankOk = false;
        if (!CsvExport::splitLine(line, &f) || f.size() != 3 || !parseXBasis(f[2], &basis))
            continue;
        const int rank = f[0].toInt(&rankOk);
        if (Series *series = rankOk ? seriesLocked(rank, f[1], false) : nullptr)
            series->basis = basis;
    }
}

bool MetricsStore::readAppended()
{
    QMutexLocker lock(&m_mutex);
    if (m_directory.isEmpty())
        return false;
    const QString path = QDir(m_directory).filePath(QStringLiteral("metrics.csv"));
    if (QFileInfo(path).size() <= m_readOffset)
        return false;
    QList<CsvExport::Row> rows;
    QString why;
    if (!CsvExport::readFrom(path, m_readOffset, &rows, &m_readOffset, &why))
        m_lastError = why;
    if (rows.isEmpty())
        return false;
    bool newSeries = false;
    for (const CsvExport::Row &r : std::as_const(rows)) {
        newSeries = newSeries || !seriesLocked(r.rank, r.metric);
        appendLocked(r.rank, r.metric, r.step, r.wallTimeUs, r.value, false);
    }
    // A series not on steps is named in metrics-x.csv when its first point is written.
    if (newSeries)
        readBasesLocked();
    m_generation.fetch_add(1, std::memory_order_release);
    return true;
}

void MetricsStore::close()
{
    QMutexLocker lock(&m_mutex);
    flushLocked();
    m_file.reset();
    m_basisFile.reset();
}

void MetricsStore::flushLocked()
{
    if (!m_file || m_pendingCsv.isEmpty()) {
        m_pendingCsv.clear();
        return;
    }
    if (m_mendCutRow) {
        m_mendCutRow = false;
        QFile check(m_file->fileName());
        if (check.open(QIODevice::ReadOnly) && check.size() > 0 && check.seek(check.size() - 1) &&
            check.read(1) != "\n")
            m_pendingCsv.prepend('\n');
    }
    if (m_file->write(m_pendingCsv) != m_pendingCsv.size() || !m_file->flush()) {
        // A full disk: back to the last whole row, and nothing more is written; the points
        // stay in memory and missingPoints() counts what metrics.csv lacks.
        m_diskError =
            tr("cannot write %1: %2").arg(m_file->fileName(), AtomicFile::writeErrorText(*m_file));
        m_lastError = m_diskError;
        m_missingPoints += m_pendingCsv.count('\n');
        const QString path = m_file->fileName();
        m_file.reset();
        QFile::resize(path, m_recordedSize);
    } else {
        m_recordedSize += m_pendingCsv.size();
    }
    m_pendingCsv.clear();
}

MetricsStore::Series *MetricsStore::seriesLocked(int rank, const QString &name, bool create)
{
    auto &byName = m_series[rank];
    auto it = byName.find(name);
    if (it != byName.end())
        return it->get();
    if (!create)
        return nullptr;
    return byName.insert(name, std::make_shared<Series>())->get();
}

const MetricsStore::Series *MetricsStore::seriesLocked(int rank, const QString &name) const
{
    const auto r = m_series.constFind(rank);
    if (r == m_series.cend())
        return nullptr;
    const auto it = r->constFind(name);
    return it == r->cend() ? nullptr : it->get();
}

bool MetricsStore::writeBasisLocked(int rank, const QString &name, XBasis basis)
{
    if (!m_file || !m_diskError.isEmpty())
        return false;
    if (!m_basisFile) {
        const QString path =
            QFileInfo(m_file->fileName()).dir().filePath(QStringLiteral("metrics-x.csv"));
        auto file = std::make_unique<QFile>(path);
        if (!file->open(QIODevice::WriteOnly | QIODevice::Append)) {
            m_lastError = tr("cannot write %1: %2").arg(path, file->errorString());
            return false;
        }
        if (file->size() == 0)
            file->write("rank,metric,x\n");
        m_basisFile = std::move(file);
    }
    // The rank and metric fields of a points row (the metric quoted as there), then the basis.
    QByteArray row = CsvExport::row(rank, name, 0, 0, 0, 0.0);
    row.chop(1);
    for (int k = 0; k < 4; ++k)
        row.truncate(row.lastIndexOf(','));
    row += ',' + xBasisKey(basis).toLatin1() + '\n';
    if (m_basisFile->write(row) != row.size() || !m_basisFile->flush()) {
        m_lastError = tr("cannot write %1: %2")
                          .arg(m_basisFile->fileName(), AtomicFile::writeErrorText(*m_basisFile));
        m_basisFile.reset();
        return false;
    }
    return true;
}

void MetricsStore::appendLocked(int rank, const QString &name, qint64 step, qint64 wallTimeUs,
                                double value, bool persist, XBasis basis)
{
    Series *s = seriesLocked(rank, name, true);
    if (s->values.empty() && s->steps.empty()) {
        s->basis = basis;
        if (persist && basis != XBasis::Step)
            writeBasisLocked(rank, name, basis);
    }
    if (s->values.empty() || step <= s->steps.back())
        s->segmentStarts.push_back(s->values.size());
    pushBack(s->steps, step);
    pushBack(s->times, wallTimeUs);
    pushBack(s->values, value);
    ++s->received;
    if (m_budget.bounded() && s->values.size() - s->foldedEnd >= m_budget.foldAt()) {
        s->fold(m_budget);
    } else {
        s->rawIndex.update(s->values);
        Downsampler::midSamples(s->steps, s->stepMid);
        Downsampler::midSamples(s->times, s->timeMid);
    }
    if (m_total == 0 || wallTimeUs < m_startTimeUs)
        m_startTimeUs = wallTimeUs;
    ++m_total;
    const size_t segment = s->segmentStarts.size() - 1;
    auto &mean = m_means[name];
    if (!mean)
        mean = std::make_shared<MeanSeries>();
    mean->add(segment, step, wallTimeUs, value, m_budget);
    if (persist && m_file)
        m_pendingCsv += CsvExport::row(rank, name, int(segment), step, wallTimeUs, value);
    else if (persist && !m_diskError.isEmpty())
        ++m_missingPoints;
}

void MetricsStore::append(int rank, const QString &name, qint64 step, qint64 wallTimeUs,
                          double value, XBasis basis)
{
    QMutexLocker lock(&m_mutex);
    appendLocked(rank, name, step, wallTimeUs, value, true, basis);
    if (m_batchDepth == 0)
        flushLocked();
    m_generation.fetch_add(1, std::memory_order_release);
}

void MetricsStore::beginBatch()
{
    QMutexLocker lock(&m_mutex);
    ++m_batchDepth;
}

void MetricsStore::endBatch()
{
    QMutexLocker lock(&m_mutex);
    if (m_batchDepth > 0 && --m_batchDepth == 0)
        flushLocked();
}

void MetricsStore::appendEvent(const WorkerEvent &event)
{
    appendEvents(QList<WorkerEvent>{event});
}

void MetricsStore::appendEvents(const QList<WorkerEvent> &events)
{
    static const std::array<std::pair<std::string_view, const QString *>, 6> kFields{{
        {wire::field::Loss, &metric::Loss},
        {wire::field::LearningRate, &metric::LearningRate},
        {wire::field::SamplesPerSec, &metric::SamplesPerSec},
        {wire::field::StepTimeMs, &metric::StepTimeMs},
        {wire::field::CommWaitMs, &metric::CommWaitMs},
        {wire::field::GpuMemBytes, &metric::GpuMemBytes},
    }};
    QMutexLocker lock(&m_mutex);
    bool changed = false;
    for (const WorkerEvent &e : events) {
        if (e.type() != WorkerEvent::Type::Step)
            continue;
        const qint64 step = e.step();
        if (step < 0)
            continue;
        for (const auto &[field, name] : kFields) {
            if (e.has(field)) {
                appendLocked(e.rank(), *name, step, e.timeUs(), e.number(field), true);
                changed = true;
            }
        }
        if (e.has(wire::field::StepTimeMs) && e.has(wire::field::CommWaitMs)) {
            const double work =
                e.number(wire::field::StepTimeMs) - e.number(wire::field::CommWaitMs);
            appendLocked(e.rank(), metric::ComputeMs, step, e.timeUs(), std::max(0.0, work), true);
        }
        // Any other metric a program reports (rankdeck.log(acc=…)): {"scalars": {name: value}}.
        const QJsonObject scalars = e.fields().value(QStringLiteral("scalars")).toObject();
        for (auto it = scalars.constBegin(); it != scalars.constEnd(); ++it) {
            const std::optional<double> value = WorkerEvent::wireNumber(it.value());
            if (!value || it.key().isEmpty() || it.key().size() > 128)
                continue;
            appendLocked(e.rank(), it.key(), step, e.timeUs(), *value, true);
            changed = true;
        }
    }
    if (changed) {
        flushLocked();
        m_generation.fetch_add(1, std::memory_order_release);
    }
}

void MetricsStore::clear()
{
    QMutexLocker lock(&m_mutex);
    m_series.clear();
    m_means.clear();
    m_total = 0;
    m_startTimeUs = 0;
    m_generation.fetch_add(1, std::memory_order_release);
}

QList<int> MetricsStore::ranks() const
{
    QMutexLocker lock(&m_mutex);
    QList<int> out;
    for (auto it = m_series.cbegin(); it != m_series.cend(); ++it) {
        if (!it->isEmpty())
            out.append(it.key());
    }
    std::sort(out.begin(), out.end());
    return out;
}

QList<int> MetricsStore::ranks(const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    QList<int> out;
    for (auto it = m_series.cbegin(); it != m_series.cend(); ++it) {
        if (it->contains(name))
            out.append(it.key());
    }
    std::sort(out.begin(), out.end());
    return out;
}

QStringList MetricsStore::metricNames() const
{
    QMutexLocker lock(&m_mutex);
    QStringList out = m_means.keys();
    out.sort();
    return out;
}

qint64 MetricsStore::pointCount(int rank, const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    return s ? s->received : 0;
}

qint64 MetricsStore::foldedCount(int rank, const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    return s ? s->folded : 0;
}

qint64 MetricsStore::totalPoints() const
{
    QMutexLocker lock(&m_mutex);
    return m_total;
}

XBasis MetricsStore::xBasis(int rank, const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    return s ? s->basis : XBasis::Step;
}

int MetricsStore::segmentCount(int rank, const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    return s ? int(s->segmentStarts.size()) : 0;
}

qint64 MetricsStore::startTimeUs() const
{
    QMutexLocker lock(&m_mutex);
    return m_startTimeUs;
}

QList<MetricSegment> MetricsStore::segments(int rank, const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    QList<MetricSegment> out;
    const Series *s = seriesLocked(rank, name);
    if (!s)
        return out;
    for (size_t k = 0; k < s->segmentStarts.size(); ++k) {
        MetricSegment seg;
        const size_t end = s->segmentEnd(k);
        seg.points.reserve(qsizetype(end - s->segmentStarts[k]));
        for (size_t i = s->segmentStarts[k]; i < end; ++i)
            seg.points.append(MetricPoint{s->steps[i], s->times[i], s->values[i]});
        out.append(std::move(seg));
    }
    return out;
}

bool MetricsStore::lastPoint(int rank, const QString &name, MetricPoint *point) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    if (!s || s->values.empty())
        return false;
    if (point)
        *point = MetricPoint{s->steps.back(), s->times.back(), s->values.back()};
    return true;
}

QList<MetricPoint> MetricsStore::tail(int rank, const QString &name, int n) const
{
    QMutexLocker lock(&m_mutex);
    QList<MetricPoint> out;
    const Series *s = seriesLocked(rank, name);
    if (!s || s->values.empty() || n <= 0)
        return out;
    const size_t end = s->values.size();
    const size_t begin = std::max(s->segmentStarts.back(), end - std::min(end, size_t(n)));
    out.reserve(qsizetype(end - begin));
    for (size_t i = begin; i < end; ++i)
        out.append(MetricPoint{s->steps[i], s->times[i], s->values[i]});
    return out;
}

bool MetricsStore::stepRange(int rank, const QString &name, qint64 *first, qint64 *last) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    if (!s || s->values.empty())
        return false;
    // Steps increase within a segment: its first and last point are its extremes.
    qint64 lo = s->steps[s->segmentStarts.front()], hi = lo;
    for (size_t k = 0; k < s->segmentStarts.size(); ++k) {
        lo = std::min(lo, s->steps[s->segmentStarts[k]]);
        hi = std::max(hi, s->steps[s->segmentEnd(k) - 1]);
    }
    *first = lo;
    *last = hi;
    return true;
}

qint64 MetricsStore::readPoints(int rank, const QString &name, qint64 from,
                                const PointColumns &read) const
{
    QMutexLocker lock(&m_mutex);
    const Series *s = seriesLocked(rank, name);
    if (!s)
        return 0;
    if (from > 0 && from < s->folded)
        return 0; // folded since the reader's last call: it starts over
    const size_t n = s->values.size();
    const qint64 held = from <= 0 ? 0 : qint64(s->foldedEnd) + (from - s->folded);
    const size_t begin = size_t(std::clamp<qint64>(held, 0, qint64(n)));
    if (begin < n)
        read(std::span<const qint64>(s->steps).subspan(begin),
             std::span<const qint64>(s->times).subspan(begin),
             std::span<const double>(s->values).subspan(begin));
    return s->received;
}

bool MetricsStore::diskFailed() const
{
    QMutexLocker lock(&m_mutex);
    return !m_diskError.isEmpty();
}

QString MetricsStore::diskError() const
{
    QMutexLocker lock(&m_mutex);
    return m_diskError;
}

qint64 MetricsStore::missingPoints() const
{
    QMutexLocker lock(&m_mutex);
    return m_missingPoints;
}

bool MetricsStore::folded() const
{
    QMutexLocker lock(&m_mutex);
    for (const auto &byName : m_series)
        for (const auto &series : byName)
            if (series->folded > 0)
                return true;
    return false;
}

bool MetricsStore::foldedBefore(const QString &name, MetricXAxis axis, double *x,
                                qint64 *span) const
{
    QMutexLocker lock(&m_mutex);
    const double offset = axis == MetricXAxis::RelativeTime ? double(m_startTimeUs) : 0.0;
    const double divisor = axis == MetricXAxis::Step ? 1.0 : 1e6;
    bool any = false;
    for (const auto &byName : m_series) {
        const auto it = byName.constFind(name);
        if (it == byName.cend() || (*it)->folded == 0 || (*it)->steps.empty())
            continue;
        const Series &s = **it;
        // Its first point kept as it came (the last folded one when none is).
        const size_t at = std::min(s.foldedEnd, s.steps.size() - 1);
        const qint64 v = axis == MetricXAxis::Step ? s.steps[at] : s.times[at];
        const double here = (double(v) - offset) / divisor;
        *x = any ? std::max(*x, here) : here;
        *span = any ? std::max(*span, s.foldSpan) : s.foldSpan;
        any = true;
    }
    return any;
}

QString MetricsStore::directory() const
{
    QMutexLocker lock(&m_mutex);
    return m_directory;
}

QString MetricsStore::lastError() const
{
    QMutexLocker lock(&m_mutex);
    return m_lastError;
}

namespace {

void appendSegment(MetricCurve &curve, const DownsampledPoints &pts)
{
    if (pts.x.isEmpty() && pts.nanX.isEmpty() && pts.infX.isEmpty())
        return;
    if (!curve.segmentStarts.isEmpty() && !pts.x.isEmpty()) {
        curve.x.append(pts.x.first());
        curve.y.append(kNaN);
    }
    curve.segmentStarts.append(curve.x.size());
    curve.x.append(pts.x);
    curve.y.append(pts.y);
    curve.nanX.append(pts.nanX);
    curve.infX.append(pts.infX);
    curve.infY.append(pts.infY);
}

} // namespace

MetricCurve MetricsStore::curve(int rank, const QString &name, MetricXAxis axis,
                                double smoothingWeight, double xMin, double xMax, int buckets) const
{
    QMutexLocker lock(&m_mutex);
    if (rank == MeanCurve || rank == MinCurve || rank == MaxCurve)
        return acrossRanksCurveLocked(rank, name, axis, smoothingWeight, xMin, xMax, buckets);
    const Series *s = seriesLocked(rank, name);
    if (!s)
        return {};
    // A sparse curve gets less smoothing than asked for (Smoothing::effectiveWeight).
    const double weight = Smoothing::effectiveWeight(smoothingWeight, qint64(s->values.size()));
    if (weight > 0.0 && !s->hasSmoothed(weight))
        smoothEveryRankLocked(name, smoothingWeight);
    return curveLocked(*s, axis, weight, xMin, xMax, buckets);
}

// A weight no rank has cached (the slider moved, or the plot just opened): the plot is about to
// ask every rank for it, and each rank's EMA is a pass over all its points (64 × 1M take about a
// second on one core). The ranks are independent: smooth them on all cores at once.
void MetricsStore::smoothEveryRankLocked(const QString &name, double weight) const
{
    // Fewer points in the whole store than the threads are worth: no need to look at each rank.
    if (m_total < kParallelSmoothingPoints)
        return;
    const quint64 generation = m_generation.load(std::memory_order_acquire);
    if (generation == m_smoothScanGeneration && weight == m_smoothScanWeight &&
        name == m_smoothScanName)
        return; // scanned (and smoothed) at this very state already
    m_smoothScanGeneration = generation;
    m_smoothScanWeight = weight;
    m_smoothScanName = name;
    std::vector<const Series *> todo;
    size_t points = 0;
    for (const auto &byName : m_series) {
        const auto found = byName.constFind(name);
        if (found != byName.cend() && !(*found)->hasSmoothed(Smoothing::effectiveWeight(
                                          weight, qint64((*found)->values.size())))) {
            todo.push_back(found->get());
            points += (*found)->values.size();
        }
    }
    const size_t threads =
        std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), todo.size(), 16});
    if (threads < 2 || points < size_t(kParallelSmoothingPoints))
        return; // curve() smooths the one it needs; small runs are not worth the threads
    std::atomic<size_t> next{0};
    const auto work = [&] {
        for (size_t i = next++; i < todo.size(); i = next++)
            todo[i]->smoothed(Smoothing::effectiveWeight(weight, qint64(todo[i]->values.size())));
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread &t : pool)
        t.join();
}

MetricCurve MetricsStore::curveLocked(const Series &s, MetricXAxis axis, double weight, double xMin,
                                      double xMax, int buckets) const
{
    MetricCurve curve;
    curve.sourcePoints = qint64(s.values.size());
    if (s.values.empty())
        return curve;
    const double start = double(m_startTimeUs);
    // x = (column - offset) / divisor: steps as they are, times in seconds.
    const std::span<const qint64> column = axis == MetricXAxis::Step
                                               ? std::span<const qint64>(s.steps)
                                               : std::span<const qint64>(s.times);
    const std::span<const qint64> mid = axis == MetricXAxis::Step
                                            ? std::span<const qint64>(s.stepMid)
                                            : std::span<const qint64>(s.timeMid);
    const double offset = axis == MetricXAxis::RelativeTime ? start : 0.0;
    const double divisor = axis == MetricXAxis::Step ? 1.0 : 1e6;
    const auto xAt = [&](size_t i) { return (double(column[i]) - offset) / divisor; };
    const bool smooth = weight > 0.0;
    const SmoothCache *cache = smooth ? &s.smoothed(weight) : nullptr;
    const std::span<const double> values =
        smooth ? std::span<const double>(cache->values) : std::span<const double>(s.values);
    const Downsampler &index = smooth ? cache->index : s.rawIndex;

    // Every segment is bucketed over the same range, so bucket widths agree across a restart.
    if (!(xMin < xMax) && buckets > 0) {
        xMin = std::numeric_limits<double>::infinity();
        xMax = -std::numeric_limits<double>::infinity();
        for (size_t k = 0; k < s.segmentStarts.size(); ++k) {
            xMin = std::min(xMin, xAt(s.segmentStarts[k]));
            xMax = std::max(xMax, xAt(s.segmentEnd(k) - 1));
        }
    }
    for (size_t k = 0; k < s.segmentStarts.size(); ++k) {
        appendSegment(curve,
                      index.bucket(column, offset, divisor, values, qsizetype(s.segmentStarts[k]),
                                   qsizetype(s.segmentEnd(k)), xMin, xMax, buckets, mid));
    }
    return curve;
}

qint64 MetricsStore::acrossRanksExtentLocked(MeanSeries &mean, MetricXAxis axis, double *lo,
                                             double *hi) const
{
    const double offset = axis == MetricXAxis::RelativeTime ? double(m_startTimeUs) : 0.0;
    const double divisor = axis == MetricXAxis::Step ? 1.0 : 1e6;
    *lo = std::numeric_limits<double>::infinity();
    *hi = -*lo;
    qint64 points = 0;
    for (MeanSeries::Segment &seg : mean.segments) {
        seg.refreshX();
        if (seg.steps.empty())
            continue;
        const std::vector<qint64> &column = axis == MetricXAxis::Step ? seg.steps : seg.times;
        *lo = std::min(*lo, (double(column.front()) - offset) / divisor);
        *hi = std::max(*hi, (double(column.back()) - offset) / divisor);
        points += qint64(column.size());
    }
    return points;
}

bool MetricsStore::xRange(const QString &name, MetricXAxis axis, double *xMin, double *xMax) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_means.constFind(name);
    if (it == m_means.cend())
        return false;
    double lo = 0, hi = 0;
    if (acrossRanksExtentLocked(**it, axis, &lo, &hi) == 0)
        return false;
    *xMin = lo;
    *xMax = hi;
    return true;
}

MetricCurve MetricsStore::acrossRanksCurveLocked(int which, const QString &name, MetricXAxis axis,
                                                 double weight, double xMin, double xMax,
                                                 int buckets) const
{
    MetricCurve curve;
    const auto it = m_means.constFind(name);
    if (it == m_means.cend())
        return curve;
    const MeanSeries::Stat stat = which == MinCurve   ? MeanSeries::Min
                                  : which == MaxCurve ? MeanSeries::Max
                                                      : MeanSeries::Mean;
    // The columns are a cache of the sums, brought up to date under the store's lock.
    MeanSeries &mean = **it;
    const double offset = axis == MetricXAxis::RelativeTime ? double(m_startTimeUs) : 0.0;
    const double divisor = axis == MetricXAxis::Step ? 1.0 : 1e6;
    double lo = 0, hi = 0;
    curve.sourcePoints = acrossRanksExtentLocked(mean, axis, &lo, &hi);
    weight = Smoothing::effectiveWeight(weight, curve.sourcePoints);
    if (!(xMin < xMax) && buckets > 0) {
        xMin = lo;
        xMax = hi;
    }
    for (MeanSeries::Segment &seg : mean.segments) {
        if (seg.steps.empty())
            continue;
        const std::vector<qint64> &column = axis == MetricXAxis::Step ? seg.steps : seg.times;
        MeanSeries::Column &col = seg.stats[stat];
        col.refresh(seg.points, stat);
        const bool smooth = weight > 0.0;
        const MeanSeries::Smoothed *sm = smooth ? &col.smoothedFor(weight) : nullptr;
        const std::vector<double> &values = smooth ? sm->values : col.values;
        const Downsampler &index = smooth ? sm->index : col.index;
        const std::vector<qint64> &mid = axis == MetricXAxis::Step ? seg.stepMid : seg.timeMid;
        appendSegment(curve, index.bucket(column, offset, divisor, values, 0,
                                          qsizetype(values.size()), xMin, xMax, buckets, mid));
    }
    return curve;
}

} // namespace rankdeck
