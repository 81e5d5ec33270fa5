// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "util/buildversion.h"
#include "util/bundledbinary.h"

#include "appicon.h"
#include "config/profilestore.h"
#include "config/syncmanifest.h"
#include "guisshinteraction.h"
#include "launchdialog.h"
#include "logspage.h"
#include "logview.h"
#include "models/runlistmodel.h"
#include "overviewpage.h"
#include "profileeditordialog.h"
#include "record/runrecord.h"
#include "run/runmanager.h"
#include "runlistsortmodel.h"
#include "runview.h"
#include "sidepanel.h"
#include "transport/factory/connectioncheck.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>

namespace rankdeck {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_profiles(std::make_unique<ProfileStore>()),
      m_ssh(std::make_unique<GuiSshInteraction>(this))
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("RankDeck"));
    setWindowIcon(appIcon());

    m_runs = new RunManager(QString(), this);
    m_runList = new RunListModel(m_runs, this);
    m_runListSorted = new RunListSortModel(this);
    m_runListSorted->setSourceModel(m_runList);

    m_side = new SidePanel(this);
    m_side->setRunModel(m_runListSorted);
    m_runView = new RunView(this);
    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->setObjectName(QStringLiteral("mainSplitter"));
    m_splitter->addWidget(m_side);
    m_splitter->addWidget(m_runView);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setSizes({240, 960});
    setCentralWidget(m_splitter);

    connect(m_side, &SidePanel::newProfileRequested, this, &MainWindow::newProfile);
    connect(m_side, &SidePanel::editProfileRequested, this, &MainWindow::editProfile);
    connect(m_side, &SidePanel::deleteProfileRequested, this, &MainWindow::deleteProfile);
    connect(m_side, &SidePanel::launchRequested, this, &MainWindow::openLaunchDialog);
    connect(m_side, &SidePanel::runSelected, this, [this](const QModelIndex &index) {
        clearCompareMessage();
        const QString id = index.data(RunListModel::RunIdRole).toString();
        QString error;
        if (!id.isEmpty() && !showRun(id, &error))
            statusBar()->showMessage(error, 10000);
    });
    connect(m_side, &SidePanel::runsSelectedForCompare, this, [this](const QStringList &ids) {
        QList<RunController *> runs;
        QString error;
        for (const QString &id : ids) {
            if (RunController *run = m_runs->open(id, &error))
                runs << run;
            else
                statusBar()->showMessage(error, 10000);
        }
        m_runView->setComparedRuns(runs);
        if (runs.size() >= 2) {
            m_compareMessage = tr("Comparing %1 runs on the Loss page").arg(runs.size());
            statusBar()->showMessage(m_compareMessage, 10000);
        } else {
            clearCompareMessage();
        }
    });
    connect(m_side, &SidePanel::reattachRequested, this,
            [this](const QString &runId) { reattachRun(runId); });
    connect(m_side, &SidePanel::relaunchRequested, this,
            [this](const QString &runId) { relaunchRun(runId); });
    connect(m_side, &SidePanel::deleteRequested, this,
            [this](const QString &runId) { deleteRun(runId, true); });
    connect(m_runView, &RunView::reattachRequested, this,
            [this](const QString &runId) { reattachRun(runId); });
    // "mlp-4-ranks — stuck — RankDeck": the shown run and its one state, as the desktop's task
    // switcher and a screen reader read the window.
    connect(m_runView, &RunView::titleTextChanged, this, [this](const QString &text) {
        setWindowTitle(text.isEmpty() ? tr("RankDeck") : tr("%1 — RankDeck").arg(text));
    });
    connect(m_runs, &RunManager::runFinished, this, [this](const QString &runId, RunState state) {
        RunController *run = m_runs->controller(runId);
        const QString name = run ? run->name() : runId;
        statusBar()->showMessage(tr("Run %1: %2").arg(name, runStateLabel(state)), 10000);
    });

    createActions();
    reloadProfiles();
    statusBar()->showMessage(tr("Ready"));
    resize(1200, 760);
    restoreLayout();
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newProfileAction = file->addAction(tr("&New profile…"), this, &MainWindow::newProfile);
    newProfileAction->setShortcut(QKeySequence::New);
    QAction *launchAction = file->addAction(tr("&Launch…"), this, [this] { openLaunchDialog(); });
    launchAction->setObjectName(QStringLiteral("launchAction"));
    launchAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    // The Overview's buttons by another way: the same requests (a followed run's through its
    // record), Kill's question, and enabled exactly when the buttons are.
    QMenu *runMenu = menuBar()->addMenu(tr("&Run"));
    OverviewPage *overview = m_runView->overviewPage();
    QAction *stop = runMenu->addAction(tr("&Stop"), overview, &OverviewPage::stopRequested);
    stop->setObjectName(QStringLiteral("stopRunAction"));
    stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    QAction *kill = runMenu->addAction(tr("&Kill…"), overview, &OverviewPage::killRequested);
    kill->setObjectName(QStringLiteral("killRunAction"));
    QAction *dump =
        runMenu->addAction(tr("&Dump stacks"), overview, &OverviewPage::dumpStacksRequested);
    dump->setObjectName(QStringLiteral("dumpStacksAction"));
    dump->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    for (QAction *a : {stop, kill, dump}) {
        a->setEnabled(overview->isRunActive());
        connect(overview, &OverviewPage::runActiveChanged, a, &QAction::setEnabled);
    }

    QMenu *view = menuBar()->addMenu(tr("&View"));
    const QStringList pages = {tr("&Overview"), tr("&Loss"), tr("Lo&gs"), tr("F&ailures"),
                               tr("P&rofile")};
    for (int i = 0; i < pages.size(); ++i) {
        QAction *a = view->addAction(pages[i], this, [this, i] { showPage(i); });
        a->setShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + i)));
    }
    view->addSeparator();
    QAction *find = view->addAction(tr("&Find in logs"), this, [this] {
        showPage(RunView::Logs);
        m_runView->logsPage()->logView()->focusSearch();
    });
    find->setShortcut(QKeySequence::Find);
    QAction *filter = view->addAction(tr("Filter &logs"), this, [this] {
        showPage(RunView::Logs);
        m_runView->logsPage()->logView()->focusFilter();
    });
    filter->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About RankDeck"), this, [this] {
        QMessageBox::about(
            this, tr("About RankDeck"),
            tr("<b>RankDeck %1</b><p>Launch distributed libtorch training, watch every "
               "rank's logs and loss curves, and see what killed a crashed rank.</p>"
               "<p>GPL-3.0-or-later.</p>")
                .arg(BuildVersion::describe().toHtmlEscaped()));
    });
}

void MainWindow::showPage(int page)
{
    m_runView->setCurrentIndex(page);
}

void MainWindow::reloadProfiles()
{
    m_side->setProfileNames(m_profiles->names());
}

// Back to one run (or fewer than two opened): the "Comparing N runs" count would be false. Only
// that message is cleared, not whatever came after it.
void MainWindow::clearCompareMessage()
{
    if (!m_compareMessage.isEmpty() && statusBar()->currentMessage() == m_compareMessage)
        statusBar()->clearMessage();
    m_compareMessage.clear();
}

void MainWindow::newProfile()
{
    ProfileEditorDialog dialog(m_profiles.get(), this);
    connect(&dialog, &ProfileEditorDialog::testConnectionRequested, this,
            &MainWindow::testConnection);
    if (dialog.exec() == QDialog::Accepted) {
        reloadProfiles();
        m_side->setCurrentProfile(dialog.profile().name);
        statusBar()->showMessage(tr("Saved profile %1").arg(dialog.profile().name), 5000);
    }
}

void MainWindow::editProfile(const QString &name)
{
    Profile profile;
    QList<ProfileError> errors;
    if (!m_profiles->load(name, &profile, &errors)) {
        QStringList lines;
        for (const ProfileError &e : std::as_const(errors))
            lines << e.toString();
        QMessageBox::warning(this, tr("Cannot open profile %1").arg(name),
                             lines.join(QLatin1Char('\n')));
        return;
    }
    ProfileEditorDialog dialog(m_profiles.get(), this);
    dialog.setProfile(profile, true);
    connect(&dialog, &ProfileEditorDialog::testConnectionRequested, this,
            &MainWindow::testConnection);
    if (dialog.exec() == QDialog::Accepted)
        reloadProfiles();
}

void MainWindow::deleteProfile(const QString &name)
{
    if (QMessageBox::question(this, tr("Delete profile"),
                              tr("Delete the profile \"%1\"?").arg(name)) != QMessageBox::Yes)
        return;
    QString error;
    if (!m_profiles->remove(name, &error))
        QMessageBox::warning(this, tr("Cannot delete profile %1").arg(name), error);
    reloadProfiles();
}

void MainWindow::openLaunchDialog(const QString &profileName)
{
    auto *dialog = new LaunchDialog(m_profiles.get(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setProfileName(profileName.isEmpty() ? m_side->currentProfile() : profileName);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { onLaunchAccepted(dialog); });
    dialog->open();
}

void MainWindow::onLaunchAccepted(LaunchDialog *dialog)
{
    launch(dialog->profile(), dialog->config(), nullptr, dialog->detach());
}

RunController *MainWindow::launch(const Profile &profile, const TrainingConfig &config,
                                  QString *error, bool detach)
{
    RunController::Options options;
    options.workerPath = bundledBinary("RANKDECK_WORKER", QStringLiteral("rankdeck-worker"));
    options.supervisorPath =
        bundledBinary("RANKDECK_SUPERVISOR", QStringLiteral("rankdeck-supervisor"));
    options.sshInteraction = m_ssh.get();
    options.detach = detach && !profile.isLocal();
    QString message;
    RunController *run = m_runs->launch(profile, config, options, &message);
    if (!run) {
        if (error)
            *error = message;
        else
            QMessageBox::warning(this, tr("Cannot launch"), message);
        statusBar()->showMessage(tr("Launch failed: %1").arg(message), 10000);
        return nullptr;
    }
    // Per-node launch progress (connecting, uploading, starting) goes to the overview while
    // this run is the one shown.
    connect(run, &RunController::launcherMessage, this, [this, run](const QString &text) {
        if (m_runView->run() == run)
            statusBar()->showMessage(text, 8000);
    });
    // A full disk under the run record: said in the status bar until something replaces it,
    // whichever run is shown (the run's own page has it in its banner).
    connect(run, &RunController::recordProblemChanged, this,
            [this](const QString &text) { statusBar()->showMessage(text); });
    m_runView->setRun(run);
    showPage(RunView::Overview);
    {
        const QSignalBlocker blocker(m_side);
        m_side->selectRun(run->runId());
    }
    statusBar()->showMessage(tr("Launched %1 on %2").arg(run->name(), profile.name), 5000);
    return run;
}

RunController *MainWindow::reattachRun(const QString &runId, QString *error)
{
    RunController::Options options;
    options.sshInteraction = m_ssh.get();
    QString message;
    RunController *run = m_runs->reattach(runId, options, &message);
    if (!run) {
        if (error)
            *error = message;
        else
            QMessageBox::warning(this, tr("Cannot re-attach"), message);
        statusBar()->showMessage(tr("Re-attach failed: %1").arg(message), 10000);
        return nullptr;
    }
    connect(run, &RunController::launcherMessage, this, [this, run](const QString &text) {
        if (m_runView->run() == run)
            statusBar()->showMessage(text, 8000);
    });
    // A full disk under the run record: said in the status bar until something replaces it,
    // whichever run is shown (the run's own page has it in its banner).
    connect(run, &RunController::recordProblemChanged, this,
            [this](const QString &text) { statusBar()->showMessage(text); });
    m_runView->setRun(run);
    statusBar()->showMessage(tr("Re-attached to %1").arg(run->name()), 5000);
    return run;
}

RunController *MainWindow::relaunchRun(const QString &runId, QString *error)
{
    QString message;
    const QString dir = RunRecord::resolve(m_runs->runsDirectory(), runId, &message);
    RunRecord record;
    if (dir.isEmpty() || !record.open(dir, &message)) {
        if (error)
            *error = message;
        else
            QMessageBox::warning(this, tr("Cannot launch again"), message);
        return nullptr;
    }
    const RunInfo info = record.info();
    return launch(record.profile(), record.config(), error, info.detachable || info.detached);
}

bool MainWindow::deleteRun(const QString &runId, bool confirm, QString *error)
{
    const QList<RunInfo> history = m_runs->history();
    const auto info = std::find_if(history.cbegin(), history.cend(),
                                   [&](const RunInfo &i) { return i.id == runId; });
    const QString name = info == history.cend() ? runId : info->name;
    if (confirm) {
        QMessageBox box(QMessageBox::Question, tr("Delete run"),
                        tr("Delete run %1 (%2)? Its logs, metrics, stacks and reports are removed "
                           "from disk.")
                            .arg(name, runId),
                        QMessageBox::Cancel, this);
        const QPushButton *yes = box.addButton(tr("&Delete"), QMessageBox::DestructiveRole);
        box.setDefaultButton(QMessageBox::Cancel);
        box.exec();
        if (box.clickedButton() != yes)
            return false;
    }
    // The page lets go of the run before its controller goes.
    if (m_runView->run() && m_runView->run()->runId() == runId)
        m_runView->setRun(nullptr);
    m_runView->setComparedRuns({});
    QString message;
    qint64 bytes = 0;
    if (!m_runs->remove(runId, &message, &bytes)) {
        if (error)
            *error = message;
        else
            QMessageBox::warning(this, tr("Cannot delete"), message);
        return false;
    }
    statusBar()->showMessage(
        tr("Deleted run %1: %2 freed").arg(name, SyncManifest::formatSize(bytes)), 10000);
    return true;
}

bool MainWindow::showRun(const QString &runId, QString *error)
{
    RunController *run = m_runs->open(runId, error);
    if (!run)
        return false;
    m_runView->setComparedRuns({}); // one run selected again: the comparison ends
    if (m_runView->run() != run)
        m_runView->setRun(run);
    return true;
}

void MainWindow::testConnection(const Profile &profile)
{
    auto *dialog = qobject_cast<ProfileEditorDialog *>(sender());
    if (!dialog || profile.isLocal())
        return;
    // What `profiles check` asks too, without deploying the worker: connect and check.
    auto *check = new ConnectionCheck(profile, m_ssh.get(), dialog);
    connect(check, &ConnectionCheck::linesChanged, dialog,
            [dialog, check] { dialog->setConnectionReport(check->lines().join(u'\n')); });
    connect(check, &ConnectionCheck::finished, check, &QObject::deleteLater);
    QString error;
    if (!check->start(QString(), &error)) {
        dialog->setConnectionReport(tr("FAILED — %1").arg(error));
        check->deleteLater();
        return;
    }
    dialog->setConnectionReport(check->lines().join(u'\n'));
}

void MainWindow::startDemo()
{
    // The same run scripts/demo.sh starts through the CLI when there is no display. Shuffled
    // (DistributedSampler's seed + epoch permutation): read in the same order every epoch, the
    // corpus makes the loss jump at each epoch boundary.
    TrainingConfig config;
    config.name = QStringLiteral("demo");
    config.workerArguments = {
        QStringLiteral("--task"),      QStringLiteral("charlm"),       QStringLiteral("--steps"),
        QStringLiteral("300"),         QStringLiteral("--batch-size"), QStringLiteral("32"),
        QStringLiteral("--log-every"), QStringLiteral("10"),           QStringLiteral("--shuffle")};
    launch(Profile::builtinLocal(2), config);
}

void MainWindow::restoreLayout()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("MainWindow"));
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("state")).toByteArray());
    m_splitter->restoreState(settings.value(QStringLiteral("splitter")).toByteArray());
    m_runView->setCurrentIndex(settings.value(QStringLiteral("page"), 0).toInt());
}

void MainWindow::saveLayout() const
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("MainWindow"));
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("state"), saveState());
    settings.setValue(QStringLiteral("splitter"), m_splitter->saveState());
    settings.setValue(QStringLiteral("page"), m_runView->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    // Detachable runs are left running on their nodes without a question: that is what the user
    // chose at launch. Only the others are stopped, and asked about.
    QList<RunController *> active = m_runs->activeRuns();
    active.removeIf([](RunController *c) { return c->detachRequested(); });
    if (!active.isEmpty() && isVisible() &&
        QMessageBox::question(this, tr("Quit RankDeck"),
                              tr("%n run(s) still running will be stopped. Quit anyway?", nullptr,
                                 int(active.size()))) != QMessageBox::Yes) {
        event->ignore();
        return;
    }
    // A detachable run whose ranks have not all started yet cannot be left: it stops like the rest.
    const QStringList released = m_runs->detachAll();
    if (!released.isEmpty())
        qInfo("rankdeck: left %lld run(s) running detached: %s", qlonglong(released.size()),
              qPrintable(released.join(QStringLiteral(", "))));
    m_runs->stopAll();
    saveLayout();
    event->accept();
}

} // namespace rankdeck
