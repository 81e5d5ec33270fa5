// SPDX-License-Identifier: GPL-3.0-or-later
//
// Creates or edits a cluster profile. Validation runs as the user types and uses core's own
// rules (ProfileStore::validate), so the editor and the TOML loader never disagree; the OK
// button stays disabled while anything is wrong, and each problem names its field.
#pragma once

#include "config/profile.h"

#include <QDialog>
#include <QMap>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace rankdeck {

class ProblemLabel;
class ProfileKindForm;
class ProfileStore;

class ProfileEditorDialog : public QDialog
{
    Q_OBJECT
public:
    // store: where accept() saves the profile (not owned; null: accept() does not save).
    explicit ProfileEditorDialog(ProfileStore *store, QWidget *parent = nullptr);

    // Edits an existing profile: the name stays fixed so that the file is replaced, not copied.
    void setProfile(const Profile &profile, bool existing);
    // The profile as the form shows it now, and the problems with it ("field: message").
    Profile profile() const;
    QStringList problems() const;

    QLineEdit *nameEdit() const { return m_name; }
    QTableWidget *nodesTable() const { return m_nodes; }
    // The form of a kind's own table ([slurm]); nullptr for a kind without one.
    ProfileKindForm *kindForm(const QString &kind) const { return m_kindForms.value(kind); }
    QPushButton *addNodeButton() const { return m_addNode; }

public slots:
    void accept() override;
    // Keeps the size the user gave the dialog for the next time it opens.
    void done(int result) override;
    void addNode();
    void removeSelectedNodes();
    void addEnvironmentVariable();
    void removeSelectedVariables();

signals:
    // "Test connection" was clicked on a valid profile; whoever opened the dialog runs the node
    // check (core) and reports back through setConnectionReport().
    void testConnectionRequested(const rankdeck::Profile &profile);

public:
    void setConnectionReport(const QString &text);

private:
    void revalidate();
    int cellInt(int row, int column, bool *ok) const;

    ProfileStore *m_store = nullptr;
    bool m_existing = false;
    QLineEdit *m_name = nullptr;
    QComboBox *m_transport = nullptr;
    QTableWidget *m_nodes = nullptr;
    QLabel *m_nodesLabel = nullptr;
    QMap<QString, ProfileKindForm *> m_kindForms; // by kind name (ProfileKindForms)
    QPushButton *m_addNode = nullptr;
    QPushButton *m_removeNode = nullptr;
    QLineEdit *m_rendezvous = nullptr;
    QLineEdit *m_workerDirectory = nullptr;
    QLineEdit *m_libtorchPath = nullptr;
    QTableWidget *m_environment = nullptr;
    QPushButton *m_removeVariable = nullptr;
    QPlainTextEdit *m_metrics = nullptr;
    QComboBox *m_backend = nullptr;
    QSpinBox *m_connectTimeout = nullptr;
    QSpinBox *m_rendezvousTimeout = nullptr;
    QSpinBox *m_heartbeatTimeout = nullptr;
    QSpinBox *m_collectiveTimeout = nullptr;
    QSpinBox *m_orphanGrace = nullptr;
    ProblemLabel *m_problems = nullptr;
    QPushButton *m_testButton = nullptr;
    QPlainTextEdit *m_connectionReport = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
};

} // namespace rankdeck
