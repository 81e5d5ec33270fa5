// SPDX-License-Identifier: GPL-3.0-or-later
//
// One row per rank of a run: state, host, step, loss, throughput, heartbeat age, pid, the
// collective it waits in (the flight recorder's, while a hang is suspected or a desync was
// seen; empty otherwise), detail.
// Rank changes arrive per event; the model folds them into one dataChanged per interval so a
// view repaints a few times a second, not once per step of every rank.
#pragma once

#include "record/runstate.h"
#include "record/shownstate.h"

#include <QAbstractTableModel>
#include <QPointer>
#include <QSet>
#include <QTimer>

namespace rankdeck {

class RunController;

class RankTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        RankColumn,
        HostColumn,
        StateColumn,
        StepColumn,
        LossColumn,
        ThroughputColumn,
        HeartbeatColumn,
        PidColumn,
        InCollectiveColumn,
        DetailColumn,
        ColumnCount
    };
    enum Role
    {
        RankStateRole = Qt::UserRole + 1, // int(RankState)
        RootCauseRole,                    // bool
        HungRole,                         // bool (hung or silent)
        SortRole,                         // numbers as numbers
        ShownStateRole,                   // int(ShownState): the one state model
        ToneRole,                         // int(StateTone) of ShownStateRole
        // The state column's order: ranks that differ (root cause, culprits, stuck, failed,
        // straggling) before the others, each kind in rank order.
        UrgencyRole,
    };

    explicit RankTableModel(QObject *parent = nullptr);

    void setController(RunController *controller);
    RunController *controller() const { return m_controller; }
    void setUpdateInterval(int ms);
    // The straggler a StragglerReport named (-1: none): its row reads "straggling".
    void setStraggler(int rank);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Pushes pending changes now (tests, or a view that just became visible).
    void flush();

private:
    QPointer<RunController> m_controller;
    QList<RankStatus> m_rows;
    RunState m_runState = RunState::Preparing;
    RunVerdictFacts m_facts;
    int m_straggler = -1;
    QSet<int> m_dirty;
    QTimer m_timer;
};

} // namespace rankdeck
