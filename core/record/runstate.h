// SPDX-License-Identifier: GPL-3.0-or-later
//
// States of a run and of each of its ranks, as value types that the controller updates, the run
// record stores and the views show.
#pragma once

#include <QJsonObject>
#include <QString>

namespace rankdeck {

enum class RankState
{
    Pending,
    Starting,
    Rendezvous,
    Running,
    Finished,
    Failed,
    Stopped,
    Lost
};

enum class RunState
{
    Preparing,
    Starting,
    Running,
    Stopping,
    Finished,
    Failed,
    Stopped
};

QString rankStateName(RankState state); // "pending", "starting", … (stable, stored on disk)
RankState rankStateFromName(const QString &name);
QString rankStateLabel(RankState state); // translated, for views
bool isTerminal(RankState state);

QString runStateName(RunState state);
RunState runStateFromName(const QString &name);
QString runStateLabel(RunState state);
bool isTerminal(RunState state);

struct RankStatus
{
    int rank = 0;
    int nodeIndex = 0;
    int localRank = 0;
    QString host; // as reported by the rank (hello), else the profile's node
    qint64 pid = 0;
    // The process's start on its node (/proc/PID/stat field 22, util/processidentity.h), so that
    // a later process that got the same pid is not taken for it; 0: not known (a transport that
    // cannot tell, a state.json of an older RankDeck).
    qint64 pidStartTicks = 0;
    RankState state = RankState::Pending;
    QString device;
    QString backend;
    qint64 startTimeUs = 0; // process started
    qint64 endTimeUs = 0;   // process ended
    int exitCode = 0;
    int signal = 0;   // terminating signal, 0 if none
    qint64 step = -1; // steps completed, as the worker counts them (-1: no report yet)
    // A user's program that reports no steps: the step (epoch, iteration) of the last value it
    // printed. Shown, not progress: the hang watch goes by output, not by this.
    qint64 printedStep = -1;
    qint64 totalSteps = 0;
    double loss = qQNaN();
    double samplesPerSec = 0;
    qint64 lastStepUs = 0;      // launcher clock: when the last step event arrived
    qint64 lastHeartbeatUs = 0; // launcher clock: last sign of life (any event)
    bool silent = false;        // no heartbeat past the timeout
    bool hung = false;          // heartbeats go on but steps do not
    bool rootCause = false;
    QString detail; // short reason shown next to the state
    // The collective it waits in, by the flight recorder ("#19 all_reduce", "no dump"), while
    // a hang is suspected or a desync was seen; empty otherwise.
    QString inCollective;

    qint64 shownStep() const { return step >= 0 ? step : printedStep; }

    QJsonObject toJson() const;
    static RankStatus fromJson(const QJsonObject &json);
};

} // namespace rankdeck
