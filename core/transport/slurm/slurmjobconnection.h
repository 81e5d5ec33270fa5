// SPDX-License-Identifier: GPL-3.0-or-later
//
// Everything the Slurm transport does on the login node, on a thread of its own (every call to
// the login blocks): the check and the deployment of the worker to the shared directory
// (content-hashed, once), one sbatch job per attempt (SlurmScript), and a poll loop that reads
// the job's state and every rank's new bytes by offset in one login command. The owning
// SlurmTransport talks to it only through queued calls and signals.
//
// How ranks end, as the run controller needs to hear it:
// - the wrapper's exit file: exit code, or killed by signal N (128+N);
// - an exit by SIGTERM/SIGKILL the launcher did not ask for is held for a few polls until the
//   job's state tells whether the cluster ended the job (scancel from outside, TIMEOUT,
//   NODE_FAIL, OUT_OF_MEMORY, preemption): then the rank ends with that cause as its detail;
// - a rank with no exit file when the job ended ends with the job's cause;
// - a stop while the job is still pending cancels the job, and its ranks end cleanly ("cancelled
//   while pending").
#pragma once

#include "config/profile.h"
#include "transport/slurm/slurmjobstate.h"
#include "transport/slurm/slurmscript.h"
#include "transport/transport.h"

#include <QByteArray>
#include <QMap>
#include <QObject>
#include <QSet>
#include <QString>

#include <memory>

class QMutex;
class QTimer;

namespace rankdeck {

class SlurmLogin;
class SshInteraction;

class SlurmJobConnection : public QObject
{
    Q_OBJECT
public:
    SlurmJobConnection(const Profile &profile, const QString &runId, SshInteraction *interaction,
                       QMutex *interactionLock);
    ~SlurmJobConnection() override;

    // All of these run on the connection's thread (invoke them queued).
    void setPollIntervalMs(int ms) { m_pollIntervalMs = ms; }
    void setDetached(bool detached) { m_detached = detached; }
    void prepare(const QString &localBinary);
    void startRank(const rankdeck::RankLaunchSpec &spec);
    void attachRank(const rankdeck::RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                    qint64 stderrBytes);
    void writeStdin(int rank, const QByteArray &data);
    void closeStdin(int rank);
    void signalRank(int rank, int signal);
    // Unless detached, cancels a job that has not ended; closes the login.
    void shutdown();

signals:
    // binary: where the worker (or supervisor) is on the shared file system; runDirectory: the
    // run's directory there. error empty: ready.
    void prepareFinished(const QString &error, const QString &binary, const QString &runDirectory);
    void rankStarted(int rank, qint64 pid);
    void rankOutput(int rank, rankdeck::StreamKind stream, const QByteArray &chunk);
    void rankExited(int rank, const rankdeck::RankExit &exit);
    void progress(const QString &stage);
    // sbatch accepted the attempt's script (kept in the run record).
    void jobSubmitted(const QString &jobId, int attempt, const QByteArray &script);

private:
    struct Rank
    {
        int attempt = 1;
        QString baseName;
        qint64 stdoutOffset = 0;
        qint64 stderrOffset = 0;
        bool pidSeen = false;
        bool exited = false;
        int heldPolls = 0;     // an exit waiting for the job's state to explain it
        QSet<int> signalsSent; // by this launcher
    };
    bool checkLogin(const QString &localBinary, QString *binary, QString *error);
    void submit(int attempt);
    bool writeFile(const QString &path, const QByteArray &content, QString *error);
    void poll();
    void handleRank(int rank, const SlurmScript::PollReply::Rank &r, bool complete);
    void finishRank(int rank, const RankExit &exit);
    RankExit exitWithJob(int rank) const;
    void cancelJob(const QString &why);
    SlurmJobState lookUpFinished();
    QString rankPath(int rank, const QString &suffix) const;

    Profile m_profile;
    QString m_runId;
    std::unique_ptr<SlurmLogin> m_login;
    QString m_runDirectory;
    QString m_binarySha256; // of m_binary: each rank checks it on its node before the exec
    QString m_binary;
    QString m_libraryDirectory;
    QMap<int, Rank> m_ranks;
    int m_attempt = 0;
    QString m_jobId;
    SlurmJobState m_job;
    bool m_jobFinished = false;
    int m_finishedPolls = 0; // polls since the job ended (its files may still be read)
    int m_allExitedPolls = 0;
    bool m_cancelRequested = false;  // this launcher cancelled the job
    bool m_cancelledPending = false; // ... before it ran
    bool m_detached = false;
    bool m_shutDown = false;
    int m_pollIntervalMs = 300;
    int m_signalSerial = 0;
    QString m_lastProgress;
    QTimer *m_timer = nullptr;
};

} // namespace rankdeck
