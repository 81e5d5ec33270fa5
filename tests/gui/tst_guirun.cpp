// SPDX-License-Identifier: GPL-3.0-or-later
//
// The real app driving real runs: launch 2 ranks of rankdeck-worker on the local profile with
// clicks, watch the rank table, the loss plot and the log tabs fill, see an injected crash come
// out as the root-cause banner and a Failures entry naming the faulting function, and stop a
// running run with the Stop button; a 4-rank run with one slowed rank names it on the Overview,
// whose heatmap shows the others waiting for it; a 4-rank run whose rank 1 skips a bucket
// all-reduce is named by the flight recorders (banner, Failures, In collective); two runs with
// different --lr selected together are overlaid on the Loss page (each run's mean and min–max
// band, or every rank) over a table that names --lr, and keep their colours when a third joins.
#include "comparedruncurves.h"
#include "failurespage.h"
#include "launchdialog.h"
#include "logspage.h"
#include "losspage.h"
#include "lossplot.h"
#include "mainwindow.h"
#include "models/logmodel.h"
#include "models/ranktablemodel.h"
#include "models/rundiffmodel.h"
#include "models/runlistmodel.h"
#include "overviewpage.h"
#include "run/flightrecordercollector.h"
#include "run/runcontroller.h"
#include "run/runmanager.h"
#include "runview.h"
#include "sidepanel.h"
#include "stepheatmapview.h"
#include "store/metricsstore.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>
#include <map>

using namespace rankdeck;

namespace {
constexpr int RunTimeoutMs = 120000;

// What a Ctrl-click on each of these runs in the side panel's list selects, and only them.
void selectRuns(QTreeView *list, const QStringList &ids)
{
    QAbstractItemModel *model = list->model();
    list->selectionModel()->clearSelection();
    for (int row = 0; row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, 0);
        if (ids.contains(index.data(RunListModel::RunIdRole).toString()))
            list->selectionModel()->select(index,
                                           QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
}
} // namespace

class TestGuiRun : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void twoRankRunFinishes();
    void injectedFaultShowsRootCause();
    void stopEndsRunningRun();
    void collectiveDesyncNamedOnOverview();
    void yourProgramFromTheDialog();
    void stragglerNamedOnOverview();
    void twoRunsCompared();

private:
    // Opens the launch form from the side panel, fills it in and clicks Launch.
    RunController *launchWithClicks(int steps, const QString &extraArguments, int ranksPerNode = 2);
    bool allRanksIn(RankState state) const;

    QTemporaryDir m_home;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_runListTester;
};

void TestGuiRun::initTestCase()
{
    QVERIFY(m_home.isValid());
    qputenv("XDG_CONFIG_HOME", m_home.filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", m_home.filePath(QStringLiteral("data")).toUtf8());
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_guirun"));
    const QString worker =
        qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-worker");
    QVERIFY2(QFileInfo(worker).isExecutable(),
             qPrintable(QStringLiteral("no worker at %1 (RANKDECK_BIN_DIR)").arg(worker)));
    qputenv("RANKDECK_WORKER", worker.toUtf8());
    qputenv("RANKDECK_SUPERVISOR",
            (qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-supervisor"))
                .toUtf8());
}

void TestGuiRun::init()
{
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_runListTester = std::make_unique<QAbstractItemModelTester>(
        m_window->sidePanel()->runList()->model(),
        QAbstractItemModelTester::FailureReportingMode::QtTest);
}

void TestGuiRun::cleanup()
{
    if (m_window) {
        for (RunController *run : m_window->runManager()->activeRuns())
            run->kill();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->runManager()->activeRuns().isEmpty(), 20000);
    }
    m_runListTester.reset();
    m_window.reset();
}

RunController *TestGuiRun::launchWithClicks(int steps, const QString &extraArguments,
                                            int ranksPerNode)
{
    auto *launch =
        m_window->sidePanel()->findChild<QToolButton *>(QStringLiteral("sideLaunchButton"));
    if (!launch)
        return nullptr;
    m_window->sidePanel()->setCurrentProfile(QStringLiteral("local"));
    QTest::mouseClick(launch, Qt::LeftButton);
    auto *dialog = m_window->findChild<LaunchDialog *>();
    if (!dialog || !dialog->isVisible())
        return nullptr;
    auto *stepsSpin = dialog->findChild<QSpinBox *>(QStringLiteral("launchStepsSpin"));
    stepsSpin->selectAll();
    QTest::keyClicks(stepsSpin, QString::number(steps));
    auto *ranks = dialog->findChild<QSpinBox *>(QStringLiteral("launchRanksPerNodeSpin"));
    ranks->selectAll();
    QTest::keyClicks(ranks, QString::number(ranksPerNode));
    QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("launchExtraArgsEdit")),
                     extraArguments);
    if (dialog->profile().worldSize() != ranksPerNode || dialog->config().totalSteps() != steps)
        return nullptr;
    QTest::mouseClick(dialog->launchButton(), Qt::LeftButton);
    return m_window->runView()->run();
}

bool TestGuiRun::allRanksIn(RankState state) const
{
    // The rank table's process state (its shown word may add a verdict: "straggling").
    RankTableModel *model = m_window->runView()->rankModel();
    model->flush();
    if (model->rowCount() == 0)
        return false;
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->index(row, RankTableModel::StateColumn).data(RankTableModel::RankStateRole) !=
            int(state))
            return false;
    }
    return true;
}

void TestGuiRun::twoRankRunFinishes()
{
    const int steps = 6;
    RunController *run = launchWithClicks(steps, QStringLiteral("--task linear --log-every 1"));
    QVERIFY(run);
    QAbstractItemModelTester rankTableTester(
        m_window->runView()->rankModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto *order = qobject_cast<QSortFilterProxyModel *>(
        m_window->runView()->overviewPage()->rankTable()->model());
    QCOMPARE(order->sourceModel(), m_window->runView()->rankModel());
    QTRY_VERIFY_WITH_TIMEOUT(allRanksIn(RankState::Finished), RunTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(run->state(), RunState::Finished, 10000);
    QCOMPARE(m_window->runView()->rankModel()->rowCount(), 2);
    QVERIFY(!m_window->runView()->overviewPage()->isBannerVisible());
    // Local ranks are on this computer's clock, and the overview says what the ranks' stamps
    // were corrected by.
    QCOMPARE(m_window->runView()->overviewPage()->nodeClocksText(),
             QStringLiteral("Node clocks: node 0 (%1): +0.000 s (the launcher's clock)")
                 .arg(run->profile().nodes.value(0).host));

    // Loss: one point per step per rank, at full resolution.
    m_window->showPage(RunView::Loss);
    LossPlot *plot = m_window->runView()->lossPage()->plot();
    plot->refreshNow();
    QCOMPARE(plot->plottedRanks(), (QList<int>{0, 1}));
    for (int rank = 0; rank < 2; ++rank)
        QCOMPARE(plot->pointCount(rank), steps);

    // Logs: each rank's tab holds that rank's lines, one "Rank R: Epoch" line per step.
    m_window->showPage(RunView::Logs);
    LogsPage *logs = m_window->runView()->logsPage();
    logs->poll();
    QCOMPARE(logs->rankTabCount(), 2);
    for (int rank = 0; rank < 2; ++rank) {
        QVERIFY(logs->showRank(rank));
        logs->poll();
        LogModel *model = logs->logModel();
        int epochLines = 0;
        for (int row = 0; row < model->rowCount(); ++row) {
            const QModelIndex index = model->index(row, 0);
            if (index.data(LogModel::IsMarkerRole).toBool())
                continue;
            QCOMPARE(index.data(LogModel::RankRole).toInt(), rank);
            if (index.data().toString().startsWith(QStringLiteral("Rank %1: Epoch").arg(rank)))
                ++epochLines;
        }
        QCOMPARE(epochLines, steps);
    }
    // The merged view has both ranks' lines.
    QVERIFY(logs->showRank(LogsPage::AllRanksTab));
    logs->poll();
    QSet<int> ranksSeen;
    for (int row = 0; row < logs->logModel()->rowCount(); ++row)
        ranksSeen.insert(logs->logModel()->index(row, 0).data(LogModel::RankRole).toInt());
    QVERIFY(ranksSeen.contains(0) && ranksSeen.contains(1));

    // The finished run is in the side panel's run list.
    QTRY_VERIFY(m_window->sidePanel()->runList()->model()->rowCount() >= 1);
}

void TestGuiRun::injectedFaultShowsRootCause()
{
    RunController *run =
        launchWithClicks(50, QStringLiteral("--task linear --fault segv@3 --fault-rank 1"));
    QVERIFY(run);
    QTRY_VERIFY_WITH_TIMEOUT(isTerminal(run->state()), RunTimeoutMs);
    QCOMPARE(run->state(), RunState::Failed);

    OverviewPage *overview = m_window->runView()->overviewPage();
    QTRY_VERIFY(overview->isBannerVisible());
    QVERIFY2(overview->rootCauseText().contains(QStringLiteral("rank 1")),
             qPrintable(overview->rootCauseText()));
    QVERIFY2(overview->rootCauseText().contains(QStringLiteral("SIGSEGV")),
             qPrintable(overview->rootCauseText()));

    // Clicking the banner opens the Failures tab, root cause first, its stack naming the fault.
    QTest::mouseClick(overview->findChild<QLabel *>(QStringLiteral("rootCauseBanner")),
                      Qt::LeftButton);
    QCOMPARE(m_window->runView()->currentIndex(), int(RunView::Failures));
    FailuresPage *failures = m_window->runView()->failuresPage();
    QVERIFY(failures->entryCount() >= 1);
    QVERIFY(failures->entries().first().rootCause);
    QVERIFY2(failures->entries().first().title.contains(QStringLiteral("Rank 1")),
             qPrintable(failures->entries().first().title));
    failures->selectEntry(0);
    QVERIFY2(failures->detailsText().contains(QStringLiteral("crashWithSegv")),
             qPrintable(failures->detailsText()));

    // The rank table marks the root cause.
    RankTableModel *model = m_window->runView()->rankModel();
    model->flush();
    QVERIFY(model->index(1, 0).data(RankTableModel::RootCauseRole).toBool());
    QVERIFY(!model->index(0, 0).data(RankTableModel::RootCauseRole).toBool());
}

void TestGuiRun::stopEndsRunningRun()
{
    RunController *run =
        launchWithClicks(100000, QStringLiteral("--task linear --step-delay-ms 50"));
    QVERIFY(run);
    QTRY_VERIFY_WITH_TIMEOUT(run->rankStatus(0).step >= 2 && run->rankStatus(1).step >= 2,
                             RunTimeoutMs);
    QVERIFY(allRanksIn(RankState::Running));
    QPushButton *stop = m_window->runView()->overviewPage()->stopButton();
    QVERIFY(stop->isEnabled());
    QTest::mouseClick(stop, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(isTerminal(run->state()), 30000);
    QCOMPARE(run->state(), RunState::Stopped);
    for (const RankStatus &s : run->rankStatuses())
        QVERIFY2(isTerminal(s.state), qPrintable(rankStateName(s.state)));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->runManager()->activeRuns().isEmpty(), 10000);
    QTRY_VERIFY(!stop->isEnabled());
}

// Rank 1 of 4 skips its bucket all-reduce at step 3 (issue 26): every rank waits for ever, and
// their flight recorders name rank 1 (the odd one out) on the Overview's banner, as the first
// Failures entry and in the rank table's In collective column, which only a verdict shows.
void TestGuiRun::collectiveDesyncNamedOnOverview()
{
    RunController *run = launchWithClicks(
        8, QStringLiteral("--task linear --fault skip-allreduce@3 --fault-rank 1"), 4);
    QVERIFY(run);
    OverviewPage *overview = m_window->runView()->overviewPage();
    QVERIFY(overview->rankTable()->isColumnHidden(RankTableModel::InCollectiveColumn));
    QTRY_VERIFY_WITH_TIMEOUT(run->flightRecorder().shownVerdict(), RunTimeoutMs);
    const CollectiveVerdict *verdict = run->flightRecorder().shownVerdict();
    QCOMPARE(verdict->kind(), CollectiveVerdict::Kind::Desync);
    QCOMPARE(verdict->culprits(), QList<int>{1});
    QTRY_VERIFY(overview->isBannerVisible());
    QVERIFY2(overview->rootCauseText().startsWith(QStringLiteral("Why the ranks are stuck: ")) &&
                 overview->rootCauseText().contains(QStringLiteral("rank 1")),
             qPrintable(overview->rootCauseText()));
    QVERIFY(!overview->rankTable()->isColumnHidden(RankTableModel::InCollectiveColumn));
    RankTableModel *model = m_window->runView()->rankModel();
    model->flush();
    for (int rank = 0; rank < 4; ++rank) {
        const QString cell =
            model->index(rank, RankTableModel::InCollectiveColumn).data().toString();
        QCOMPARE(cell, verdict->inCollective(rank)->text());
        QVERIFY2(cell.startsWith(u'#'), qPrintable(cell));
    }
    FailuresPage *failures = m_window->runView()->failuresPage();
    QVERIFY(failures->entryCount() >= 1);
    QVERIFY(failures->entries().first().rootCause);
    QVERIFY2(failures->entries().first().title.startsWith(QStringLiteral("Collective — ")),
             qPrintable(failures->entries().first().title));
    failures->selectEntry(0);
    QVERIFY2(failures->detailsText().contains(QStringLiteral("fr_trace")),
             qPrintable(failures->detailsText()));
}

QTEST_MAIN(TestGuiRun)
#include "tst_guirun.moc"

// "Your program" in the launch form: the reference DDP script on 2 local ranks, its printed
// loss becoming each rank's curve with no code change.
void TestGuiRun::yourProgramFromTheDialog()
{
    const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (python.isEmpty())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON)");
    auto *launch =
        m_window->sidePanel()->findChild<QToolButton *>(QStringLiteral("sideLaunchButton"));
    QVERIFY(launch);
    m_window->sidePanel()->setCurrentProfile(QStringLiteral("local"));
    QTest::mouseClick(launch, Qt::LeftButton);
    auto *dialog = m_window->findChild<LaunchDialog *>();
    QVERIFY(dialog && dialog->isVisible());
    auto *task = dialog->findChild<QComboBox *>(QStringLiteral("launchTaskCombo"));
    task->setCurrentIndex(task->findData(QStringLiteral("program")));
    auto *command = dialog->findChild<QLineEdit *>(QStringLiteral("launchProgramEdit"));
    QVERIFY(command->isEnabled());
    // An empty command line cannot be launched, and says why.
    QVERIFY(!dialog->launchButton()->isEnabled());
    QVERIFY(dialog->problems().join(u' ').contains(QStringLiteral("program command")));
    QTest::keyClicks(command, python + QStringLiteral(" ") +
                                  qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                                  QStringLiteral("/tests/cli/programs/train_ddp.py"));
    auto *ranks = dialog->findChild<QSpinBox *>(QStringLiteral("launchRanksPerNodeSpin"));
    ranks->selectAll();
    QTest::keyClicks(ranks, QStringLiteral("2"));
    QVERIFY2(dialog->launchButton()->isEnabled(), qPrintable(dialog->problems().join(u'\n')));
    QCOMPARE(dialog->config().program.size(), 2);
    // Where its SummaryWriter would write (this script writes none: nothing to follow there).
    auto *tensorBoard =
        dialog->findChild<QLineEdit *>(QStringLiteral("launchProgramTensorBoardEdit"));
    QVERIFY(tensorBoard && tensorBoard->isEnabled());
    QTest::keyClicks(tensorBoard, QStringLiteral("tb-logs"));
    QCOMPARE(dialog->config().tensorBoardDir, QStringLiteral("tb-logs"));
    const QString typed = command->text(); // the dialog deletes itself when it closes
    QTest::mouseClick(dialog->launchButton(), Qt::LeftButton);
    RunController *run = m_window->runView()->run();
    QVERIFY(run);
    QTRY_VERIFY_WITH_TIMEOUT(isTerminal(run->state()), RunTimeoutMs);
    // torch may abort a rank at exit after its last line (see tst_programlaunch); the curves
    // are what this checks.
    for (int rank = 0; rank < 2; ++rank)
        QCOMPARE(run->metricsStore()->pointCount(rank, QStringLiteral("loss")), 5);
    // No total from a program: the bar says where it ended as printed, not "waiting for steps".
    auto *bar = m_window->runView()->overviewPage()->findChild<QProgressBar *>(
        QStringLiteral("runProgressBar"));
    QVERIFY(bar);
    QTRY_VERIFY2(bar->format().startsWith(QStringLiteral("ended at step ")) &&
                     bar->format().endsWith(QStringLiteral("(as printed; no total known)")),
                 qPrintable(bar->format()));

    // The next launch on this profile offers the same program again.
    QTRY_VERIFY(!m_window->findChild<LaunchDialog *>());
    QTest::mouseClick(launch, Qt::LeftButton);
    auto *again = m_window->findChild<LaunchDialog *>();
    QVERIFY(again);
    QCOMPARE(again->findChild<QLineEdit *>(QStringLiteral("launchProgramEdit"))->text(), typed);
    QCOMPARE(again->findChild<QLineEdit *>(QStringLiteral("launchProgramTensorBoardEdit"))->text(),
             QStringLiteral("tb-logs"));
    again->close();
}

// Rank 3 sleeps 30 ms in each step (the worker's straggler flag): the others wait for it.
void TestGuiRun::stragglerNamedOnOverview()
{
    const int steps = 80;
    const double delayMs = 30; // what rank 3 sleeps each step, on top of its work
    RunController *run = launchWithClicks(
        steps, QStringLiteral("--task linear --step-delay-ms %1 --fault-rank 3").arg(int(delayMs)),
        4);
    QVERIFY(run);
    QTRY_COMPARE_WITH_TIMEOUT(run->state(), RunState::Finished, RunTimeoutMs);
    OverviewPage *overview = m_window->runView()->overviewPage();
    // The slowest rank's step of the total, not 4 ranks' steps added up.
    QTRY_COMPARE(overview->progressText(), QStringLiteral("step %1 / %1").arg(steps));
    QTRY_VERIFY(!overview->stragglerText().isEmpty());
    const QString text = overview->stragglerText();
    QVERIFY2(QRegularExpression(
                 QStringLiteral("^Straggler: rank 3 on \\S+: median step [0-9.]+× the others' "
                                "over the last 80 steps"))
                 .match(text)
                 .hasMatch(),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Ranks 0–2 wait for it")), qPrintable(text));

    const auto rowMean = [](const StepHeatmap &h, int row) {
        double sum = 0;
        int n = 0;
        for (int c = 0; c < h.columns; ++c) {
            if (!std::isnan(h.at(row, c))) {
                sum += double(h.at(row, c));
                ++n;
            }
        }
        return n > 0 ? sum / n : 0.0;
    };
    // The heatmap: one row per rank over the run's steps. It opens on compute time (step less
    // communication wait), where the straggler's row is the bright one.
    // The margins below come from the delay the test injects, not from ratios: with other work
    // on the machine every rank's own work and the all-reduce itself take longer (once rank 3
    // waited 9 ms a step, and a 5× ratio failed at 4.4×), but rank 3 still computes the delay
    // more than the others, and they still wait about that much longer than it. Half the delay
    // leaves room for noise either way.
    QCOMPARE(overview->heatmapMetric(), metric::ComputeMs);
    const StepHeatmap &compute = overview->heatmapView()->heatmap();
    QCOMPARE(compute.metric, metric::ComputeMs);
    QCOMPARE(compute.ranks, (QList<int>{0, 1, 2, 3}));
    QVERIFY(compute.columns > 0);
    QCOMPARE(compute.lastStep, qint64(steps));
    for (int row = 0; row < 3; ++row)
        QVERIFY2(rowMean(compute, 3) - rowMean(compute, row) > delayMs / 2,
                 qPrintable(QStringLiteral("rank 3 computes %1 ms a step, rank %2 %3 ms")
                                .arg(rowMean(compute, 3))
                                .arg(row)
                                .arg(rowMean(compute, row))));
    QVERIFY(overview->heatmapView()->colorFor(float(rowMean(compute, 3))) !=
            overview->heatmapView()->colorFor(float(rowMean(compute, 0))));
    // Synchronous steps last alike on every rank; where the time goes differs: in the
    // communication wait view the others' rows are bright and rank 3's is dark.
    overview->heatmapMetricCombo()->setCurrentIndex(2);
    QCOMPARE(overview->heatmapMetric(), metric::CommWaitMs);
    const StepHeatmap &waits = overview->heatmapView()->heatmap();
    QCOMPARE(waits.ranks.size(), 4);
    for (int row = 0; row < 3; ++row)
        QVERIFY2(rowMean(waits, row) - rowMean(waits, 3) > delayMs / 2,
                 qPrintable(QStringLiteral("rank %1 waits %2 ms, rank 3 %3 ms")
                                .arg(row)
                                .arg(rowMean(waits, row))
                                .arg(rowMean(waits, 3))));
    QVERIFY(overview->heatmapView()->colorFor(waits.high) !=
            overview->heatmapView()->colorFor(waits.low));
}

void TestGuiRun::twoRunsCompared()
{
    const int steps = 30;
    QStringList ids;
    for (const QString &lr : {QStringLiteral("0.05"), QStringLiteral("0.005")}) {
        RunController *run =
            launchWithClicks(steps, QStringLiteral("--task linear --lr %1").arg(lr));
        QVERIFY(run);
        QTRY_COMPARE_WITH_TIMEOUT(run->state(), RunState::Finished, RunTimeoutMs);
        ids << run->runId();
    }
    // Ctrl-click: the two runs selected in the side panel's list.
    QTreeView *list = m_window->sidePanel()->runList();
    QAbstractItemModel *model = list->model();
    QTRY_VERIFY(model->rowCount() >= 2);
    selectRuns(list, ids);
    QCOMPARE(m_window->sidePanel()->selectedRunIds().size(), 2);
    LossPage *loss = m_window->runView()->lossPage();
    QTRY_VERIFY(loss->isComparing());
    QCOMPARE(m_window->runView()->currentIndex(), int(RunView::Loss));
    LossPlot *plot = loss->plot();
    plot->refreshNow();
    QVERIFY(plot->isComparing());
    // Each run's curve (its mean across its 2 ranks) holds a point per step.
    QCOMPARE(plot->plottedRanks(), (QList<int>{0, 1}));
    for (int run = 0; run < 2; ++run)
        QCOMPARE(plot->pointCount(run), steps);
    QVERIFY(plot->runColor(0) != plot->runColor(1));

    // The default overlay: each run's mean with a min–max band across its 2 ranks. Unsmoothed,
    // the band's edges are the ranks' extremes per step as each run's store holds them, and the
    // mean lies between; smoothed alike, it still does.
    QCOMPARE(plot->compareRanks(), CompareRanks::Band);
    for (double smoothing : {0.0, 0.6}) {
        plot->setSmoothing(smoothing);
        plot->refreshNow();
        for (int i = 0; i < 2; ++i) {
            std::map<qint64, std::pair<double, double>> extremes;
            const MetricsStore *store = loss->comparedStore(i);
            QVERIFY(store);
            for (int rank : store->ranks(metric::Loss)) {
                for (const MetricSegment &seg : store->segments(rank, metric::Loss)) {
                    for (const MetricPoint &p : seg.points) {
                        auto [it, fresh] = extremes.try_emplace(p.step, p.value, p.value);
                        it->second.first = std::min(it->second.first, p.value);
                        it->second.second = std::max(it->second.second, p.value);
                    }
                }
            }
            QCOMPARE(int(extremes.size()), steps);
            const ComparedRunCurves *curves = plot->comparedRun(i);
            const QCPGraph *lo = curves->bandLowGraph();
            const QCPGraph *hi = curves->bandHighGraph();
            const QCPGraph *mean = curves->meanGraph();
            QVERIFY(lo->visible() && hi->visible());
            QCOMPARE(lo->dataCount(), steps);
            QCOMPARE(hi->dataCount(), steps);
            QCOMPARE(mean->dataCount(), steps);
            auto it = extremes.cbegin();
            for (int k = 0; k < steps; ++k, ++it) {
                const double l = lo->data()->at(k)->value, h = hi->data()->at(k)->value;
                const double m = mean->data()->at(k)->value;
                QCOMPARE(lo->data()->at(k)->key, double(it->first));
                QVERIFY2(l <= m && m <= h, qPrintable(QStringLiteral("run %1 step %2: %3 %4 %5")
                                                          .arg(i)
                                                          .arg(it->first)
                                                          .arg(l)
                                                          .arg(m)
                                                          .arg(h)));
                if (smoothing == 0.0) {
                    QCOMPARE(l, it->second.first);
                    QCOMPARE(h, it->second.second);
                }
            }
        }
    }
    // Every rank: one thin line per rank per run, in the run's colour.
    plot->setCompareRanks(CompareRanks::EveryRank);
    plot->refreshNow();
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(plot->comparedRun(i)->rankGraphs().size(), 2);
        for (const QCPGraph *g : plot->comparedRun(i)->rankGraphs()) {
            QCOMPARE(g->dataCount(), steps);
            QCOMPARE(g->pen().color().rgb(), plot->runColor(i).rgb());
        }
    }
    plot->setCompareRanks(CompareRanks::Band);
    QHash<const MetricsStore *, QRgb> colours;
    for (int i = 0; i < 2; ++i)
        colours.insert(loss->comparedStore(i), plot->runColor(i).rgb());

    // What differs: --lr (and the duration and the metrics), nothing the runs share.
    QAbstractItemModelTester tester(loss->diffModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QStringList keys = loss->diffModel()->keys();
    QVERIFY2(keys.contains(QStringLiteral("flag:--lr")), qPrintable(keys.join(u' ')));
    QVERIFY2(!keys.contains(QStringLiteral("flag:--task")) &&
                 !keys.contains(QStringLiteral("world_size")),
             qPrintable(keys.join(u' ')));
    QVERIFY(loss->diffTable()->isVisible());
    QCOMPARE(loss->diffModel()->columnCount(), 2);

    // A third run joins the selection (newer, so listed above the others): the two runs keep
    // their colours, the third gets one of its own.
    RunController *third = launchWithClicks(steps, QStringLiteral("--task linear --lr 0.02"));
    QVERIFY(third);
    QTRY_COMPARE_WITH_TIMEOUT(third->state(), RunState::Finished, RunTimeoutMs);
    ids << third->runId();
    QTRY_VERIFY(model->rowCount() >= 3);
    selectRuns(list, ids);
    QTRY_VERIFY(loss->isComparing() && plot->comparedRun(2));
    QCOMPARE(m_window->statusBar()->currentMessage(),
             QStringLiteral("Comparing 3 runs on the Loss page"));
    plot->refreshNow();
    QSet<QRgb> seen;
    for (int i = 0; i < 3; ++i) {
        const MetricsStore *store = loss->comparedStore(i);
        if (colours.contains(store))
            QCOMPARE(plot->runColor(i).rgb(), colours.value(store));
        else
            QCOMPARE(store, third->metricsStore());
        seen.insert(plot->runColor(i).rgb());
        QCOMPARE(plot->pointCount(i), steps);
    }
    QCOMPARE(seen.size(), 3);

    // One run selected again: back to that run's own curves.
    list->selectionModel()->clearSelection();
    list->setCurrentIndex(model->index(0, 0));
    QTRY_VERIFY(!loss->isComparing());
    QVERIFY(!loss->diffTable()->isVisible());
    QCOMPARE(m_window->statusBar()->currentMessage(), QString()); // no stale count
    // Another message is left alone by a later one-run selection.
    m_window->statusBar()->showMessage(QStringLiteral("Comparing notes"));
    list->setCurrentIndex(model->index(1, 0));
    const QString otherRun = model->index(1, 0).data(RunListModel::RunIdRole).toString();
    QTRY_VERIFY(m_window->runView()->run() && m_window->runView()->run()->runId() == otherRun);
    QCOMPARE(m_window->statusBar()->currentMessage(), QStringLiteral("Comparing notes"));
}
