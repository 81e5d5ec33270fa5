// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "appicon.h"
#include "launchdialog.h"
#include "logspage.h"
#include "logview.h"
#include "profileeditordialog.h"
#include "profilestore.h"
#include "runview.h"
#include "sidepanel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>

namespace rankdeck {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_profiles(std::make_unique<ProfileStore>())
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("RankDeck"));
    setWindowIcon(appIcon());

    m_side = new SidePanel(this);
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

    QMenu *view = menuBar()->addMenu(tr("&View"));
    const QStringList pages = {tr("&Overview"), tr("&Loss"), tr("L&ogs"), tr("&Failures")};
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
        QMessageBox::about(this, tr("About RankDeck"),
                           tr("<b>RankDeck %1</b><p>Launch distributed libtorch training, watch every "
                              "rank's logs and loss curves, and see what killed a crashed rank.</p>"
                              "<p>GPL-3.0-or-later.</p>").arg(QStringLiteral(RANKDECK_VERSION)));
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

void MainWindow::newProfile()
{
    ProfileEditorDialog dialog(m_profiles.get(), this);
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
        QMessageBox::warning(this, tr("Cannot open profile %1").arg(name), lines.join(QLatin1Char('\n')));
        return;
    }
    ProfileEditorDialog dialog(m_profiles.get(), this);
    dialog.setProfile(profile, true);
    if (dialog.exec() == QDialog::Accepted)
        reloadProfiles();
}

void MainWindow::deleteProfile(const QString &name)
{
    if (QMessageBox::question(this, tr("Delete profile"), tr("Delete the profile \"%1\"?").arg(name))
        != QMessageBox::Yes)
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
    dialog->open();
}

void MainWindow::startDemo()
{
    statusBar()->showMessage(tr("The demo needs core's RunManager, which this build lacks"));
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
    saveLayout();
    event->accept();
}

} // namespace rankdeck
