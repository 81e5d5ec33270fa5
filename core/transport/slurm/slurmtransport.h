// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs the ranks of a "slurm" profile as one sbatch job per attempt: the worker (or the
// supervisor of a user's program) goes to the shared directory once, content-hashed; the batch
// script runs one srun step, one task per rank (SlurmScript); SlurmJobConnection follows the job
// and every rank's files from the login node, on its own thread.
//
// What callers should know beyond Transport:
// - startRank(rank 0) submits the job; the other ranks' startRank() hand their specs to tasks
//   that already wait in the job (see SlurmScript: no port race).
// - While the job is pending, nodeProgress(0, "pending (Resources), 1st in the queue", -1).
// - artifact("job.a<attempt>.sbatch", script): the batch script as submitted, for the record.
// - A job is detached by nature: setDetached(true) leaves it running when the transport goes
//   away; otherwise the destructor scancels a job that has not ended. attachRank() takes over a
//   job of an earlier launcher, each stream from a byte offset.
// - prepare("") checks the login only (sbatch, squeue, scancel answer; the partition exists).
#pragma once

#include "config/profile.h"
#include "transport/transport.h"

#include <QMutex>
#include <QString>

#include <functional>

class QThread;

namespace rankdeck {

class SlurmJobConnection;
class SshInteraction;
class ThreadCalls;

class SlurmTransport : public Transport
{
    Q_OBJECT
public:
    SlurmTransport(const Profile &profile, const QString &runId, SshInteraction *interaction,
                   QObject *parent = nullptr);
    ~SlurmTransport() override;

    Capabilities capabilities() const override { return Capability::Detach | Capability::Reattach; }
    QString describe() const override;
    QString checkSummary() const override;
    QString nodeName(int nodeIndex) const override;
    void prepare(const QString &localWorkerPath) override;
    QString workerPath(int nodeIndex) const override;
    void startRank(const RankLaunchSpec &spec) override;
    void writeStdin(int rank, const QByteArray &data) override;
    void closeStdin(int rank) override;
    void signalRank(int rank, int signal) override;
    void setDetached(bool detached) override;
    void attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                    qint64 stderrBytes) override;

    // Before prepare(): how often the job and the rank files are read (default 300 ms).
    void setPollIntervalMs(int ms);
    // After prepared(): the run's directory on the shared file system; the last job submitted.
    QString runDirectory() const { return m_runDirectory; }
    QString jobId() const { return m_jobId; }

private:
    // Calls the connection on its thread, after the calls made before (ThreadCalls).
    void onConnection(std::function<void(SlurmJobConnection *)> call);
    // The connection's signals, on this object's thread (relayed through m_fromConnection).
    void onPrepareFinished(const QString &error, const QString &binary,
                           const QString &runDirectory);
    void onProgress(const QString &stage);
    void onJobSubmitted(const QString &jobId, int attempt, const QByteArray &script);

    Profile m_profile;
    QString m_runId;
    SshInteraction *m_interaction;
    QMutex m_interactionLock;
    QThread *m_thread = nullptr;
    SlurmJobConnection *m_connection = nullptr;
    ThreadCalls *m_toConnection = nullptr;   // the connection's child: every call to it goes here
    ThreadCalls *m_fromConnection = nullptr; // its signals come back through this one
    QString m_binary;
    QString m_runDirectory;
    QString m_jobId;
    bool m_detached = false;
    int m_pollIntervalMs = 300;
};

} // namespace rankdeck
