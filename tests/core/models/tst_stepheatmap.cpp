// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview's heatmap grid (StepHeatmap::compute) against a brute-force reference: one row
// per rank, columns of 2^k steps aligned to step numbers with k the smallest that fits the run
// into the columns given, every cell the largest value of its bucket and the count of its
// values, a restart's steps counted, and a colour scale that takes in a straggler's row but
// not a single spike, and does not move with every new step.
#include "models/stepheatmap.h"
#include "store/metricsstore.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace rankdeck;

class TestStepHeatmap : public QObject
{
    Q_OBJECT

private slots:
    void cellsAreBucketMaxima_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("firstStep");
        QTest::addColumn<int>("steps");
        QTest::addColumn<int>("columns");
        QTest::newRow("fewer steps than columns") << 4 << 1 << 300 << 480;
        QTest::newRow("one step a column, exactly") << 3 << 0 << 256 << 256;
        QTest::newRow("a step more than fits") << 3 << 0 << 257 << 256;
        QTest::newRow("several steps a column") << 5 << 1 << 1000 << 77;
        QTest::newRow("unaligned start") << 2 << 1001 << 5000 << 64;
        QTest::newRow("many blocks a column") << 2 << 1 << 100'000 << 512;
    }
    void cellsAreBucketMaxima()
    {
        QFETCH(int, ranks);
        QFETCH(int, firstStep);
        QFETCH(int, steps);
        QFETCH(int, columns);
        MetricsStore store;
        const auto value = [](int r, int s) { return 10.0 + r + double((s * 37 + r * 11) % 101); };
        const int lastStep = firstStep + steps - 1;
        for (int s = firstStep; s <= lastStep; ++s)
            for (int r = 0; r < ranks; ++r)
                store.append(r, metric::StepTimeMs, s, s * 1000, value(r, s));
        const StepHeatmap h = StepHeatmap::compute(store, metric::StepTimeMs, columns);
        QCOMPARE(h.ranks.size(), ranks);
        QCOMPARE(h.firstStep, qint64(firstStep));
        QCOMPARE(h.lastStep, qint64(lastStep));
        QCOMPARE(h.capacity, columns);
        // The smallest power of two whose aligned buckets fit: one less would not.
        const auto used = [&](int shift) { return (lastStep >> shift) - (firstStep >> shift) + 1; };
        QVERIFY(used(h.stepShift) <= columns);
        QVERIFY(h.stepShift == 0 || used(h.stepShift - 1) > columns);
        QCOMPARE(h.columns, used(h.stepShift));
        QCOMPARE(h.firstColumn, qint64(firstStep >> h.stepShift));
        for (int r = 0; r < ranks; ++r) {
            for (int c = 0; c < h.columns; ++c) {
                double want = -1;
                quint32 n = 0;
                for (int s = firstStep; s <= lastStep; ++s) {
                    if ((s >> h.stepShift) - h.firstColumn == c) {
                        want = std::max(want, value(r, s));
                        ++n;
                    }
                }
                QVERIFY2(!std::isnan(h.at(r, c)),
                         qPrintable(QStringLiteral("rank %1 column %2 empty").arg(r).arg(c)));
                QCOMPARE(h.at(r, c), float(want));
                QCOMPARE(h.countAt(r, c), n);
            }
        }
        // The columns' step ranges tile the run.
        QCOMPARE(h.columnFirstStep(0), qint64(firstStep));
        QCOMPARE(h.columnLastStep(h.columns - 1), qint64(lastStep));
        for (int c = 1; c < h.columns; ++c)
            QCOMPARE(h.columnFirstStep(c), h.columnLastStep(c - 1) + 1);
    }

    void restartAndMissingRanks()
    {
        MetricsStore store;
        for (int s = 0; s < 50; ++s)
            store.append(0, metric::StepTimeMs, s, s, 1.0);
        for (int s = 20; s < 60; ++s) // resumed from step 20: a second segment
            store.append(0, metric::StepTimeMs, s, 100 + s, 2.0);
        for (int s = 0; s < 60; ++s)
            store.append(2, metric::StepTimeMs, s, s, 3.0);
        const StepHeatmap h = StepHeatmap::compute(store, metric::StepTimeMs, 60);
        QCOMPARE(h.ranks, (QList<int>{0, 2}));
        QCOMPARE(h.columns, 60);
        QCOMPARE(h.stepShift, 0);
        QCOMPARE(h.at(0, 10), 1.0f);
        QCOMPARE(h.at(0, 30), 2.0f); // both segments hold step 30: the larger
        QCOMPARE(h.countAt(0, 30), 2u);
        QCOMPARE(h.at(0, 55), 2.0f);
        QCOMPARE(h.at(1, 0), 3.0f);
    }

    void nonFiniteValuesHoldNoCell()
    {
        MetricsStore store;
        store.append(0, metric::StepTimeMs, 0, 0, 4.0);
        store.append(0, metric::StepTimeMs, 1, 1, std::nan(""));
        store.append(0, metric::StepTimeMs, 2, 2, std::numeric_limits<double>::infinity());
        store.append(0, metric::StepTimeMs, 3, 3, 1e300); // beyond float: float's largest
        const StepHeatmap h = StepHeatmap::compute(store, metric::StepTimeMs, 16);
        QCOMPARE(h.columns, 4);
        QCOMPARE(h.at(0, 0), 4.0f);
        QVERIFY(std::isnan(h.at(0, 1)));
        QVERIFY(std::isnan(h.at(0, 2)));
        QCOMPARE(h.countAt(0, 2), 0u);
        QCOMPARE(h.at(0, 3), std::numeric_limits<float>::max());
        QVERIFY(std::isfinite(h.high));
    }

    void emptyStoreIsEmpty()
    {
        MetricsStore store;
        QVERIFY(StepHeatmap::compute(store, metric::StepTimeMs, 100).isEmpty());
        store.append(0, metric::Loss, 1, 1, 1.0);
        QVERIFY(StepHeatmap::compute(store, metric::StepTimeMs, 100).isEmpty());
        store.append(0, metric::StepTimeMs, 1, 1, 5.0);
        QVERIFY(StepHeatmap::compute(store, metric::StepTimeMs, 0).isEmpty());
        const StepHeatmap one = StepHeatmap::compute(store, metric::StepTimeMs, 100);
        QCOMPARE(one.columns, 1);
        QCOMPARE(one.at(0, 0), 5.0f);
        QVERIFY(one.high > one.low); // a scale around the one value
        QVERIFY(one.low <= 5.0f && one.high >= 5.0f);
    }

    // 64 ranks at ~20 ms (noise 0–1.2 ms), rank 7 at 35 ms in step time or waiting 0.5 ms
    // against the others' 15 ms, one checkpoint step of 5 s on every rank.
    void scaleKeepsTheStragglerAndIgnoresASpike_data()
    {
        QTest::addColumn<bool>("wait");
        QTest::newRow("step time: the straggler is high") << false;
        QTest::newRow("communication wait: the straggler is low") << true;
    }
    void scaleKeepsTheStragglerAndIgnoresASpike()
    {
        QFETCH(bool, wait);
        constexpr int ranks = 64, slow = 7;
        MetricsStore store;
        const auto fill = [&](int from, int to) {
            for (int s = from; s < to; ++s) {
                for (int r = 0; r < ranks; ++r) {
                    const double noise = 0.1 * double((s * 7 + r * 5) % 13);
                    double v =
                        wait ? (r == slow ? 0.5 : 15.0 + noise) : (r == slow ? 35.0 : 20.0 + noise);
                    if (s == 1500)
                        v = 5000.0;
                    store.append(r, metric::StepTimeMs, s, s, v);
                }
            }
        };
        fill(0, 3000);
        const StepHeatmap h = StepHeatmap::compute(store, metric::StepTimeMs, 256);
        const float straggler = wait ? 0.5f : 35.0f;
        QVERIFY2(h.low <= straggler && straggler <= h.high,
                 qPrintable(QStringLiteral("scale %1–%2").arg(double(h.low)).arg(double(h.high))));
        QVERIFY2(h.high < 100.0f, qPrintable(QString::number(double(h.high)))); // not the 5 s spike
        QCOMPARE(h.maxCell, 5000.0f);
        // Ends on the 1-1.2-1.5-2-2.5-3-4-5-6-8 series.
        for (float end : {h.low, h.high}) {
            if (end == 0.0f)
                continue;
            const double m = double(end) / std::pow(10.0, std::floor(std::log10(double(end))));
            bool onSeries = false;
            for (double s : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
                onSeries = onSeries || std::abs(m - s) < 1e-4;
            QVERIFY2(onSeries, qPrintable(QString::number(end)));
        }
        // A few hundred more steps alike: the same scale.
        fill(3000, 3300);
        const StepHeatmap later = StepHeatmap::compute(store, metric::StepTimeMs, 256);
        QCOMPARE(later.low, h.low);
        QCOMPARE(later.high, h.high);
    }
};

QTEST_GUILESS_MAIN(TestStepHeatmap)
#include "tst_stepheatmap.moc"
