// SPDX-License-Identifier: GPL-3.0-or-later
//
// The incremental heatmap grid (StepHeatmapCache) equals the one computed from scratch
// (StepHeatmap::compute) after every update, however the points arrived: in one batch, one step
// at a time (through every doubling of the column width), in ragged batches with ranks ahead of
// others, with ranks joining late (in the middle of the order too), with steps before the first
// column, a restart, non-finite values; across a toggle of the metric and a new capacity. What
// it reports as unchanged is unchanged, and a live update reads only the new points.
#include "models/stepheatmapcache.h"
#include "store/metricsstore.h"

#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace rankdeck;

namespace {

// Bit for bit (NaN equal to NaN), with the first difference in words.
QString difference(const StepHeatmap &a, const StepHeatmap &b)
{
    if (a.metric != b.metric || a.ranks != b.ranks || a.capacity != b.capacity ||
        a.columns != b.columns || a.stepShift != b.stepShift || a.firstColumn != b.firstColumn ||
        a.firstStep != b.firstStep || a.lastStep != b.lastStep)
        return QStringLiteral("layout: %1 ranks, %2/%3 columns, shift %4, first column %5, steps "
                              "%6–%7 against %8 ranks, %9/%10, shift %11, %12, %13–%14")
            .arg(a.ranks.size())
            .arg(a.columns)
            .arg(a.capacity)
            .arg(a.stepShift)
            .arg(a.firstColumn)
            .arg(a.firstStep)
            .arg(a.lastStep)
            .arg(b.ranks.size())
            .arg(b.columns)
            .arg(b.capacity)
            .arg(b.stepShift)
            .arg(b.firstColumn)
            .arg(b.firstStep)
            .arg(b.lastStep);
    for (int r = 0; r < int(a.ranks.size()); ++r) {
        for (int c = 0; c < a.columns; ++c) {
            const float x = a.at(r, c), y = b.at(r, c);
            if (std::memcmp(&x, &y, sizeof x) != 0 || a.countAt(r, c) != b.countAt(r, c))
                return QStringLiteral("row %1 column %2: %3 (%4) against %5 (%6)")
                    .arg(r)
                    .arg(c)
                    .arg(double(x))
                    .arg(a.countAt(r, c))
                    .arg(double(y))
                    .arg(b.countAt(r, c));
        }
    }
    if (a.low != b.low || a.high != b.high || a.minCell != b.minCell || a.maxCell != b.maxCell)
        return QStringLiteral("scale %1–%2 against %3–%4")
            .arg(double(a.low))
            .arg(double(a.high))
            .arg(double(b.low))
            .arg(double(b.high));
    return {};
}

// Checks the cache after an update against compute(), and that every column before the one it
// reported as the first changed is as it was.
struct Checker
{
    StepHeatmapCache cache;
    StepHeatmap previous;
    int updates = 0;

    QString update(const MetricsStore &store, const QString &metric, int columns)
    {
        const int from = cache.update(store, metric, columns);
        ++updates;
        const StepHeatmap &h = cache.heatmap();
        const StepHeatmap want = StepHeatmap::compute(store, metric, columns);
        QString d = difference(h, want);
        if (!d.isEmpty())
            return QStringLiteral("update %1: %2").arg(updates).arg(d);
        if (from > 0) {
            // Only a grid laid out as before may report anything unchanged.
            if (previous.ranks != h.ranks || previous.stepShift != h.stepShift ||
                previous.firstColumn != h.firstColumn || previous.capacity != h.capacity ||
                previous.metric != h.metric)
                return QStringLiteral("update %1: the layout changed, yet columns before %2 "
                                      "were called unchanged")
                    .arg(updates)
                    .arg(from);
            for (int r = 0; r < int(h.ranks.size()); ++r) {
                for (int c = 0; c < std::min(from, previous.columns); ++c) {
                    const float x = h.at(r, c), y = previous.at(r, c);
                    if (std::memcmp(&x, &y, sizeof x) != 0 ||
                        h.countAt(r, c) != previous.countAt(r, c))
                        return QStringLiteral("update %1: column %2 of row %3 changed, reported "
                                              "from %4 on")
                            .arg(updates)
                            .arg(c)
                            .arg(r)
                            .arg(from);
                }
            }
        }
        previous = h;
        return {};
    }
};

double valueOf(int rank, qint64 step)
{
    return 20.0 + (rank == 3 ? 15.0 : 0.0) + double((step * 7 + rank * 13) % 17) * 0.1;
}

} // namespace

class TestStepHeatmapCache : public QObject
{
    Q_OBJECT

private slots:
    void equalsFromScratch_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("steps");
        QTest::addColumn<int>("columns");
        QTest::addColumn<int>("batch");     // steps of every rank between updates; 0: ragged
        QTest::addColumn<int>("lateRanks"); // ranks that join at the middle of the run
        QTest::newRow("one batch") << 8 << 5000 << 128 << 5000 << 0;
        QTest::newRow("one step per update, every doubling") << 6 << 700 << 16 << 1 << 0;
        QTest::newRow("small batches") << 8 << 3000 << 64 << 7 << 0;
        QTest::newRow("ragged batches, ranks ahead of others") << 8 << 3000 << 64 << 0 << 0;
        QTest::newRow("ranks join late") << 8 << 2000 << 64 << 5 << 3;
        QTest::newRow("ranks join late, ragged") << 8 << 2000 << 32 << 0 << 4;
        QTest::newRow("more columns than steps") << 4 << 100 << 512 << 3 << 1;
    }
    void equalsFromScratch()
    {
        QFETCH(int, ranks);
        QFETCH(int, steps);
        QFETCH(int, columns);
        QFETCH(int, batch);
        QFETCH(int, lateRanks);
        MetricsStore store;
        Checker check;
        QRandomGenerator random(1234);
        // Late ranks are the odd ones from the top (rank 7, 5, …): rows inserted mid-order.
        const auto joinsLate = [&](int r) { return r % 2 == 1 && (ranks - 1 - r) / 2 < lateRanks; };
        std::vector<qint64> next(size_t(ranks), 1);
        for (int r = 0; r < ranks; ++r)
            next[size_t(r)] = joinsLate(r) ? steps / 2 : 1;
        bool done = false;
        while (!done) {
            done = true;
            for (int r = 0; r < ranks; ++r) {
                const int n = batch > 0 ? batch : int(random.bounded(1, 40));
                qint64 &s = next[size_t(r)];
                // A late rank waits until rank 0 is past half the run.
                if (joinsLate(r) && next[0] < steps / 2) {
                    done = false;
                    continue;
                }
                for (int k = 0; k < n && s <= steps; ++k, ++s)
                    store.append(r, metric::StepTimeMs, s, s * 1000, valueOf(r, s));
                done = done && s > steps;
            }
            const QString d = check.update(store, metric::StepTimeMs, columns);
            QVERIFY2(d.isEmpty(), qPrintable(d));
        }
        QCOMPARE(check.cache.heatmap().ranks.size(), ranks);
        QCOMPARE(check.cache.heatmap().lastStep, qint64(steps));
    }

    // Steps before the grid's first column (a rank that starts from step 0 while the others
    // started at 1,000), a restart that goes back, NaN and infinity, negative steps.
    void irregularSteps_data()
    {
        QTest::addColumn<int>("columns");
        QTest::newRow("16 columns") << 16;
        QTest::newRow("64 columns") << 64;
        QTest::newRow("1024 columns") << 1024;
    }
    void irregularSteps()
    {
        QFETCH(int, columns);
        MetricsStore store;
        Checker check;
        const auto run = [&](int rank, qint64 from, qint64 to, double base) {
            for (qint64 s = from; s < to; ++s)
                store.append(rank, metric::StepTimeMs, s, s, base + double(s % 5));
        };
        run(0, 1000, 1300, 10);
        QVERIFY2(check.update(store, metric::StepTimeMs, columns).isEmpty(), "first");
        run(1, 0, 200, 20); // before the first column
        QString d = check.update(store, metric::StepTimeMs, columns);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        run(0, 1100, 1400, 30); // a restart from a checkpoint at step 1,100
        d = check.update(store, metric::StepTimeMs, columns);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        store.append(1, metric::StepTimeMs, 200, 200, std::nan(""));
        store.append(1, metric::StepTimeMs, 201, 201, std::numeric_limits<double>::infinity());
        store.append(1, metric::StepTimeMs, 202, 202, -1e300);
        d = check.update(store, metric::StepTimeMs, columns);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        run(2, -50, 10, 5); // negative steps (an input nobody checked)
        d = check.update(store, metric::StepTimeMs, columns);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        // Nothing new: nothing read, nothing changed.
        const int from = check.cache.update(store, metric::StepTimeMs, columns);
        QCOMPARE(from, check.cache.heatmap().columns);
        QCOMPARE(check.cache.lastReadPoints(), qint64(0));
    }

    // The Overview keeps one cache per metric: toggling to communication wait and back catches
    // up from where each was; a new capacity (the window resized) starts over.
    void toggleAndResize()
    {
        MetricsStore store;
        constexpr int ranks = 6;
        qint64 step = 1;
        const auto advance = [&](int n) {
            for (int k = 0; k < n; ++k, ++step) {
                for (int r = 0; r < ranks; ++r) {
                    store.append(r, metric::StepTimeMs, step, step, valueOf(r, step));
                    store.append(r, metric::CommWaitMs, step, step, r == 3 ? 0.2 : 15.0 - r);
                }
            }
        };
        Checker stepTime, commWait;
        advance(500);
        QString d = stepTime.update(store, metric::StepTimeMs, 64);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        advance(50);
        d = commWait.update(store, metric::CommWaitMs, 64); // toggled
        QVERIFY2(d.isEmpty(), qPrintable(d));
        advance(30);
        d = stepTime.update(store, metric::StepTimeMs, 64); // and back: only the new steps
        QVERIFY2(d.isEmpty(), qPrintable(d));
        QCOMPARE(stepTime.cache.lastReadPoints(), qint64(ranks) * 80);
        d = stepTime.update(store, metric::StepTimeMs, 128); // resized
        QVERIFY2(d.isEmpty(), qPrintable(d));
        QCOMPARE(stepTime.cache.lastReadPoints(), qint64(ranks) * 580);
        // One cache, the metric switched under it: starts over, equal again.
        d = stepTime.update(store, metric::CommWaitMs, 128);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }

    // A live refresh at scale reads one point per rank and reports only the last columns.
    void liveUpdateReadsOnlyNewPoints()
    {
        MetricsStore store;
        constexpr int ranks = 64, steps = 20'000, columns = 256;
        for (int s = 1; s <= steps; ++s)
            for (int r = 0; r < ranks; ++r)
                store.append(r, metric::StepTimeMs, s, s, valueOf(r, s));
        StepHeatmapCache cache;
        QCOMPARE(cache.update(store, metric::StepTimeMs, columns), 0);
        QCOMPARE(cache.lastReadPoints(), qint64(ranks) * steps);
        for (int r = 0; r < ranks; ++r)
            store.append(r, metric::StepTimeMs, steps + 1, steps + 1, 99.0);
        const int from = cache.update(store, metric::StepTimeMs, columns);
        QCOMPARE(cache.lastReadPoints(), qint64(ranks));
        QCOMPARE(from, cache.heatmap().columns - 1);
        QCOMPARE(cache.heatmap().at(5, from), 99.0f);
        QVERIFY(
            difference(cache.heatmap(), StepHeatmap::compute(store, metric::StepTimeMs, columns))
                .isEmpty());
    }

    // A cleared store (a rank gone, or fewer points than were read) starts the grid over.
    void clearedStoreStartsOver()
    {
        MetricsStore store;
        Checker check;
        for (int s = 0; s < 300; ++s)
            for (int r = 0; r < 4; ++r)
                store.append(r, metric::StepTimeMs, s, s, valueOf(r, s));
        QVERIFY(check.update(store, metric::StepTimeMs, 32).isEmpty());
        store.clear();
        QVERIFY(check.update(store, metric::StepTimeMs, 32).isEmpty());
        QVERIFY(check.cache.heatmap().isEmpty());
        for (int s = 0; s < 100; ++s)
            for (int r = 0; r < 4; ++r)
                store.append(r, metric::StepTimeMs, s, s, 2.0 * valueOf(r, s));
        QString d = check.update(store, metric::StepTimeMs, 32);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        // Cleared and refilled with fewer points between two updates.
        store.clear();
        for (int s = 0; s < 40; ++s)
            for (int r = 0; r < 4; ++r)
                store.append(r, metric::StepTimeMs, s, s, 3.0 * valueOf(r, s));
        d = check.update(store, metric::StepTimeMs, 32);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
};

QTEST_GUILESS_MAIN(TestStepHeatmapCache)
#include "tst_stepheatmapcache.moc"
