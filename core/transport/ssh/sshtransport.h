// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs ranks on the nodes of an "ssh" profile. One SshNodeConnection per node on its own thread
// connects, deploys the worker (once per content: SHA-256 in the remote name) and checks the
// node; ranks run one exec channel each, their complete output kept on the node so that a
// dropped connection resumes without gap or duplicate (see SshRankScript).
//
// What callers should know beyond Transport:
// - prepare("") only connects and checks the nodes (a "test connection"); nodeInfo() then tells
//   OS, CPUs, GPUs per node.
// - A node whose connection cannot be re-established within reconnectDeadlineSec() reports its
//   ranks with rankExited(exitCode -1, detail "connection to HOST lost: …"): the run controller
//   should mark them lost. The ranks stop on their own on the node (end of stdin) shortly after.
// - A rank killed by signal N is reported crashed with signal N (the wrapper's 128+N).
// - Destroying the transport sends SIGTERM to every running rank's process group unless
//   setDetached(true), in which case ranks keep running on the nodes.
#pragma once

#include "config/profile.h"
#include "transport/ssh/sshnodeconnection.h"
#include "transport/transport.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>

#include <functional>
#include <memory>

class QThread;

namespace rankdeck {

class SshInteraction;
class ThreadCalls;

class SshTransport : public Transport
{
    Q_OBJECT
public:
    SshTransport(const Profile &profile, const QString &runId, SshInteraction *interaction,
                 QObject *parent = nullptr);
    ~SshTransport() override;

    QString describe() const override;
    void prepare(const QString &localWorkerPath) override;
    QString workerPath(int nodeIndex) const override;
    void startRank(const RankLaunchSpec &spec) override;
    void writeStdin(int rank, const QByteArray &data) override;
    void closeStdin(int rank) override;
    void signalRank(int rank, int signal) override;

    // Ranks run under a wrapper that keeps their output on the node, so they can outlive this
    // launcher and be taken over by another one.
    // The synced directory is copied to each node's ~/.cache/rankdeck/sync (SshDirectorySync).
    Capabilities capabilities() const override
    {
        return Capability::Detach | Capability::Reattach | Capability::Sync;
    }
    void setSyncDirectory(const QString &localDirectory, qint64 limitBytes) override;
    QString syncedDirectory(int nodeIndex) const override;
    // Re-attaches to a rank left running on its node by an earlier launcher (a detached run, or
    // a launcher that crashed less than the grace period ago). Needs spec.nodeIndex and
    // spec.nodeRunDirectory as for the start.
    void attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                    qint64 stderrBytes) override;

    // After prepared()/prepareFailed(): what each node check found.
    SshNodeInfo nodeInfo(int nodeIndex) const;
    QString nodeReport(int nodeIndex) const override;
    QString nodeName(int nodeIndex) const override;
    int nodeCount() const { return int(m_nodes.size()); }

    // Before prepare(): how long a lost connection is retried (default: max(30, 3 × connect
    // timeout) seconds).
    void setReconnectDeadlineSec(int seconds);
    int reconnectDeadlineSec() const { return m_settings.reconnectDeadlineSec; }
    // Ranks keep running on the nodes when this transport goes away (--detach).
    void setDetached(bool detached) override;

    // Where ranks keep their output on a node when a spec names no run directory.
    static QString defaultNodeRunDirectory(const QString &runId);

private:
    struct Node
    {
        QThread *thread = nullptr;
        SshNodeConnection *connection = nullptr;
        ThreadCalls *calls = nullptr; // the connection's child: every call to it goes here
        SshNodeInfo info;
        bool done = false;
        bool holdsSlot = false; // one of the kMaxParallelPrepares handshakes in flight
    };
    void onPrepareFinished(int nodeIndex, const SshNodeInfo &info);
    // The node's handshake (connect, host key, login) is over, either way: its slot is free.
    void releaseSlot(int nodeIndex);
    void dispatchPrepares();
    // Runs call with the rank's node connection on that node's thread; nothing without one.
    void forRank(int rank, std::function<void(SshNodeConnection *)> call);

    Profile m_profile;
    QString m_runId;
    SshInteraction *m_interaction;
    QMutex m_interactionLock;
    // The node connections' signals arrive through here, on this object's thread (see prepare()).
    ThreadCalls *m_fromNodes = nullptr;
    SshNodeSettings m_settings;
    QList<Node> m_nodes;
    QString m_localWorkerPath; // what prepare() deploys
    int m_nextToPrepare = 0;   // nodes [0, m_nextToPrepare) have been sent prepare()
    int m_preparesInFlight = 0;
    QHash<int, int> m_rankNode;
    bool m_preparing = false;
};

} // namespace rankdeck
