// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/downsampler.h"

#include <QRandomGenerator>
#include <QtTest>

#include <algorithm>

#include <cmath>
#include <limits>
#include <vector>

using namespace rankdeck;

namespace {
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
constexpr double Inf = std::numeric_limits<double>::infinity();

std::vector<double> iota(qsizetype n)
{
    std::vector<double> x(static_cast<size_t>(n));
    for (qsizetype i = 0; i < n; ++i)
        x[size_t(i)] = double(i);
    return x;
}

bool samePoints(const DownsampledPoints &a, const DownsampledPoints &b)
{
    return a.x == b.x && a.y == b.y && a.nanX == b.nanX && a.infX == b.infX && a.infY == b.infY;
}

// The documented rule written the slow, obvious way: a point belongs to the last bucket whose
// left edge it reaches; when buckets average at least 4 blocks, inner borders move to the
// nearest multiple of the block size; each bucket gives its min and max in index order, its
// first NaN and first ±Inf; the nearest points outside the view are kept.
DownsampledPoints naive(const std::vector<double> &x, const std::vector<double> &v, double lo,
                        double hi, int buckets)
{
    DownsampledPoints out;
    const qsizetype n = qsizetype(x.size());
    qsizetype first = 0;
    while (first < n && x[size_t(first)] < lo)
        ++first;
    qsizetype last = first;
    while (last < n && x[size_t(last)] <= hi)
        ++last;
    auto put = [&](qsizetype i) {
        const double y = v[size_t(i)];
        if (std::isnan(y)) {
            out.nanX.append(x[size_t(i)]);
        } else if (std::isinf(y)) {
            out.infX.append(x[size_t(i)]);
            out.infY.append(y);
        } else {
            out.x.append(x[size_t(i)]);
            out.y.append(y);
        }
    };
    if (first > 0)
        put(first - 1);
    const bool snap = (last - first) / buckets >= 4 * Downsampler::kBlock;
    qsizetype start = first;
    for (int k = 0; k < buckets; ++k) {
        qsizetype stop = last;
        if (k + 1 < buckets) {
            const double edge = lo + (hi - lo) * double(k + 1) / double(buckets);
            stop = start;
            while (stop < last && x[size_t(stop)] < edge)
                ++stop;
            if (snap) {
                const qsizetype b = Downsampler::kBlock;
                stop = std::clamp((stop + b / 2) / b * b, start, last);
            }
        }
        qsizetype mn = -1, mx = -1, nan = -1, inf = -1;
        for (qsizetype i = start; i < stop; ++i) {
            const double y = v[size_t(i)];
            if (std::isnan(y)) {
                if (nan < 0)
                    nan = i;
            } else if (std::isinf(y)) {
                if (inf < 0)
                    inf = i;
            } else {
                if (mn < 0 || y < v[size_t(mn)])
                    mn = i;
                if (mx < 0 || y > v[size_t(mx)])
                    mx = i;
            }
        }
        if (mn >= 0) {
            put(std::min(mn, mx));
            if (mn != mx)
                put(std::max(mn, mx));
        }
        if (nan >= 0)
            put(nan);
        if (inf >= 0)
            put(inf);
        start = stop;
    }
    if (last < n)
        put(last);
    return out;
}
} // namespace

class TestDownsampler : public QObject
{
    Q_OBJECT
private slots:
    void byHand_data();
    void byHand();
    void indexAgreesWithScan_data();
    void indexAgreesWithScan();
    void pyramidMatchesBruteForce_data();
    void pyramidMatchesBruteForce();
    void truncateReindexes_data();
    void truncateReindexes();
    void spikeSurvivesMillionPoints();
    void segmentRange();
};

// x = 0..9 in every row below; expected points worked out by hand.
void TestDownsampler::byHand_data()
{
    QTest::addColumn<QList<double>>("y");
    QTest::addColumn<double>("xMin");
    QTest::addColumn<double>("xMax");
    QTest::addColumn<int>("buckets");
    QTest::addColumn<QList<double>>("expectedX");
    QTest::addColumn<QList<double>>("expectedY");
    QTest::addColumn<QList<double>>("expectedNanX");

    const QList<double> y{0, 5, 1, 1, -3, 2, 2, 2, 9, 0};
    // Two buckets over [0, 9] split at 4.5: {0..4} has max 5 @1, min -3 @4; {5..9} max 9 @8,
    // min 0 @9. Each bucket gives its min and max in their original order.
    QTest::newRow("two buckets") << y << 0.0 << 9.0 << 2 << QList<double>{1, 4, 8, 9}
                                 << QList<double>{5, -3, 9, 0} << QList<double>{};
    // Empty range means everything: same as above.
    QTest::newRow("whole range") << y << 0.0 << 0.0 << 2 << QList<double>{1, 4, 8, 9}
                                 << QList<double>{5, -3, 9, 0} << QList<double>{};
    // View [2, 6] in two buckets split at 4: {2,3} all 1 (min = max, one point at 2), {4,5,6}
    // min -3 @4, max 2 @5; plus the neighbours just outside (1 and 7).
    QTest::newRow("zoomed with edges") << y << 2.0 << 6.0 << 2 << QList<double>{1, 2, 4, 5, 7}
                                       << QList<double>{5, 1, -3, 2, 2} << QList<double>{};
    // One bucket per point gives the data back.
    QTest::newRow("as many buckets as points")
        << y << 0.0 << 9.0 << 10 << QList<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9} << y
        << QList<double>{};
    // No bucketing at all.
    QTest::newRow("no buckets") << y << 0.0 << 0.0 << 0
                                << QList<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9} << y
                                << QList<double>{};
    // A NaN is reported at its x and never becomes a min or max.
    QTest::newRow("nan visible") << QList<double>{0, 5, NaN, 1, -3, 2, 2, 2, 9, 0} << 0.0 << 9.0
                                 << 2 << QList<double>{1, 4, 8, 9} << QList<double>{5, -3, 9, 0}
                                 << QList<double>{2};
    // A bucket holding only NaN gives no line point, only the NaN mark.
    QTest::newRow("all nan bucket")
        << QList<double>{NaN, NaN, NaN, NaN, NaN, 1, 2, 3, 4, 5} << 0.0 << 9.0 << 2
        << QList<double>{5, 9} << QList<double>{1, 5} << QList<double>{0};
}

void TestDownsampler::byHand()
{
    QFETCH(QList<double>, y);
    QFETCH(double, xMin);
    QFETCH(double, xMax);
    QFETCH(int, buckets);
    QFETCH(QList<double>, expectedX);
    QFETCH(QList<double>, expectedY);
    QFETCH(QList<double>, expectedNanX);
    const std::vector<double> x = iota(y.size());
    const std::vector<double> values(y.begin(), y.end());
    const DownsampledPoints scan = Downsampler::bucketScan(x, values, xMin, xMax, buckets);
    QCOMPARE(scan.x, expectedX);
    QCOMPARE(scan.y, expectedY);
    QCOMPARE(scan.nanX, expectedNanX);
    Downsampler index;
    index.update(values);
    QVERIFY(samePoints(index.bucket(x, values, xMin, xMax, buckets), scan));
}

void TestDownsampler::indexAgreesWithScan_data()
{
    QTest::addColumn<int>("points");
    QTest::addColumn<int>("buckets");
    QTest::addColumn<double>("from"); // view as a fraction of the x range
    QTest::addColumn<double>("to");
    QTest::newRow("200k / 1000 all") << 200000 << 1000 << 0.0 << 1.0;
    QTest::newRow("200k / 7 all") << 200000 << 7 << 0.0 << 1.0;
    QTest::newRow("200k / 333 middle") << 200000 << 333 << 0.31 << 0.77;
    QTest::newRow("5000 / 1000 tail") << 5000 << 1000 << 0.9 << 1.0;
    QTest::newRow("4097 / 3 all") << 4097 << 3 << 0.0 << 1.0;
    QTest::newRow("300k / 50 narrow") << 300000 << 50 << 0.5 << 0.5001;
}

// The two-level index must give exactly what a full scan gives.
void TestDownsampler::indexAgreesWithScan()
{
    QFETCH(int, points);
    QFETCH(int, buckets);
    QFETCH(double, from);
    QFETCH(double, to);
    QRandomGenerator rng(7);
    std::vector<double> x, values;
    double xv = 0;
    Downsampler index;
    for (int i = 0; i < points; ++i) {
        xv += i % 5000 == 0 ? 10000 : rng.bounded(3); // repeated x values and big gaps too
        x.push_back(xv);
        const int r = rng.bounded(1000);
        values.push_back(r == 0   ? NaN
                         : r == 1 ? (rng.bounded(2) ? Inf : -Inf)
                                  : double(rng.bounded(100000)) / 7.0);
        if (i % 1000 == 999)
            index.update(values); // as a live series grows
    }
    index.update(values);
    const double span = x.back() - x.front();
    const double lo = x.front() + span * from;
    const double hi = x.front() + span * to;
    const DownsampledPoints a = index.bucket(x, values, lo, hi, buckets);
    const DownsampledPoints b = Downsampler::bucketScan(x, values, lo, hi, buckets);
    QCOMPARE(a.x.size(), b.x.size());
    QVERIFY(samePoints(a, b));
    const DownsampledPoints c = naive(x, values, lo, hi, buckets);
    QCOMPARE(a.x.size(), c.x.size());
    QCOMPARE(a.x, c.x);
    QCOMPARE(a.y, c.y);
    QCOMPARE(a.nanX, c.nanX);
    QCOMPARE(a.infX, c.infX);
    QVERIFY(a.x.size() <= 2 * buckets + 2);
}

// Random columns and random views, some of them partly or wholly outside the data: the pyramid
// must give, bucket by bucket, exactly the extremes (and NaN/±Inf marks) a brute-force scan
// finds, so no spike can vanish however the view is chosen.
void TestDownsampler::pyramidMatchesBruteForce_data()
{
    QTest::addColumn<int>("points");
    QTest::addColumn<int>("specials"); // NaN or ±Inf per 1000 points
    QTest::addColumn<int>("gapEvery"); // a jump in x every that many points (0: none)
    QTest::addColumn<quint32>("seed");
    const struct
    {
        const char *name;
        int points, specials, gapEvery;
    } shapes[] = {
        {"tiny", 37, 100, 0},           {"one block", 64, 50, 0},
        {"odd length", 70001, 5, 0},    {"power of two", 131072, 1, 0},
        {"gaps", 250000, 2, 30000},     {"many specials", 90000, 300, 0},
        {"all special", 5000, 1000, 0},
    };
    for (const auto &shape : shapes) {
        for (quint32 seed = 1; seed <= 3; ++seed)
            QTest::addRow("%s seed %u", shape.name, seed)
                << shape.points << shape.specials << shape.gapEvery << seed;
    }
}

void TestDownsampler::pyramidMatchesBruteForce()
{
    QFETCH(int, points);
    QFETCH(int, specials);
    QFETCH(int, gapEvery);
    QFETCH(quint32, seed);
    QRandomGenerator rng(seed);
    std::vector<double> x, values;
    double xv = 100;
    Downsampler index;
    for (int i = 0; i < points; ++i) {
        xv += (gapEvery > 0 && i % gapEvery == gapEvery - 1) ? 5000 : rng.bounded(4);
        x.push_back(xv);
        const int r = int(rng.bounded(1000));
        double v = rng.generateDouble() * 10 - 5;
        if (r < specials)
            v = r % 3 == 0 ? NaN : (r % 3 == 1 ? Inf : -Inf);
        else if (rng.bounded(500) == 0)
            v *= 1e6; // a spike
        values.push_back(v);
        if (rng.bounded(997) == 0)
            index.update(values); // indexed as it grows, at uneven moments
    }
    index.update(values);
    const std::vector<qint64> xInt(x.begin(), x.end());
    std::vector<qint64> mid;
    Downsampler::midSamples(xInt, mid);
    const double first = x.front(), span = x.back() - x.front();
    for (int view = 0; view < 24; ++view) {
        double lo, hi;
        switch (view % 6) {
        case 0:
            lo = first;
            hi = x.back();
            break; // all
        case 1:
            lo = first - span;
            hi = first - span / 2;
            break; // left of the data
        case 2:
            lo = x.back() + 1;
            hi = x.back() + span;
            break; // right of it
        case 3:
            lo = first - span * rng.generateDouble();
            hi = first + span * rng.generateDouble();
            break;
        case 4:
            lo = first + span * rng.generateDouble();
            hi = x.back() + span * rng.generateDouble();
            break;
        default: {
            const double a = first + span * rng.generateDouble();
            lo = a;
            hi = a + span * rng.generateDouble() * rng.generateDouble();
        }
        }
        if (!(lo < hi))
            hi = lo + 1; // an empty view means "everything", which case 0 covers
        const int buckets = view == 0 ? 1 : int(rng.bounded(1, 2000));
        const DownsampledPoints got = index.bucket(x, values, lo, hi, buckets);
        const DownsampledPoints want = naive(x, values, lo, hi, buckets);
        const QByteArray where = QStringLiteral("view %1 [%2, %3] in %4 buckets")
                                     .arg(view)
                                     .arg(lo, 0, 'g', 17)
                                     .arg(hi, 0, 'g', 17)
                                     .arg(buckets)
                                     .toUtf8();
        QVERIFY2(got.x == want.x, where.constData());
        QVERIFY2(got.y == want.y, where.constData());
        QVERIFY2(got.nanX == want.nanX, where.constData());
        QVERIFY2(got.infX == want.infX, where.constData());
        QVERIFY2(got.infY == want.infY, where.constData());
        // The store's path: integer x with mid samples for the borders.
        const DownsampledPoints viaMid =
            index.bucket(xInt, 0.0, 1.0, values, 0, qsizetype(values.size()), lo, hi, buckets, mid);
        QVERIFY2(samePoints(viaMid, want), where.constData());
    }
}

void TestDownsampler::truncateReindexes_data()
{
    QTest::addColumn<int>("points");
    QTest::addColumn<int>("cut");
    QTest::newRow("mid block") << 100000 << 54321;
    QTest::newRow("block border") << 100000 << 64 * 512;
    QTest::newRow("to zero") << 9000 << 0;
    QTest::newRow("last point") << 70000 << 69999;
    QTest::newRow("beyond the end") << 5000 << 8000;
}

// A column whose tail changes (the mean across ranks gets a late report) is indexed again from
// the cut: the result must equal an index built from scratch on the new values.
void TestDownsampler::truncateReindexes()
{
    QFETCH(int, points);
    QFETCH(int, cut);
    QRandomGenerator rng(11);
    std::vector<double> values(static_cast<size_t>(points));
    for (double &v : values)
        v = rng.generateDouble();
    Downsampler index;
    index.update(values);
    for (qsizetype i = cut; i < qsizetype(values.size()); ++i)
        values[size_t(i)] = rng.bounded(100) == 0 ? NaN : rng.generateDouble() * 3 - 1;
    index.truncate(cut);
    QVERIFY(index.indexedCount() <= cut);
    index.update(values);
    Downsampler fresh;
    fresh.update(values);
    QCOMPARE(index.indexedCount(), fresh.indexedCount());
    const std::vector<double> x = iota(points);
    for (int buckets : {1, 7, 500, 1999}) {
        QVERIFY(samePoints(index.bucket(x, values, 0, 0, buckets),
                           fresh.bucket(x, values, 0, 0, buckets)));
        QVERIFY(samePoints(index.bucket(x, values, 0, 0, buckets),
                           naive(x, values, x.front(), x.back(), buckets)));
    }
}

void TestDownsampler::spikeSurvivesMillionPoints()
{
    const int n = 1'000'000;
    std::vector<double> values(n, 1.0);
    values[123457] = 1000.0;
    values[654321] = -1000.0;
    values[777777] = NaN;
    const std::vector<double> x = iota(n);
    Downsampler index;
    index.update(values);
    const DownsampledPoints p = index.bucket(x, values, 0, 0, 100);
    QVERIFY(p.y.contains(1000.0));
    QVERIFY(p.y.contains(-1000.0));
    QCOMPARE(p.x.at(p.y.indexOf(1000.0)), 123457.0);
    QCOMPARE(p.nanX, QList<double>{777777.0});
    QVERIFY(p.x.size() <= 200);
}

void TestDownsampler::segmentRange()
{
    // Two segments in one column (a restart): bucketing one of them never sees the other.
    std::vector<double> values{1, 2, 3, 100, 0.5, 0.6, 0.7};
    const std::vector<double> steps{1, 2, 3, 4, 2, 3, 4};
    Downsampler index;
    index.update(values);
    const auto xAt = [&](qsizetype i) { return steps[size_t(i)]; };
    const DownsampledPoints second = index.bucket(xAt, values, 4, 7, 0, 0, 1);
    QCOMPARE(second.x, (QList<double>{2, 4}));
    QCOMPARE(second.y, (QList<double>{0.5, 0.7}));
}

QTEST_GUILESS_MAIN(TestDownsampler)
#include "tst_downsampler.moc"
