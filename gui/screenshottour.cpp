// SPDX-License-Identifier: GPL-3.0-or-later
#include "screenshottour.h"

#include "config/profilestore.h"
#include "failurespage.h"
#include "launchdialog.h"
#include "logspage.h"
#include "losspage.h"
#include "lossplot.h"
#include "mainwindow.h"
#include "models/runlistmodel.h"
#include "overviewpage.h"
#include "profileeditordialog.h"
#include "profilepage.h"
#include "run/flightrecordercollector.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "sidepanel.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLineEdit>
#include <QTableWidget>
#include <QTimer>
#include <QTreeView>

#include <cstdio>
#include <memory>

namespace rankdeck {

ScreenshotTour::ScreenshotTour(MainWindow *window, const QString &directory, QObject *parent)
    : QObject(parent), m_window(window), m_directory(directory)
{}

void ScreenshotTour::start()
{
    if (!QDir().mkpath(m_directory)) {
        fail(tr("cannot create %1").arg(m_directory));
        return;
    }
    m_window->resize(1400, 860);
    shootDialogs();
    startHealthyRun();
}

void ScreenshotTour::fail(const QString &message)
{
    std::fprintf(stderr, "screenshots: %s\n", qPrintable(message));
    m_ok = false;
    emit done(false);
}

void ScreenshotTour::shootWidget(QWidget *widget, const QString &name)
{
    const QString path = QDir(m_directory).filePath(name + QStringLiteral(".png"));
    if (!widget->grab().save(path)) {
        std::fprintf(stderr, "screenshots: cannot write %s\n", qPrintable(path));
        m_ok = false;
        return;
    }
    std::fprintf(stdout, "screenshots: %s\n", qPrintable(path));
}

void ScreenshotTour::shoot(const QString &name)
{
    // Let pending polls and queued replots land before grabbing.
    m_window->runView()->lossPage()->plot()->refreshNow();
    m_window->runView()->logsPage()->poll();
    QCoreApplication::processEvents();
    shootWidget(m_window, name);
}

void ScreenshotTour::shootDialogs()
{
    ProfileEditorDialog editor(nullptr, m_window);
    Profile p;
    p.name = QStringLiteral("gpu-cluster");
    p.transport = QStringLiteral("ssh");
    p.nodes = {ProfileNode{QStringLiteral("gpu-node-1"), 22, QStringLiteral("alice"),
                           QStringLiteral("~/.ssh/id_ed25519"), 8, 8},
               ProfileNode{QStringLiteral("gpu-node-2"), 22, QStringLiteral("alice"),
                           QStringLiteral("~/.ssh/id_ed25519"), 8, 8}};
    p.environment.insert(QStringLiteral("NCCL_DEBUG"), QStringLiteral("WARN"));
    editor.setProfile(p, false);
    editor.show();
    QCoreApplication::processEvents();
    shootWidget(&editor, QStringLiteral("profile-editor"));

    LaunchDialog launch(m_window->profileStore(), m_window);
    launch.setTask(QStringLiteral("charlm"));
    launch.setSteps(300);
    launch.setRanksPerNode(2);
    launch.setRunName(QStringLiteral("charlm-demo"));
    launch.show();
    QCoreApplication::processEvents();
    shootWidget(&launch, QStringLiteral("launch"));

    LaunchDialog program(m_window->profileStore(), m_window);
    program.setTask(QStringLiteral("program"));
    program.setRanksPerNode(4);
    program.setProgramCommand(QStringLiteral("python3 train.py --epochs 20"));
    program.setRunName(QStringLiteral("my-ddp"));
    // As a user widens it to read the placeholders whole (the dialog keeps that size).
    program.resize(800, program.sizeHint().height());
    program.show();
    QCoreApplication::processEvents();
    shootWidget(&program, QStringLiteral("launch-program"));
}

void ScreenshotTour::waitForEnd(RunController *run, void (ScreenshotTour::*next)())
{
    QPointer<RunController> guard(run);
    auto *timer = new QTimer(this);
    timer->setInterval(200);
    connect(timer, &QTimer::timeout, this, [this, guard, timer, next] {
        if (!guard) {
            timer->deleteLater();
            fail(tr("the run went away"));
            return;
        }
        if (!isTerminal(guard->state()))
            return;
        timer->deleteLater();
        // A moment for the last lines and the failure report to reach the pages.
        QTimer::singleShot(500, this, next);
    });
    timer->start();
}

RunController *ScreenshotTour::launchThen(const Profile &profile, const TrainingConfig &config,
                                          void (ScreenshotTour::*next)())
{
    QString error;
    RunController *run = m_window->launch(profile, config, &error);
    if (!run) {
        fail(error);
        return nullptr;
    }
    waitForEnd(run, next);
    return run;
}

bool ScreenshotTour::startMlpRun(const QString &name, const QStringList &extraArguments,
                                 void (ScreenshotTour::*next)())
{
    TrainingConfig config;
    config.name = name;
    config.workerArguments = QStringList{QStringLiteral("--task"),      QStringLiteral("mlp"),
                                         QStringLiteral("--steps"),     QStringLiteral("300"),
                                         QStringLiteral("--log-every"), QStringLiteral("10"),
                                         QStringLiteral("--shuffle")} +
                             extraArguments;
    RunController *run = launchThen(Profile::builtinLocal(4), config, next);
    if (run)
        m_comparedRunIds << run->runId();
    return run != nullptr;
}

void ScreenshotTour::startHealthyRun()
{
    startMlpRun(QStringLiteral("mlp-4-ranks"), {}, &ScreenshotTour::afterHealthyRun);
}

void ScreenshotTour::afterHealthyRun()
{
    m_window->showPage(RunView::Overview);
    shoot(QStringLiteral("overview"));
    m_window->showPage(RunView::Loss);
    m_window->runView()->lossPage()->plot()->setSmoothing(0.9);
    shoot(QStringLiteral("loss"));
    m_window->showPage(RunView::Logs);
    m_window->runView()->logsPage()->showRank(LogsPage::AllRanksTab);
    shoot(QStringLiteral("logs"));
    startCompareRun();
}

void ScreenshotTour::startCompareRun()
{
    // The same run at a smaller learning rate, to compare with the first.
    startMlpRun(QStringLiteral("mlp-4-ranks-lr-0.003"),
                {QStringLiteral("--lr"), QStringLiteral("0.003")},
                &ScreenshotTour::afterCompareRun);
}

void ScreenshotTour::afterCompareRun()
{
    // Both runs selected in the side panel, as a user does with Ctrl-click: the Loss page
    // overlays them, each run's mean with its min–max band across ranks.
    QTreeView *list = m_window->sidePanel()->runList();
    list->selectionModel()->clearSelection();
    for (int row = 0; row < list->model()->rowCount(); ++row) {
        const QModelIndex index = list->model()->index(row, 0);
        if (m_comparedRunIds.contains(index.data(RunListModel::RunIdRole).toString()))
            list->selectionModel()->select(index,
                                           QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
    LossPlot *plot = m_window->runView()->lossPage()->plot();
    if (!m_window->runView()->lossPage()->isComparing()) {
        fail(tr("selecting two runs did not compare them"));
        return;
    }
    plot->setCompareRanks(CompareRanks::Band);
    plot->setSmoothing(0.8);
    shoot(QStringLiteral("loss-compare"));
    list->selectionModel()->clearSelection();
    startFailingRun();
}

void ScreenshotTour::startFailingRun()
{
    TrainingConfig config;
    config.name = QStringLiteral("crash-on-rank-2");
    config.workerArguments = {QStringLiteral("--task"),       QStringLiteral("linear"),
                              QStringLiteral("--steps"),      QStringLiteral("300"),
                              QStringLiteral("--log-every"),  QStringLiteral("10"),
                              QStringLiteral("--fault"),      QStringLiteral("segv@120"),
                              QStringLiteral("--fault-rank"), QStringLiteral("2")};
    launchThen(Profile::builtinLocal(4), config, &ScreenshotTour::afterFailingRun);
}

void ScreenshotTour::afterFailingRun()
{
    m_window->showPage(RunView::Overview);
    shoot(QStringLiteral("overview-failed"));
    m_window->showPage(RunView::Failures);
    shoot(QStringLiteral("failures"));
    startStragglerRun();
}

// Rank 3 sleeps inside each of its steps (the worker's straggler flag): the Overview names it
// and its row is the bright one in the compute time heatmap (the others wait for it).
void ScreenshotTour::startStragglerRun()
{
    TrainingConfig config;
    config.name = QStringLiteral("slow-rank-3");
    // mlp: a loss that falls (linear's is output.sum(), PyTorch's DDP example, and runs negative).
    config.workerArguments = {QStringLiteral("--task"),          QStringLiteral("mlp"),
                              QStringLiteral("--steps"),         QStringLiteral("300"),
                              QStringLiteral("--log-every"),     QStringLiteral("10"),
                              QStringLiteral("--step-delay-ms"), QStringLiteral("25"),
                              QStringLiteral("--fault-rank"),    QStringLiteral("3")};
    launchThen(Profile::builtinLocal(4), config, &ScreenshotTour::afterStragglerRun);
}

void ScreenshotTour::afterStragglerRun()
{
    m_window->showPage(RunView::Overview);
    shoot(QStringLiteral("overview-straggler"));
    startProgramRun();
}

void ScreenshotTour::startProgramRun()
{
    // A user's own Python script (launch --exec): needs the torch environment's Python.
    const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    const QString script = qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                           QStringLiteral("/resources/examples/ddp_bad_batch.py");
    if (python.isEmpty() || !QFileInfo::exists(script)) {
        qWarning("screenshots: no RANKDECK_TORCH_PYTHON or RANKDECK_SOURCE_DIR: the program "
                 "pages are left out");
        emit done(m_ok);
        return;
    }
    TrainingConfig config;
    config.name = QStringLiteral("my-script");
    config.program = {python, script};
    launchThen(Profile::builtinLocal(4), config, &ScreenshotTour::afterProgramRun);
}

void ScreenshotTour::afterProgramRun()
{
    m_window->showPage(RunView::Logs);
    m_window->runView()->logsPage()->showRank(LogsPage::AllRanksTab);
    shoot(QStringLiteral("logs-program"));
    m_window->showPage(RunView::Failures);
    shoot(QStringLiteral("failures-program"));
    startHangRun();
}

// Uneven data shards: the ranks part at a collective and wait for ever. The pages are shot once
// the flight recorder's verdict names both sides with their lines (their stacks come a moment
// after the desync is seen); then the run is stopped.
void ScreenshotTour::startHangRun()
{
    const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    const QString script = qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                           QStringLiteral("/resources/examples/ddp_uneven_shards.py");
    TrainingConfig config;
    config.name = QStringLiteral("uneven-shards");
    config.program = {python, script};
    QString error;
    RunController *run = m_window->launch(Profile::builtinLocal(2), config, &error);
    if (!run) {
        fail(error);
        return;
    }
    QPointer<RunController> guard(run);
    const auto shot = std::make_shared<bool>(false);
    connect(run, &RunController::collectiveVerdictChanged, this, [this, guard, shot] {
        const CollectiveVerdict *v = guard ? guard->flightRecorder().shownVerdict() : nullptr;
        if (*shot || !v || v->text().count(QStringLiteral(".py:")) < 2)
            return;
        *shot = true;
        QTimer::singleShot(1000, this, [this, guard] {
            if (!guard)
                return fail(tr("the hung run went away"));
            m_window->showPage(RunView::Overview);
            shoot(QStringLiteral("overview-hang"));
            m_window->showPage(RunView::Failures);
            m_window->runView()->failuresPage()->selectEntry(0);
            shoot(QStringLiteral("failures-hang"));
            guard->stop();
            waitForEnd(guard, &ScreenshotTour::startSlowRun);
        });
    });
    QTimer::singleShot(240000, this, [this, shot, guard] {
        if (guard && !*shot)
            fail(tr("no collective verdict for the uneven shards within 240 s"));
    });
}

// Why is the job slow (issue 43): rank 2's Dataset burns CPU in an unmodified DDP script. Once
// the sampled stacks name it, a 5 s profile; the Overview and the Profile tab (rank 2 against
// the others) are shot, then the run is stopped.
void ScreenshotTour::startSlowRun()
{
    const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    TrainingConfig config;
    config.name = QStringLiteral("slow-dataset");
    config.program = {python,
                      qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                          QStringLiteral("/tests/cli/programs/slow_rank.py"),
                      QStringLiteral("--cause"),
                      QStringLiteral("input"),
                      QStringLiteral("--slow-rank"),
                      QStringLiteral("2"),
                      QStringLiteral("--seconds"),
                      QStringLiteral("180")};
    QString error;
    RunController *run = m_window->launch(Profile::builtinLocal(4), config, &error);
    if (!run)
        return fail(error);
    QPointer<RunController> guard(run);
    const auto asked = std::make_shared<bool>(false);
    connect(run, &RunController::slowVerdictChanged, this, [this, guard, asked] {
        if (*asked || !guard || !guard->slowVerdict().found())
            return;
        *asked = true;
        QString why;
        if (!guard->profile(5, {}, &why))
            fail(why);
    });
    connect(run, &RunController::profileFinished, this, [this, guard] {
        if (!guard)
            return fail(tr("the slow run went away"));
        m_window->showPage(RunView::Overview);
        shoot(QStringLiteral("overview-why-slow"));
        m_window->showPage(RunView::Profile);
        ProfilePage *page = m_window->runView()->profilePage();
        page->setSelectedRank(2);
        page->setDifferential(true);
        shoot(QStringLiteral("profile-differential"));
        guard->stop();
        waitForEnd(guard, &ScreenshotTour::startManyRanksRun);
    });
    QTimer::singleShot(240000, this, [this, asked, guard] {
        if (guard && !*asked)
            fail(tr("no straggler named in the slow run within 240 s"));
    });
}

// 96 ranks of a script without torch: rank 17 raises on a corrupt record, ranks 40 and 41 fall
// behind. The pages group the alike ranks and name the few that differ (issue 31).
void ScreenshotTour::startManyRanksRun()
{
    QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (python.isEmpty())
        python = QStringLiteral("python3");
    TrainingConfig config;
    config.name = QStringLiteral("96-ranks-bad-shard");
    config.program = {python, qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                                  QStringLiteral("/resources/examples/many_ranks_bad_shard.py")};
    launchThen(Profile::builtinLocal(96), config, &ScreenshotTour::afterManyRanksRun);
}

void ScreenshotTour::afterManyRanksRun()
{
    m_window->showPage(RunView::Overview);
    shoot(QStringLiteral("overview-many-ranks"));
    // Rank 17 found by its number in the rank search, as a user goes to the rank that failed.
    m_window->showPage(RunView::Logs);
    LogsPage *logs = m_window->runView()->logsPage();
    logs->rankFilter()->setText(QStringLiteral("17"));
    if (!logs->showRank(17))
        return fail(tr("the Logs page has no rank 17"));
    shoot(QStringLiteral("logs-many-ranks"));
    m_window->showPage(RunView::Failures);
    shoot(QStringLiteral("failures-many-ranks"));
    finish();
}

void ScreenshotTour::finish()
{
    emit done(m_ok);
}

} // namespace rankdeck
