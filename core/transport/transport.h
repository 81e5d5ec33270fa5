// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one interface every way of running ranks implements (local processes, SSH channels,
// synthetic generators in benchmarks). The run controller only talks to this; transports never
// touch widgets and never block the thread they live on.
#pragma once

#include "config/ranklaunchspec.h"
#include "util/nodeclock.h"
#include "util/streamkind.h"

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>

namespace rankdeck {

// What copying a local directory to one node did (launch --sync, Capability::Sync).
struct SyncStats
{
    QString directory;     // the copy on the node, where the program runs
    int filesUploaded = 0; // new or changed since the last sync to this node
    qint64 bytesUploaded = 0;
    int filesUnchanged = 0;
    int filesRemoved = 0; // synced before, gone locally
    qint64 elapsedMs = 0;
};

// How a rank process ended, as precisely as the transport can tell.
struct RankExit
{
    bool crashed = false; // killed by a signal
    int exitCode = 0;     // when !crashed
    int signal = 0;       // when crashed, if known (0: unknown)
    qint64 timeUs = 0;    // when the transport saw it end (µs since the epoch)
    QString detail;       // e.g. "connection lost", "failed to start: …"
};

class Transport : public QObject
{
    Q_OBJECT
public:
    // What a transport can do beyond starting and signalling ranks. The run controller asks for
    // these instead of knowing transport classes, so that a new transport (Slurm, where a job is
    // detached by nature) adds to the set without touching core/run.
    enum class Capability
    {
        // Ranks can outlive the launcher: setDetached(true) keeps them running when the
        // transport goes away.
        Detach = 0x1,
        // A later launcher can take over ranks left running (attachRank()), streams resumed at
        // a byte offset.
        Reattach = 0x2,
        // Ranks do not see the launcher's files: setSyncDirectory() copies a local directory to
        // every node during prepare() (only what changed since the last copy) and
        // syncedDirectory() names the copy. Without it ranks see the launcher's own files and a
        // synced directory is used in place.
        Sync = 0x4,
    };
    Q_DECLARE_FLAGS(Capabilities, Capability)

    using QObject::QObject;
    ~Transport() override = default;

    virtual Capabilities capabilities() const { return {}; }
    bool can(Capability c) const { return capabilities().testFlag(c); }

    // Human name for messages ("local", "ssh gpu-node-3").
    virtual QString describe() const = 0;

    // Gets the nodes ready (connect, deploy the worker from localWorkerPath, check); answers
    // asynchronously with prepared() or prepareFailed(). Ranks are started only after prepared().
    virtual void prepare(const QString &localWorkerPath) = 0;
    // Where the worker lives on a node once prepared.
    virtual QString workerPath(int nodeIndex) const = 0;

    // Starts one rank; answers asynchronously with rankStarted or rankExited (start failure).
    virtual void startRank(const RankLaunchSpec &spec) = 0;
    // Data written before rankStarted reaches a local rank once it runs; other transports may
    // drop it, so the controller sends a pending `stop` again on rankStarted.
    virtual void writeStdin(int rank, const QByteArray &data) = 0;
    virtual void closeStdin(int rank) = 0;
    // Delivers a signal to the rank's whole process group.
    virtual void signalRank(int rank, int signal) = 0;
    // When the rank's process started (field 22 of /proc/PID/stat on its node), read while it
    // could not have been reaped, so that state.json names the process and not only its pid,
    // which may be reused (util/processidentity.h); 0: not known to this transport.
    virtual qint64 rankStartTicks(int rank) const
    {
        Q_UNUSED(rank);
        return 0;
    }

    // Capability::Detach: ranks keep running when this transport goes away. Call before
    // prepare(); transports without the capability ignore it.
    virtual void setDetached(bool detached) { Q_UNUSED(detached); }
    // Capability::Reattach: takes over a rank left running by an earlier launcher. Its streams
    // resume after stdoutBytes / stderrBytes, rankStarted comes again with the pid, then output
    // and rankExited as usual. attempt is the rank's start count in that run (1 unless it was
    // restarted). Needs prepare() (an empty worker path is enough). Transports without the
    // capability report the rank exited with that reason.
    virtual void attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                            qint64 stderrBytes);

    // Before prepare(): the local directory that travels with the run (launch --sync) and the
    // most it may hold (bytes, <= 0: no limit). The base class only remembers it.
    virtual void setSyncDirectory(const QString &localDirectory, qint64 limitBytes);
    // Where the synced directory is on a node once prepared; the base class: the local directory
    // itself. Empty without a sync directory.
    virtual QString syncedDirectory(int nodeIndex) const;

    // What a check (prepare(), then prepared() or prepareFailed()) found, for a person, so that
    // `profiles check` and the GUI's "Test connection" say the same without knowing the kind:
    // of one node ("OK — Debian 12, 4 CPUs, no GPUs, …" or "FAILED — why"; empty: nothing to
    // say of it), and of the whole ("every node reachable", "sbatch, squeue and scancel answer,
    // partition gpu").
    virtual QString nodeReport(int nodeIndex) const;
    virtual QString checkSummary() const;
    // The node as the user knows it in such a report ("gpu-node-3", "login slurm-head").
    virtual QString nodeName(int nodeIndex) const;

protected:
    QString m_syncDirectory;
    qint64 m_syncLimitBytes = 0;

    // Reports an exit from the event loop, not from within the call that caused it: callers
    // start or attach ranks in a loop and expect every answer after it, as from a real process.
    void reportExitLater(int rank, const RankExit &exit);

signals:
    void prepared();
    void prepareFailed(const QString &message);
    void rankStarted(int rank, qint64 pid);
    void rankOutput(int rank, rankdeck::StreamKind stream, const QByteArray &chunk);
    void rankExited(int rank, const rankdeck::RankExit &exit);
    // Progress a front end may show per node ("connecting", "uploading 40%", …).
    void nodeProgress(int nodeIndex, const QString &stage, int percent);
    // Capability::Sync: a node's copy of the sync directory is up to date (before prepared()).
    void synced(int nodeIndex, const rankdeck::SyncStats &stats);
    // A file the run record keeps so that users see exactly what ran (the Slurm transport's
    // batch script); fileName is a plain name inside the run directory.
    void artifact(const QString &fileName, const QByteArray &content);
    // How far the node's clock is from the launcher's (measured, or sameClock for ranks on this
    // machine): before prepared(), and again whenever it is measured anew. The controller puts
    // the ranks' own timestamps on the launcher's clock with it.
    void nodeClock(int nodeIndex, const rankdeck::NodeClock &clock);
};

Q_DECLARE_OPERATORS_FOR_FLAGS(Transport::Capabilities)

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::RankExit)
Q_DECLARE_METATYPE(rankdeck::SyncStats)
