// SPDX-License-Identifier: GPL-3.0-or-later
//
// Everything the SSH transport does for one node, on that node's own thread: the session and its
// lifecycle (connect, reconnect after a drop, shutdown), wiring the parts that do the rest:
// SshNodeDeployer checks the node and deploys the worker (see prepare()), one SshRankChannel per
// rank runs it, and SshChannelPump reads the channels when the session's socket has data. A
// dropped connection is re-established until a deadline; the ranks' streams then resume from the
// last byte received (see SshRankScript). The owning SshTransport talks to it only through queued
// calls and signals.
#pragma once

#include "transport/ssh/sshnode.h"
#include "transport/ssh/sshrankchannel.h"
#include "transport/ssh/sshsession.h"
#include "transport/transport.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QMap>
#include <QObject>
#include <QString>

#include <memory>

class QTimer;
class QMutex;

namespace rankdeck {

class SshChannelPump;
class SshLease;
class SshInteraction;

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
    void attachRank(const rankdeck::RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                    qint64 stderrBytes);
    void writeStdin(int rank, const QByteArray &data);
    void closeStdin(int rank);
    void signalRank(int rank, int signal);
    void setDetached(bool detached);
    // Ends the node's part: unless detached, running ranks get SIGTERM; closes the connection.
    void shutdown();

signals:
    void prepareFinished(int nodeIndex, const rankdeck::SshNodeInfo &info);
    // prepare()'s connect and login are over (either way); the check and deploy follow.
    void handshakeFinished(int nodeIndex);
    void rankStarted(int rank, qint64 pid);
    void rankOutput(int rank, rankdeck::StreamKind stream, const QByteArray &chunk);
    void rankExited(int rank, const rankdeck::RankExit &exit);
    void nodeProgress(int nodeIndex, const QString &stage, int percent);
    // The node's clock offset: after the connect (and a reconnect), then every clockRefreshSec
    // while ranks run.
    void clockMeasured(int nodeIndex, const rankdeck::NodeClock &clock);

private:
    QString expand(const QString &path) const;
    bool syncDirectory(SshNodeInfo *info);
    // The rank's channel, not open yet: its files in the spec's run directory, named by attempt.
    SshRankChannel newChannel(const RankLaunchSpec &spec, int attempt) const;
    // The channel of the rank reached its end: report how the rank ended.
    void finishRank(int rank);
    void connectionLost();
    void connectionSilent(qint64 silentMs);
    void tryReconnect();
    // The node is lost: every rank fails with detail (which says "lost").
    void giveUp(const QString &detail);
    // The lease is wanted while ranks run; its terms follow detached and the run directory.
    void updateLease(const QString &runDirectory);
    void failRank(int rank, const QString &detail, int exitCode = -1);
    int graceSec() const;
    // How long the node may be silent before the connection is taken as lost.
    qint64 silenceLimitMs() const;
    void measureClock(int samples);

    int m_node;
    SshNodeSettings m_settings;
    std::unique_ptr<SshSession> m_session;
    SshNodeInfo m_info;
    QMap<int, SshRankChannel> m_ranks;
    QMap<int, int> m_attempts;
    std::unique_ptr<SshLease> m_lease;
    SshChannelPump *m_pump;
    QTimer *m_reconnectTimer = nullptr;
    QTimer *m_clockTimer = nullptr;
    QDeadlineTimer m_reconnectDeadline;
    bool m_reconnecting = false;
    bool m_shutDown = false;
};

} // namespace rankdeck
