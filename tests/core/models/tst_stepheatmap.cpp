// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview's heatmap grid against a brute-force reference: one row per rank, every cell the
// largest value of its step bucket, no empty cell where steps exist, a restart's steps counted,
// the colour scale's ends the grid's extremes.
#include "models/stepheatmap.h"
#include "store/metricsstore.h"

#include <QTest>

#include <cmath>

using namespace rankdeck;

class TestStepHeatmap : public QObject
{
    Q_OBJECT

private slots:
    void cellsAreBucketMaxima_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("steps");
        QTest::addColumn<int>("columns");
        QTest::newRow("fewer steps than columns") << 4 << 300 << 480;
        QTest::newRow("one step a column") << 3 << 200 << 200;
        QTest::newRow("several steps a column") << 5 << 1000 << 77;
        QTest::newRow("many blocks a column") << 2 << 100'000 << 600;
    }
    void cellsAreBucketMaxima()
    {
        QFETCH(int, ranks);
        QFETCH(int, steps);
        QFETCH(int, columns);
        MetricsStore store;
        const auto value = [](int r, int s) { return 10.0 + r + double((s * 37 + r * 11) % 101); };
        for (int s = 1; s <= steps; ++s)
            for (int r = 0; r < ranks; ++r)
                store.append(r, metric::StepTimeMs, s, s * 1000, value(r, s));
        const StepHeatmap h = StepHeatmap::compute(store, metric::StepTimeMs, columns);
        QCOMPARE(h.ranks.size(), ranks);
        QCOMPARE(h.firstStep, qint64(1));
        QCOMPARE(h.lastStep, qint64(steps));
        QCOMPARE(h.columns, std::min(columns, steps));
        float lo = INFINITY, hi = -INFINITY;
        for (int r = 0; r < ranks; ++r) {
            for (int c = 0; c < h.columns; ++c) {
                // Step s of n in c columns belongs to column (s - first)·c / n.
                double want = -1;
                for (int s = 1; s <= steps; ++s) {
                    const int col = int(qint64(s - 1) * h.columns / steps);
                    if (col == c)
                        want = std::max(want, value(r, s));
                }
                QVERIFY2(!std::isnan(h.at(r, c)),
                         qPrintable(QStringLiteral("rank %1 column %2 empty").arg(r).arg(c)));
                QCOMPARE(h.at(r, c), float(want));
                lo = std::min(lo, h.at(r, c));
                hi = std::max(hi, h.at(r, c));
            }
        }
        QCOMPARE(h.low, lo);
        QCOMPARE(h.high, hi);
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
        QCOMPARE(h.at(0, 10), 1.0f);
        QCOMPARE(h.at(0, 30), 2.0f); // both segments hold step 30: the larger
        QCOMPARE(h.at(0, 55), 2.0f);
        QCOMPARE(h.at(1, 0), 3.0f);
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
    }
};

QTEST_GUILESS_MAIN(TestStepHeatmap)
#include "tst_stepheatmap.moc"
