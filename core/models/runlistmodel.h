// SPDX-License-Identifier: GPL-3.0-or-later
//
// The run list: every recorded run (newest first) with the live state of the runs in progress.
// A long history arrives in blocks as RunManager reads it, a screen at a time (issue 44).
#pragma once

#include "record/runrecord.h"

#include <QAbstractTableModel>
#include <QPointer>

namespace rankdeck {

class RunManager;

class RunListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        NameColumn,
        StateColumn,
        RanksColumn,
        StartedColumn,
        DurationColumn,
        RootCauseColumn,
        IdColumn,
        ColumnCount
    };
    enum Role
    {
        RunIdRole = Qt::UserRole + 1,
        DirectoryRole,
        RunStateRole,
        LauncherGoneRole,
        ShownStateRole, // int(ShownState)
        ToneRole        // int(StateTone)
    };

    explicit RunListModel(RunManager *manager, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    RunInfo run(int row) const { return m_runs.value(row); }
    int rowOf(const QString &runId) const;

private:
    void reload();

    QPointer<RunManager> m_manager;
    QList<RunInfo> m_runs;
};

} // namespace rankdeck
