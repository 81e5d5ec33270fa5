// SPDX-License-Identifier: GPL-3.0-or-later
//
// A run that another process records (rankdeck-cli, a second GUI, a detached launcher), followed
// from its record: opening it from the run list showed a snapshot that never changed (issue 31).
// What RunData::reopen() read is brought up to date on a short poll, the way that process writes
// it: lines (LogStore::readAppended), points (MetricsStore::readAppended), and state.json with
// the failure report, read again only when it was replaced (the writer renames a new one into
// place at most every 0.5 s), through the same RunData::restoreFrom() as reopen() and
// reattach(). The poll stops when the run ends. Nothing here writes to the record.
#pragma once

#include "record/runstate.h"

#include <QJsonObject>
#include <QObject>
#include <QTimer>

namespace rankdeck {

struct RunData;
class FlightRecorderCollector;
class RunActions;

class RecordFollower : public QObject
{
    Q_OBJECT
public:
    // run: a reopened run (RunData::reopen()), which this keeps up to date; it must outlive
    // this object (the controller owns both).
    // What changed goes to actions (ranks, stacks, the failure report, the collective verdict,
    // as a live run's parts tell them) and collector (the flight recorder's state).
    RecordFollower(RunData &run, RunActions &actions, FlightRecorderCollector &collector,
                   QObject *parent = nullptr);

    static constexpr int PollMs = 250;

    void start();
    bool isFollowing() const { return m_timer.isActive(); }
    // Reads what was written since the last poll (the timer calls it).
    void poll();

signals:
    void stateChanged(rankdeck::RunState state);
    void nodeClocksChanged();
    void finished(rankdeck::RunState state);

private:
    bool stateFileReplaced();
    void readState();
    void readStacks();

    RunData &m_run;
    RunActions &m_actions;
    FlightRecorderCollector &m_collector;
    QTimer m_timer;
    // state.json as last read: a new file (rename) or a new size or time means read it again.
    qint64 m_stateInode = -1;
    qint64 m_stateSize = -1;
    qint64 m_stateMtimeNs = -1;
    QJsonObject m_report;
    QJsonObject m_flightRecorder;
};

} // namespace rankdeck
