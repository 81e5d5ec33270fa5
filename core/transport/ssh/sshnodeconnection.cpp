// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshnodeconnection.h"

#include "util/translation.h"
#include "util/clock.h"

#include "transport/ssh/shellquote.h"
#include "transport/ssh/sshrankscript.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QMutexLocker>
#include <QRandomGenerator>
#include <QSocketNotifier>
#include <QTimer>

#include <libssh/libssh.h>

#include <algorithm>
#include <csignal>

namespace rankdeck {

namespace {

// The ranks' channels are read when the session's socket is readable; this slow timer only
// catches data libssh buffered while another call on the session (a signal, a stdin write) read
// the socket, should no schedulePoll() have followed it.
constexpr int kSafetyPollIntervalMs = 250;
// Wake-ups by the socket notifier that found nothing to read, in a row, before it rests until
// the next timer tick: a guard against spinning on a socket libssh does not drain.
constexpr int kMaxIdleWakeups = 16;
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

// The node check and the deployment in one exec channel: every exec channel costs the node a
// fork of sshd and two shells, and each round trip waits on a node that may be busy with
// other connections (tens of nodes at once on a 2-core launcher).
//   $1 worker directory, $2 SHA-256 of the worker (empty: check only), $3 its size,
//   $4 the profile's libtorchPath, $5 temporary file name, $6 the run directory to create,
//   $7 the worker's ELF interpreter (empty: not dynamically linked, nothing to resolve),
//   $8 non-empty on the pass after an upload: the probe's answers are known already.
// Answers "key=value" lines. Without the worker at $1/rankdeck-worker-$2 it names the temporary
// file in rankdeck-send=PATH and ends; the launcher uploads the worker there over SFTP and runs
// the script once more, which renames the file into place when its size is right (so a node
// never sees a half-written worker under the final name) and goes on to the library check.
// The library check runs once per worker and libtorchPath: its result is kept next to the
// worker in .rankdeck-worker-$2.libs ("libtorchPath\nlibrary directory\n"), written only when
// nothing was missing. It is what ldd does without ldd's own shell and its --verify run: the
// worker's interpreter in trace mode (LD_TRACE_LOADED_OBJECTS) lists what it would load.
const char kPrepareScript[] = R"SH(
if [ -z "$8" ]; then
  printf 'home=%s\nos=%s\n' "$HOME" "$(uname -srm)"
  if [ -r /etc/os-release ]; then
    while IFS= read -r l || [ -n "$l" ]; do
      case $l in PRETTY_NAME=*) printf 'distro=%s\n' "${l#PRETTY_NAME=}" ;; esac
    done </etc/os-release
  fi
  printf 'cpus=%s\n' "$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
  if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L 2>/dev/null | sed 's/^/gpu=/'; fi
fi
[ -n "$2" ] || exit 0
case $HOME in /*) ;; *) exit 0 ;; esac
ex() { case $1 in ''|'~') e=$HOME ;; '~/'*) e=$HOME/${1#??} ;; /*) e=$1 ;; *) e=$HOME/$1 ;; esac; }
ex "$1"; d=$e; w=$d/rankdeck-worker-$2; m=$d/.rankdeck-worker-$2.libs; it=$7
r=; if [ -n "$6" ]; then ex "$6"; r=$e; fi
printf 'worker=%s\n' "$w"
umask 077
if [ ! -d "$d" ] || { [ -n "$r" ] && [ ! -d "$r" ]; }; then
  mkdir -p -- "$d" ${r:+"$r"}
  [ -d "$d" ] || { printf 'rankdeck-fail=workerdir %s\n' "$d"; exit 1; }
fi
have=
if [ -f "$w" ] && [ -x "$w" ]; then
  if [ -f "$m" ]; then have=1
  else sz=$(wc -c <"$w") && [ "$((sz))" -eq "$3" ] && have=1
  fi
fi
if [ -n "$have" ]; then
  printf 'rankdeck-have\n'
else
  t=$d/$5
  [ -f "$t" ] || { printf 'rankdeck-send=%s\n' "$t"; exit 0; }
  sz=$(wc -c <"$t")
  [ "$((sz))" -eq "$3" ] || { rm -f -- "$t"; printf 'rankdeck-fail=upload %s\n' "$w"; exit 1; }
  { chmod 755 -- "$t" && mv -f -- "$t" "$w"; } || { rm -f -- "$t"; printf 'rankdeck-fail=install\n'; exit 1; }
  printf 'rankdeck-uploaded\n'
fi
if [ -f "$m" ] && { IFS= read -r k; IFS= read -r l; } <"$m" && [ "$k" = "$4" ] && { [ -z "$l" ] || [ -d "$l" ]; }; then
  printf 'libdir=%s\nrankdeck-cached\n' "$l"
  exit 0
fi
set -f
nl='
'
chk() {
  miss=
  [ -n "$it" ] || return 0
  if [ ! -x "$it" ]; then miss="$it => not found$nl"; return 0; fi
  o=$(if [ -n "$1" ]; then LD_LIBRARY_PATH=$1; export LD_LIBRARY_PATH; fi
      unset LD_WARN LD_VERBOSE LD_BIND_NOW; LD_TRACE_LOADED_OBJECTS=1; export LD_TRACE_LOADED_OBJECTS
      exec "$it" "$w" 2>/dev/null)
  IFS=$nl
  for x in $o; do case $x in *'not found'*) miss=$miss$x$nl ;; esac; done
  unset IFS
}
lib=
case $4 in ''|python) ;; *) ex "$4"; lib=$e ;; esac
chk "$lib"
if [ -n "$miss" ] && [ -z "$lib" ]; then
  p=$(for py in python3 python; do command -v "$py" >/dev/null 2>&1 && "$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null && exit 0; done; exit 1)
  if [ -n "$p" ]; then lib=$p; chk "$lib"; fi
fi
printf 'libdir=%s\n' "$lib"
if [ -n "$miss" ]; then
  IFS=$nl; for x in $miss; do printf 'missing=%s\n' "$x"; done
  exit 0
fi
printf '%s\n%s\n' "$4" "$lib" >"$m" 2>/dev/null || :
exit 0
)SH";

// PT_INTERP of an ELF executable ("/lib64/ld-linux-x86-64.so.2"); empty for anything else (a
// static binary, a script), which has no libraries to look for.
QString elfInterpreter(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray h = f.read(64);
    if (h.size() < 52 || !h.startsWith("\x7f" "ELF"))
        return {};
    const bool is64 = h[4] == 2;
    const bool big = h[5] == 2;
    if (is64 && h.size() < 64)
        return {};
    auto num = [big](const QByteArray &b, int at, int bytes) {
        quint64 v = 0;
        for (int i = 0; i < bytes; ++i) {
            const quint64 byte = quint8(b[at + (big ? i : bytes - 1 - i)]);
            v = (v << 8) | byte;
        }
        return v;
    };
    const quint64 phoff = is64 ? num(h, 32, 8) : num(h, 28, 4);
    const int phentsize = int(is64 ? num(h, 54, 2) : num(h, 42, 2));
    const int phnum = int(is64 ? num(h, 56, 2) : num(h, 44, 2));
    if (phentsize < (is64 ? 56 : 32) || phnum <= 0 || phnum > 4096 || !f.seek(qint64(phoff)))
        return {};
    const QByteArray ph = f.read(qint64(phentsize) * phnum);
    for (int i = 0; i + 1 <= phnum && (i + 1) * phentsize <= ph.size(); ++i) {
        const int at = i * phentsize;
        if (num(ph, at, 4) != 3) // PT_INTERP
            continue;
        const quint64 offset = is64 ? num(ph, at + 8, 8) : num(ph, at + 4, 4);
        const quint64 size = is64 ? num(ph, at + 32, 8) : num(ph, at + 16, 4);
        if (size == 0 || size > 4096 || !f.seek(qint64(offset)))
            return {};
        QByteArray interp = f.read(qint64(size));
        const int nul = interp.indexOf('\0');
        if (nul >= 0)
            interp.truncate(nul);
        return QFile::decodeName(interp);
    }
    return {};
}

// PRETTY_NAME is a shell-quoted value in os-release(5); the common forms are "…" and '…'.
QString unquoteOsRelease(const QString &value)
{
    if (value.size() >= 2 && (value.front() == QLatin1Char('"') || value.front() == QLatin1Char('\''))
        && value.back() == value.front()) {
        QString v = value.mid(1, value.size() - 2);
        if (value.front() == QLatin1Char('"')) {
            v.replace(QLatin1String("\\\""), QLatin1String("\""));
            v.replace(QLatin1String("\\\\"), QLatin1String("\\"));
        }
        return v;
    }
    return value;
}

} // namespace

SshNodeConnection::SshNodeConnection(int nodeIndex, const SshEndpoint &endpoint, const SshNodeSettings &settings,
                                     SshInteraction *interaction, QMutex *interactionLock)
    : m_node(nodeIndex)
    , m_settings(settings)
    , m_session(std::make_unique<SshSession>(endpoint, interaction, interactionLock))
{
    m_info.nodeIndex = nodeIndex;
    m_info.host = endpoint.host;
}

SshNodeConnection::~SshNodeConnection()
{
    shutdown();
}

int SshNodeConnection::graceSec() const
{
    // Long enough for every reconnect attempt, so the rank does not stop while the launcher
    // still intends to come back.
    return m_settings.detached ? -1
                               : m_settings.reconnectDeadlineSec + m_session->endpoint().connectTimeoutSec + 5;
}

void SshNodeConnection::setDetached(bool detached)
{
    m_settings.detached = detached;
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

bool SshNodeConnection::checkAndDeploy(const QString &localWorkerPath, SshNodeInfo *info)
{
    QString error;
    QByteArray sha;
    qint64 size = 0;
    if (!localWorkerPath.isEmpty()) {
        sha = sha256Hex(localWorkerPath, &error);
        if (sha.isEmpty()) {
            info->error = error;
            return false;
        }
        size = QFileInfo(localWorkerPath).size();
        info->workerBytes = size;
    }
    const QString workerDir = m_settings.workerDirectory.isEmpty() ? QStringLiteral("~/.cache/rankdeck/worker")
                                                                   : m_settings.workerDirectory;
    const QString temp = QStringLiteral(".rankdeck-worker-%1.%2.part")
                             .arg(QString::fromLatin1(sha.left(16)))
                             .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    const QStringList scriptArgs{workerDir,
                                 QString::fromLatin1(sha),
                                 QString::number(size),
                                 m_settings.libtorchPath.trimmed(),
                                 temp,
                                 localWorkerPath.isEmpty() ? QString() : m_settings.defaultRunDirectory,
                                 localWorkerPath.isEmpty() ? QString() : elfInterpreter(localWorkerPath)};

    QByteArray err, pending;
    QString fail, failDetail, uploadError, sendTo;
    QStringList missing;
    bool uploaded = false, lost = false, haveWorker = false;
    int status = -1;
    ssh_session s = m_session->handle();
    for (int pass = 0; pass < 2; ++pass) {
        err.clear();
        pending.clear();
        sendTo.clear();
        // The second pass only installs the uploaded worker and checks its libraries; probing
        // again would list every GPU twice.
        const QByteArray command = sh(kPrepareScript, pass == 0 ? scriptArgs : scriptArgs + QStringList{QStringLiteral("again")});
        ssh_channel ch = s ? ssh_channel_new(s) : nullptr;
        if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, command.constData()) != SSH_OK) {
            info->error = tr("%1: the node check failed: %2")
                              .arg(info->host, s ? QString::fromUtf8(ssh_get_error(s)) : tr("not connected"));
            if (ch)
                ssh_channel_free(ch);
            return false;
        }

        // Commands the node runs here are quick; only torch's import in the library check can take
        // a while.
        QDeadlineTimer deadline(60000);
        char buf[16384];
        auto handleLine = [&](const QByteArray &line) {
            const int eq = line.indexOf('=');
            const QByteArray key = eq > 0 ? line.left(eq) : line;
            const QString value = eq > 0 ? QString::fromUtf8(line.mid(eq + 1)).trimmed() : QString();
            if (key == "home")
                info->home = value;
            else if (key == "os")
                info->os = value;
            else if (key == "distro")
                info->distribution = unquoteOsRelease(value);
            else if (key == "cpus")
                info->cpus = value.toInt();
            else if (key == "gpu" && !value.isEmpty())
                info->gpus << value;
            else if (key == "worker")
                info->workerPath = value;
            else if (key == "libdir")
                info->libtorchDirectory = value;
            else if (key == "missing")
                missing << value.split(QLatin1Char(' ')).value(0);
            else if (key == "rankdeck-have")
                haveWorker = true;
            else if (key == "rankdeck-uploaded")
                uploaded = true;
            else if (key == "rankdeck-fail") {
                fail = value.section(QLatin1Char(' '), 0, 0);
                failDetail = value.section(QLatin1Char(' '), 1);
            } else if (key == "rankdeck-send") {
                sendTo = value;
            }
        };
        for (;;) {
            bool got = false;
            for (int stream = 0; stream < 2 && !lost; ++stream) {
                const int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, stream);
                if (n == SSH_ERROR) {
                    lost = true;
                    break;
                }
                if (n <= 0)
                    continue;
                got = true;
                if (stream == 1) {
                    err.append(buf, n);
                    continue;
                }
                pending.append(buf, n);
                for (int nl = pending.indexOf('\n'); nl >= 0 && !lost; nl = pending.indexOf('\n')) {
                    const QByteArray line = pending.left(nl);
                    pending.remove(0, nl + 1);
                    handleLine(line);
                }
            }
            if (lost)
                break;
            if (got)
                continue;
            if (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch))
                break;
            if (deadline.hasExpired()) {
                info->error = tr("%1: the node check did not finish within %2 s").arg(info->host).arg(60);
                ssh_channel_close(ch);
                ssh_channel_free(ch);
                return false;
            }
            // Blocks on the socket until the command writes to stdout or ends; stderr is read on the
            // next turn.
            if (ssh_channel_poll_timeout(ch, 200, 0) == SSH_ERROR && !ssh_channel_is_eof(ch)) {
                lost = true;
                break;
            }
        }
        if (lost) {
            info->error = tr("%1: the connection was lost during the node check: %2")
                              .arg(info->host, QString::fromUtf8(ssh_get_error(s)));
            ssh_channel_free(ch);
            return false;
        }
        status = ssh_channel_get_exit_status(ch);
        ssh_channel_close(ch);
        ssh_channel_free(ch);
        if (pass > 0 || sendTo.isEmpty() || status != 0 || !fail.isEmpty())
            break;
        // The worker is not on the node: SFTP to the temporary name the script chose, then the
        // second pass renames it into place and checks its libraries.
        if (!sendTo.startsWith(QLatin1Char('/'))) {
            fail = QStringLiteral("upload");
            failDetail = sendTo;
            uploadError = tr("the node gave no absolute path for the upload");
            break;
        }
        emit nodeProgress(m_node, tr("uploading the worker"), 0);
        int lastPercent = 0;
        const bool sent = m_session->upload(
            localWorkerPath, sendTo, 0600,
            [&](qint64 done, qint64 total) {
                const int percent = total > 0 ? int(done * 100 / total) : 100;
                if (percent != lastPercent) {
                    lastPercent = percent;
                    emit nodeProgress(m_node, tr("uploading the worker"), percent);
                }
            },
            &uploadError);
        if (!sent) {
            fail = QStringLiteral("upload");
            failDetail = info->workerPath;
            // Best effort: a partial temporary file only costs disk, and its name is unique.
            if (m_session->isConnected())
                m_session->exec("rm -f -- " + shell::quote(sendTo), 10000);
            break;
        }
    }
    const QString stderrText = QString::fromUtf8(err.trimmed());
    if (!sendTo.isEmpty() && fail.isEmpty() && !uploaded && status == 0) {
        info->error = tr("%1: the worker uploaded to %2 did not arrive").arg(info->host, sendTo);
        return false;
    }

    if (fail == QLatin1String("workerdir")) {
        info->error = tr("%1: cannot create the worker directory %2: %3")
                          .arg(info->host, failDetail, stderrText.isEmpty() ? tr("mkdir failed") : stderrText);
        return false;
    }
    if (fail == QLatin1String("upload")) {
        info->error = tr("%1: uploading the worker to %2 failed: %3")
                          .arg(info->host, failDetail,
                               !stderrText.isEmpty()  ? stderrText
                               : !uploadError.isEmpty() ? uploadError
                                                        : tr("the copy is incomplete"));
        return false;
    }
    if (fail == QLatin1String("install")) {
        info->error = tr("%1: cannot install the worker as %2: %3")
                          .arg(info->host, info->workerPath, stderrText.isEmpty() ? tr("mv failed") : stderrText);
        return false;
    }
    if (status != 0 || !fail.isEmpty()) {
        info->error = tr("%1: the node check failed: %2")
                          .arg(info->host, !stderrText.isEmpty() ? stderrText : tr("exit status %1").arg(status));
        return false;
    }
    if (info->home.isEmpty() || !info->home.startsWith(QLatin1Char('/'))) {
        info->error = tr("%1: the node reports no home directory ($HOME)").arg(info->host);
        return false;
    }
    if (localWorkerPath.isEmpty())
        return true;
    if (info->workerPath.isEmpty() || (!haveWorker && !uploaded)) {
        info->error = tr("%1: the worker was not deployed: %2")
                          .arg(info->host, !uploadError.isEmpty() ? uploadError
                                           : !stderrText.isEmpty() ? stderrText : tr("no answer from the node"));
        return false;
    }
    info->workerUploaded = uploaded;
    if (haveWorker)
        emit nodeProgress(m_node, tr("worker already on the node"), 100);
    if (!missing.isEmpty()) {
        const QString libDir = info->libtorchDirectory;
        info->error = tr("%1: the worker cannot find %2%3. Set libtorchPath in the profile to the directory "
                         "with libtorch's .so files on this node, or install torch for the node's python3")
                          .arg(info->host, missing.join(QStringLiteral(", ")),
                               libDir.isEmpty() ? QString() : tr(" (looked in %1 too)").arg(libDir));
        info->libtorchDirectory.clear();
        return false;
    }
    return true;
}

void SshNodeConnection::prepare(const QString &localWorkerPath)
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
    const bool ok = checkAndDeploy(localWorkerPath, &info);
    m_info = info;
    if (!ok)
        m_session->disconnect();
    emit nodeProgress(m_node, ok ? tr("ready") : tr("failed"), 100);
    emit prepareFinished(m_node, info);
}

bool SshNodeConnection::openChannel(Rank &r, const QByteArray &command, bool attach, QString *error)
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

void SshNodeConnection::startRank(const RankLaunchSpec &spec)
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
    schedulePoll();
}

void SshNodeConnection::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes, qint64 stderrBytes)
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
    schedulePoll();
}

void SshNodeConnection::writeStdin(int rank, const QByteArray &data)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end() || it->stdinClosed || data.isEmpty())
        return;
    it->stdinHistory += data;
    // Bytes written into a connection that turns out to be dead are not lost: the re-attach
    // resends whatever the node did not log.
    if (it->channel && !it->resync && !m_reconnecting) {
        ssh_channel_write(it->channel, data.constData(), uint32_t(data.size()));
        schedulePoll();
    }
}

void SshNodeConnection::closeStdin(int rank)
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
    schedulePoll();
}

void SshNodeConnection::signalRank(int rank, int signal)
{
    auto it = m_ranks.find(rank);
    if (it == m_ranks.end() || it->pid <= 0 || !m_session->isConnected())
        return;
    const SshExecResult r = m_session->exec(SshRankScript::signalGroup(it->pid, signal), 10000);
    if (!r.ok())
        qWarning("rankdeck: %s: cannot signal rank %d: %s", qPrintable(m_info.host), rank,
                 qPrintable(r.describeFailure()));
    schedulePoll();
}

void SshNodeConnection::dropNotifier()
{
    // Before the session closes its socket: a notifier must never watch a closed (or reused) fd.
    delete m_socketNotifier;
    m_socketNotifier = nullptr;
    m_notifierFd = -1;
}

void SshNodeConnection::updateTimer()
{
    if (!m_pollTimer) {
        m_pollTimer = new QTimer(this);
        m_pollTimer->setInterval(kSafetyPollIntervalMs);
        connect(m_pollTimer, &QTimer::timeout, this, [this] { poll(false); });
    }
    const bool active = !m_ranks.isEmpty() && !m_reconnecting && !m_shutDown;
    ssh_session s = m_session ? m_session->handle() : nullptr;
    const int fd = active && s ? int(ssh_get_fd(s)) : -1;
    if (m_socketNotifier && fd != m_notifierFd)
        dropNotifier();
    if (fd >= 0 && !m_socketNotifier) {
        m_socketNotifier = new QSocketNotifier(qintptr(fd), QSocketNotifier::Read, this);
        m_notifierFd = fd;
        m_idleWakeups = 0;
        connect(m_socketNotifier, &QSocketNotifier::activated, this, [this] { poll(true); });
    }
    if (active && !m_pollTimer->isActive())
        m_pollTimer->start();
    else if (!active && m_pollTimer->isActive())
        m_pollTimer->stop();
}

void SshNodeConnection::schedulePoll()
{
    if (!m_pollScheduled && !m_ranks.isEmpty()) {
        m_pollScheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_pollScheduled = false;
            poll(false);
        });
    }
}

void SshNodeConnection::poll(bool fromSocket)
{
    if (m_shutDown || m_reconnecting)
        return;
    m_bytesThisPoll = 0;
    // Reading one channel reads the socket, which may bring data for a channel already read in
    // this pass; the socket is drained then and would not wake us for it. So passes repeat while
    // any channel has data buffered (a bounded number of times; then soon again).
    bool buffered = true;
    for (int pass = 0; buffered && pass < 8; ++pass) {
        buffered = false;
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
        for (auto it = m_ranks.cbegin(); it != m_ranks.cend() && !buffered; ++it) {
            if (it->channel)
                buffered = ssh_channel_poll(it->channel, 0) > 0 || ssh_channel_poll(it->channel, 1) > 0;
        }
    }
    if (buffered)
        schedulePoll();
    // NAT gateways forget silent connections (a rank that prints nothing for minutes).
    if (!fromSocket && !m_session->keepAlive()) {
        connectionLost();
        return;
    }
    if (m_bytesThisPoll > 0 || !fromSocket)
        m_idleWakeups = 0;
    else
        ++m_idleWakeups;
    if (m_socketNotifier)
        m_socketNotifier->setEnabled(m_idleWakeups < kMaxIdleWakeups);
    updateTimer();
}

bool SshNodeConnection::pollRank(int rank, Rank &r)
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
            m_bytesThisPoll += n;
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

void SshNodeConnection::finishRank(int rank, Rank &r)
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

void SshNodeConnection::failRank(int rank, const QString &detail, int exitCode)
{
    auto it = m_ranks.find(rank);
    if (it != m_ranks.end()) {
        if (it->channel)
            ssh_channel_free(it->channel);
        m_ranks.erase(it);
    }
    emit rankExited(rank, RankExit{false, exitCode, 0, nowUs(), detail});
}

void SshNodeConnection::connectionLost()
{
    dropNotifier();
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
        connect(m_reconnectTimer, &QTimer::timeout, this, &SshNodeConnection::tryReconnect);
    }
    m_reconnectTimer->start(200);
}

void SshNodeConnection::tryReconnect()
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
    schedulePoll();
}

void SshNodeConnection::shutdown()
{
    if (m_shutDown)
        return;
    m_shutDown = true;
    // Timers belong to this thread; the destructor may run on another one.
    dropNotifier();
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
