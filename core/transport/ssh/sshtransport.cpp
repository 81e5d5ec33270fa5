// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshtransport.h"

#include "transport/threadcalls.h"

#include "util/translation.h"

#include "transport/ssh/sshthread.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QThread>

#include <algorithm>

namespace rankdeck {

namespace {
// How many nodes are in their handshake at once (see dispatchPrepares).
constexpr int kMaxParallelPrepares = 32;

} // namespace

SshTransport::SshTransport(const Profile &profile, const QString &runId,
                           SshInteraction *interaction, QObject *parent)
    : Transport(parent), m_profile(profile), m_runId(runId), m_interaction(interaction)
{
    qRegisterMetaType<rankdeck::StreamKind>();
    qRegisterMetaType<rankdeck::RankExit>();
    qRegisterMetaType<rankdeck::SshNodeInfo>();
    m_fromNodes = new ThreadCalls(this);
    m_settings.runId = runId;
    m_settings.workerDirectory = profile.effectiveWorkerDirectory();
    m_settings.libtorchPath = profile.libtorchPath;
    m_settings.defaultRunDirectory = defaultNodeRunDirectory(runId);
    m_settings.reconnectDeadlineSec = std::max(30, 3 * profile.connectTimeoutSec);
    m_settings.orphanGraceSec = std::max(1, profile.orphanGraceSec);

    for (int i = 0; i < profile.nodes.size(); ++i) {
        Node node;
        node.info.nodeIndex = i;
        node.info.host = profile.nodes.at(i).host;
        m_nodes.append(node);
    }
}

SshTransport::~SshTransport()
{
    for (Node &node : m_nodes) {
        if (!node.thread)
            continue;
        // shutdown() talks to the node (SIGTERM to running ranks), so it runs on the node's
        // thread; once that thread has finished, the connection is deleted here.
        SshNodeConnection *connection = node.connection;
        node.calls->postBlocking([connection] { connection->shutdown(); });
        node.calls->endThread();
        delete node.connection;
        delete node.thread;
    }
}

QString SshTransport::defaultNodeRunDirectory(const QString &runId)
{
    return QStringLiteral("~/.cache/rankdeck/runs/") + runId;
}

QString SshTransport::describe() const
{
    QStringList hosts;
    for (const ProfileNode &n : m_profile.nodes)
        hosts << n.host;
    return QStringLiteral("ssh ") + hosts.join(QStringLiteral(", "));
}

void SshTransport::setReconnectDeadlineSec(int seconds)
{
    m_settings.reconnectDeadlineSec = std::max(1, seconds);
}

void SshTransport::setDetached(bool detached)
{
    m_settings.detached = detached;
    for (Node &node : m_nodes) {
        if (SshNodeConnection *c = node.connection)
            node.calls->post([c, detached] { c->setDetached(detached); });
    }
}

void SshTransport::setSyncDirectory(const QString &localDirectory, qint64 limitBytes)
{
    Transport::setSyncDirectory(localDirectory, limitBytes);
    // The node connections copy the settings when prepare() creates them.
    m_settings.syncDirectory = localDirectory;
    m_settings.syncLimitBytes = limitBytes;
}

QString SshTransport::syncedDirectory(int nodeIndex) const
{
    return m_syncDirectory.isEmpty() ? QString() : nodeInfo(nodeIndex).sync.directory;
}

void SshTransport::prepare(const QString &localWorkerPath)
{
    if (m_preparing)
        return;
    if (m_nodes.isEmpty()) {
        QMetaObject::invokeMethod(
            this, [this] { emit prepareFailed(tr("the profile has no nodes")); },
            Qt::QueuedConnection);
        return;
    }
    m_preparing = true;
    for (int i = 0; i < m_nodes.size(); ++i) {
        Node &node = m_nodes[i];
        node.done = false;
        if (!node.thread) {
            const SshEndpoint endpoint =
                SshEndpoint::fromProfileNode(m_profile.nodes.at(i), m_profile.connectTimeoutSec);
            node.thread = new SshThread;
            node.thread->setObjectName(QStringLiteral("ssh node %1").arg(i));
            node.connection =
                new SshNodeConnection(i, endpoint, m_settings, m_interaction, &m_interactionLock);
            node.calls = ThreadCalls::movedWith(node.connection, node.thread);
            SshNodeConnection *c = node.connection;
            relay(c, &SshNodeConnection::prepareFinished, m_fromNodes, this,
                  &SshTransport::onPrepareFinished);
            relay(c, &SshNodeConnection::handshakeFinished, m_fromNodes, this,
                  &SshTransport::releaseSlot);
            relay(c, &SshNodeConnection::rankStarted, m_fromNodes, this, &Transport::rankStarted);
            relay(c, &SshNodeConnection::rankOutput, m_fromNodes, this, &Transport::rankOutput);
            relay(c, &SshNodeConnection::rankExited, m_fromNodes, this, &Transport::rankExited);
            relay(c, &SshNodeConnection::nodeProgress, m_fromNodes, this, &Transport::nodeProgress);
            relay(c, &SshNodeConnection::clockMeasured, m_fromNodes, this, &Transport::nodeClock);
            node.thread->start();
        }
    }
    m_localWorkerPath = localWorkerPath;
    m_nextToPrepare = 0;
    m_preparesInFlight = 0;
    for (int i = kMaxParallelPrepares; i < m_nodes.size(); ++i)
        emit nodeProgress(i, tr("waiting for a connection slot"), -1);
    dispatchPrepares();
}

// Handshakes (connect, key exchange, login) run for at most kMaxParallelPrepares nodes at once:
// hundreds of simultaneous ones would trip sshd's MaxStartups (which counts connections not yet
// logged in) on a shared login or jump host and starve a 2-core laptop of the key exchanges'
// CPU, while a node that hangs holds only its own slot. The node check and the deploy after the
// login need neither, only round trips, so a node gives its slot up once logged in. Over a long
// link every wave of handshakes costs a handshake's round trips again: 32 at once, so that the
// common cluster sizes need one (bench: ssh_fanout_latency_ratio; 16 slots held to the end of
// the deploy paid the whole prepare twice for 32 nodes).
void SshTransport::dispatchPrepares()
{
    while (m_preparesInFlight < kMaxParallelPrepares && m_nextToPrepare < m_nodes.size()) {
        Node &node = m_nodes[m_nextToPrepare++];
        node.holdsSlot = true;
        SshNodeConnection *c = node.connection;
        ++m_preparesInFlight;
        const QString path = m_localWorkerPath;
        node.calls->post([c, path] { c->prepare(path); });
    }
}

void SshTransport::onPrepareFinished(int nodeIndex, const SshNodeInfo &info)
{
    if (nodeIndex < 0 || nodeIndex >= m_nodes.size())
        return;
    m_nodes[nodeIndex].info = info;
    m_nodes[nodeIndex].done = true;
    if (!info.error.isEmpty())
        emit nodeProgress(nodeIndex, tr("failed"), -1);
    else if (!m_syncDirectory.isEmpty())
        emit synced(nodeIndex, info.sync);
    releaseSlot(nodeIndex);
    if (!std::all_of(m_nodes.cbegin(), m_nodes.cend(), [](const Node &n) { return n.done; }))
        return;
    m_preparing = false;
    QStringList errors;
    for (const Node &n : std::as_const(m_nodes)) {
        if (!n.info.error.isEmpty())
            errors << n.info.error;
    }
    // A sync directory that is too big fails every node with the same message.
    errors.removeDuplicates();
    if (errors.isEmpty())
        emit prepared();
    else
        emit prepareFailed(errors.join(QLatin1Char('\n')));
}

void SshTransport::releaseSlot(int nodeIndex)
{
    if (nodeIndex < 0 || nodeIndex >= m_nodes.size() || !m_nodes[nodeIndex].holdsSlot)
        return;
    m_nodes[nodeIndex].holdsSlot = false;
    if (m_preparesInFlight > 0)
        --m_preparesInFlight;
    dispatchPrepares();
}

SshNodeInfo SshTransport::nodeInfo(int nodeIndex) const
{
    return nodeIndex >= 0 && nodeIndex < m_nodes.size() ? m_nodes.at(nodeIndex).info
                                                        : SshNodeInfo{};
}

QString SshTransport::nodeReport(int nodeIndex) const
{
    const SshNodeInfo info = nodeInfo(nodeIndex);
    if (!info.error.isEmpty())
        return tr("FAILED — %1").arg(info.error);
    if (info.os.isEmpty() && info.distribution.isEmpty())
        return {}; // not reached: the check ended before this node answered
    return tr("OK — %1, %2 CPUs, %3, libtorch: %4")
        .arg(info.distribution.isEmpty() ? info.os : info.distribution)
        .arg(info.cpus)
        .arg(info.gpus.isEmpty() ? tr("no GPUs") : tr("%n GPU(s)", nullptr, int(info.gpus.size())),
             info.libtorchDirectory.isEmpty() ? tr("not needed or from Python torch")
                                              : info.libtorchDirectory);
}

QString SshTransport::nodeName(int nodeIndex) const
{
    return nodeIndex >= 0 && nodeIndex < m_profile.nodes.size() ? m_profile.nodes[nodeIndex].host
                                                                : Transport::nodeName(nodeIndex);
}

QString SshTransport::workerPath(int nodeIndex) const
{
    return nodeInfo(nodeIndex).workerPath;
}

void SshTransport::forRank(int rank, std::function<void(SshNodeConnection *)> call)
{
    const int node = m_rankNode.value(rank, -1);
    if (node < 0 || !m_nodes.at(node).connection)
        return;
    SshNodeConnection *c = m_nodes.at(node).connection;
    m_nodes.at(node).calls->post([c, call = std::move(call)] { call(c); });
}

void SshTransport::startRank(const RankLaunchSpec &spec)
{
    if (spec.nodeIndex < 0 || spec.nodeIndex >= m_nodes.size() ||
        !m_nodes.at(spec.nodeIndex).connection) {
        const RankExit exit{false, -1, 0, QDateTime::currentMSecsSinceEpoch() * 1000,
                            tr("failed to start: node %1 is not prepared").arg(spec.nodeIndex)};
        reportExitLater(spec.rank, exit);
        return;
    }
    m_rankNode.insert(spec.rank, spec.nodeIndex);
    SshNodeConnection *c = m_nodes.at(spec.nodeIndex).connection;
    m_nodes.at(spec.nodeIndex).calls->post([c, spec] { c->startRank(spec); });
}

void SshTransport::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                              qint64 stderrBytes)
{
    if (spec.nodeIndex < 0 || spec.nodeIndex >= m_nodes.size() ||
        !m_nodes.at(spec.nodeIndex).connection) {
        const RankExit exit{false, -1, 0, QDateTime::currentMSecsSinceEpoch() * 1000,
                            tr("cannot re-attach: node %1 is not prepared").arg(spec.nodeIndex)};
        reportExitLater(spec.rank, exit);
        return;
    }
    m_rankNode.insert(spec.rank, spec.nodeIndex);
    SshNodeConnection *c = m_nodes.at(spec.nodeIndex).connection;
    m_nodes.at(spec.nodeIndex).calls->post([c, spec, attempt, stdoutBytes, stderrBytes] {
        c->attachRank(spec, attempt, stdoutBytes, stderrBytes);
    });
}

void SshTransport::writeStdin(int rank, const QByteArray &data)
{
    forRank(rank, [=](SshNodeConnection *c) { c->writeStdin(rank, data); });
}

void SshTransport::closeStdin(int rank)
{
    forRank(rank, [=](SshNodeConnection *c) { c->closeStdin(rank); });
}

void SshTransport::signalRank(int rank, int signal)
{
    forRank(rank, [=](SshNodeConnection *c) { c->signalRank(rank, signal); });
}

} // namespace rankdeck
