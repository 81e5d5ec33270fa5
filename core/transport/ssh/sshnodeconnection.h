// SPDX-License-Identifier: GPL-3.0-or-later
//
// Everything the SSH transport does for one node, on that node's own thread: the session, the
// node check with the deployment of the worker (one exec channel for both, see prepare()), and
// one exec channel per rank, read when the session's socket has data. A dropped connection is
// re-established until a deadline; the ranks' streams then resume from the last byte received
// (see SshRankScript). The owning SshTransport talks to it only through queued calls and signals.
#pragma once

#include "transport/ssh/sshsession.h"
#include "transport/transport.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QTimer;
class QMutex;
class QSocketNotifier;
struct ssh_channel_struct;

namespace rankdeck {

class SshInteraction;

// What the node check found; also the answer to a "test connection".
struct SshNodeInfo
{
    int nodeIndex = 0;
    QString host;           // as the profile names it
    QString label;          // user@address:port actually used
    QString fingerprint;    // SHA256 of the host key
    QString home;
    QString os;             // uname -srm
    QString distribution;   // PRETTY_NAME from /etc/os-release
    int cpus = 0;
    QStringList gpus;       // nvidia-smi -L lines; empty without nvidia-smi
    QString workerPath;     // deployed worker (empty when prepare had no local worker)
    bool workerUploaded = false; // false: the node already had this content
    qint64 workerBytes = 0;
    QString libtorchDirectory;   // added to LD_LIBRARY_PATH for ranks; empty: not needed
    QString error;               // why the node is not usable; empty: ready
};

struct SshNodeSettings
{
    QString runId;
    QString workerDirectory = QStringLiteral("~/.cache/rankdeck/worker");
    QString libtorchPath;          // "", "python" or a directory on the node
    QString defaultRunDirectory;   // used when a spec has none ("~/…" allowed)
    int reconnectDeadlineSec = 30; // how long a lost connection is retried before ranks are lost
    bool detached = false;         // ranks keep running when the launcher goes away
};

class SshNodeConnection : public QObject
{
    Q_OBJECT
public:
    SshNodeConnection(int nodeIndex, const SshEndpoint &endpoint, const SshNodeSettings &settings,
                      SshInteraction *interaction, QMutex *interactionLock);
    ~SshNodeConnection() override;

    // All of these run on the connection's thread (invoke them queued).
    void prepare(const QString &localWorkerPath);
    void startRank(const rankdeck::RankLaunchSpec &spec);
    void attachRank(const rankdeck::RankLaunchSpec &spec, int attempt, qint64 stdoutBytes, qint64 stderrBytes);
    void writeStdin(int rank, const QByteArray &data);
    void closeStdin(int rank);
    void signalRank(int rank, int signal);
    void setDetached(bool detached);
    // Ends the node's part: unless detached, running ranks get SIGTERM; closes the connection.
    void shutdown();

signals:
    void prepareFinished(int nodeIndex, const rankdeck::SshNodeInfo &info);
    void rankStarted(int rank, qint64 pid);
    void rankOutput(int rank, rankdeck::StreamKind stream, const QByteArray &chunk);
    void rankExited(int rank, const rankdeck::RankExit &exit);
    void nodeProgress(int nodeIndex, const QString &stage, int percent);

private:
    struct Rank
    {
        RankLaunchSpec spec;
        QString runDirectory;
        QString baseName;
        ssh_channel_struct *channel = nullptr;
        qint64 pid = 0;
        bool headerSeen = false;
        bool startedReported = false;
        QByteArray header;
        QByteArray earlyStderr;
        qint64 stdoutBytes = 0;
        qint64 stderrBytes = 0;
        QByteArray stdinHistory; // everything written, so a re-attach can resend what was lost
        bool resync = false;     // attach channel: stdin resumes once the header tells where
        // Bytes of stdin the node had before stdinHistory began: -1 until the first header of a
        // rank attached from an earlier launcher (whose stdin this launcher never saw).
        qint64 stdinBase = 0;
        bool stdinClosed = false;
    };

    QString expand(const QString &path) const;
    // The node check, and with a worker its deployment and library check, in one exec channel.
    bool checkAndDeploy(const QString &localWorkerPath, SshNodeInfo *info);
    bool openChannel(Rank &r, const QByteArray &command, bool attach, QString *error);
    // fromSocket: woken by the socket notifier (counts idle wake-ups).
    void poll(bool fromSocket);
    // Reads the ranks' channels soon (after a blocking call that may have buffered their data).
    void schedulePoll();
    void dropNotifier();
    // false: the connection is gone
    bool pollRank(int rank, Rank &r);
    void finishRank(int rank, Rank &r);
    void connectionLost();
    void tryReconnect();
    void failRank(int rank, const QString &detail, int exitCode = -1);
    void updateTimer();
    int graceSec() const;

    int m_node;
    SshNodeSettings m_settings;
    std::unique_ptr<SshSession> m_session;
    SshNodeInfo m_info;
    QMap<int, Rank> m_ranks;
    QMap<int, int> m_attempts;
    // Data for the ranks arrives on the session's socket; the timer is a slow safety net for
    // data libssh buffered while another call on the session read the socket.
    QSocketNotifier *m_socketNotifier = nullptr;
    int m_notifierFd = -1;
    int m_idleWakeups = 0;
    qint64 m_bytesThisPoll = 0;
    bool m_pollScheduled = false;
    QTimer *m_pollTimer = nullptr;
    QTimer *m_reconnectTimer = nullptr;
    QDeadlineTimer m_reconnectDeadline;
    bool m_reconnecting = false;
    bool m_shutDown = false;
};

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::SshNodeInfo)
