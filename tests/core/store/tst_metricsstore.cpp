// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for one class, case by case.
#include "store/downsampler.h"
#include "store/metricsstore.h"
#include "store/smoothing.h"
#include "stream/eventparser.h"

#include "wire/wireprotocol.h"

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <thread>
#include <vector>

using namespace rankdeck;
using namespace Qt::StringLiterals;
namespace wire = rankdeck::wire;

namespace {
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

WorkerEvent stepEvent(int rank, qint64 step, double loss, qint64 ts)
{
    wire::WireEventWriter w(wire::event::Step, rank, ts);
    w.addInt(wire::field::Step, step)
        .addDouble(wire::field::Loss, loss)
        .addDouble(wire::field::LearningRate, 0.1)
        .addDouble(wire::field::SamplesPerSec, 1000.0);
    std::string line = w.line();
    line.pop_back();
    return *EventParser::parse(QByteArray::fromStdString(line)).event;
}

bool sameNumbers(const QList<double> &a, const QList<double> &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))))
            return false;
    }
    return true;
}

// A curve across ranks the slow, obvious way, from every rank's full-resolution points: per
// restart segment and step the mean (which: MeanCurve), smallest (MinCurve) or largest (MaxCurve)
// of the finite values (NaN if any rank sent a non-finite one), x the earliest report (made
// non-decreasing in time), smoothed over the whole segment, then bucketed by a plain scan.
MetricCurve bruteForceAcrossRanks(const MetricsStore &store, int which, const QString &name,
                                  MetricXAxis axis, double weight, double xMin, double xMax,
                                  int buckets)
{
    struct Acc
    {
        double sum = 0;
        double lo = std::numeric_limits<double>::infinity();
        double hi = -std::numeric_limits<double>::infinity();
        int count = 0, nonFinite = 0;
        qint64 time = std::numeric_limits<qint64>::max();
    };
    std::vector<std::map<qint64, Acc>> segments;
    for (int rank : store.ranks(name)) {
        const QList<MetricSegment> segs = store.segments(rank, name);
        for (qsizetype k = 0; k < segs.size(); ++k) {
            if (segments.size() <= size_t(k))
                segments.resize(size_t(k) + 1);
            for (const MetricPoint &p : segs[k].points) {
                Acc &a = segments[size_t(k)][p.step];
                a.time = std::min(a.time, p.wallTimeUs);
                if (std::isfinite(p.value)) {
                    a.sum += p.value;
                    a.lo = std::min(a.lo, p.value);
                    a.hi = std::max(a.hi, p.value);
                    ++a.count;
                } else {
                    ++a.nonFinite;
                }
            }
        }
    }
    const double start = double(store.startTimeUs());
    std::vector<std::vector<double>> xs, vs;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    MetricCurve out;
    for (const auto &seg : segments) {
        std::vector<double> x, v;
        qint64 time = std::numeric_limits<qint64>::min();
        for (const auto &[step, a] : seg) {
            time = std::max(time, a.time);
            x.push_back(axis == MetricXAxis::Step           ? double(step)
                        : axis == MetricXAxis::RelativeTime ? (double(time) - start) / 1e6
                                                            : double(time) / 1e6);
            const double stat = which == MetricsStore::MinCurve   ? a.lo
                                : which == MetricsStore::MaxCurve ? a.hi
                                                                  : a.sum / a.count;
            v.push_back(a.nonFinite > 0 || a.count == 0 ? NaN : stat);
        }
        if (!x.empty()) {
            lo = std::min(lo, x.front());
            hi = std::max(hi, x.back());
        }
        out.sourcePoints += qint64(x.size());
        xs.push_back(std::move(x));
        vs.push_back(std::move(v));
    }
    // The store smooths a curve of n points with at most n / (n + 30) (a sparse one less).
    if (weight > 0) {
        for (std::vector<double> &v : vs)
            Smoothing::smooth(v, Smoothing::effectiveWeight(weight, out.sourcePoints), v);
    }
    if (!(xMin < xMax) && buckets > 0) {
        xMin = lo;
        xMax = hi;
    }
    for (size_t k = 0; k < xs.size(); ++k) {
        const DownsampledPoints p = Downsampler::bucketScan(xs[k], vs[k], xMin, xMax, buckets);
        if (p.x.isEmpty() && p.nanX.isEmpty() && p.infX.isEmpty())
            continue;
        if (!out.segmentStarts.isEmpty() && !p.x.isEmpty()) {
            out.x.append(p.x.first());
            out.y.append(NaN);
        }
        out.segmentStarts.append(out.x.size());
        out.x.append(p.x);
        out.y.append(p.y);
        out.nanX.append(p.nanX);
        out.infX.append(p.infX);
        out.infY.append(p.infY);
    }
    return out;
}
} // namespace

class TestMetricsStore : public QObject
{
    Q_OBJECT
private slots:
    void stepEventsFillMetrics();
    void computeTimeIsStepLessWait_data();
    void computeTimeIsStepLessWait();
    void restartStartsSegment();
    void readPointsFromAnIndex();
    void rawCurveIsTheData_data();
    void rawCurveIsTheData();
    void smoothedCurvePerSegment();
    void sparseCurvesSmoothLess_data();
    void sparseCurvesSmoothLess();
    void sparseEpochLossFollowsItsPoints();
    void xBasisKeptAndReopened();
    void meanCurveByHand();
    void bandAcrossRanksByHand();
    void meanFollowsLiveAppends_data();
    void everyRankSmoothedAtOnce();
    void meanFollowsLiveAppends();
    void nanIsMarkedNotDrawn();
    void bucketedCurveIsBounded();
    void reopenRestoresSeries();
    void batchWritesOnceAtItsEnd();
    void tornRowDoesNotHideLaterPoints();
    void concurrentAppendAndRead();
    void boundedHistoryKeepsItsBudget();
    void boundedReaderStartsOver();
    void boundedRecordReopens();
};

void TestMetricsStore::computeTimeIsStepLessWait_data()
{
    QTest::addColumn<double>("stepMs"); // < 0: not in the event
    QTest::addColumn<double>("waitMs");
    QTest::addColumn<double>("computeMs"); // < 0: no point
    QTest::newRow("straggler") << 40.0 << 1.5 << 38.5;
    QTest::newRow("waiting rank") << 40.0 << 31.0 << 9.0;
    QTest::newRow("clock noise: wait above step") << 10.0 << 10.25 << 0.0;
    QTest::newRow("no wait reported (a user's program)") << 40.0 << -1.0 << -1.0;
    QTest::newRow("no step time") << -1.0 << 3.0 << -1.0;
}

void TestMetricsStore::computeTimeIsStepLessWait()
{
    QFETCH(double, stepMs);
    QFETCH(double, waitMs);
    QFETCH(double, computeMs);
    wire::WireEventWriter w(wire::event::Step, 2, 5000);
    w.addInt(wire::field::Step, 7);
    if (stepMs >= 0)
        w.addDouble(wire::field::StepTimeMs, stepMs);
    if (waitMs >= 0)
        w.addDouble(wire::field::CommWaitMs, waitMs);
    std::string line = w.line();
    line.pop_back();
    MetricsStore store;
    store.appendEvent(*EventParser::parse(QByteArray::fromStdString(line)).event);
    MetricPoint p;
    QCOMPARE(store.lastPoint(2, metric::ComputeMs, &p), computeMs >= 0);
    if (computeMs >= 0)
        QCOMPARE(p, (MetricPoint{7, 5000, computeMs}));
}

void TestMetricsStore::stepEventsFillMetrics()
{
    MetricsStore store;
    const quint64 g0 = store.generation();
    store.appendEvents({stepEvent(0, 1, 2.5, 1000), stepEvent(1, 1, 3.5, 1100)});
    QVERIFY(store.generation() != g0);
    QCOMPARE(store.ranks(), (QList<int>{0, 1}));
    QCOMPARE(store.metricNames(),
             (QStringList{metric::Loss, metric::LearningRate, metric::SamplesPerSec}));
    MetricPoint p;
    QVERIFY(store.lastPoint(1, metric::Loss, &p));
    QCOMPARE(p, (MetricPoint{1, 1100, 3.5}));
    QCOMPARE(store.startTimeUs(), 1000);
    // Events that are not steps are ignored.
    const auto hello = WorkerEvent::fromJson(R"({"t":"hello","ts":1,"rank":0})");
    const quint64 g1 = store.generation();
    store.appendEvent(*hello);
    QCOMPARE(store.generation(), g1);
    QCOMPARE(store.totalPoints(), 6);
}

void TestMetricsStore::restartStartsSegment()
{
    MetricsStore store;
    for (qint64 s : {1, 2, 3, 4, 5, 3, 4, 4})
        store.append(0, metric::Loss, s, s * 10, double(s));
    // 1..5, then the restart from 3 (3, 4), then 4 again: three segments.
    QCOMPARE(store.segmentCount(0, metric::Loss), 3);
    const QList<MetricSegment> segs = store.segments(0, metric::Loss);
    QCOMPARE(segs.size(), 3);
    QCOMPARE(segs[0].points.size(), 5);
    QCOMPARE(segs[1].points.size(), 2);
    QCOMPARE(segs[1].points.first().step, 3);
    QCOMPARE(segs[2].points.size(), 1);
    QCOMPARE(store.pointCount(0, metric::Loss), 8);
}

// A reader that remembers how many points it has read gets the rest, across segments, in the
// order appended; nothing past the end; the count either way.
void TestMetricsStore::readPointsFromAnIndex()
{
    MetricsStore store;
    const QList<qint64> steps{1, 2, 3, 4, 5, 3, 4, 4};
    for (qint64 s : steps)
        store.append(0, metric::Loss, s, s * 10, double(s) / 2);
    for (qint64 from : {0, 3, 7, 8, 20, -1}) {
        QList<qint64> gotSteps;
        QList<double> gotValues;
        int calls = 0;
        const qint64 held = store.readPoints(
            0, metric::Loss, from,
            [&](std::span<const qint64> st, std::span<const qint64> t, std::span<const double> v) {
                ++calls;
                QCOMPARE(st.size(), v.size());
                QCOMPARE(t.size(), v.size());
                gotSteps.append(QList<qint64>(st.begin(), st.end()));
                gotValues.append(QList<double>(v.begin(), v.end()));
            });
        QCOMPARE(held, qint64(steps.size()));
        const qsizetype begin = std::clamp<qsizetype>(from, 0, steps.size());
        QCOMPARE(gotSteps, steps.mid(begin));
        QCOMPARE(calls, begin < steps.size() ? 1 : 0);
        for (qsizetype i = 0; i < gotValues.size(); ++i)
            QCOMPARE(gotValues[i], double(gotSteps[i]) / 2);
    }
    QCOMPARE(
        store.readPoints(1, metric::Loss, 0, [](auto, auto, auto) { QFAIL("no such series"); }),
        qint64(0));
}

void TestMetricsStore::rawCurveIsTheData_data()
{
    QTest::addColumn<int>("axis");
    QTest::addColumn<QList<double>>("expectedX");
    // Points: steps 1,2,3 at 2,3,4 s, then restart: steps 2,3 at 5,6 s. The origin of relative
    // time is the first point (2 s). A NaN-y point separates the segments.
    QTest::newRow("step") << int(MetricXAxis::Step) << QList<double>{1, 2, 3, 2, 2, 3};
    QTest::newRow("relative") << int(MetricXAxis::RelativeTime) << QList<double>{0, 1, 2, 3, 3, 4};
    QTest::newRow("wall") << int(MetricXAxis::WallTime) << QList<double>{2, 3, 4, 5, 5, 6};
}

void TestMetricsStore::rawCurveIsTheData()
{
    QFETCH(int, axis);
    QFETCH(QList<double>, expectedX);
    MetricsStore store;
    const QList<std::pair<qint64, double>> pts{{1, 9}, {2, 8}, {3, 7}, {2, 6}, {3, 5}};
    qint64 t = 2'000'000;
    for (const auto &[s, v] : pts) {
        store.append(4, metric::Loss, s, t, v);
        t += 1'000'000;
    }
    const MetricCurve c = store.curve(4, metric::Loss, MetricXAxis(axis), 0.0, 0, 0, 0);
    QCOMPARE(c.x, expectedX);
    QCOMPARE(c.y.size(), 6);
    QCOMPARE(c.y[0], 9.0);
    QCOMPARE(c.y[2], 7.0);
    QVERIFY(std::isnan(c.y[3]));
    QCOMPARE(c.y[4], 6.0);
    QCOMPARE(c.y[5], 5.0);
    QCOMPARE(c.segmentStarts, (QList<qsizetype>{0, 4}));
    QCOMPARE(c.sourcePoints, 5);
}

void TestMetricsStore::smoothedCurvePerSegment()
{
    MetricsStore store;
    // 60 points first, so that 0.6 is the weight used (a sparse curve gets less: see
    // sparseCurvesSmoothLess); then a restart: 1, 2, 3 -> 1, 1.04/0.64, 1.824/0.784 (w = 0.6,
    // by hand); a third segment starts over: 10 -> 10.
    for (qint64 s = 1; s <= 60; ++s)
        store.append(0, metric::Loss, s, s, 5.0);
    const QList<std::pair<qint64, double>> pts{{1, 1}, {2, 2}, {3, 3}, {1, 10}};
    for (const auto &[s, v] : pts)
        store.append(0, metric::Loss, s, s, v);
    QCOMPARE(Smoothing::effectiveWeight(0.6, 64), 0.6);
    const MetricCurve c = store.curve(0, metric::Loss, MetricXAxis::Step, 0.6, 0, 0, 0);
    QCOMPARE(c.y.size(), 66);
    QCOMPARE(c.y[59], 5.0);
    QVERIFY(std::isnan(c.y[60]));
    QVERIFY(qFuzzyCompare(c.y[61], 1.0));
    QVERIFY(qFuzzyCompare(c.y[62], 1.04 / 0.64));
    QVERIFY(qFuzzyCompare(c.y[63], 1.824 / 0.784));
    QVERIFY(std::isnan(c.y[64]));
    QCOMPARE(c.y[65], 10.0);
    // The cache follows new points.
    store.append(0, metric::Loss, 2, 2, 20);
    const MetricCurve d = store.curve(0, metric::Loss, MetricXAxis::Step, 0.6, 0, 0, 0);
    // last = 0.4*10 = 4, then 4*0.6 + 0.4*20 = 10.4; 1 - 0.36 = 0.64.
    QVERIFY(qFuzzyCompare(d.y.last(), 10.4 / 0.64));
    // The raw curve is still available next to it.
    QCOMPARE(store.curve(0, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0).y.last(), 20.0);
}

// The default smoothing on a curve of n points: the weight asked for from 45 points on (0.6 at
// 2,000 points is TensorBoard's), less below (n / (n + 30)); the mean alike, by its own points.
void TestMetricsStore::sparseCurvesSmoothLess_data()
{
    QTest::addColumn<int>("points");
    QTest::addColumn<double>("weight"); // the one the store must use for 0.6
    for (int n : {1, 2, 5, 6, 10, 30, 44}) {
        QTest::addRow("%d points", n) << n << double(n) / double(n + Smoothing::kSparsePoints);
    }
    for (int n : {45, 46, 300, 2000})
        QTest::addRow("%d points", n) << n << 0.6;
}

void TestMetricsStore::sparseCurvesSmoothLess()
{
    QFETCH(int, points);
    QFETCH(double, weight);
    QCOMPARE(Smoothing::effectiveWeight(Smoothing::kDefaultWeight, points), weight);
    QRandomGenerator rng(points);
    MetricsStore store;
    std::vector<double> values;
    for (int i = 0; i < points; ++i) {
        values.push_back(2.0 / (1 + i) + rng.generateDouble() * 0.1);
        store.append(0, metric::Loss, qint64(i) * 3, i, values.back());
        store.append(1, metric::Loss, qint64(i) * 3, i, values.back() + 1.0);
    }
    const MetricCurve c =
        store.curve(0, metric::Loss, MetricXAxis::Step, Smoothing::kDefaultWeight, 0, 0, 0);
    const QList<double> want = Smoothing::smooth(values, weight);
    QCOMPARE(c.y, want);
    const MetricCurve mean = store.curve(MetricsStore::MeanCurve, metric::Loss, MetricXAxis::Step,
                                         Smoothing::kDefaultWeight, 0, 0, 0);
    std::vector<double> plusHalf;
    for (double v : values)
        plusHalf.push_back(v + 0.5);
    const QList<double> wantMean = Smoothing::smooth(plusHalf, weight);
    QCOMPARE(mean.y.size(), wantMean.size());
    for (qsizetype i = 0; i < wantMean.size(); ++i)
        QVERIFY(qFuzzyCompare(mean.y[i], wantMean[i]));
}

// Issue 27's case: a loss logged once per epoch, six points over ten steps, falling to 0.05.
// TensorBoard's 0.6 shows 0.28 at the last point (over five times the data); the default here
// stays within a third of it.
void TestMetricsStore::sparseEpochLossFollowsItsPoints()
{
    const QList<double> loss{2.3, 1.2, 0.6, 0.25, 0.1, 0.05};
    MetricsStore store;
    for (qsizetype i = 0; i < loss.size(); ++i)
        store.append(0, metric::Loss, 2 * i, i, loss[i]);
    const double shown =
        store.curve(0, metric::Loss, MetricXAxis::Step, Smoothing::kDefaultWeight, 0, 0, 0)
            .y.last();
    const double tensorBoard = Smoothing::smooth(loss, 0.6).last();
    QVERIFY2(tensorBoard > 5 * loss.last(), qPrintable(QString::number(tensorBoard)));
    QVERIFY2(shown < loss.last() * 4 / 3, qPrintable(QString::number(shown)));
    QVERIFY(shown >= loss.last());
}

// What a series' x counts: set by its first point, kept, written beside metrics.csv for the
// series not on steps and read back with the points.
void TestMetricsStore::xBasisKeptAndReopened()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    {
        MetricsStore store;
        QVERIFY(store.open(dir.path()));
        store.append(0, u"loss"_s, 5, 1, 1.0, XBasis::Step);
        store.append(0, u"val_loss"_s, 1, 2, 0.9, XBasis::Epoch);
        store.append(1, u"val_loss"_s, 0, 3, 0.8, XBasis::Report);
        store.append(0, u"val_loss"_s, 2, 4, 0.7, XBasis::Step); // the first point's basis stays
        store.append(2, u"odd, \"name\""_s, 3, 5, 0.5, XBasis::Epoch);
        QCOMPARE(store.xBasis(0, u"loss"_s), XBasis::Step);
        QCOMPARE(store.xBasis(0, u"val_loss"_s), XBasis::Epoch);
        QCOMPARE(store.xBasis(1, u"val_loss"_s), XBasis::Report);
        QCOMPARE(store.xBasis(7, u"nothing"_s), XBasis::Step);
    }
    QFile side(dir.filePath(u"metrics-x.csv"_s));
    QVERIFY(side.open(QIODevice::ReadOnly));
    QCOMPARE(side.readAll(), QByteArray("rank,metric,x\n0,val_loss,epoch\n1,val_loss,report\n"
                                        "2,\"odd, \"\"name\"\"\",epoch\n"));
    MetricsStore again;
    QVERIFY(again.open(dir.path()));
    QCOMPARE(again.xBasis(0, u"loss"_s), XBasis::Step);
    QCOMPARE(again.xBasis(0, u"val_loss"_s), XBasis::Epoch);
    QCOMPARE(again.xBasis(1, u"val_loss"_s), XBasis::Report);
    QCOMPARE(again.xBasis(2, u"odd, \"name\""_s), XBasis::Epoch);
    QCOMPARE(again.pointCount(0, u"val_loss"_s), 2);
}

void TestMetricsStore::meanCurveByHand()
{
    MetricsStore store;
    store.append(0, metric::Loss, 1, 100, 2.0);
    store.append(1, metric::Loss, 1, 90, 4.0);
    store.append(0, metric::Loss, 2, 200, 6.0);
    store.append(1, metric::Loss, 3, 300, 1.0);
    store.append(0, metric::Loss, 3, 310, 3.0);
    // Step 1: (2+4)/2 = 3; step 2: only rank 0 = 6; step 3: (1+3)/2 = 2.
    const MetricCurve c =
        store.curve(MetricsStore::MeanCurve, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0);
    QCOMPARE(c.x, (QList<double>{1, 2, 3}));
    QCOMPARE(c.y, (QList<double>{3, 6, 2}));
    // Wall time of a mean point is the earliest report of that step.
    const MetricCurve w =
        store.curve(MetricsStore::MeanCurve, metric::Loss, MetricXAxis::WallTime, 0.0, 0, 0, 0);
    QCOMPARE(w.x.first(), 90 / 1e6);
}

// The band of the compare overlay: per step the smallest and largest value of the ranks that
// reported it, NaN where a rank sent NaN (as the mean), and min <= mean <= max after smoothing.
void TestMetricsStore::bandAcrossRanksByHand()
{
    MetricsStore store;
    store.append(0, metric::Loss, 1, 100, 2.0);
    store.append(1, metric::Loss, 1, 90, 4.0);
    store.append(2, metric::Loss, 1, 95, 3.5);
    store.append(0, metric::Loss, 2, 200, 6.0);
    store.append(1, metric::Loss, 3, 300, 1.0);
    store.append(0, metric::Loss, 3, 310, 3.0);
    store.append(0, metric::Loss, 4, 400, NaN);
    store.append(1, metric::Loss, 4, 400, 5.0);
    const auto ys = [&](int which, double weight) {
        return store.curve(which, metric::Loss, MetricXAxis::Step, weight, 0, 0, 0).y;
    };
    // Steps 1–3 (step 2: rank 0 alone); step 4 is NaN, as in the mean: marked, not drawn.
    QVERIFY(sameNumbers(ys(MetricsStore::MinCurve, 0), (QList<double>{2, 6, 1})));
    QVERIFY(sameNumbers(ys(MetricsStore::MaxCurve, 0), (QList<double>{4, 6, 3})));
    QVERIFY(sameNumbers(ys(MetricsStore::MeanCurve, 0), (QList<double>{9.5 / 3, 6, 2})));
    for (int which : {MetricsStore::MinCurve, MetricsStore::MaxCurve})
        QCOMPARE(store.curve(which, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0).nanX,
                 (QList<double>{4}));
    for (double weight : {0.0, 0.6, 0.95}) {
        const QList<double> lo = ys(MetricsStore::MinCurve, weight);
        const QList<double> mean = ys(MetricsStore::MeanCurve, weight);
        const QList<double> hi = ys(MetricsStore::MaxCurve, weight);
        QCOMPARE(lo.size(), mean.size());
        QCOMPARE(hi.size(), mean.size());
        QCOMPARE(mean.size(), 3);
        for (qsizetype i = 0; i < mean.size(); ++i) {
            QVERIFY2(lo[i] <= mean[i] && mean[i] <= hi[i],
                     qPrintable(QStringLiteral("weight %1, step %2: %3 %4 %5")
                                    .arg(weight)
                                    .arg(i + 1)
                                    .arg(lo[i])
                                    .arg(mean[i])
                                    .arg(hi[i])));
        }
    }
    // The mean of equal values whose sum rounds stays inside them.
    MetricsStore equal;
    for (int rank = 0; rank < 3; ++rank)
        equal.append(rank, metric::Loss, 1, 1, 0.1);
    const double m =
        equal.curve(MetricsStore::MeanCurve, metric::Loss, MetricXAxis::Step, 0, 0, 0, 0)
            .y.value(0);
    QVERIFY2(m == 0.1, qPrintable(QString::number(m, 'g', 17))); // exact, not QCOMPARE's fuzzy
}

void TestMetricsStore::meanFollowsLiveAppends_data()
{
    QTest::addColumn<int>("lag");       // how many steps a rank may trail the others
    QTest::addColumn<int>("logEvery");  // rank r logs steps divisible by (r % logEvery) + 1
    QTest::addColumn<int>("restartAt"); // batch at which rank 1 restarts from step 10 (-1: never)
    QTest::addColumn<int>("specials");  // NaN/Inf per 1000 values
    QTest::newRow("in step") << 0 << 1 << -1 << 0;
    QTest::newRow("lagging ranks") << 300 << 1 << -1 << 0;
    QTest::newRow("different log intervals") << 40 << 3 << -1 << 0;
    QTest::newRow("restart") << 20 << 1 << 6 << 0;
    QTest::newRow("nan and inf") << 50 << 2 << 9 << 20;
}

// The mean, min and max across ranks are kept incrementally as points arrive (late reports
// change old steps, sparse ranks insert steps, restarts open segments): after every batch, for
// every axis, weight and view, each curve must equal the one computed from scratch from every
// rank's points.
void TestMetricsStore::meanFollowsLiveAppends()
{
    QFETCH(int, lag);
    QFETCH(int, logEvery);
    QFETCH(int, restartAt);
    QFETCH(int, specials);
    QRandomGenerator rng(42);
    MetricsStore store;
    const int ranks = 5;
    std::vector<qint64> next(ranks, 1);
    const qint64 t0 = 1'700'000'000'000'000;
    for (int batch = 0; batch < 14; ++batch) {
        for (int i = 0; i < 2500; ++i) {
            const int r = int(rng.bounded(ranks));
            const qint64 leader = *std::max_element(next.begin(), next.end());
            if (next[size_t(r)] + lag < leader && rng.bounded(4) != 0)
                continue; // a trailing rank catches up only now and then
            const qint64 step = next[size_t(r)]++;
            if (step % ((r % logEvery) + 1) != 0)
                continue;
            const int roll = int(rng.bounded(1000));
            // Multiples of 1/1024: sums are exact whatever order the ranks' reports arrive in.
            const double value =
                roll < specials ? (roll % 2 ? NaN : std::numeric_limits<double>::infinity())
                                : double(100000 / step) + double(rng.bounded(1 << 20)) / 1024.0;
            store.append(r, metric::Loss, step, t0 + step * 1000 + qint64(rng.bounded(3000)),
                         value);
        }
        if (batch == restartAt)
            next[1] = 10;
        struct View
        {
            MetricXAxis axis;
            double weight, from, to;
            int buckets;
        };
        const View views[] = {
            {MetricXAxis::Step, 0.0, 0, 0, 0},           {MetricXAxis::Step, 0.6, 0, 0, 300},
            {MetricXAxis::Step, 0.0, 0, 0, 37},          {MetricXAxis::Step, 0.9, 0.2, 0.7, 100},
            {MetricXAxis::RelativeTime, 0.6, 0, 0, 200}, {MetricXAxis::WallTime, 0.0, 0, 0, 50},
        };
        for (const View &v : views) {
            double xMin = 0, xMax = 0;
            if (v.to > v.from) {
                const double top = double(*std::max_element(next.begin(), next.end()));
                xMin = top * v.from;
                xMax = top * v.to;
            }
            // The band's edges only from batch 3 on: columns made late must catch up whole.
            for (int which :
                 {MetricsStore::MeanCurve, MetricsStore::MinCurve, MetricsStore::MaxCurve}) {
                if (which != MetricsStore::MeanCurve && batch < 3)
                    continue;
                const MetricCurve got =
                    store.curve(which, metric::Loss, v.axis, v.weight, xMin, xMax, v.buckets);
                const MetricCurve want = bruteForceAcrossRanks(store, which, metric::Loss, v.axis,
                                                               v.weight, xMin, xMax, v.buckets);
                const QByteArray where =
                    QStringLiteral("batch %1, curve %2, axis %3, weight %4, %5 buckets")
                        .arg(batch)
                        .arg(which)
                        .arg(int(v.axis))
                        .arg(v.weight)
                        .arg(v.buckets)
                        .toUtf8();
                QVERIFY2(sameNumbers(got.x, want.x), where.constData());
                QVERIFY2(sameNumbers(got.y, want.y), where.constData());
                QVERIFY2(got.nanX == want.nanX, where.constData());
                QVERIFY2(got.infX == want.infX, where.constData());
                QVERIFY2(got.infY == want.infY, where.constData());
                QVERIFY2(got.segmentStarts == want.segmentStarts, where.constData());
                QCOMPARE(got.sourcePoints, want.sourcePoints);
            }
        }
    }
    if (restartAt >= 0)
        QVERIFY(store.segmentCount(1, metric::Loss) == 2);
}

// A new weight over more than a million points smooths every rank at once, on several threads:
// each rank's curve must still be exactly its own EMA, bucketed, also after more points arrive.
void TestMetricsStore::everyRankSmoothedAtOnce()
{
    QRandomGenerator rng(5);
    MetricsStore store;
    const int ranks = 6, perRank = 200'000;
    std::vector<std::vector<double>> steps(ranks), values(ranks);
    const auto add = [&](int r, qint64 step) {
        const double v = rng.bounded(2000) == 0 ? NaN : double(r) + rng.generateDouble();
        store.append(r, metric::Loss, step, step * 1000, v);
        steps[size_t(r)].push_back(double(step));
        values[size_t(r)].push_back(v);
    };
    for (qint64 step = 1; step <= perRank; ++step) {
        for (int r = 0; r < ranks; ++r)
            add(r, step);
    }
    qint64 nextStep = perRank + 1;
    for (double weight : {0.7, 0.95}) {
        for (int round = 0; round < 2; ++round) {
            // Asking for one rank's curve smooths all of them; the others then come from cache.
            for (int r : {3, 0, 1, 2, 4, 5}) {
                const MetricCurve got =
                    store.curve(r, metric::Loss, MetricXAxis::Step, weight, 0, 0, 400);
                const QList<double> ema = Smoothing::smooth(values[size_t(r)], weight);
                const std::vector<double> smoothed(ema.begin(), ema.end());
                const DownsampledPoints want =
                    Downsampler::bucketScan(steps[size_t(r)], smoothed, 0, 0, 400);
                QVERIFY2(got.x == want.x && got.y == want.y && got.nanX == want.nanX,
                         qPrintable(QStringLiteral("rank %1, weight %2, round %3")
                                        .arg(r)
                                        .arg(weight)
                                        .arg(round)));
            }
            for (int r = 0; r < ranks; ++r)
                add(r, nextStep); // the next refresh smooths only the new tail
            ++nextStep;
        }
    }
}

void TestMetricsStore::nanIsMarkedNotDrawn()
{
    MetricsStore store;
    store.append(0, metric::Loss, 1, 1, 1.0);
    store.append(0, metric::Loss, 2, 2, NaN);
    store.append(0, metric::Loss, 3, 3, std::numeric_limits<double>::infinity());
    store.append(0, metric::Loss, 4, 4, 2.0);
    for (int buckets : {0, 100}) {
        const MetricCurve c = store.curve(0, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, buckets);
        QCOMPARE(c.nanX, QList<double>{2});
        QCOMPARE(c.infX, QList<double>{3});
        for (double y : c.y)
            QVERIFY(std::isfinite(y));
    }
}

void TestMetricsStore::bucketedCurveIsBounded()
{
    MetricsStore store;
    for (int i = 0; i < 100000; ++i)
        store.append(0, metric::Loss, i, i, i == 31337 ? 1e6 : std::sin(i * 0.01));
    const MetricCurve c = store.curve(0, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 500);
    QVERIFY(c.x.size() <= 2 * 500 + 2);
    QVERIFY(c.y.contains(1e6));
    QCOMPARE(c.sourcePoints, 100000);
    // Smoothed and bucketed: the spike is smoothed (on full data) but still visible as the max.
    const MetricCurve s = store.curve(0, metric::Loss, MetricXAxis::Step, 0.9, 0, 0, 500);
    QVERIFY(s.x.size() <= 2 * 500 + 2);
    QVERIFY(*std::max_element(s.y.begin(), s.y.end()) > 1e4);
}

// A batch's points are in memory at once and reach metrics.csv together at endBatch().
void TestMetricsStore::batchWritesOnceAtItsEnd()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MetricsStore store;
    QVERIFY(store.open(dir.path()));
    const QString csv = dir.filePath(QStringLiteral("metrics.csv"));
    store.append(0, metric::Loss, 1, 10, 1.0);
    const qint64 before = QFileInfo(csv).size();
    QVERIFY(before > 0);
    store.beginBatch();
    for (qint64 s = 2; s <= 4; ++s)
        store.append(0, metric::Loss, s, 10 * s, double(s));
    QCOMPARE(store.pointCount(0, metric::Loss), 4);
    QCOMPARE(QFileInfo(csv).size(), before);
    store.endBatch();
    MetricsStore again;
    QVERIFY(again.open(dir.path()));
    QCOMPARE(again.pointCount(0, metric::Loss), 4);
    // Unbalanced ends are ignored; an append outside a batch writes at once.
    store.endBatch();
    store.append(0, metric::Loss, 5, 50, 5.0);
    MetricsStore third;
    QVERIFY(third.open(dir.path()));
    QCOMPARE(third.pointCount(0, metric::Loss), 5);
}

void TestMetricsStore::reopenRestoresSeries()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    {
        MetricsStore store;
        QString error;
        QVERIFY2(store.open(dir.path(), &error), qPrintable(error));
        for (qint64 s : {1, 2, 3, 1, 2})
            store.append(2, metric::Loss, s, 1000 + s, 0.1 * double(s));
        store.append(0, QStringLiteral("odd,\"name\""), 1, 5, NaN);
    }
    MetricsStore again;
    QString error;
    QVERIFY2(again.open(dir.path(), &error), qPrintable(error));
    QVERIFY2(again.lastError().isEmpty(), qPrintable(again.lastError()));
    QCOMPARE(again.ranks(), (QList<int>{0, 2}));
    QCOMPARE(again.segmentCount(2, metric::Loss), 2);
    const QList<MetricSegment> segs = again.segments(2, metric::Loss);
    QCOMPARE(segs[0].points.last(), (MetricPoint{3, 1003, 0.1 * 3.0}));
    QCOMPARE(segs[1].points.size(), 2);
    QVERIFY(
        std::isnan(again.segments(0, QStringLiteral("odd,\"name\"")).first().points.first().value));
    // Appending after the reopen goes on in the same file.
    again.append(2, metric::Loss, 3, 2000, 9.0);
    again.close();
    MetricsStore third;
    QVERIFY(third.open(dir.path()));
    QCOMPARE(third.pointCount(2, metric::Loss), 6);
}

void TestMetricsStore::tornRowDoesNotHideLaterPoints()
{
    QTemporaryDir dir;
    {
        MetricsStore store;
        QVERIFY(store.open(dir.path()));
        store.append(0, metric::Loss, 1, 1, 1.0);
        store.append(0, metric::Loss, 2, 2, 2.0);
    }
    {
        // The launcher died in the middle of a row.
        QFile f(dir.filePath(QStringLiteral("metrics.csv")));
        QVERIFY(f.open(QIODevice::Append));
        f.write("0,loss,0,3,3");
    }
    {
        MetricsStore store;
        QVERIFY(store.open(dir.path()));
        QCOMPARE(store.pointCount(0, metric::Loss), 2);
        store.append(0, metric::Loss, 3, 3, 3.0);
    }
    MetricsStore store;
    QVERIFY(store.open(dir.path()));
    QCOMPARE(store.pointCount(0, metric::Loss), 3);
    QVERIFY(store.lastError().contains(QStringLiteral("metrics.csv:4")));
}

void TestMetricsStore::concurrentAppendAndRead()
{
    MetricsStore store;
    const int perRank = 20000;
    std::vector<std::thread> writers;
    for (int r = 0; r < 4; ++r) {
        writers.emplace_back([&store, r] {
            for (int i = 0; i < perRank; ++i)
                store.append(r, metric::Loss, i, i, double(i % 100));
        });
    }
    // The GUI thread polls and plots while ranks report (at least once, however fast they are).
    quint64 seen = ~quint64(0);
    do {
        if (store.generation() != seen) {
            seen = store.generation();
            const MetricCurve c = store.curve(0, metric::Loss, MetricXAxis::Step, 0.6, 0, 0, 200);
            QVERIFY(c.x.size() <= 402);
            for (double y : c.y)
                QVERIFY(y >= 0 && y < 100);
            store.curve(MetricsStore::MeanCurve, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 200);
        }
    } while (store.totalPoints() < 4 * perRank);
    for (auto &t : writers)
        t.join();
    for (int r = 0; r < 4; ++r) {
        QCOMPARE(store.pointCount(r, metric::Loss), perRank);
        QCOMPARE(store.segmentCount(r, metric::Loss), 1);
    }
}

// Days of a run in a bounded store: 4 ranks × 60,000 steps with a restart, a spike and a NaN in
// the history. Memory per series stays within the budget while pointCount() counts every point;
// the newest points are as they came; the spike, the dip and the NaN are still on the curves,
// the restart still splits them, and the mean band still holds min <= mean <= max.
void TestMetricsStore::boundedHistoryKeepsItsBudget()
{
    MetricsStore store;
    const HistoryBudget budget = MetricsStore::kRunHistory;
    store.setHistoryBudget(budget);
    const size_t most = size_t(budget.foldAt() + size_t(budget.foldedPoints));
    const auto valueOf = [](int rank, qint64 step) {
        return 2.0 / std::sqrt(double(step + 1)) + 0.01 * rank + 0.001 * double(step % 7);
    };
    for (qint64 i = 0; i < 60'000; ++i) {
        const qint64 step = i < 40'000 ? i : i - 10'000; // restarted from a checkpoint at 30,000
        for (int rank = 0; rank < 4; ++rank) {
            double v = valueOf(rank, step);
            if (i == 12'345 && rank == 2)
                v = 40.0; // a spike
            if (i == 23'456 && rank == 1)
                v = -1.0; // a dip
            if (i == 34'567 && rank == 3)
                v = NaN;
            store.append(rank, metric::Loss, step, 1'000'000 + i * 1000, v);
        }
        for (int rank = 0; rank < 4; ++rank) {
            const QList<MetricSegment> segments =
                i % 9'973 == 0 ? store.segments(rank, metric::Loss) : QList<MetricSegment>{};
            qsizetype held = 0;
            for (const MetricSegment &segment : segments)
                held += segment.points.size();
            QVERIFY2(size_t(held) <= most, qPrintable(QStringLiteral("%1 at %2").arg(held).arg(i)));
        }
    }
    QCOMPARE(store.pointCount(2, metric::Loss), 60'000);
    QCOMPARE(store.totalPoints(), 240'000);
    QVERIFY(store.foldedCount(2, metric::Loss) >= 60'000 - qint64(budget.foldAt()));
    QCOMPARE(store.segmentCount(2, metric::Loss), 2);
    // The newest points as they came.
    const QList<MetricPoint> newest = store.tail(0, metric::Loss, budget.recentPoints);
    QCOMPARE(newest.size(), qsizetype(budget.recentPoints));
    for (qsizetype k = 0; k < newest.size(); ++k) {
        const qint64 step = 50'000 - budget.recentPoints + k;
        QCOMPARE(newest[k],
                 (MetricPoint{step, 1'000'000 + (step + 10'000) * 1000, valueOf(0, step)}));
    }
    // The whole history on one plot: the spike, the dip and the NaN are there.
    const MetricCurve spiky = store.curve(2, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 500);
    QCOMPARE(*std::max_element(spiky.y.begin(), spiky.y.end()), 40.0);
    QCOMPARE(spiky.segmentStarts.size(), 2);
    const MetricCurve dip = store.curve(1, metric::Loss, MetricXAxis::Step, 0.6, 0, 0, 500);
    QVERIFY(std::isfinite(dip.y.last()));
    QVERIFY(*std::min_element(dip.y.begin(), dip.y.end(),
                              [](double a, double b) { return std::isnan(b) || a < b; }) < 0.0);
    QCOMPARE(store.curve(3, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 500).nanX,
             QList<double>{34'567});
    // Across ranks: bounded as well, the band around the mean, the spike at the top.
    const MetricCurve mean =
        store.curve(MetricsStore::MeanCurve, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0);
    const MetricCurve lo =
        store.curve(MetricsStore::MinCurve, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0);
    const MetricCurve hi =
        store.curve(MetricsStore::MaxCurve, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0);
    QVERIFY2(size_t(mean.sourcePoints) <= 2 * most, qPrintable(QString::number(mean.sourcePoints)));
    QCOMPARE(mean.x, lo.x);
    QCOMPARE(mean.x, hi.x);
    for (qsizetype k = 0; k < mean.y.size(); ++k) {
        if (std::isnan(mean.y[k]))
            continue;
        QVERIFY(lo.y[k] <= mean.y[k] && mean.y[k] <= hi.y[k]);
    }
    QCOMPARE(*std::max_element(hi.y.begin(), hi.y.end(),
                               [](double a, double b) { return std::isnan(a) || a < b; }),
             40.0);
}

// A reader that remembers how many points it read (the Overview's heatmap and step tracks) gets
// only the new ones while it keeps up, and 0 once the history folded past what it read: it then
// starts over from 0 and gets the folded history and the newest points, in order.
void TestMetricsStore::boundedReaderStartsOver()
{
    MetricsStore store;
    store.setHistoryBudget(HistoryBudget{16, 32});
    qint64 read = 0;
    QList<qint64> steps;
    const auto readNew = [&] {
        return store.readPoints(
            0, metric::Loss, read,
            [&](std::span<const qint64> s, std::span<const qint64> t, std::span<const double> v) {
                QCOMPARE(t.size(), s.size());
                QCOMPARE(v.size(), s.size());
                steps.append(QList<qint64>(s.begin(), s.end()));
            });
    };
    for (qint64 step = 0; step < 1000; ++step) {
        store.append(0, metric::Loss, step, step, double(step % 10));
        const qint64 held = readNew();
        QCOMPARE(held, step + 1);
        read = held;
    }
    // Kept up: every point, once each, in order.
    QCOMPARE(steps.size(), 1000);
    QCOMPARE(steps.last(), 999);
    QVERIFY(std::is_sorted(steps.begin(), steps.end()));
    // Fell behind: 100 more points fold what it has not read.
    for (qint64 step = 1000; step < 1100; ++step)
        store.append(0, metric::Loss, step, step, 1.0);
    QVERIFY(store.foldedCount(0, metric::Loss) > read);
    QCOMPARE(readNew(), qint64(0));
    read = 0;
    steps.clear();
    QCOMPARE(readNew(), qint64(1100));
    QVERIFY(steps.size() <= 16 + 32 + 16);
    QCOMPARE(steps.first(), 0);
    QCOMPARE(steps.last(), 1099);
    QVERIFY(std::is_sorted(steps.begin(), steps.end()));
}

// A long record opened with a budget (a finished run, or one followed from the run list) is
// bounded while it loads, and shows the same curve as the store that wrote it.
void TestMetricsStore::boundedRecordReopens()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MetricCurve written;
    {
        MetricsStore store;
        store.setHistoryBudget(MetricsStore::kRunHistory);
        QVERIFY(store.open(dir.path()));
        for (qint64 step = 0; step < 20'000; ++step)
            store.append(0, metric::Loss, step, step * 10, std::sin(double(step) / 300.0));
        written = store.curve(0, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0);
    }
    MetricsStore unbounded;
    QVERIFY(unbounded.open(dir.path()));
    QCOMPARE(unbounded.segments(0, metric::Loss).first().points.size(), 20'000); // all on disk
    MetricsStore again;
    again.setHistoryBudget(MetricsStore::kRunHistory);
    QVERIFY(again.open(dir.path()));
    QCOMPARE(again.pointCount(0, metric::Loss), 20'000);
    const MetricCurve read = again.curve(0, metric::Loss, MetricXAxis::Step, 0.0, 0, 0, 0);
    QVERIFY(read.sourcePoints <=
            qint64(MetricsStore::kRunHistory.foldAt()) + MetricsStore::kRunHistory.foldedPoints);
    QCOMPARE(read.x, written.x);
    QCOMPARE(read.y, written.y);
}

QTEST_GUILESS_MAIN(TestMetricsStore)
#include "tst_metricsstore.moc"
