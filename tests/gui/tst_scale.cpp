// SPDX-License-Identifier: GPL-3.0-or-later
//
// Issue 8's "the GUI must stay usable at 512 ranks": a RunView bound to a RunController that
// runs 512 synthetic ranks (rankdeck-loadgen, the wire format through the real local
// transport). The run page must not grow heavy widgets per rank: the rank table, the log rank
// tabs/picker and the loss legend hold 512 entries each as model rows or items, the widget
// count stays bounded, and every rank's lines reach the run record.
#include "loadgenlog.h"
#include "logspage.h"
#include "logview.h"
#include "losspage.h"
#include "lossplot.h"
#include "models/logmodel.h"
#include "models/ranktablemodel.h"
#include "overviewpage.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "store/logstore.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QFile>
#include <QListView>
#include <QListWidget>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTabBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <vector>

using namespace rankdeck;

namespace {

QString loadgenPath()
{
    return qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-loadgen");
}

} // namespace

class TestScale : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void runPageAt512Ranks();
    void launchProgressOf64Nodes();
};

void TestScale::initTestCase()
{
    QVERIFY2(
        QFileInfo(loadgenPath()).isExecutable(),
        qPrintable(
            QStringLiteral("no rankdeck-loadgen at %1 (RANKDECK_BIN_DIR)").arg(loadgenPath())));
}

void TestScale::runPageAt512Ranks()
{
    constexpr int Ranks = 512;
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    // Low rates and a short life: the point is the number of ranks, not the load (2 cores).
    TrainingConfig config;
    config.name = QStringLiteral("scale");
    config.workerArguments = {QStringLiteral("--lines-per-sec"), QStringLiteral("10"),
                              QStringLiteral("--steps-per-sec"), QStringLiteral("4"),
                              QStringLiteral("--duration"),      QStringLiteral("2")};
    RunController::Options options;
    options.workerPath = loadgenPath();
    options.runsDirectory = runs.path();
    options.hangTimeoutSec = 3600;
    RunController run(Profile::builtinLocal(Ranks), config, options);

    RunView view;
    view.resize(1200, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // Every page once, so that whatever a page builds lazily exists before the count.
    for (int page = 0; page < view.count(); ++page) {
        view.setCurrentIndex(page);
        QCoreApplication::processEvents();
    }
    const qsizetype widgetsBefore = view.findChildren<QWidget *>().size();

    QAbstractItemModelTester rankTester(view.rankModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester logTester(view.logsPage()->logModel(),
                                       QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setRun(&run);
    view.setCurrentIndex(RunView::Logs);

    // Event-loop lateness, reported for the record (speed is measured in bench/, not asserted).
    std::vector<double> stallsMs;
    QElapsedTimer tickClock;
    qint64 lastTick = -1;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    connect(&tick, &QTimer::timeout, this, [&] {
        const qint64 now = tickClock.nsecsElapsed();
        if (lastTick >= 0)
            stallsMs.push_back(qMax(0.0, double(now - lastTick) / 1e6 - tick.interval()));
        lastTick = now;
    });
    tickClock.start();
    tick.start(10);

    QSignalSpy finished(&run, &RunController::finished);
    QString error;
    QVERIFY2(run.start(&error), qPrintable(error));
    // Visit the pages while the ranks come and go, as a user would.
    QElapsedTimer sinceStart;
    sinceStart.start();
    int page = 0;
    while (finished.isEmpty() && sinceStart.elapsed() < 90000) {
        view.setCurrentIndex(page++ % 3);
        finished.wait(500);
    }
    tick.stop();
    QVERIFY2(!finished.isEmpty(), "the 512-rank run did not finish within 90 s");
    if (!stallsMs.empty()) {
        std::sort(stallsMs.begin(), stallsMs.end());
        qInfo("event-loop stall over %.1f s: median %.1f ms, p99 %.1f ms, max %.1f ms",
              double(sinceStart.elapsed()) / 1000.0, stallsMs[stallsMs.size() / 2],
              stallsMs[std::min(stallsMs.size() - 1, stallsMs.size() * 99 / 100)], stallsMs.back());
    }
    QVERIFY2(run.state() == RunState::Finished,
             qPrintable(
                 QStringLiteral("run ended as %1: %2 %3")
                     .arg(runStateLabel(run.state()), run.rootCauseSummary(), run.errorMessage())));
    QCOMPARE(run.worldSize(), Ranks);

    // Overview: one model row per rank, all finished.
    RankTableModel *ranks = view.rankModel();
    ranks->flush();
    QCOMPARE(ranks->rowCount(), Ranks);
    QCOMPARE(qobject_cast<QSortFilterProxyModel *>(view.overviewPage()->rankTable()->model())
                 ->sourceModel(),
             ranks);
    for (int row = 0; row < Ranks; ++row)
        QCOMPARE(RankState(ranks->index(row, 0).data(RankTableModel::RankStateRole).toInt()),
                 RankState::Finished);

    // Above the table, the ranks as ranges (issue 31): all alike, one group.
    QCOMPARE(view.overviewPage()->rankSummary(),
             QStringLiteral("ranks 0–%1 finished").arg(Ranks - 1));

    // Ranks that all did the same: none differs, and the table of those that do stays hidden.
    QCOMPARE(view.overviewPage()->rankDifferencesTable()->model()->rowCount(), 0);
    QVERIFY(view.overviewPage()->rankDifferencesTable()->isHidden());

    // Logs: an entry per rank in the picker, one list view for all; tabs only for the ranks the
    // user opens, the last few of them, not 512.
    LogsPage *logs = view.logsPage();
    logs->poll();
    QCOMPARE(logs->rankCount(), Ranks);
    auto *picker = logs->findChild<QComboBox *>(QStringLiteral("logRankPicker"));
    QVERIFY(picker);
    QVERIFY(!picker->isHidden());
    QCOMPARE(picker->count(), Ranks + 1);
    for (int i = 1; i <= Ranks; ++i)
        QCOMPARE(picker->itemData(i).toInt(), i - 1);
    // The picker replaces the tabs: none but "All ranks" until the user opens a rank.
    QCOMPARE(logs->tabBar()->count(), 1);
    QCOMPARE(logs->rankTabCount(), 0);
    QCOMPARE(logs->findChildren<LogView *>().size(), 1);
    QCOMPARE(logs->findChildren<QListView *>(QStringLiteral("logListView")).size(), 1);
    QVERIFY(logs->showRank(Ranks - 1));
    QCOMPARE(logs->shownRank(), Ranks - 1);
    QCOMPARE(picker->currentData().toInt(), Ranks - 1);
    QCOMPARE(logs->tabBar()->tabData(logs->tabBar()->currentIndex()).toInt(), Ranks - 1);
    // Opening many ranks one after the other keeps the tab bar bounded.
    for (int rank = 100; rank < 400; rank += 10) {
        picker->setCurrentIndex(picker->findData(rank));
        QCOMPARE(logs->shownRank(), rank);
        QCOMPARE(logs->logModel()->rank(), rank);
    }
    QVERIFY2(logs->tabBar()->count() <= 10, qPrintable(QString::number(logs->tabBar()->count())));
    QVERIFY(logs->showRank(Ranks - 1));
    QVERIFY(logs->logModel()->rowCount() > 0);
    for (int row = 0; row < logs->logModel()->rowCount(); ++row) {
        const QModelIndex index = logs->logModel()->index(row, 0);
        if (!index.data(LogModel::IsMarkerRole).toBool())
            QCOMPARE(index.data(LogModel::RankRole).toInt(), Ranks - 1);
    }
    picker->setCurrentIndex(picker->findData(7));
    QCOMPARE(logs->shownRank(), 7);
    QVERIFY(!logs->showRank(Ranks));

    // Loss: a legend entry per rank (list items, not check boxes), a curve per rank.
    view.setCurrentIndex(RunView::Loss);
    view.lossPage()->poll();
    view.lossPage()->plot()->refreshNow();
    QCOMPARE(view.lossPage()->plot()->plottedRanks().size(), Ranks);
    auto *legend = view.lossPage()->findChild<QListWidget *>(QStringLiteral("lossLegend"));
    QVERIFY(legend);
    QVERIFY2(legend->count() >= Ranks, qPrintable(QString::number(legend->count())));
    QVERIFY(legend->count() <= Ranks + 1); // the mean may have its own entry

    // No heavy widget per rank anywhere on the run page.
    for (int p = 0; p < view.count(); ++p) {
        view.setCurrentIndex(p);
        QCoreApplication::processEvents();
    }
    const qsizetype widgetsAfter = view.findChildren<QWidget *>().size();
    qInfo("run page widgets: %lld before the run, %lld with %d ranks", qlonglong(widgetsBefore),
          qlonglong(widgetsAfter), Ranks);
    QVERIFY2(
        widgetsAfter - widgetsBefore < 64,
        qPrintable(
            QStringLiteral("%1 widgets before, %2 after").arg(widgetsBefore).arg(widgetsAfter)));

    // The run record holds every line of every rank.
    qint64 total = 0;
    for (int r = 0; r < Ranks; ++r) {
        qint64 lines = 0;
        QString problem;
        QVERIFY2(rankLogComplete(run.logStore()->logFilePath(r), r, &lines, &problem),
                 qPrintable(problem));
        QVERIFY2(lines > 0, qPrintable(QStringLiteral("rank %1 logged nothing").arg(r)));
        total += lines;
    }
    qInfo("%lld lines from %d ranks in the record", qlonglong(total), Ranks);
    view.setRun(nullptr);
}

void TestScale::launchProgressOf64Nodes()
{
    // The controller's per-node launch progress reaches the Overview as table rows whose
    // progress bars are painted, not one widget per node.
    constexpr int Nodes = 64;
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    RunController::Options options;
    options.workerPath = loadgenPath();
    options.runsDirectory = runs.path();
    RunController run(Profile::builtinLocal(1), TrainingConfig(), options);
    RunView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setRun(&run);
    QCoreApplication::processEvents();
    const qsizetype widgetsBefore = view.findChildren<QWidget *>().size();
    for (int stage = 0; stage < 3; ++stage) {
        for (int node = Nodes - 1; node >= 0; --node) {
            const int percent = stage == 1 ? (node * 7 + 10) % 101 : -1;
            emit run.nodeProgress(node, QStringLiteral("node-%1").arg(node),
                                  stage == 0   ? QStringLiteral("connecting")
                                  : stage == 1 ? QStringLiteral("uploading")
                                               : QStringLiteral("started"),
                                  percent);
        }
        if (stage == 1) {
            QTableWidget *table = view.overviewPage()->nodeProgressTable();
            QCOMPARE(table->rowCount(), Nodes);
            for (int node = 0; node < Nodes; ++node) {
                QCOMPARE(table->item(node, 0)->text(), QStringLiteral("node-%1").arg(node));
                QCOMPARE(table->item(node, 1)->text(), QStringLiteral("uploading"));
                QCOMPARE(table->item(node, 2)->data(Qt::UserRole + 1).toInt(),
                         (node * 7 + 10) % 101);
            }
        }
        QCoreApplication::processEvents();
        view.overviewPage()->nodeProgressTable()->viewport()->repaint();
    }
    QTableWidget *table = view.overviewPage()->nodeProgressTable();
    QVERIFY(!table->isHidden());
    QCOMPARE(table->rowCount(), Nodes);
    QCOMPARE(table->item(Nodes - 1, 1)->text(), QStringLiteral("started"));
    QCOMPARE(table->item(Nodes - 1, 2)->data(Qt::UserRole + 1).toInt(), -1);
    QCOMPARE(view.findChildren<QWidget *>().size(), widgetsBefore);
    // Another run shows its own nodes only.
    view.setRun(nullptr);
    QCOMPARE(table->rowCount(), 0);
    QVERIFY(table->isHidden());
}

QTEST_MAIN(TestScale)
#include "tst_scale.moc"
