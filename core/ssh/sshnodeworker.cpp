// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshnodeworker.h"

#include "shellquote.h"
#include "sshrankscript.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QMutexLocker>
#include <QRandomGenerator>
#include <QTimer>

#include <libssh/libssh.h>

#include <algorithm>
#include <csignal>

namespace rankdeck {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("rankdeck::SshNodeWorker", text);
}

constexpr int kPollIntervalMs = 20;
constexpr int kMaxBytesPerPoll = 1 << 20;

// `exec /bin/sh -c SCRIPT ARGS…`: the script runs in a POSIX shell whatever the login shell is,
// and every argument is quoted.
QByteArray sh(const QByteArray &script, const QStringList &args = {})
{
    QByteArray cmd = "exec /bin/sh -c " + shell::quote(script) + " rankdeck";
    for (const QString &a : args)
        cmd += ' ' + shell::quote(a);
    return cmd;
}

// SHA-256 of the local worker, once per file version for the whole process (every node of every
// transport needs it).
QByteArray sha256Hex(const QString &path, QString *error)
{
    static QMutex mutex;
    static QHash<QString, QByteArray> cache;
    const QFileInfo fi(path);
    const QString key = fi.absoluteFilePath() + QLatin1Char('|') + QString::number(fi.size()) + QLatin1Char('|')
        + QString::number(fi.lastModified().toMSecsSinceEpoch());
    QMutexLocker lock(&mutex);
    if (const auto it = cache.constFind(key); it != cache.constEnd())
        return *it;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = tr("cannot read the worker %1: %2").arg(path, f.errorString());
        return {};
    }
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&f);
    const QByteArray hex = hash.result().toHex();
    cache.insert(key, hex);
    return hex;
}

qint64 nowUs()
{
    return QDateTime::currentMSecsSinceEpoch() * 1000;
}

} // namespace

SshNodeWorker::SshNodeWorker(int nodeIndex, const SshEndpoint &endpoint, const SshNodeSettings &settings,
                             SshInteraction *interaction, QMutex *interactionLock)
    : m_node(nodeIndex)
    , m_settings(settings)
    , m_session(std::make_unique<SshSession>(endpoint, interaction, interactionLock))
{
    m_info.nodeIndex = nodeIndex;
    m_info.host = endpoint.host;
}

SshNodeWorker::~SshNodeWorker()
{
    shutdown();
}

int SshNodeWorker::graceSec() const
{
    // Long enough for every reconnect attempt, so the rank does not stop while the launcher
    // still intends to come back.
    return m_settings.detached ? -1
                               : m_settings.reconnectDeadlineSec + m_session->endpoint().connectTimeoutSec + 5;
}

void SshNodeWorker::setDetached(bool detached)
{
    m_settings.detached = detached;
}

// Paths on a node are read like ssh and sftp read them: "~/x" and relative paths are in the
// login's home directory.
QString SshNodeWorker::expand(const QString &path) const
{
    if (path.isEmpty() || path == QLatin1String("~"))
        return m_info.home;
    if (path.startsWith(QLatin1String("~/")))
        return m_info.home + path.mid(1);
    if (!path.startsWith(QLatin1Char('/')))
        return m_info.home + QLatin1Char('/') + path;
    return path;
}

bool SshNodeWorker::probe(SshNodeInfo *info)
{
    const SshExecResult r = m_session->exec(sh(R"SH(
printf 'home=%s\n' "$HOME"
printf 'os=%s\n' "$(uname -srm)"
( . /etc/os-release 2>/dev/null; printf 'distro=%s\n' "$PRETTY_NAME" )
printf 'cpus=%s\n' "$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L 2>/dev/null | sed 's/^/gpu=/'; fi
exit 0
)SH"));
    if (!r.ok()) {
        info->error = tr("%1: the node check failed: %2").arg(info->host, r.describeFailure());
        return false;
    }
    for (const QByteArray &line : r.out.split('\n')) {
        const int eq = line.indexOf('=');
        if (eq <= 0)
            continue;
        const QByteArray key = line.left(eq);
        const QString value = QString::fromUtf8(line.mid(eq + 1)).trimmed();
        if (key == "home")
            info->home = value;
        else if (key == "os")
            info->os = value;
        else if (key == "distro")
            info->distribution = value;
        else if (key == "cpus")
            info->cpus = value.toInt();
        else if (key == "gpu" && !value.isEmpty())
            info->gpus << value;
    }
    if (info->home.isEmpty() || !info->home.startsWith(QLatin1Char('/'))) {
        info->error = tr("%1: the node reports no home directory ($HOME)").arg(info->host);
        return false;
    }
    return true;
}

bool SshNodeWorker::deploy(const QString &localWorkerPath, SshNodeInfo *info)
{
    QString error;
    const QByteArray sha = sha256Hex(localWorkerPath, &error);
    if (sha.isEmpty()) {
        info->error = error;
        return false;
    }
    const qint64 size = QFileInfo(localWorkerPath).size();
    const QString dir = expand(m_settings.workerDirectory.isEmpty() ? QStringLiteral("~/.cache/rankdeck/worker")
                                                                    : m_settings.workerDirectory);
    const QString remote = dir + QStringLiteral("/rankdeck-worker-") + QString::fromLatin1(sha);
    info->workerPath = remote;
    info->workerBytes = size;

    // The content is in the name, so a file of the right size that runs is this worker.
    const SshExecResult have = m_session->exec(sh("test -f \"$1\" && test -x \"$1\" && wc -c <\"$1\"", {remote}));
    if (have.ok() && have.out.trimmed().toLongLong() == size) {
        info->workerUploaded = false;
        emit nodeProgress(m_node, tr("worker already on the node"), 100);
        return true;
    }

    const SshExecResult mk = m_session->exec(sh("umask 077; mkdir -p -- \"$1\"", {dir}));
    if (!mk.ok()) {
        info->error = tr("%1: cannot create the worker directory %2: %3").arg(info->host, dir, mk.describeFailure());
        return false;
    }
    // A temporary name, renamed when complete: a node never runs a half-copied worker, and two
    // launchers deploying at once both end up with the whole file.
    const QString temp = dir + QStringLiteral("/.rankdeck-worker-%1.%2.part")
                                   .arg(QString::fromLatin1(sha.left(16)))
                                   .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    int lastPercent = -1;
    const bool ok = m_session->upload(localWorkerPath, temp, 0700,
                                      [&](qint64 sent, qint64 total) {
                                          const int percent = total > 0 ? int(sent * 100 / total) : 100;
                                          if (percent != lastPercent) {
                                              lastPercent = percent;
                                              emit nodeProgress(m_node, tr("uploading the worker"), percent);
                                          }
                                      },
                                      &error);
    if (!ok) {
        m_session->exec(sh("rm -f -- \"$1\"", {temp}));
        info->error = error;
        return false;
    }
    const SshExecResult mv = m_session->exec(sh("chmod 755 -- \"$1\" && mv -f -- \"$1\" \"$2\"", {temp, remote}));
    if (!mv.ok()) {
        m_session->exec(sh("rm -f -- \"$1\"", {temp}));
        info->error = tr("%1: cannot install the worker as %2: %3").arg(info->host, remote, mv.describeFailure());
        return false;
    }
    info->workerUploaded = true;
    return true;
}

bool SshNodeWorker::checkLibraries(SshNodeInfo *info)
{
    const QByteArray lddScript =
        "if [ -n \"$2\" ]; then LD_LIBRARY_PATH=$2; export LD_LIBRARY_PATH; fi\n"
        "ldd -- \"$1\" 2>/dev/null | grep 'not found'\nexit 0";
    QString libDir;
    const QString configured = m_settings.libtorchPath.trimmed();
    if (!configured.isEmpty() && configured != QLatin1String("python"))
        libDir = expand(configured);

    SshExecResult r = m_session->exec(sh(lddScript, {info->workerPath, libDir}), 60000);
    if (!r.error.isEmpty()) {
        info->error = tr("%1: cannot check the worker's libraries: %2").arg(info->host, r.error);
        return false;
    }
    if (!r.out.trimmed().isEmpty() && libDir.isEmpty()) {
        // Not resolved by itself: ask the node's Python where its torch keeps libtorch.
        const SshExecResult py = m_session->exec(sh(
            "for p in python3 python; do command -v \"$p\" >/dev/null 2>&1 && \"$p\" -c "
            "'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), \"lib\"))' 2>/dev/null "
            "&& exit 0; done; exit 1"), 60000);
        if (py.ok() && !py.out.trimmed().isEmpty()) {
            libDir = QString::fromUtf8(py.out.trimmed());
            r = m_session->exec(sh(lddScript, {info->workerPath, libDir}), 60000);
        }
    }
    const QByteArray missing = r.out.trimmed();
    if (!missing.isEmpty()) {
        QStringList libs;
        for (const QByteArray &line : missing.split('\n'))
            libs << QString::fromUtf8(line.trimmed().split(' ').value(0));
        info->error = tr("%1: the worker cannot find %2%3. Set libtorchPath in the profile to the directory "
                         "with libtorch's .so files on this node, or install torch for the node's python3")
                          .arg(info->host, libs.join(QStringLiteral(", ")),
                               libDir.isEmpty() ? QString() : tr(" (looked in %1 too)").arg(libDir));
        return false;
    }
    info->libtorchDirectory = libDir;
    return true;
}

void SshNodeWorker::prepare(const QString &localWorkerPath)
{
    SshNodeInfo info;
    info.nodeIndex = m_node;
    info.host = m_info.host;
    emit nodeProgress(m_node, tr("connecting"), 0);
    QString error;
    if (!m_session->connect(&error)) {
        info.error = error;
        m_info = info;
        emit prepareFinished(m_node, info);
        return;
    }
    info.label = m_session->label();
    info.fingerprint = m_session->serverFingerprint();
    emit nodeProgress(m_node, tr("checking the node"), 0);
    bool ok = probe(&info);
    m_info.home = info.home;
    if (ok && !localWorkerPath.isEmpty())
        ok = deploy(localWorkerPath, &info) && checkLibraries(&info);
    m_info = info;
    if (!ok)
        m_session->disconnect();
    emit nodeProgress(m_node, ok ? tr("ready") : tr("failed"), 100);
    emit prepareFinished(m_node, info);
}

bool SshNodeWorker::openChannel(Rank &r, const QByteArray &command, bool attach, QString *error)
{
    ssh_session s = m_session->handle();
    ssh_channel ch = s ? ssh_channel_new(s) : nullptr;
    if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, command.constData()) != SSH_OK) {
        *error = s ? QString::fromUtf8(ssh_get_error(s)) : tr("not connected");
        if (ch)
            ssh_channel_free(ch);
        return false;
    }
    r.channel = ch;
    r.headerSeen = false;
    r.header.clear();
    r.earlyStderr.clear();
    r.resync = attach;
    return true;
}

void SshNodeWorker::startRank(const RankLaunchSpec &spec)
{
    const int rank = spec.rank;
    if (m_shutDown)
        return;
    if (m_ranks.contains(rank)) {
        emit rankExited(rank, RankExit{false, -1, 0, nowUs(), tr("failed to start: rank %1 is already running").arg(rank)});
        return;
    }
    auto fail = [&](const QString &why) {
        emit rankExited(rank, RankExit{false, -1, 0, nowUs(), tr("failed to start on %1: %2").arg(m_info.host, why)});
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
            fail(tr("environment variable name \"%1\" is not valid (letters, digits and _ only)").arg(name));
            return;
        }
        env.append({name, spec.environment.value(name)});
    }
    if (!m_info.libtorchDirectory.isEmpty()) {
        auto it = std::find_if(env.begin(), env.end(), [](const auto &p) { return p.first == QLatin1String("LD_LIBRARY_PATH"); });
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

    Rank r;
    r.spec = spec;
    r.runDirectory = expand(spec.nodeRunDirectory.isEmpty() ? m_settings.defaultRunDirectory : spec.nodeRunDirectory);
    const int attempt = ++m_attempts[rank];
    r.baseName = QStringLiteral("rank%1.a%2").arg(rank).arg(attempt);

    SshRankScript::Start s;
    s.tag = m_settings.runId;
    s.runDirectory = r.runDirectory;
    s.baseName = r.baseName;
    // The home directory, as for any ssh command, so relative paths in arguments mean the same
    // to the rank as to the transport.
    s.workingDirectory = expand(spec.workingDirectory);
    s.graceSec = graceSec();
    s.environment = env;
    s.program = spec.program.contains(QLatin1Char('/')) ? expand(spec.program) : spec.program;
    s.arguments = spec.arguments;
    QString error;
    bool opened = openChannel(r, SshRankScript::start(s), false, &error);
    if (!opened && !m_session->isConnected() && m_ranks.isEmpty()) {
        // The idle connection died since prepare (a node reboot, a NAT timeout): one new try.
        QString why;
        if (m_session->connect(&why))
            opened = openChannel(r, SshRankScript::start(s), false, &error);
        else
            error = why;
    }
    if (!opened) {
        fail(error);
        return;
    }
    m_ranks.insert(rank, r);
    updateTimer();
}

void SshNodeWorker::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes, qint64 stderrBytes)
{
    const int rank = spec.rank;
    if (m_shutDown)
        return;
    if (m_ranks.contains(rank) || !m_session->isConnected() || m_info.home.isEmpty()) {
        emit rankExited(rank, RankExit{false, -1, 0, nowUs(),
                                       tr("cannot re-attach to rank %1 on %2: %3")
                                           .arg(rank)
                                           .arg(m_info.host, m_ranks.contains(rank) ? tr("it is attached already")
                                                                                    : tr("the node is not connected"))});
        return;
    }
    Rank r;
    r.spec = spec;
    r.runDirectory = expand(spec.nodeRunDirectory.isEmpty() ? m_settings.defaultRunDirectory : spec.nodeRunDirectory);
    r.baseName = QStringLiteral("rank%1.a%2").arg(rank).arg(attempt);
    r.stdoutBytes = stdoutBytes;
    r.stderrBytes = stderrBytes;
    r.stdinBase = -1;
    m_attempts[rank] = std::max(m_attempts.value(rank), attempt);
    QString error;
    if (!openChannel(r, SshRankScript::attach(m_settings.runId, r.runDirectory, r.baseName, graceSec(), stdoutBytes,
                                              stderrBytes),
                     true, &error)) {
        emit rankExited(rank, RankExit{false, -1, 0, nowUs(), tr("cannot re-attach to rank %1 on %2: %3")
                                                                  .arg(rank).arg(m_info.host, error)});
        return;
    }
    m_ranks.insert(rank, r);
    updateTimer();
}

void SshNodeWorker::writeStdin(int rank, const QByteArray &data)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end() || it->stdinClosed || data.isEmpty())
        return;
    it->stdinHistory += data;
    // Bytes written into a connection that turns out to be dead are not lost: the re-attach
    // resends whatever the node did not log.
    if (it->channel && !it->resync && !m_reconnecting)
        ssh_channel_write(it->channel, data.constData(), uint32_t(data.size()));
}

void SshNodeWorker::closeStdin(int rank)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end() || it->stdinClosed)
        return;
    it->stdinClosed = true;
    if (!it->channel || it->resync || m_reconnecting)
        return; // the re-attach marks it and sends the EOF
    // The mark first: the keeper must not mistake this EOF for a dropped connection.
    m_session->exec(SshRankScript::markStdinClosed(it->runDirectory, it->baseName), 10000);
    if (it.value().channel)
        ssh_channel_send_eof(it->channel);
}

void SshNodeWorker::signalRank(int rank, int signal)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end() || it->pid <= 0 || !m_session->isConnected())
        return;
    const SshExecResult r = m_session->exec(SshRankScript::signalGroup(it->pid, signal), 10000);
    if (!r.ok())
        qWarning("rankdeck: %s: cannot signal rank %d: %s", qPrintable(m_info.host), rank,
                 qPrintable(r.describeFailure()));
}

void SshNodeWorker::updateTimer()
{
    if (!m_pollTimer) {
        m_pollTimer = new QTimer(this);
        m_pollTimer->setInterval(kPollIntervalMs);
        connect(m_pollTimer, &QTimer::timeout, this, &SshNodeWorker::poll);
    }
    const bool active = !m_ranks.isEmpty() && !m_reconnecting && !m_shutDown;
    if (active && !m_pollTimer->isActive())
        m_pollTimer->start();
    else if (!active && m_pollTimer->isActive())
        m_pollTimer->stop();
}

void SshNodeWorker::poll()
{
    const QList<int> ranks = m_ranks.keys();
    for (int rank : ranks) {
        auto it = m_ranks.find(rank);
        if (it == m_ranks.end() || !it->channel)
            continue;
        if (!pollRank(rank, *it)) {
            connectionLost();
            return;
        }
    }
    updateTimer();
}

bool SshNodeWorker::pollRank(int rank, Rank &r)
{
    char buf[32768];
    for (int stream = 0; stream < 2; ++stream) {
        int budget = kMaxBytesPerPoll;
        while (budget > 0) {
            const int n = ssh_channel_read_nonblocking(r.channel, buf, sizeof buf, stream);
            if (n == SSH_ERROR)
                return false;
            if (n <= 0)
                break;
            budget -= n;
            QByteArray chunk(buf, n);
            if (stream == 1) {
                if (!r.headerSeen) {
                    r.earlyStderr += chunk;
                    continue;
                }
                r.stderrBytes += n;
                emit rankOutput(rank, StreamKind::Stderr, chunk);
                continue;
            }
            if (!r.headerSeen) {
                // Anything a login script printed comes before the header line; drop it.
                r.header += chunk;
                const QByteArray prefix = SshRankScript::headerPrefix();
                int start = 0;
                if (!r.header.startsWith(prefix)) {
                    const int at = r.header.indexOf('\n' + prefix);
                    start = at < 0 ? -1 : at + 1;
                }
                const int end = start < 0 ? -1 : r.header.indexOf('\n', start);
                if (end < 0) {
                    if (r.header.size() > 65536)
                        r.header = r.header.right(prefix.size());
                    continue;
                }
                const QList<QByteArray> fields =
                    r.header.mid(start + prefix.size(), end - start - prefix.size()).trimmed().split(' ');
                r.pid = fields.value(0).toLongLong();
                chunk = r.header.mid(end + 1);
                if (r.resync) {
                    r.resync = false;
                    const qint64 received = fields.value(1).toLongLong();
                    if (r.stdinBase < 0)
                        r.stdinBase = received;
                    if (received - r.stdinBase < r.stdinHistory.size()) {
                        const QByteArray rest = r.stdinHistory.mid(received - r.stdinBase);
                        ssh_channel_write(r.channel, rest.constData(), uint32_t(rest.size()));
                    }
                    if (r.stdinClosed)
                        ssh_channel_send_eof(r.channel);
                }
                r.header.clear();
                r.headerSeen = true;
                if (!r.startedReported) {
                    r.startedReported = true;
                    emit rankStarted(rank, r.pid);
                }
                // stderr that arrived before the header is login noise or a setup error; once
                // the rank runs, its stderr only starts after the header.
                r.earlyStderr.clear();
                if (chunk.isEmpty())
                    continue;
            }
            r.stdoutBytes += chunk.size();
            emit rankOutput(rank, StreamKind::Stdout, chunk);
        }
    }
    ssh_session s = m_session->handle();
    if (!s || !ssh_is_connected(s))
        return false;
    if (ssh_channel_is_eof(r.channel) || ssh_channel_is_closed(r.channel))
        finishRank(rank, r);
    return true;
}

void SshNodeWorker::finishRank(int rank, Rank &r)
{
    const int status = ssh_channel_get_exit_status(r.channel);
    ssh_channel_close(r.channel);
    ssh_channel_free(r.channel);
    r.channel = nullptr;
    RankExit exit;
    exit.timeUs = nowUs();
    if (!r.headerSeen) {
        exit.exitCode = status < 0 ? -1 : status;
        const QString why = QString::fromUtf8(r.earlyStderr.trimmed());
        exit.detail = tr("failed to start on %1: %2")
                          .arg(m_info.host, why.isEmpty() ? tr("exit status %1").arg(status) : why);
    } else if (status > 128 && status <= 128 + 64) {
        exit.crashed = true;
        exit.signal = status - 128;
    } else if (status < 0 || (status == SshRankScript::kExitUnknown && r.startedReported)) {
        exit.exitCode = -1;
        exit.detail = tr("%1: the rank's exit status is unknown").arg(m_info.host);
    } else {
        exit.exitCode = status;
    }
    const int key = rank;
    m_ranks.remove(key);
    emit rankExited(key, exit);
}

void SshNodeWorker::failRank(int rank, const QString &detail, int exitCode)
{
    auto it = m_ranks.find(rank);
    if (it != m_ranks.end()) {
        if (it->channel)
            ssh_channel_free(it->channel);
        m_ranks.erase(it);
    }
    emit rankExited(rank, RankExit{false, exitCode, 0, nowUs(), detail});
}

void SshNodeWorker::connectionLost()
{
    for (auto it = m_ranks.begin(); it != m_ranks.end(); ++it) {
        if (it->channel) {
            ssh_channel_free(it->channel);
            it->channel = nullptr;
        }
    }
    m_session->disconnect();
    m_reconnecting = true;
    m_reconnectDeadline = QDeadlineTimer(qint64(m_settings.reconnectDeadlineSec) * 1000);
    updateTimer();
    emit nodeProgress(m_node, tr("connection lost, reconnecting"), -1);
    if (!m_reconnectTimer) {
        m_reconnectTimer = new QTimer(this);
        m_reconnectTimer->setSingleShot(true);
        connect(m_reconnectTimer, &QTimer::timeout, this, &SshNodeWorker::tryReconnect);
    }
    m_reconnectTimer->start(200);
}

void SshNodeWorker::tryReconnect()
{
    if (m_shutDown)
        return;
    QString error;
    if (!m_session->connect(&error)) {
        if (m_reconnectDeadline.hasExpired()) {
            m_reconnecting = false;
            const QString detail = tr("connection to %1 lost: %2").arg(m_info.host, error);
            emit nodeProgress(m_node, tr("lost"), -1);
            const QList<int> ranks = m_ranks.keys();
            for (int rank : ranks)
                failRank(rank, detail);
            updateTimer();
            return;
        }
        m_reconnectTimer->start(1000);
        return;
    }
    m_reconnecting = false;
    emit nodeProgress(m_node, tr("reconnected"), 100);
    const QList<int> ranks = m_ranks.keys();
    for (int rank : ranks) {
        Rank &r = m_ranks[rank];
        if (r.stdinClosed)
            m_session->exec(SshRankScript::markStdinClosed(r.runDirectory, r.baseName), 10000);
        QString why;
        if (!openChannel(r, SshRankScript::attach(m_settings.runId, r.runDirectory, r.baseName, graceSec(),
                                                        r.stdoutBytes, r.stderrBytes),
                         true, &why))
            failRank(rank, tr("connection to %1 lost, re-attaching failed: %2").arg(m_info.host, why));
    }
    updateTimer();
}

void SshNodeWorker::shutdown()
{
    if (m_shutDown)
        return;
    m_shutDown = true;
    // Timers belong to this thread; the destructor may run on another one.
    delete m_pollTimer;
    m_pollTimer = nullptr;
    delete m_reconnectTimer;
    m_reconnectTimer = nullptr;
    const bool connected = m_session && m_session->isConnected();
    for (auto it = m_ranks.begin(); it != m_ranks.end(); ++it) {
        if (connected && !m_settings.detached && it->pid > 0)
            m_session->exec(SshRankScript::signalGroup(it->pid, SIGTERM), 5000);
        if (it->channel && connected) {
            ssh_channel_close(it->channel);
            ssh_channel_free(it->channel);
        }
        it->channel = nullptr;
    }
    m_ranks.clear();
    if (m_session)
        m_session->disconnect();
}

} // namespace rankdeck
