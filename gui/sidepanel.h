// SPDX-License-Identifier: GPL-3.0-or-later
//
// The left panel: cluster profiles (built-in "local" first) and runs (core's RunListModel:
// running ones on top, then history). It only reports what the user picked.
#pragma once

#include <QWidget>

class QAbstractItemModel;
class QAction;
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
    void selectRunRow(int row);
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

private:
    QListWidget *m_profiles = nullptr;
    QTreeView *m_runs = nullptr;
    QToolButton *m_edit = nullptr;
    QToolButton *m_delete = nullptr;
    QAction *m_reattach = nullptr;
    QAbstractItemModel *m_runModel = nullptr;
};

} // namespace rankdeck
