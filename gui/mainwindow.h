// SPDX-License-Identifier: GPL-3.0-or-later
//
// The main window only wires things together: the side panel (profiles, runs), the run view
// (the selected run's pages), menus and shortcuts, dialogs, and the remembered layout. Launching,
// parsing and run bookkeeping all live in core (RunManager and what it owns).
#pragma once

#include <QMainWindow>

#include <QSet>

#include <memory>

class QAction;
class QSplitter;

namespace rankdeck {

class GuiSshInteraction;
class LaunchDialog;
class ProfileEditorDialog;
struct Profile;
class ProfileStore;
class RunController;
class RunListModel;
class RunListSortModel;
class RunManager;
struct TrainingConfig;
class RunView;
class SidePanel;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    SidePanel *sidePanel() const { return m_side; }
    RunView *runView() const { return m_runView; }
    ProfileStore *profileStore() const { return m_profiles.get(); }
    RunManager *runManager() const { return m_runs; }

    // Starts a run through core's RunManager and shows it. nullptr (and a message box unless
    // quiet) when it could not start.
    // detach: SSH ranks keep running when the window closes (RunController::Options::detach).
    RunController *launch(const Profile &profile, const TrainingConfig &config,
                          QString *error = nullptr, bool detach = false);
    // Takes a detached run over again (RunManager::reattach) and shows it. nullptr (and a message
    // box unless error is given) when it cannot.
    RunController *reattachRun(const QString &runId, QString *error = nullptr);
    // Shows a run (live or from its directory) in the centre.
    bool showRun(const QString &runId, QString *error = nullptr);
    // Launches a recorded run again: its profile as it was then, its settings, a new record.
    RunController *relaunchRun(const QString &runId, QString *error = nullptr);
    // Deletes a run's record once the user confirmed (confirm: ask first).
    bool deleteRun(const QString &runId, bool confirm, QString *error = nullptr);

public slots:
    void newProfile();
    void editProfile(const QString &name);
    void deleteProfile(const QString &name);
    // Opens the launch form for a profile (the selected one when empty).
    void openLaunchDialog(const QString &profileName = QString());
    void reloadProfiles();
    void showPage(int page);
    // `rankdeck --demo`: a 2-rank run of the demo task on the built-in local profile.
    void startDemo();

protected:
    void closeEvent(QCloseEvent *event) override;

private slots:
    void onLaunchAccepted(rankdeck::LaunchDialog *dialog);
    void testConnection(const rankdeck::Profile &profile);

private:
    void createActions();
    void restoreLayout();
    void saveLayout() const;
    void clearCompareMessage();

    std::unique_ptr<ProfileStore> m_profiles;
    SidePanel *m_side = nullptr;
    RunView *m_runView = nullptr;
    QSplitter *m_splitter = nullptr;
    RunManager *m_runs = nullptr;
    RunListModel *m_runList = nullptr;
    RunListSortModel *m_runListSorted = nullptr;
    std::unique_ptr<GuiSshInteraction> m_ssh;
    QString m_compareMessage; // the last "Comparing N runs" shown, to clear exactly that one
};

} // namespace rankdeck
