// SPDX-License-Identifier: GPL-3.0-or-later
//
// The left panel: cluster profiles (built-in "local" first) and runs (core's RunListModel:
// running ones on top, then history), with a filter and a context menu that acts on one run.
// It reports what the user picked; only copying and opening a folder it does itself.
#pragma once

#include <QWidget>

class QAbstractItemModel;
class QAction;
class QLineEdit;
class QPoint;
class QSortFilterProxyModel;
class QTreeView;
class QListWidget;
class QModelIndex;
class QToolButton;

namespace rankdeck {

class SidePanel : public QWidget
{
    Q_OBJECT
public:
    explicit SidePanel(QWidget *parent = nullptr);

    void setProfileNames(const QStringList &names);
    QString currentProfile() const;
    void setCurrentProfile(const QString &name);
    QListWidget *profileList() const { return m_profiles; }

    void setRunModel(QAbstractItemModel *source);
    QTreeView *runList() const { return m_runs; }
    // Makes the run current in the list (when the filter lets it be seen).
    void selectRun(const QString &runId);
    // A run's row in the run list's view model (what a click selects), at `column` (0: the
    // name; RunListModel's columns); invalid when the list does not show the run.
    QModelIndex indexOfRun(const QString &runId, int column = 0) const;
    QLineEdit *runFilter() const { return m_runFilter; }
    // "rankdeck-cli launch …" that launches the run recorded in runDirectory again; empty when
    // its record cannot be read.
    static QString relaunchCommand(const QString &runDirectory);
    // The ids of the selected runs, in the list's order.
    QStringList selectedRunIds() const;
    // The Re-attach action for the run at index; enabled only for detached or orphaned SSH runs.
    QAction *reattachAction() const { return m_reattach; }

signals:
    void newProfileRequested();
    void editProfileRequested(const QString &name);
    void deleteProfileRequested(const QString &name);
    void launchRequested(const QString &profileName);
    void runSelected(const QModelIndex &index);
    // Two or more runs selected (Ctrl/Shift-click): compare them.
    void runsSelectedForCompare(const QStringList &runIds);
    // "Re-attach" on a detached run (context menu of the run list).
    void reattachRequested(const QString &runId);
    // The run list's context menu: launch again with the same settings, delete the record.
    void relaunchRequested(const QString &runId);
    void deleteRequested(const QString &runId);

private:
    QListWidget *m_profiles = nullptr;
    QTreeView *m_runs = nullptr;
    QToolButton *m_edit = nullptr;
    QToolButton *m_delete = nullptr;
    QAction *m_reattach = nullptr;
    QAbstractItemModel *m_runModel = nullptr;
    QSortFilterProxyModel *m_runFilterModel = nullptr;
    QLineEdit *m_runFilter = nullptr;

    void showRunMenu(const QPoint &pos);
};

} // namespace rankdeck
