// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the parts that work on a run (RunWatch, RunStateWriter, RunFailures,
// RankEventHandlers) may ask of the run
// itself: its decisions (stop, a failure, a rank's stop, stacks) and what it tells its front ends
// stay in RunController, which implements this; a part never reaches into the controller otherwise.
#pragma once

#include "record/runstate.h"
#include "stream/logline.h"
#include "stream/workerevent.h"

#include <QList>
#include <QString>

namespace rankdeck {

class Transport;
struct RankFailure;

class RunActions
{
public:
    virtual ~RunActions() = default;

    // A line for the launcher log (and launcherMessage()).
    virtual void note(const QString &message) = 0;
    // As stop(): every rank, gracefully.
    virtual void requestStop() = 0;
    // As kill(): SIGKILL to every rank now.
    virtual void requestKill() = 0;
    // As dumpStacks(): -1 every running rank, with the flight recorders.
    virtual void requestStacks(int rank) = 0;
    // As profile(): every rank (or those) records its stacks for that long.
    virtual void requestProfile(int seconds, const QList<int> &ranks) = 0;
    // A `profile` event of a rank, for the recorder.
    virtual void profileEvent(int rank, const WorkerEvent &event) = 0;
    // slowVerdictChanged()
    virtual void announceSlowVerdict() = 0;
    virtual void recordFailure(const RankFailure &failure, const QString &pythonText) = 0;
    virtual void stopRank(int rank, bool consequence) = 0;
    // Rank 0 reported its port: the others start with it.
    virtual void startRank(int rank, int masterPort) = 0;
    virtual void writeState() = 0;
    virtual void setState(RunState state) = 0;
    virtual void setRankState(int rank, RankState state, const QString &detail) = 0;
    // Every rank ended: the run ends (or restarts) once the events queued are handled.
    virtual void checkAllDone() = 0;
    // The run's transport; nullptr once there is none (a reopened or a released run).
    virtual Transport *runTransport() const = 0;
    // What front ends are told (RunController's rankChanged, hangDetected and
    // recordProblemChanged).
    virtual void announceRank(int rank) = 0;
    virtual void announceHang(const QList<int> &ranks) = 0;
    virtual void announceRecordProblem(const QString &message) = 0;
    // linesAppended(), eventReceived(), stacksReceived(), failureReportChanged(),
    // collectiveVerdictChanged().
    virtual void announceLines(const QList<LogLine> &lines) = 0;
    virtual void announceEvent(const WorkerEvent &event) = 0;
    virtual void announceStacks(int rank, const QString &stacks) = 0;
    virtual void announceReport() = 0;
    virtual void announceVerdict() = 0;
};

} // namespace rankdeck
