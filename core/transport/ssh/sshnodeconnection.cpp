// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshnodeconnection.h"

#include "util/clock.h"
#include "util/logging.h"

#include "config/syncmanifest.h"
#include "transport/ssh/sshchannelpump.h"
#include "transport/ssh/sshclockprobe.h"
#include "transport/ssh/sshdirectorysync.h"
#include "transport/ssh/sshlease.h"
#include "transport/ssh/sshnodedeployer.h"
#include "transport/ssh/sshrankscript.h"
#include "util/shellquote.h"

#include <QPair>
#include <QTimer>

#include <algorithm>
#include <csignal>

namespace rankdeck {

namespace {

// A detachable run's ranks stay whatever happens, so the launcher may wait longer before it
// calls a quiet connection dead and re-establishes it (a 3 s stall must not cost a reconnect).
constexpr int kDetachedSilenceSec = 10;

} // namespace

SshNodeConnection::SshNodeConnection(int nodeIndex, const SshEndpoint &endpoint,
                                     const SshNodeSettings &settings, SshInteraction *interaction,
                                     QMutex *interactionLock)
    : m_node(nodeIndex), m_settings(settings),
      m_session(std::make_unique<SshSession>(endpoint, interaction, interactionLock)),
      m_lease(std::make_unique<SshLease>(m_session.get())),
      m_pump(new SshChannelPump(m_session.get(), &m_ranks, this))
{
    m_pump->setLease(m_lease.get());
    m_pump->setSilenceLimitMs(silenceLimitMs());
    connect(m_pump, &SshChannelPump::connectionSilent, this, &SshNodeConnection::connectionSilent);
    m_info.nodeIndex = nodeIndex;
    m_info.host = endpoint.host;
    connect(m_pump, &SshChannelPump::rankStarted, this, &SshNodeConnection::rankStarted);
    connect(m_pump, &SshChannelPump::rankOutput, this, &SshNodeConnection::rankOutput);
    connect(m_pump, &SshChannelPump::rankEnded, this, &SshNodeConnection::finishRank);
    connect(m_pump, &SshChannelPump::connectionLost, this, &SshNodeConnection::connectionLost);
}

// A clock can be stepped during a run (NTP catching up after a suspend): measured again now and
// then, a few round trips each time. The pump then reads whatever arrived for the ranks meanwhile.
void SshNodeConnection::measureClock(int samples)
{
    if (m_shutDown || m_reconnecting || !m_session->isConnected())
        return;
    NodeClock clock = m_info.clock;
    int timeoutMs = 1000 * qMax(2, m_session->endpoint().connectTimeoutSec);
    // The lease is not beaten while the probe blocks this thread: over a link full of output,
    // where answers wait behind it, the node must not take a long probe for a dead launcher.
    if (!m_settings.detached && !m_ranks.isEmpty())
        timeoutMs = std::min(timeoutMs, std::max(1000, 500 * m_settings.orphanGraceSec));
    if (SshClockProbe::measure(m_session.get(), samples, timeoutMs, &clock)) {
        m_info.clock = clock;
    } else {
        qCDebug(lcSsh) << m_info.host << "clock not measured:" << clock.error;
        m_info.clock.error = clock.error;
    }
    emit clockMeasured(m_node, m_info.clock);
    if (!m_clockTimer && m_settings.clockRefreshSec > 0) {
        m_clockTimer = new QTimer(this);
        connect(m_clockTimer, &QTimer::timeout, this, [this] {
            if (!m_ranks.isEmpty())
                measureClock(SshClockProbe::kRefreshSamples);
        });
        m_clockTimer->start(m_settings.clockRefreshSec * 1000);
    }
    m_pump->schedulePoll();
}

SshNodeConnection::~SshNodeConnection()
{
    shutdown();
}

int SshNodeConnection::graceSec() const
{
    // Not detachable: a launcher that is gone (SIGKILLed, its link cut) must not leave ranks
    // running unwatched for long; a reconnect within the grace still finds them.
    return m_settings.detached ? -1 : m_settings.orphanGraceSec;
}

qint64 SshNodeConnection::silenceLimitMs() const
{
    return 1000 * qint64(m_settings.detached ? std::max(kDetachedSilenceSec, 2)
                                             : m_settings.orphanGraceSec);
}

void SshNodeConnection::setDetached(bool detached)
{
    m_settings.detached = detached;
    m_pump->setSilenceLimitMs(silenceLimitMs());
    if (m_lease->isWanted())
        updateLease(QString());
}

void SshNodeConnection::updateLease(const QString &runDirectory)
{
    // One lease per node: the ranks of a run share the run directory on a node.
    const QString dir = m_lease->isWanted() ? m_lease->runDirectory() : runDirectory;
    m_lease->setTerms(m_settings.runId, dir, graceSec());
}

// Paths on a node are read like ssh and sftp read them: "~/x" and relative paths are in the
// login's home directory.
QString SshNodeConnection::expand(const QString &path) const
{
    if (path.isEmpty() || path == QLatin1String("~"))
        return m_info.home;
    if (path.startsWith(QLatin1String("~/")))
        return m_info.home + path.mid(1);
    if (!path.startsWith(QLatin1Char('/')))
        return m_info.home + QLatin1Char('/') + path;
    return path;
}

void SshNodeConnection::prepare(const QString &localWorkerPath)
{
    SshNodeInfo info;
    info.nodeIndex = m_node;
    info.host = m_info.host;
    emit nodeProgress(m_node, tr("connecting"), 0);
    QString error;
    const bool connected = m_session->connect(&error);
    emit handshakeFinished(m_node);
    if (!connected) {
        qCDebug(lcSsh) << info.host << "prepare: connect failed:" << error;
        info.error = error;
        m_info = info;
        emit prepareFinished(m_node, info);
        return;
    }
    info.label = m_session->label();
    info.fingerprint = m_session->serverFingerprint();
    m_info.host = info.host;
    measureClock(SshClockProbe::kConnectSamples);
    info.clock = m_info.clock;
    emit nodeProgress(m_node, tr("checking the node"), 0);
    SshNodeDeployer deployer(
        m_session.get(), m_settings,
        [this](const QString &stage, int percent) { emit nodeProgress(m_node, stage, percent); });
    bool ok = deployer.checkAndDeploy(localWorkerPath, &info);
    if (ok && !m_settings.syncDirectory.isEmpty())
        ok = syncDirectory(&info);
    m_info = info;
    if (ok)
        qCDebug(lcSsh) << info.host << "prepare: ready";
    else
        qCDebug(lcSsh) << info.host << "prepare failed:" << info.error;
    if (!ok)
        m_session->disconnect();
    emit nodeProgress(m_node, ok ? tr("ready") : tr("failed"), 100);
    emit prepareFinished(m_node, info);
}

// launch --sync: the node's copy of the directory, up to date before any rank starts in it.
bool SshNodeConnection::syncDirectory(SshNodeInfo *info)
{
    emit nodeProgress(m_node, tr("syncing %1").arg(m_settings.syncDirectory), 0);
    QString error;
    // One scan for all nodes of the launch; its errors (too big, unreadable) are the directory's,
    // not the node's, and read the same from every node.
    const SyncManifest manifest = SyncManifest::scanShared(
        m_settings.syncDirectory, m_settings.syncLimitBytes, m_settings.runId, &error);
    if (!manifest.isValid()) {
        info->error = error;
        return false;
    }
    SshDirectorySync sync(
        m_session.get(), info->host, info->home,
        [this](const QString &stage, int percent) { emit nodeProgress(m_node, stage, percent); });
    if (!sync.run(manifest, &info->sync, &info->error))
        return false;
    qCDebug(lcSsh) << info->host << "sync:" << info->sync.filesUploaded << "files,"
                   << info->sync.bytesUploaded << "bytes sent," << info->sync.filesUnchanged
                   << "unchanged," << info->sync.filesRemoved << "removed in"
                   << info->sync.elapsedMs << "ms";
    return true;
}

SshRankChannel SshNodeConnection::newChannel(const RankLaunchSpec &spec, int attempt) const
{
    return SshRankChannel(m_session.get(), m_info.host, spec.rank,
                          expand(spec.nodeRunDirectory.isEmpty() ? m_settings.defaultRunDirectory
                                                                 : spec.nodeRunDirectory),
                          QStringLiteral("rank%1.a%2").arg(spec.rank).arg(attempt));
}

void SshNodeConnection::startRank(const RankLaunchSpec &spec)
{
    const int rank = spec.rank;
    if (m_shutDown)
        return;
    if (m_ranks.contains(rank)) {
        emit rankExited(rank,
                        RankExit{false, -1, 0, nowUs(),
                                 tr("failed to start: rank %1 is already running").arg(rank)});
        return;
    }
    auto fail = [&](const QString &why) {
        emit rankExited(rank, RankExit{false, -1, 0, nowUs(),
                                       tr("failed to start on %1: %2").arg(m_info.host, why)});
    };
    if (m_info.home.isEmpty() || m_reconnecting) {
        fail(tr("the node is not connected"));
        return;
    }
    QList<QPair<QString, QString>> env;
    QStringList names = spec.environment.keys();
    std::sort(names.begin(), names.end());
    for (const QString &name : names) {
        if (!shell::isValidVariableName(name)) {
            fail(tr("environment variable name \"%1\" is not valid (letters, digits and _ only)")
                     .arg(name));
            return;
        }
        env.append({name, spec.environment.value(name)});
    }
    if (!m_info.libtorchDirectory.isEmpty()) {
        auto it = std::find_if(env.begin(), env.end(), [](const auto &p) {
            return p.first == QLatin1String("LD_LIBRARY_PATH");
        });
        if (it == env.end())
            env.append({QStringLiteral("LD_LIBRARY_PATH"), m_info.libtorchDirectory});
        else
            it->second = m_info.libtorchDirectory + QLatin1Char(':') + it->second;
    }
    QStringList words{spec.program};
    words << spec.arguments;
    for (const auto &p : env)
        words << p.second;
    for (const QString &w : words) {
        if (w.contains(QChar(0))) {
            fail(tr("an argument or variable contains a NUL character"));
            return;
        }
    }
    if (spec.program.isEmpty()) {
        fail(tr("no program to run"));
        return;
    }

    const int attempt = ++m_attempts[rank];
    SshRankChannel r = newChannel(spec, attempt);

    SshRankScript::Start s;
    s.tag = m_settings.runId;
    s.runDirectory = r.runDirectory();
    s.baseName = r.baseName();
    // The home directory, as for any ssh command, so relative paths in arguments mean the same
    // to the rank as to the transport.
    s.workingDirectory = expand(spec.workingDirectory);
    s.graceSec = graceSec();
    s.environment = env;
    s.program = spec.program.contains(QLatin1Char('/')) ? expand(spec.program) : spec.program;
    s.arguments = spec.arguments;
    // The launcher's --run-dir (before any "--": after it come the user's program's own words)
    // as an absolute path: the rank starts in its working directory, not in the home.
    for (qsizetype i = 0; i + 1 < s.arguments.size() && s.arguments[i] != QLatin1String("--"); ++i)
        if (s.arguments[i] == QLatin1String("--run-dir"))
            s.arguments[i + 1] = expand(s.arguments[i + 1]);
    QString error;
    bool opened = r.open(SshRankScript::start(s), false, &error);
    if (!opened && !m_session->isConnected() && m_ranks.isEmpty()) {
        // The idle connection died since prepare (a node reboot, a NAT timeout): one new try.
        qCDebug(lcSsh) << m_info.host << "the idle connection is gone, connecting again for rank"
                       << rank;
        QString why;
        if (m_session->connect(&why))
            opened = r.open(SshRankScript::start(s), false, &error);
        else
            error = why;
    }
    if (!opened) {
        fail(error);
        return;
    }
    m_ranks.insert(rank, r);
    updateLease(r.runDirectory());
    m_pump->update();
    m_pump->schedulePoll();
}

void SshNodeConnection::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                                   qint64 stderrBytes)
{
    const int rank = spec.rank;
    if (m_shutDown)
        return;
    if (m_ranks.contains(rank) || !m_session->isConnected() || m_info.home.isEmpty()) {
        emit rankExited(rank,
                        RankExit{false, -1, 0, nowUs(),
                                 tr("cannot re-attach to rank %1 on %2: %3")
                                     .arg(rank)
                                     .arg(m_info.host, m_ranks.contains(rank)
                                                           ? tr("it is attached already")
                                                           : tr("the node is not connected"))});
        return;
    }
    SshRankChannel r = newChannel(spec, attempt);
    r.resumeFrom(stdoutBytes, stderrBytes);
    m_attempts[rank] = std::max(m_attempts.value(rank), attempt);
    QString error;
    if (!r.open(r.attachCommand(m_settings.runId, graceSec()), true, &error)) {
        emit rankExited(
            rank,
            RankExit{
                false, -1, 0, nowUs(),
                tr("cannot re-attach to rank %1 on %2: %3").arg(rank).arg(m_info.host, error)});
        return;
    }
    m_ranks.insert(rank, r);
    updateLease(r.runDirectory());
    m_pump->update();
    m_pump->schedulePoll();
}

void SshNodeConnection::writeStdin(int rank, const QByteArray &data)
{
    auto it = m_ranks.find(rank);
    if (it != m_ranks.end() && it->writeStdin(data, !m_reconnecting))
        m_pump->schedulePoll();
}

void SshNodeConnection::closeStdin(int rank)
{
    auto it = m_ranks.find(rank);
    if (it != m_ranks.end() && it->closeStdin(!m_reconnecting))
        m_pump->schedulePoll();
}

void SshNodeConnection::signalRank(int rank, int signal)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end() || it->pid() <= 0 || !m_session->isConnected())
        return;
    const SshExecResult r = m_session->exec(
        SshRankScript::signalGroup(it->runDirectory(), it->baseName(), it->pid(), signal), 10000);
    if (!r.ok())
        qCWarning(lcSsh, "%s: cannot signal rank %d: %s", qPrintable(m_info.host), rank,
                  qPrintable(r.describeFailure()));
    m_pump->schedulePoll();
}

void SshNodeConnection::finishRank(int rank)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end())
        return;
    const RankExit exit = it->finish();
    m_ranks.remove(rank);
    if (m_ranks.isEmpty())
        m_lease->close(m_session->isConnected());
    emit rankExited(rank, exit);
}

void SshNodeConnection::failRank(int rank, const QString &detail, int exitCode)
{
    auto it = m_ranks.find(rank);
    if (it != m_ranks.end()) {
        it->drop();
        m_ranks.remove(rank);
    }
    if (m_ranks.isEmpty())
        m_lease->close(m_session->isConnected());
    emit rankExited(rank, RankExit{false, exitCode, 0, nowUs(), detail});
}

void SshNodeConnection::connectionLost()
{
    // Not detachable: past the orphan grace the node has ended the ranks, nothing to come back to.
    const int deadlineSec =
        m_settings.detached ? m_settings.reconnectDeadlineSec
                            : std::min(m_settings.reconnectDeadlineSec, m_settings.orphanGraceSec);
    qCDebug(lcSsh) << m_info.host << "connection lost with" << m_ranks.size()
                   << "ranks; reconnecting for up to" << deadlineSec << "s";
    m_pump->dropNotifier();
    for (auto &rank : m_ranks)
        rank.drop();
    m_lease->drop();
    m_session->disconnect();
    m_reconnecting = true;
    m_pump->setPaused(true);
    m_reconnectDeadline = QDeadlineTimer(qint64(deadlineSec) * 1000);
    m_pump->update();
    emit nodeProgress(m_node, tr("connection lost, reconnecting"), -1);
    if (!m_reconnectTimer) {
        m_reconnectTimer = new QTimer(this);
        m_reconnectTimer->setSingleShot(true);
        connect(m_reconnectTimer, &QTimer::timeout, this, &SshNodeConnection::tryReconnect);
    }
    m_reconnectTimer->start(200);
}

// Nothing heard although the node echoes 5 beats a second: the link is cut (or so slow that
// it is as good as cut). A detachable run reconnects as after any drop; the ranks of one that is
// not have been ended by the node itself by now (its lease ran out as ours did).
void SshNodeConnection::connectionSilent(qint64 silentMs)
{
    qCDebug(lcSsh) << m_info.host << "nothing heard for" << silentMs << "ms";
    if (m_settings.detached) {
        connectionLost();
        return;
    }
    m_pump->dropNotifier();
    for (auto &rank : m_ranks)
        rank.drop();
    m_lease->drop();
    m_session->disconnect();
    giveUp(tr("connection to %1 lost: nothing heard from it for %2 s, the orphan grace of runs "
              "that are not detachable (the node ends their ranks itself)")
               .arg(m_info.host)
               .arg(double(silentMs) / 1000.0, 0, 'f', 1));
}

void SshNodeConnection::giveUp(const QString &detail)
{
    qCDebug(lcSsh) << m_info.host << "given up:" << detail;
    m_reconnecting = false;
    m_pump->setPaused(false);
    emit nodeProgress(m_node, tr("lost"), -1);
    const QList<int> ranks = m_ranks.keys();
    for (int rank : ranks)
        failRank(rank, detail);
    m_pump->update();
}

void SshNodeConnection::tryReconnect()
{
    if (m_shutDown)
        return;
    QString error;
    qCDebug(lcSsh) << m_info.host << "reconnect attempt," << m_reconnectDeadline.remainingTime()
                   << "ms left";
    if (!m_session->connect(&error)) {
        if (m_reconnectDeadline.hasExpired()) {
            giveUp(tr("connection to %1 lost: %2").arg(m_info.host, error));
            return;
        }
        qCDebug(lcSsh) << m_info.host << "reconnect failed:" << error;
        m_reconnectTimer->start(1000);
        return;
    }
    if (!m_settings.detached && m_reconnectDeadline.hasExpired()) {
        // Back, but later than the orphan grace: the node has ended the ranks meanwhile.
        m_session->disconnect();
        giveUp(tr("connection to %1 lost for longer than the orphan grace (%2 s); its ranks "
                  "ended on the node")
                   .arg(m_info.host)
                   .arg(m_settings.orphanGraceSec));
        return;
    }
    qCDebug(lcSsh) << m_info.host << "reconnected; re-attaching" << m_ranks.size() << "ranks";
    m_reconnecting = false;
    m_pump->setPaused(false);
    emit nodeProgress(m_node, tr("reconnected"), 100);
    measureClock(SshClockProbe::kConnectSamples);
    const QList<int> ranks = m_ranks.keys();
    for (int rank : ranks) {
        SshRankChannel &r = m_ranks[rank];
        if (r.stdinClosed())
            r.markStdinClosed();
        QString why;
        if (!r.open(r.attachCommand(m_settings.runId, graceSec()), true, &why))
            failRank(rank,
                     tr("connection to %1 lost, re-attaching failed: %2").arg(m_info.host, why));
    }
    m_pump->update();
    m_pump->schedulePoll();
}

void SshNodeConnection::shutdown()
{
    if (m_shutDown)
        return;
    m_shutDown = true;
    qCDebug(lcSsh) << m_info.host << "shutting down with" << m_ranks.size()
                   << "ranks, detached:" << m_settings.detached;
    // Timers belong to this thread; the destructor may run on another one.
    m_pump->stop();
    delete m_reconnectTimer;
    m_reconnectTimer = nullptr;
    delete m_clockTimer;
    m_clockTimer = nullptr;
    const bool connected = m_session && m_session->isConnected();
    for (auto &rank : m_ranks) {
        if (connected && !m_settings.detached && rank.pid() > 0)
            m_session->exec(SshRankScript::signalGroup(rank.runDirectory(), rank.baseName(),
                                                       rank.pid(), SIGTERM),
                            5000);
        rank.close(connected);
    }
    m_ranks.clear();
    m_lease->close(connected);
    if (m_session)
        m_session->disconnect();
}

} // namespace rankdeck
