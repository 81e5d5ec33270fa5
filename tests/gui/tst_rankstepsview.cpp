// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview of a run without step times (issue 41): the step each rank reached over time.
// A rank that lags is the one named, in the text and the accessible description, and only when
// it is behind more than the ranks' spread and its reporting stride; the tracks keep every
// rank's last step at one column a pixel, and read in small budgets or batch by batch they
// equal one read of everything. Through RunView: an ended program run shows the steps from its
// record, a worker's run with step_ms keeps the heatmap, and a run with neither one message.
#include "config/profile.h"
#include "overviewpage.h"
#include "rankstepsview.h"
#include "record/runrecord.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "statestyle.h"
#include "stepheatmapview.h"
#include "store/metricsstore.h"

#include <QComboBox>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace rankdeck;

namespace {

constexpr qint64 Start = 1'700'000'000'000'000; // µs: a wall clock, not 0
constexpr qint64 Tick = 100'000;                // a report every 0.1 s

// `ranks` ranks printing their loss every `every` steps for `ticks` ticks, one step a tick;
// `lagging` makes `lag` fewer steps over the run (-1: none).
void fill(MetricsStore &store, int ranks, int lagging, qint64 lag, qint64 ticks, qint64 every = 1,
          qint64 fromTick = 0)
{
    for (qint64 k = fromTick; k < ticks; ++k) {
        for (int r = 0; r < ranks; ++r) {
            const qint64 step = r == lagging ? k * (ticks - lag) / ticks : k;
            const qint64 previous = r == lagging ? (k - 1) * (ticks - lag) / ticks : k - 1;
            // A report when the rank enters a step that is a multiple of `every`, never twice.
            if (step % every == 0 && (k == 0 || step != previous))
                store.append(r, metric::Loss, step, Start + k * Tick + r * 37, 1.0 / (step + 1));
        }
    }
}

QList<QList<qint64>> reached(const RankStepTracks &t)
{
    QList<QList<qint64>> rows;
    for (int r = 0; r < t.rowCount(); ++r) {
        QList<qint64> row;
        for (int c = 0; c < t.columns(); ++c)
            row << t.reachedAt(r, c);
        rows << row;
    }
    return rows;
}

// A finished run's record as a user's program leaves it: its metrics.csv and state.json.
QString programRecord(const QString &runs, const QString &name, const QString &metric, int ranks,
                      int lagging)
{
    TrainingConfig config;
    config.name = name;
    config.program = {QStringLiteral("python3"), QStringLiteral("train.py")};
    RunRecord record;
    QString error;
    if (!record.create(runs, RunRecord::newRunId(name), name, Profile::builtinLocal(ranks), config,
                       &error) ||
        !record.writeState({{QStringLiteral("state"), QStringLiteral("finished")}}, &error))
        qWarning("%s", qPrintable(error));
    MetricsStore store;
    if (!store.open(record.directory(), &error))
        qWarning("%s", qPrintable(error));
    for (qint64 k = 1; k <= 200 && !metric.isEmpty(); ++k) {
        for (int r = 0; r < ranks; ++r) {
            const qint64 step = r == lagging ? k * 3 / 4 : k;
            if (r == lagging && step == (k - 1) * 3 / 4)
                continue;
            store.append(r, metric, step, Start + k * Tick, metric == metric::Loss ? 1.0 : 20.0);
        }
    }
    store.close();
    return record.directory();
}

} // namespace

class TestRankStepsView : public QObject
{
    Q_OBJECT

private slots:
    void lagRankNamed_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("lagging");
        QTest::addColumn<qint64>("lag");
        QTest::addColumn<qint64>("every");
        QTest::addColumn<QString>("says");
        QTest::newRow("2 ranks") << 2 << 1 << qint64(40) << qint64(1)
                                 << QStringLiteral("rank 1 is 40 steps behind rank 0");
        QTest::newRow("4 ranks") << 4 << 3 << qint64(40) << qint64(1)
                                 << QStringLiteral("rank 3 is 40 steps behind the median");
        QTest::newRow("64 ranks, printed every 5 steps")
            << 64 << 17 << qint64(60) << qint64(5)
            << QStringLiteral("rank 17 is 60 steps behind the median");
        QTest::newRow("512 ranks") << 512 << 301 << qint64(25) << qint64(1)
                                   << QStringLiteral("rank 301 is 25 steps behind the median");
    }
    void lagRankNamed()
    {
        QFETCH(int, ranks);
        QFETCH(int, lagging);
        QFETCH(qint64, lag);
        QFETCH(qint64, every);
        QFETCH(QString, says);
        MetricsStore store;
        fill(store, ranks, lagging, lag, 400, every);
        // Epochs count something else: a far "step" on them moves nothing.
        store.append(0, QStringLiteral("val_loss"), 1'000'000, Start + 10 * Tick, 1.0,
                     XBasis::Epoch);
        RankStepsView view;
        view.resize(800, 240);
        view.show();
        QVERIFY(!view.refresh(store));
        const RankStepTracks &t = view.tracks();
        QCOMPARE(t.rowCount(), ranks);
        QCOMPARE(t.slowestRank(), lagging);
        QVERIFY(t.slowestBehind());
        QCOMPARE(view.namedRank(), lagging);
        QCOMPARE(t.highestStep(), 399 / every * every);
        QVERIFY2(view.summaryText().startsWith(says), qPrintable(view.summaryText()));
        QCOMPARE(view.objectName(), QStringLiteral("rankStepsView"));
        QCOMPARE(view.accessibleName(), QStringLiteral("Step reached by each rank over time"));
        const QString furthest = QStringLiteral("Step reached by each rank over time; rank %1 is "
                                                "furthest behind")
                                     .arg(lagging);
        QVERIFY2(view.accessibleDescription().startsWith(furthest),
                 qPrintable(view.accessibleDescription()));
        // The tooltip at the end names it too.
        const QRect area = view.plotArea();
        const QString tip = view.textAt(QPoint(area.right() - 1, area.center().y()));
        QVERIFY2(tip.contains(QStringLiteral("rank %1 (slowest").arg(lagging)), qPrintable(tip));
    }

    // Ranks that print every 10 steps are up to 9 steps apart at any moment: none is behind.
    void evenRanksNotNamed()
    {
        MetricsStore store;
        for (qint64 k = 0; k < 300; ++k) {
            for (int r = 0; r < 8; ++r) {
                const qint64 step = k + r; // each rank a little ahead of the one before
                if (step % 10 == 0)
                    store.append(r, metric::Loss, step, Start + k * Tick, 1.0);
            }
        }
        RankStepsView view;
        view.resize(600, 200);
        view.refresh(store);
        QVERIFY(!view.tracks().slowestBehind());
        QCOMPARE(view.namedRank(), -1);
        QVERIFY2(view.summaryText().startsWith(QStringLiteral("All 8 ranks at steps")),
                 qPrintable(view.summaryText()));
    }

    void downsamplingKeepsLastSteps_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<qint64>("ticks");
        QTest::addColumn<qint64>("tickUs");
        QTest::newRow("8 ranks over 20 s") << 8 << qint64(200) << Tick;
        QTest::newRow("512 ranks over 3 h") << 512 << qint64(1200) << qint64(9'000'000);
    }
    // Far more points than pixel columns: each rank's line still ends at its last step, and
    // the tracks read in small budgets, or batch by batch as a live run appends them, equal
    // one read of everything.
    void downsamplingKeepsLastSteps()
    {
        QFETCH(int, ranks);
        QFETCH(qint64, ticks);
        QFETCH(qint64, tickUs);
        MetricsStore store;
        QList<qint64> last(ranks, -1);
        RankStepTracks live;
        for (qint64 k = 0; k < ticks; ++k) {
            for (int r = 0; r < ranks; ++r) {
                // Every rank at its own pace, and each stops at another step.
                if (k > ticks - 1 - (r * 7) % 50)
                    continue;
                const qint64 step = k * (3 + r % 5);
                store.append(r, metric::Loss, step, Start + k * tickUs + (r * 131) % 977, 0.5);
                last[r] = step;
            }
            if (k % (ticks / 7) == 0)
                live.update(store, 256);
        }
        live.update(store, 256);
        RankStepTracks whole;
        whole.update(store, 256);
        QVERIFY(!whole.hasMore());
        QVERIFY(whole.columns() <= whole.capacity());
        QCOMPARE(whole.capacity(), 256);
        QCOMPARE(whole.rowCount(), ranks);
        for (int row = 0; row < ranks; ++row)
            QCOMPARE(whole.reachedAt(row, whole.columns() - 1), last[whole.rankAt(row)]);
        RankStepTracks budgeted;
        int updates = 0;
        do {
            budgeted.update(store, 256, 1000);
            ++updates;
        } while (budgeted.hasMore());
        QVERIFY(updates > 1);
        QCOMPARE(whole.bucketUs(), budgeted.bucketUs());
        QCOMPARE(reached(budgeted), reached(whole));
        QCOMPARE(whole.bucketUs(), live.bucketUs());
        QCOMPARE(reached(live), reached(whole));
        // Nothing new: nothing changed, nothing read; a step more on every rank: read alone.
        QVERIFY(!whole.update(store, 256));
        QCOMPARE(whole.lastReadPoints(), 0);
        for (int r = 0; r < ranks; ++r)
            store.append(r, metric::Loss, last[r] + 1, Start + ticks * tickUs, 0.5);
        QVERIFY(whole.update(store, 256));
        QCOMPARE(whole.lastReadPoints(), qint64(ranks));
        for (int row = 0; row < ranks; ++row)
            QCOMPARE(whole.reachedAt(row, whole.columns() - 1), last[whole.rankAt(row)] + 1);
    }

    // A rank restarted from a checkpoint goes back to its step there, also when the restart is
    // among the points read in one go.
    void restartFollowed()
    {
        MetricsStore store;
        for (qint64 k = 0; k <= 100; ++k) {
            store.append(0, metric::Loss, k, Start + k * Tick, 1.0);
            store.append(1, metric::Loss, k, Start + k * Tick, 1.0);
        }
        RankStepTracks t;
        t.update(store, 128);
        for (qint64 k = 101; k <= 200; ++k) {
            store.append(1, metric::Loss, k, Start + k * Tick, 1.0);
            // On to step 130, then back to the checkpoint of step 50: both in one read.
            if (k <= 130 || k > 150)
                store.append(0, metric::Loss, k <= 130 ? k : k - 100, Start + k * Tick, 1.0);
        }
        QCOMPARE(store.segmentCount(0, metric::Loss), 2);
        t.update(store, 128);
        QCOMPARE(t.reachedAt(t.rowOf(0), t.columns() - 1), 100);
        QCOMPARE(t.reachedAt(t.rowOf(1), t.columns() - 1), 200);
        QCOMPARE(t.slowestRank(), 0);
        RankStepTracks whole;
        whole.update(store, 128);
        QCOMPARE(reached(whole), reached(t));
    }

    // The slowest rank's line in the warning colour of the palette in use, before and after a
    // light/dark switch.
    void slowestDrawnInWarningColour()
    {
        MetricsStore store;
        fill(store, 64, 5, 80, 300);
        RankStepsView view;
        view.resize(700, 260);
        view.show();
        view.refresh(store);
        for (bool dark : {false, true}) {
            QPalette palette;
            palette.setColor(QPalette::Base, dark ? QColor(0x20, 0x20, 0x20) : Qt::white);
            palette.setColor(QPalette::Text, dark ? Qt::white : Qt::black);
            view.setPalette(palette);
            const QColor warning = toneColor(StateTone::Warning, view.palette());
            const QImage image = view.grab().toImage();
            const QRect area = view.plotArea();
            int hits = 0;
            for (int y = area.top(); y <= area.bottom(); ++y) {
                for (int x = area.left(); x <= area.right(); x += 3)
                    hits += QColor(image.pixel(x, y)) == warning;
            }
            QVERIFY2(hits > 50, qPrintable(QStringLiteral("%1 pixels").arg(hits)));
        }
    }

    void runViewChoosesTheView_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<int>("shown");
        QTest::newRow("a program's loss: the steps view")
            << metric::Loss << int(OverviewPage::StepsShown::RankSteps);
        QTest::newRow("a worker's step_ms: the heatmap")
            << metric::StepTimeMs << int(OverviewPage::StepsShown::Heatmap);
        QTest::newRow("nothing: one message")
            << QString() << int(OverviewPage::StepsShown::Nothing);
    }
    // An ended run, reopened from its record as the run list does.
    void runViewChoosesTheView()
    {
        QFETCH(QString, metric);
        QFETCH(int, shown);
        QTemporaryDir runs;
        QVERIFY(runs.isValid());
        const QString directory =
            metric.isEmpty() ? programRecord(runs.path(), QStringLiteral("quiet"), metric, 4, -1)
                             : programRecord(runs.path(), QStringLiteral("lagging"), metric, 4, 2);
        QString error;
        std::unique_ptr<RunController> run(RunController::reopen(directory, nullptr, &error));
        QVERIFY2(run, qPrintable(error));
        RunView view;
        view.resize(1000, 800);
        view.show();
        view.setRun(run.get());
        OverviewPage *overview = view.overviewPage();
        QTRY_COMPARE(int(overview->stepsShown()), shown);
        const auto steps = OverviewPage::StepsShown(shown);
        QCOMPARE(overview->rankStepsView()->isVisibleTo(overview),
                 steps == OverviewPage::StepsShown::RankSteps);
        QCOMPARE(overview->heatmapView()->isVisibleTo(overview),
                 steps != OverviewPage::StepsShown::RankSteps);
        QCOMPARE(overview->heatmapMetricCombo()->isVisibleTo(overview),
                 steps == OverviewPage::StepsShown::Heatmap);
        if (steps == OverviewPage::StepsShown::RankSteps) {
            QCOMPARE(overview->rankStepsView()->namedRank(), 2);
            QVERIFY2(overview->stragglerText().startsWith(
                         QStringLiteral("rank 2 is 50 steps behind the median")),
                     qPrintable(overview->stragglerText()));
        } else if (steps == OverviewPage::StepsShown::Heatmap) {
            QVERIFY(!overview->heatmapView()->heatmap().isEmpty());
            QVERIFY(overview->rankStepsView()->isEmpty());
        }
        view.setRun(nullptr);
        QCOMPARE(int(overview->stepsShown()), int(OverviewPage::StepsShown::Nothing));
    }
};

QTEST_MAIN(TestRankStepsView)
#include "tst_rankstepsview.moc"
