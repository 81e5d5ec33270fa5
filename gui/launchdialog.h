// SPDX-License-Identifier: GPL-3.0-or-later
//
// The launch form: profile, task and its hyper-parameters, nodes × ranks per node, run name.
// It only collects choices into core's TrainingConfig (worker flags) and a profile sized to the
// chosen nodes × ranks; starting the run is core's RunManager's job.
#pragma once

#include "config/launchrequest.h"
#include "config/profile.h"
#include "config/trainingconfig.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QFormLayout;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace rankdeck {

class ProblemLabel;
class ProfileStore;

class LaunchDialog : public QDialog
{
    Q_OBJECT
public:
    explicit LaunchDialog(const ProfileStore *store, QWidget *parent = nullptr);

    void setProfileName(const QString &name);
    QString profileName() const;
    // The chosen profile, with the node count and ranks per node the form asks for.
    Profile profile() const;
    // What the form asks for; config() is the run it makes, on profile().
    LaunchRequest request() const;
    TrainingConfig config() const;
    bool detach() const;
    // Problems with the form ("field: message"); Launch is disabled while there are any.
    QStringList problems() const;

    // Test and demo hooks: fill the form programmatically, exactly as a user would.
    void setTask(const QString &task);
    void setSteps(int steps);
    void setRanksPerNode(int ranks);
    void setRunName(const QString &name);
    void setExtraArguments(const QString &arguments);
    void setProgramCommand(const QString &commandLine);
    // The "Sync folder" row: its checkbox and folder (prefilled from the program command).
    void setSyncFolder(bool enabled, const QString &folder);
    QString syncFolder() const;
    bool syncEnabled() const;
    QPushButton *launchButton() const { return m_launch; }

protected:
    // Keeps the size the user gave the dialog for the next time it opens.
    void done(int result) override;

private:
    void onProfileChanged();
    void onTaskChanged();
    void revalidate();
    void saveProgramFields() const;
    void loadProgramFields();
    void prefillSyncFolder();

    const ProfileStore *m_store = nullptr;
    Profile m_profile;
    QString m_profileError;
    QComboBox *m_profileCombo = nullptr;
    QComboBox *m_task = nullptr;
    QSpinBox *m_steps = nullptr;
    QSpinBox *m_batchSize = nullptr;
    QDoubleSpinBox *m_lr = nullptr;
    QComboBox *m_optimizer = nullptr;
    QComboBox *m_schedule = nullptr;
    QSpinBox *m_warmup = nullptr;
    QSpinBox *m_seed = nullptr;
    QSpinBox *m_logEvery = nullptr;
    QSpinBox *m_stepDelay = nullptr;
    QSpinBox *m_mlpWidth = nullptr;
    QSpinBox *m_mlpDepth = nullptr;
    QLineEdit *m_scriptModel = nullptr;
    QLineEdit *m_scriptData = nullptr;
    QSpinBox *m_nodes = nullptr;
    QSpinBox *m_ranksPerNode = nullptr;
    QLabel *m_worldSize = nullptr;
    QLineEdit *m_runName = nullptr;
    QSpinBox *m_maxRestarts = nullptr;
    QCheckBox *m_detach = nullptr;
    QCheckBox *m_flightRecorder = nullptr;
    QLineEdit *m_extra = nullptr;
    // "Your program": the command line run on every rank, its directory, environment, metrics.
    QFormLayout *m_what = nullptr; // rows shown for the chosen task only
    QLineEdit *m_programCommand = nullptr;
    QLineEdit *m_programDirectory = nullptr;
    QLineEdit *m_programEnvironment = nullptr;
    QLineEdit *m_programMetrics = nullptr;
    QLineEdit *m_programTensorBoard = nullptr;
    QWidget *m_syncRow = nullptr;
    QCheckBox *m_programSync = nullptr;
    QCheckBox *m_programWarm = nullptr;
    QLineEdit *m_programSyncFolder = nullptr;
    bool m_syncFolderEdited = false; // typed by the user: no longer follows the command
    ProblemLabel *m_problems = nullptr;
    QPushButton *m_launch = nullptr;
};

} // namespace rankdeck
