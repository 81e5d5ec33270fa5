// SPDX-License-Identifier: GPL-3.0-or-later
//
// state.json of a run directory: what the controller writes while a run goes on and when it
// ends, and what reopen() (a past run's views) and reattach() (taking over a detached run) read
// back. One struct with a symmetric toJson()/fromJson(), so that a field written is a field read.
// Other readers (RunRecord::info(), the CLI) read the same keys.
#pragma once

#include "record/runstate.h"
#include "record/streamoffsets.h"
#include "util/nodeclock.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct RunStateFile
{
    QString id;
    QString name;
    RunState state = RunState::Preparing;
    int attempt = 0;
    int maxRestarts = 0;
    qint64 launcherPid = 0;
    // The launcher's start (/proc/PID/stat field 22): a process that got its pid later is not it.
    // 0: not known (a state.json of an older RankDeck).
    qint64 launcherStartTicks = 0;
    QString launcherHost;
    qint64 createdUs = 0;
    qint64 startedUs = 0;
    qint64 endedUs = 0;
    QString masterAddress;
    int masterPort = 0;
    bool userStop = false;
    bool hung = false;
    int straggler = -1; // the rank the launcher's straggler report names (-1: none)
    // Why a job is slow, from the supervised ranks' sampled stacks (diagnosis/SlowRankVerdict):
    // the rank (-1: none), its cause's key (input, cpu-starved, io, compute, memory), the
    // sentence, where the time goes, and per rank the evidence; "slow" in state.json.
    int slowRank = -1;
    QString slowCause;
    QString slowText;
    QString slowSummary; // a few words for `runs`
    QString timeSplit;
    QStringList slowEvidence;
    QString error;
    QString rootCauseSummary;
    int rootCauseRank = -1;
    QList<RankStatus> ranks;
    QList<QJsonObject> attempts; // earlier attempts: ranks, failure report, root cause
    bool detach = false;         // launched so that the ranks may outlive the launcher
    bool detached = false;       // ... and the launcher has left
    QList<StreamOffsets> streams;
    // The run record could not be written whole (a full disk): which directory, and per rank
    // the bytes of output (and complete lines) the record lacks; metric points missing from
    // metrics.csv. Empty when the record is whole.
    struct RecordGap
    {
        int rank = 0;
        qint64 bytes = 0;
        qint64 lines = 0;
        bool operator==(const RecordGap &) const = default;
    };
    QString recordProblem;
    QList<RecordGap> recordGaps;
    qint64 recordMissingPoints = 0;
    // Each node's clock offset as last measured (by profile node index): what the ranks' own
    // timestamps were corrected by.
    QMap<int, NodeClock> clocks;
    // FlightRecorderCollector's state: collections made, recording off and why, the latest
    // collective verdict and whether it is shown.
    QJsonObject flightRecorder;

    QJsonObject toJson() const;
    // Missing keys keep their defaults (an empty object gives a default state).
    static RunStateFile fromJson(const QJsonObject &json);
};

} // namespace rankdeck
