// SPDX-License-Identifier: GPL-3.0-or-later
//
// One run: turns a profile and a training config into running ranks through a Transport and
// sequences its attempts (prepare → rank 0 → the others with its port → end or gang restart;
// stop, kill, detach, reopen, re-attach). The run itself is data (RunData), which its parts
// read and update; what they ask of the run goes through RunActions, implemented here:
//   - RankPipeline (one per rank, made by PipelineStages): a chunk of the rank's output through
//     splitter → parser → record (disk first) → offsets → extractors → Python scanner;
//   - RankEventHandlers: what the pipelines report; each event through RankEventTracker, then
//     its type's handler in a table;
//   - RunFailures: failures with their Python side, consequences (FailurePolicy, StopEscalation
//     after the flight recorders), exits judged, the collective verdict;
//   - RunWatch: the 0.5 s watch (stop and stack requests, rank 0's deadline, HangWatchdog);
//   - RunStateWriter: state.json (RunStateFile) and the record's health (a full disk);
//   - TransportReports, TransportSetup: the transport's node reports in words, and what a
//     launch asks of it;
//   - ReattachPlan, FlightRecorderCollector: what a detached run allows a new launcher to take
//     over; the ranks' flight-recorder dumps and the collective verdict.
// No port race: rank 0 starts with MASTER_PORT=0, binds a free port itself and reports it with
// its `store` event; only then are the other ranks started, with that port.
// A controller can also be built on a finished run directory (reopen()): the same object then
// serves the views of a past run, read-only. reopen() and reattach() restore through RunData.
// Detached runs (Options::detach, transports with Capability::Detach): the ranks keep running
// on the nodes when this launcher leaves (detachAndRelease(), or it dies); state.json keeps, per
// rank, the attempt and the stdout/stderr bytes already in the run record, so that reattach()
// resumes every stream at the next byte: no gap, no duplicate.
#pragma once

#include "config/launchplan.h"
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/rankruntime.h"
#include "record/runrecord.h"
#include "record/runstate.h"
#include "record/runstatefile.h"
#include "record/shownstate.h"
#include "record/streamoffsets.h"
#include "record/streamoffsetsfile.h"
#include "run/failurepolicy.h"
#include "run/pipelinestages.h"
#include "run/rankpipeline.h"
#include "run/runactions.h"
#include "run/rundata.h"
#include "stream/logmetricextractor.h"
#include "stream/pythonfailurescanner.h"
#include "stream/tensorboardscalars.h"
#include "stream/workerevent.h"
#include "transport/transport.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <memory>
#include <vector>

namespace rankdeck {

class FlightRecorderCollector;
class ProfileRecorder;
class LogStore;
class MetricsStore;
class SshInteraction;
class StopEscalation;
class TransportReports;
class RunWatch;
class RunStateWriter;
class RunFailures;
class RankEventHandlers;

class RunController : public QObject, private RunActions
{
    Q_OBJECT
public:
    struct Options
    {
        QString workerPath;     // the local rankdeck-worker (SSH transports deploy it)
        QString supervisorPath; // the local rankdeck-supervisor, for a user's program (--exec)
        QString runsDirectory;  // empty: RunRecord::defaultRunsDirectory()
        QString runId;          // empty: a new id
        int stopGraceMs = 2000; // `stop` command → SIGTERM
        int termGraceMs = 3000; // SIGTERM → SIGKILL
        int hangTimeoutSec =
            0; // no step progress while heartbeats go on; 0: the profile's heartbeat timeout
        int storeTimeoutSec =
            0; // rank 0 must report its port within this; 0: the profile's rendezvous timeout
        bool autoDumpStacks = true; // ask hung ranks for their stacks
        bool detach =
            false; // ranks survive this launcher where the transport can (state.json says so)
        SshInteraction *sshInteraction = nullptr;
    };

    RunController(const Profile &profile, const TrainingConfig &config, const Options &options,
                  QObject *parent = nullptr);
    ~RunController() override;

    // A past (or detached) run from its directory, read-only. A run still in progress there
    // (recorded by another process) is followed: its stores, ranks, state and failures update as
    // that process writes them (RecordFollower), and finished() comes when it ends. nullptr and
    // *error when unreadable.
    static RunController *reopen(const QString &runDirectory, QObject *parent, QString *error);

    // Takes over a detached run (or one whose launcher died) from its directory: reconnects to the
    // nodes of its profile snapshot and re-attaches every rank not seen ending, each stream from
    // the byte where the record stops; lines go on into the same logs, and the run then ends as
    // usual. nullptr and *error when the run cannot be re-attached (finished, local, attached to a
    // live launcher, a transport without Capability::Reattach). options.workerPath is not needed.
    static RunController *reattach(const QString &runDirectory, const Options &options,
                                   QObject *parent, QString *error);

    // Uses this transport instead of the profile's (benchmarks, synthetic runs); takes ownership.
    // Call before start().
    void setTransport(Transport *transport);

    // Creates the run record and starts preparing the nodes; everything else is asynchronous.
    bool start(QString *error);
    // Graceful stop of every rank (stop command, SIGTERM, SIGKILL).
    void stop();
    // SIGKILL to every rank's process group now.
    void kill();
    // Leaves the run without stopping it (Options::detach, every rank started): state.json gets
    // the stream offsets, the transport lets go of the ranks, they go on; the controller is then
    // inert (isDetached()) and reattach() can pick the run up. false and *error otherwise.
    bool detachAndRelease(QString *error);
    bool canDetach() const;
    bool isDetached() const { return m_run.released; }
    bool detachRequested() const { return m_options.detach; }
    // Every rank has a process (the moment `launch --detach` leaves).
    bool allRanksStarted() const { return m_run.allRanksStarted(); }
    // Asks ranks (-1: every running rank) for a stack dump; answers come as stacksReceived().
    // -1 also collects every rank's flight recorder (collectiveVerdictChanged()).
    void dumpStacks(int rank = -1);
    // Every running supervised rank (or those of `ranks`) records its sampled stacks for
    // `seconds`; profileFinished() gives the folder of collapsed stacks. false and *error when
    // one is being recorded, the run is not live or no rank asked runs.
    bool profile(int seconds, const QList<int> &ranks, QString *error);
    bool profiling() const;
    // Why the straggler is slow (the sampled stacks' verdict; found() false: none named), and
    // the windows it judges from.
    const SlowRankVerdict &slowVerdict() const { return m_run.slow; }
    const SampleStore &samples() const { return m_run.samples; }

    bool isReadOnly() const { return m_run.readOnly; }
    QString runId() const { return m_run.record.id(); }
    QString name() const { return m_run.record.name(); }
    QString runDirectory() const { return m_run.record.directory(); }
    const RunRecord &record() const { return m_run.record; }
    const Profile &profile() const { return m_run.profile; }
    const TrainingConfig &config() const { return m_run.config; }
    RunState state() const { return m_run.state; }
    int worldSize() const { return int(m_run.ranks.size()); }
    int attempt() const { return m_run.attempt; }
    bool isHung() const { return m_run.hung; }
    bool userStopped() const { return m_run.userStop; } // stop() or kill() was asked for
    int straggler() const { return m_run.straggler; }   // the watch's straggler, -1: none
    // The verdicts the one state model (record/shownstate.h) judges this run by: its hang
    // watch, its flight recorder's shown verdict, its failure report and its straggler (a
    // view's fresher one when given, else the watch's), so that every view judges alike.
    // Defined in runverdictfacts.cpp, beside what it reads of diagnosis/.
    RunVerdictFacts verdictFacts(int straggler = -1) const;
    QList<RankStatus> rankStatuses() const { return m_run.ranks; }
    QHash<int, QString> hostsByRank() const { return m_run.hostsByRank(); }
    RankStatus rankStatus(int rank) const { return m_run.ranks.value(rank); }
    QString stacks(int rank) const { return m_run.stacks.value(rank); }
    const FailureReport &failureReport() const { return m_run.policy.report(); }
    // The ranks' flight-recorder collections and the collective verdict (shownVerdict()).
    const FlightRecorderCollector &flightRecorder() const { return *m_collector; }
    // One line, e.g. "rank 1 (localhost): exit code 3: bad batch"; empty when nothing failed.
    // The root cause; when the run record could not be written (a full disk), that, with what
    // the record lacks.
    QString rootCauseSummary() const;
    // Empty while the run record is whole; else why not (the directory named).
    QString recordProblem() const { return m_run.recordProblem; }
    QString errorMessage() const { return m_run.errorMessage; }
    qint64 startedUs() const { return m_run.startedUs; }
    qint64 endedUs() const { return m_run.endedUs; }
    int masterPort() const { return m_run.masterPort; }
    // Each node's clock offset, by profile node index (nodes never measured are missing).
    QMap<int, NodeClock> nodeClocks() const { return m_run.clocks; }

    LogStore *logStore() const { return m_run.logs.get(); }
    MetricsStore *metricsStore() const { return m_run.metrics.get(); }

signals:
    void stateChanged(rankdeck::RunState state);
    void rankChanged(int rank);
    // Lines after the run record has them (partial pieces of huge lines included: skip them).
    void linesAppended(const QList<rankdeck::LogLine> &lines);
    void eventReceived(const rankdeck::WorkerEvent &event);
    void hangDetected(const QList<int> &ranks);
    // A profile asked for through profile() or the record is complete in `directory`.
    void profileFinished(const QString &directory, const QString &summary);
    // The sampled stacks' verdict changed (slowVerdict()).
    void slowVerdictChanged();
    void stacksReceived(int rank, const QString &stacks);
    void failureReportChanged();
    // flightRecorder().shownVerdict() changed (ranks' "in collective" cells too).
    void collectiveVerdictChanged();
    // A node's clock offset was measured (first, or it moved): nodeClocks().
    void nodeClocksChanged();
    // What the launcher itself does ("stopping ranks 0, 2 after rank 1 failed").
    void launcherMessage(const QString &message);
    // The run record stopped being written (its disk is full): said once, at once, naming the
    // directory; the run is being stopped. Front ends show it until the run is closed.
    void recordProblemChanged(const QString &message);
    // The transport's per-node preparation progress ("connecting", "uploading" 40, …); percent
    // is -1 when the stage has none. host is the profile's name for the node.
    void nodeProgress(int nodeIndex, const QString &host, const QString &stage, int percent);
    void finished(rankdeck::RunState state);
    // Every rank has been started (rankStarted from the transport for each).
    void ranksStarted();
    // detachAndRelease() succeeded: the run goes on without this controller.
    void detached();
    // The record kept a file the transport handed over (the Slurm batch script).
    void artifactKept(const QString &fileName);

private:
    RunController(QObject *parent);
    // The attempt's sequence: prepare, rank 0, the others with its port, end or restart.
    void connectTransport();
    void onPrepared();
    void onPrepareFailed(const QString &message);
    void failRun(const QString &message);
    void launchAttempt();
    void restartStatuses(qint64 now);
    void onRankStarted(int rank, qint64 pid);
    void onRankOutput(int rank, StreamKind stream, const QByteArray &chunk);
    void onRankExited(int rank, const RankExit &exit);
    void attachRanks();
    void finalize();
    // The record's stores, the shared stages and one RankPipeline per rank.
    void openPipelines();
    void setupFlightRecorder();
    void setupProfiler(); // runprofiling.cpp

    // RunActions: what the parts (RunWatch, RunStateWriter, RunFailures, RankEventHandlers)
    // ask of the run.
    void note(const QString &message) override;
    void requestStop() override { stop(); }
    void requestKill() override { kill(); }
    void requestStacks(int rank) override { dumpStacks(rank); }
    void requestProfile(int seconds, const QList<int> &ranks) override;
    void profileEvent(int rank, const WorkerEvent &event) override;
    void announceSlowVerdict() override { emit slowVerdictChanged(); }
    // pythonText: the traceback of torchelastic's error file (a supervised program's `error`
    // event), which wins over what the rank printed.
    void recordFailure(const RankFailure &failure, const QString &pythonText = {}) override;
    void stopRank(int rank, bool consequence) override;
    void startRank(int rank, int masterPort) override;
    void writeState() override;
    void setState(RunState state) override;
    void setRankState(int rank, RankState state, const QString &detail = QString()) override;
    void checkAllDone() override;
    Transport *runTransport() const override { return m_transport.data(); }
    void announceRank(int rank) override { emit rankChanged(rank); }
    void announceHang(const QList<int> &ranks) override { emit hangDetected(ranks); }
    void announceRecordProblem(const QString &message) override
    {
        emit recordProblemChanged(message);
    }
    void announceLines(const QList<LogLine> &lines) override { emit linesAppended(lines); }
    void announceEvent(const WorkerEvent &event) override { emit eventReceived(event); }
    void announceStacks(int rank, const QString &stacks) override
    {
        emit stacksReceived(rank, stacks);
    }
    void announceReport() override { emit failureReportChanged(); }
    void announceVerdict() override { emit collectiveVerdictChanged(); }

    RunData m_run;
    Options m_options;
    QPointer<Transport> m_transport;
    bool m_transportInjected = false;
    bool m_reattaching = false; // prepared() means: attach the ranks, not start them
    bool m_ranksStartedSent = false;
    PipelineStages m_stages; // what the ranks' pipelines share
    StopEscalation *m_stops = nullptr;
    TransportReports *m_reports = nullptr; // the transport's node reports, in words
    FlightRecorderCollector *m_collector = nullptr;
    ProfileRecorder *m_profiler = nullptr;
    std::unique_ptr<RunFailures> m_failures;     // failures, their consequences, exits
    std::unique_ptr<RunStateWriter> m_writer;    // state.json and the record's health
    std::unique_ptr<RankEventHandlers> m_events; // what the run does with ranks' output
    RunWatch *m_watch = nullptr;                 // the timers: stop requests, rendezvous, hangs
};

} // namespace rankdeck
