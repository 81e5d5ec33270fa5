// SPDX-License-Identifier: GPL-3.0-or-later
//
// What one run is made of, as data: its profile and config, its record and stores, every
// rank's status and runtime, its failures and attempts. RunController owns one and sequences
// it; the parts that work on a run (RunWatch: the timers; RunStateWriter: state.json and the
// record's health) read and update the same one instead of each keeping a copy.
// restoreFrom() is the one way back from a run directory's state.json, for reopen() and
// reattach() alike.
#pragma once

#include "config/launchplan.h"
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/rankruntime.h"
#include "diagnosis/slowrankanalysis.h"
#include "record/runrecord.h"
#include "record/runstate.h"
#include "record/runstatefile.h"
#include "run/failurepolicy.h"
#include "store/samplestore.h"
#include "util/nodeclock.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>

#include <memory>
#include <vector>

namespace rankdeck {

class LogStore;
class MetricsStore;
class RankPipeline;
class ReattachPlan;

struct RunData
{
    RunData();
    ~RunData();
    RunData(const RunData &) = delete;
    RunData &operator=(const RunData &) = delete;

    // A new run of this profile and config: a user's program gets the profile's metric
    // patterns too.
    void setUp(const Profile &profile, const TrainingConfig &config);
    // The stores' files closed (the run ended, or the launcher left it).
    void closeStores();
    // The run ended: the stores closed, the room kept for a full disk and the stop request
    // released.
    void closeRecord();

    // What reopen() and reattach() both take back from a run directory: the state, the
    // attempts, the ranks as last written and the failure report. Each then adds its own (a
    // past run's end, a followed run's runtimes and offsets).
    void restoreFrom(const RunStateFile &state, const FailureReport &report);
    // A past run, read-only, from its directory: state.json, the failure report, the stacks
    // and the stores as they are. false and *error when unreadable; *state: what it read.
    bool reopen(const QString &runDirectory, RunStateFile *state, QString *error);
    // A detached run taken over: what the plan found, every rank as last seen, alive now.
    void restoreFrom(const ReattachPlan &reattach, qint64 nowUs);

    // The plan's ranks, none started yet.
    void addPlannedRanks();
    // A new attempt of the rank: its place kept, the rest as before it started.
    void restartRank(int rank, qint64 nowUs);
    // Every rank has a process (or ended).
    bool allRanksStarted() const;
    // Ranks whose process runs now (started, its pid known, not exited).
    QList<int> livingRanks() const;
    // rank → host, for the verdicts' words.
    QHash<int, QString> hostsByRank() const;
    // The attempt that just ended into the history (ranks, failure report, root cause); the
    // next one starts with no failures.
    void archiveAttempt(qint64 nowUs);
    // How the run ended: its own failure, a user's stop, or every rank finished.
    RunState finalState(bool ownFailure) const;

    bool readOnly = false; // a past run's views (reopen())
    Profile profile;
    TrainingConfig config;
    RunRecord record;
    LaunchPlan plan;
    std::unique_ptr<LogStore> logs;
    std::unique_ptr<MetricsStore> metrics;
    std::vector<std::unique_ptr<RankPipeline>> pipelines; // by rank, for the whole run
    QList<RankStatus> ranks;
    QList<RankRuntime> runtime;
    QHash<int, QString> stacks;
    QMap<int, NodeClock> clocks; // by node; a rank's own timestamps are corrected by its node's
    FailurePolicy policy;        // this attempt's failures
    QList<QJsonObject> attempts; // history of earlier attempts
    QString rootCauseSummary;
    QString errorMessage;
    QString recordProblem; // empty while the record is whole
    RunState state = RunState::Preparing;
    int attempt = 0;
    int masterPort = 0;
    bool userStop = false;
    bool hung = false;
    int straggler = -1;      // the rank the watch's StragglerReport names (-1: none)
    SampleStore samples;     // the supervised ranks' sampled stacks, the last minute
    SlowRankVerdict slow;    // the watch's verdict on them (shown once it held twice)
    bool stateDirty = false; // state.json is behind (the watch writes it)
    bool finalized = false;
    bool released = false; // detachAndRelease() done
    qint64 startedUs = 0;
    qint64 endedUs = 0;
    qint64 rank0StartUs = 0;
};

} // namespace rankdeck
