// SPDX-License-Identifier: GPL-3.0-or-later
#include "metricsstore.h"

#include "csvexport.h"
#include "downsampler.h"
#include "smoothing.h"

#include <wireprotocol.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QMutexLocker>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace rankdeck {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("rankdeck::MetricsStore", text);
}

struct SmoothCache
{
    double weight = -1.0;
    std::vector<double> values;
    Downsampler index;
    Smoothing state = Smoothing(0.0);
    size_t segment = 0;  // segment of the next value to smooth
    quint64 lastUse = 0;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

struct MetricsStore::Series
{
    std::vector<qint64> steps;
    std::vector<qint64> times;
    std::vector<double> values;
    std::vector<size_t> segmentStarts;
    Downsampler rawIndex;
    // The raw curve is drawn faintly behind the smoothed one: two weights in use at a time.
    mutable std::array<SmoothCache, 2> caches;
    mutable quint64 useCounter = 0;

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
            hit = caches[0].lastUse <= caches[1].lastUse ? &caches[0] : &caches[1];
            *hit = SmoothCache{};
            hit->weight = weight;
            hit->state = Smoothing(weight);
        }
        hit->lastUse = ++useCounter;
        SmoothCache &c = *hit;
        size_t i = c.values.size();
        const size_t n = values.size();
        c.values.resize(n);
        while (i < n) {
            if (c.segment < segmentStarts.size() && segmentStarts[c.segment] == i) {
                c.state.reset();  // a restart begins a fresh average
                ++c.segment;
            }
            const size_t end = c.segment < segmentStarts.size() ? std::min(segmentStarts[c.segment], n) : n;
            for (; i < end; ++i)
                c.values[i] = c.state.next(values[i]);
        }
        c.index.update(c.values);
        return c;
    }
};

struct MetricsStore::MeanSeries
{
    struct Point
    {
        qint64 step = 0;
        qint64 timeUs = 0;
        double sum = 0.0;
        int count = 0;
        int nonFinite = 0;
        double value() const
        {
            if (nonFinite > 0 || count == 0)
                return kNaN;
            return sum / count;
        }
    };
    std::vector<std::vector<Point>> segments;

    void add(size_t segment, qint64 step, qint64 timeUs, double value)
    {
        if (segments.size() <= segment)
            segments.resize(segment + 1);
        std::vector<Point> &pts = segments[segment];
        // Ranks report the same steps at about the same time: the slot is almost always last.
        auto it = pts.end();
        if (pts.empty() || pts.back().step < step) {
            pts.push_back(Point{step, timeUs, 0.0, 0, 0});
            it = pts.end() - 1;
        } else {
            it = std::lower_bound(pts.begin(), pts.end(), step,
                                  [](const Point &p, qint64 s) { return p.step < s; });
            if (it == pts.end() || it->step != step)
                it = pts.insert(it, Point{step, timeUs, 0.0, 0, 0});
        }
        it->timeUs = std::min(it->timeUs, timeUs);
        if (std::isfinite(value)) {
            it->sum += value;
            ++it->count;
        } else {
            ++it->nonFinite;
        }
    }
};

MetricsStore::MetricsStore() = default;

MetricsStore::~MetricsStore()
{
    close();
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
    if (exists) {
        QList<CsvExport::Row> rows;
        QString why;
        const bool ok = CsvExport::read(path, &rows, &why);
        for (const CsvExport::Row &r : rows)
            appendLocked(r.rank, r.metric, r.step, r.wallTimeUs, r.value, false);
        if (!ok)
            m_lastError = why;  // keep what could be read; appending goes on after it
        m_generation.fetch_add(1, std::memory_order_release);
    }
    auto file = std::make_unique<QFile>(path);
    if (!file->open(QIODevice::WriteOnly | QIODevice::Append))
        return fail(tr("cannot write %1: %2").arg(path, file->errorString()));
    if (file->size() == 0)
        file->write(CsvExport::header());
    else if (exists) {
        // A row cut off by a crash must not glue itself to the next one.
        QFile check(path);
        if (check.open(QIODevice::ReadOnly) && check.seek(check.size() - 1) && check.read(1) != "\n")
            file->write("\n");
    }
    file->flush();
    m_file = std::move(file);
    flushLocked();
    return true;
}

void MetricsStore::close()
{
    QMutexLocker lock(&m_mutex);
    flushLocked();
    m_file.reset();
}

void MetricsStore::flushLocked()
{
    if (!m_file || m_pendingCsv.isEmpty()) {
        m_pendingCsv.clear();
        return;
    }
    if (m_file->write(m_pendingCsv) != m_pendingCsv.size())
        m_lastError = tr("cannot write %1: %2").arg(m_file->fileName(), m_file->errorString());
    m_file->flush();
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

void MetricsStore::appendLocked(int rank, const QString &name, qint64 step, qint64 wallTimeUs,
                                double value, bool persist)
{
    Series *s = seriesLocked(rank, name, true);
    if (s->values.empty() || step <= s->steps.back())
        s->segmentStarts.push_back(s->values.size());
    s->steps.push_back(step);
    s->times.push_back(wallTimeUs);
    s->values.push_back(value);
    s->rawIndex.update(s->values);
    if (m_total == 0 || wallTimeUs < m_startTimeUs)
        m_startTimeUs = wallTimeUs;
    ++m_total;
    const size_t segment = s->segmentStarts.size() - 1;
    auto &mean = m_means[name];
    if (!mean)
        mean = std::make_shared<MeanSeries>();
    mean->add(segment, step, wallTimeUs, value);
    if (persist && m_file)
        m_pendingCsv += CsvExport::row(rank, name, int(segment), step, wallTimeUs, value);
}

void MetricsStore::append(int rank, const QString &name, qint64 step, qint64 wallTimeUs, double value)
{
    QMutexLocker lock(&m_mutex);
    appendLocked(rank, name, step, wallTimeUs, value, true);
    flushLocked();
    m_generation.fetch_add(1, std::memory_order_release);
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
    return s ? qint64(s->values.size()) : 0;
}

qint64 MetricsStore::totalPoints() const
{
    QMutexLocker lock(&m_mutex);
    return m_total;
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
    if (rank == MeanCurve)
        return meanCurveLocked(name, axis, smoothingWeight, xMin, xMax, buckets);
    const Series *s = seriesLocked(rank, name);
    if (!s)
        return {};
    return curveLocked(*s, axis, smoothingWeight, xMin, xMax, buckets);
}

MetricCurve MetricsStore::curveLocked(const Series &s, MetricXAxis axis, double weight,
                                      double xMin, double xMax, int buckets) const
{
    MetricCurve curve;
    curve.sourcePoints = qint64(s.values.size());
    if (s.values.empty())
        return curve;
    const double start = double(m_startTimeUs);
    // x = (column - offset) / divisor: steps as they are, times in seconds.
    const std::span<const qint64> column = axis == MetricXAxis::Step ? std::span<const qint64>(s.steps)
                                                                     : std::span<const qint64>(s.times);
    const double offset = axis == MetricXAxis::RelativeTime ? start : 0.0;
    const double divisor = axis == MetricXAxis::Step ? 1.0 : 1e6;
    const auto xAt = [&](size_t i) { return (double(column[i]) - offset) / divisor; };
    const bool smooth = weight > 0.0;
    const SmoothCache *cache = smooth ? &s.smoothed(weight) : nullptr;
    const std::span<const double> values = smooth ? std::span<const double>(cache->values)
                                                  : std::span<const double>(s.values);
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
        appendSegment(curve, index.bucket(column, offset, divisor, values,
                                          qsizetype(s.segmentStarts[k]), qsizetype(s.segmentEnd(k)),
                                          xMin, xMax, buckets));
    }
    return curve;
}

MetricCurve MetricsStore::meanCurveLocked(const QString &name, MetricXAxis axis, double weight,
                                          double xMin, double xMax, int buckets) const
{
    MetricCurve curve;
    const auto it = m_means.constFind(name);
    if (it == m_means.cend())
        return curve;
    const MeanSeries &mean = **it;
    const double start = double(m_startTimeUs);
    std::vector<std::vector<double>> xs, vs;
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (const auto &seg : mean.segments) {
        std::vector<double> x, v;
        x.reserve(seg.size());
        v.reserve(seg.size());
        for (const auto &p : seg) {
            switch (axis) {
            case MetricXAxis::Step: x.push_back(double(p.step)); break;
            case MetricXAxis::RelativeTime: x.push_back((double(p.timeUs) - start) / 1e6); break;
            case MetricXAxis::WallTime: x.push_back(double(p.timeUs) / 1e6); break;
            }
            v.push_back(p.value());
        }
        // Time order can differ from step order by a few µs across ranks; the bucketing
        // needs non-decreasing x.
        for (size_t i = 1; i < x.size(); ++i)
            x[i] = std::max(x[i], x[i - 1]);
        if (!x.empty()) {
            lo = std::min(lo, x.front());
            hi = std::max(hi, x.back());
        }
        curve.sourcePoints += qint64(x.size());
        if (weight > 0.0)
            Smoothing::smooth(v, weight, v);
        xs.push_back(std::move(x));
        vs.push_back(std::move(v));
    }
    if (!(xMin < xMax) && buckets > 0) {
        xMin = lo;
        xMax = hi;
    }
    for (size_t k = 0; k < xs.size(); ++k)
        appendSegment(curve, Downsampler::bucketScan(xs[k], vs[k], xMin, xMax, buckets));
    return curve;
}

} // namespace rankdeck
