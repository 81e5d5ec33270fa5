// SPDX-License-Identifier: GPL-3.0-or-later
//
// The straggler in words, from step_ms and comm_wait_ms as the worker reports them: in
// synchronous training the slow rank's step holds more work and the others wait for it, so step
// times alone look alike. Medians over the last 100 steps: one slow step is no straggler, a
// restart's earlier steps do not count, and a program without comm_wait_ms is judged by its
// step time.
#include "diagnosis/stragglerreport.h"
#include "store/metricsstore.h"

#include <QTest>

#include <cmath>

using namespace rankdeck;

namespace {

// Synchronous steps: every rank's step lasts as long as the slowest rank's work (plus a
// little noise); the difference is each rank's communication wait.
void fill(MetricsStore &store, const QList<double> &workMs, int steps, bool withWait = true,
          int spikeRank = -1)
{
    for (int s = 0; s < steps; ++s) {
        QList<double> work = workMs;
        if (spikeRank >= 0 && s == steps - 3)
            work[spikeRank] *= 20; // one slow step (a GC pause, a checkpoint)
        double slowest = 0;
        for (double w : work)
            slowest = std::max(slowest, w);
        for (int r = 0; r < work.size(); ++r) {
            const double noise = 0.1 * ((s * 7 + r * 3) % 5);
            const double wait = slowest - work[r] + 0.2;
            const qint64 t = 1'700'000'000'000'000 + qint64(s) * 100'000;
            store.append(r, metric::StepTimeMs, s, t, withWait ? work[r] + wait + noise : work[r]);
            if (withWait)
                store.append(r, metric::CommWaitMs, s, t, wait);
        }
    }
}

} // namespace

class TestStragglerReport : public QObject
{
    Q_OBJECT

private slots:
    void namesTheSlowRank_data()
    {
        QTest::addColumn<QList<double>>("work");
        QTest::addColumn<int>("slow");
        QTest::addColumn<QString>("ratio");
        QTest::newRow("rank 3 of 4") << QList<double>{20, 21, 20, 36} << 3 << QStringLiteral("1.8");
        QTest::newRow("rank 0 of 2") << QList<double>{60, 20} << 0 << QStringLiteral("3.0");
        QTest::newRow("rank 5 of 8")
            << QList<double>{10, 10, 11, 10, 10, 25, 10, 11} << 5 << QStringLiteral("2.5");
    }
    void namesTheSlowRank()
    {
        QFETCH(QList<double>, work);
        QFETCH(int, slow);
        QFETCH(QString, ratio);
        MetricsStore store;
        fill(store, work, 300);
        const StragglerReport r = StragglerReport::analyze(store, {{slow, QStringLiteral("gpu2")}});
        QVERIFY(r.found());
        QCOMPARE(r.rank, slow);
        QCOMPARE(r.window, StragglerReport::kWindow);
        QVERIFY(r.commWaitKnown);
        QList<int> others;
        for (int k = 0; k < work.size(); ++k)
            if (k != slow)
                others << k;
        QCOMPARE(r.waitingRanks, others);
        const QString text = r.text();
        QVERIFY2(text.startsWith(QStringLiteral("rank %1 on gpu2: median step %2× the others' over "
                                                "the last 100 steps")
                                     .arg(slow)
                                     .arg(ratio)),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("wait")) && text.contains(QStringLiteral("for it")),
                 qPrintable(text));
    }

    void evenRanksHaveNoStraggler()
    {
        MetricsStore store;
        fill(store, {20, 21, 20, 22}, 150);
        const StragglerReport r = StragglerReport::analyze(store);
        QVERIFY(!r.found());
        QCOMPARE(r.ranksCompared, 4);
        QVERIFY2(r.text().startsWith(QStringLiteral("No straggler")), qPrintable(r.text()));
    }

    void oneSlowStepIsNoStraggler()
    {
        MetricsStore store;
        fill(store, {20, 20, 20, 20}, 150, true, 2);
        QVERIFY(!StragglerReport::analyze(store).found());
    }

    // A rank that was slow before a restart and is not any more: only the resumed steps count.
    void onlyTheLastSegmentCounts()
    {
        MetricsStore store;
        fill(store, {20, 20, 50, 20}, 200);
        QVERIFY(StragglerReport::analyze(store).found());
        MetricsStore resumed;
        fill(resumed, {20, 20, 50, 20}, 200);
        fill(resumed, {20, 20, 20, 20}, 150); // steps start again at 0: a new segment
        QCOMPARE(resumed.segmentCount(2, metric::StepTimeMs), 2);
        QVERIFY(!StragglerReport::analyze(resumed).found());
    }

    // A user's program that logs step_ms only: its step time is the work.
    void withoutCommWaitStepTimeIsCompared()
    {
        MetricsStore store;
        fill(store, {30, 30, 30, 30, 70, 30}, 120, false);
        const StragglerReport r = StragglerReport::analyze(store);
        QVERIFY(r.found());
        QCOMPARE(r.rank, 4);
        QVERIFY(!r.commWaitKnown);
        QVERIFY(r.waitingRanks.isEmpty());
        QVERIFY2(r.text().startsWith(QStringLiteral("rank 4: median step 2.3×")),
                 qPrintable(r.text()));
        QVERIFY(!r.text().contains(QStringLiteral("for it")));
    }

    void fewStepsUseWhatThereIs()
    {
        MetricsStore store;
        fill(store, {10, 40}, 12);
        const StragglerReport r = StragglerReport::analyze(store);
        QCOMPARE(r.window, 12);
        QVERIFY2(r.text().contains(QStringLiteral("over the last 12 steps")), qPrintable(r.text()));
    }

    void nothingToCompare()
    {
        MetricsStore empty;
        QVERIFY(StragglerReport::analyze(empty).text().isEmpty());
        MetricsStore one;
        fill(one, {20}, 50);
        QVERIFY(StragglerReport::analyze(one).text().isEmpty());
        MetricsStore nan; // NaN step times are skipped, never a straggler
        for (int s = 0; s < 50; ++s) {
            nan.append(0, metric::StepTimeMs, s, s, std::nan(""));
            nan.append(1, metric::StepTimeMs, s, s, 10);
        }
        QVERIFY(StragglerReport::analyze(nan).text().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestStragglerReport)
#include "tst_stragglerreport.moc"
