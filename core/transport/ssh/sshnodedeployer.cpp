// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshnodedeployer.h"

#include "util/logging.h"
#include "util/translation.h"

#include "transport/ssh/sshsession.h"
#include "util/shellquote.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QMutexLocker>
#include <QRandomGenerator>

#include <libssh/libssh.h>

#include <utility>

namespace rankdeck {

namespace {

// `exec /bin/sh -c SCRIPT ARGS…`: the script runs in a POSIX shell whatever the login shell is,
// and every argument is quoted.
QByteArray sh(const QByteArray &script, const QStringList &args = {})
{
    QByteArray cmd = "exec /bin/sh -c " + shell::quote(script) + " rankdeck";
    for (const QString &a : args)
        cmd += ' ' + shell::quote(a);
    return cmd;
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
// the script once more, which renames the file into place when its SHA-256 is right (so a node
// never sees a half-written worker under the final name) and goes on to the library check.
// A worker already there is used only when its SHA-256 is $2 (issue 29: its name is public,
// so a file under it proves nothing), and only from a directory of this user that nobody else
// may write to; the node hashes it with sha256sum, shasum or openssl, as SshExecUpload does.
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
# Others who may write to the directory could put their own program under the worker's name.
if [ -n "$(find "$d" -prune \( -perm -0002 -o -perm -0020 \) -print 2>/dev/null)" ] || [ -L "$d" ] ||
   [ -n "$(find "$d" -prune ! -user "$(id -u)" -print 2>/dev/null)" ]; then
  printf 'rankdeck-fail=shared %s\n' "$d"; exit 1
fi
sha() {
  if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum <"$1")
  elif command -v shasum >/dev/null 2>&1; then h=$(shasum -a 256 <"$1")
  elif command -v openssl >/dev/null 2>&1; then h=$(openssl dgst -sha256 -r <"$1")
  else printf 'rankdeck-fail=nohash\n'; exit 1; fi
  h=${h%% *}; h=${h##*= }
}
have=
if [ -f "$w" ] && [ -x "$w" ] && [ ! -L "$w" ]; then
  # By its content, not its name: the name is public (the binary is).
  sha "$w"; [ "$h" = "$2" ] && have=1
fi
if [ -n "$have" ]; then
  printf 'rankdeck-have\n'
else
  t=$d/$5
  [ -f "$t" ] || { printf 'rankdeck-send=%s\n' "$t"; exit 0; }
  sha "$t"
  [ "$h" = "$2" ] || { rm -f -- "$t"; printf 'rankdeck-fail=upload %s\n' "$w"; exit 1; }
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

} // namespace

SshNodeDeployer::SshNodeDeployer(SshSession *session, const SshNodeSettings &settings,
                                 Progress progress)
    : m_session(session), m_settings(settings), m_progress(std::move(progress))
{}

// PT_INTERP of an ELF executable ("/lib64/ld-linux-x86-64.so.2"); empty for anything else (a
// static binary, a script), which has no libraries to look for.
QString SshNodeDeployer::elfInterpreter(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray h = f.read(64);
    if (h.size() < 52 || !h.startsWith("\x7f"
                                       "ELF"))
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
    for (int i = 0; i + 1 <= phnum && qsizetype(i + 1) * phentsize <= ph.size(); ++i) {
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
QString SshNodeDeployer::unquoteOsRelease(const QString &value)
{
    if (value.size() >= 2 &&
        (value.front() == QLatin1Char('"') || value.front() == QLatin1Char('\'')) &&
        value.back() == value.front()) {
        QString v = value.mid(1, value.size() - 2);
        if (value.front() == QLatin1Char('"')) {
            v.replace(QLatin1String("\\\""), QLatin1String("\""));
            v.replace(QLatin1String("\\\\"), QLatin1String("\\"));
        }
        return v;
    }
    return value;
}

QByteArray SshNodeDeployer::sha256Hex(const QString &path, QString *error)
{
    static QMutex mutex;
    static QHash<QString, QByteArray> cache;
    const QFileInfo fi(path);
    const QString key = fi.absoluteFilePath() + QLatin1Char('|') + QString::number(fi.size()) +
                        QLatin1Char('|') + QString::number(fi.lastModified().toMSecsSinceEpoch());
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
    QByteArray hex = hash.result().toHex();
    cache.insert(key, hex);
    return hex;
}

bool SshNodeDeployer::checkAndDeploy(const QString &localWorkerPath, SshNodeInfo *info)
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
    const QString workerDir = m_settings.workerDirectory.isEmpty()
                                  ? QStringLiteral("~/.cache/rankdeck/worker")
                                  : m_settings.workerDirectory;
    const QString temp = QStringLiteral(".rankdeck-worker-%1.%2.part")
                             .arg(QString::fromLatin1(sha.left(16)))
                             .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    const QStringList scriptArgs{
        workerDir,
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
        const QByteArray command =
            sh(kPrepareScript,
               pass == 0 ? scriptArgs : scriptArgs + QStringList{QStringLiteral("again")});
        ssh_channel ch = s ? ssh_channel_new(s) : nullptr;
        if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
            ssh_channel_request_exec(ch, command.constData()) != SSH_OK) {
            info->error =
                tr("%1: the node check failed: %2")
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
            const QString value =
                eq > 0 ? QString::fromUtf8(line.mid(eq + 1)).trimmed() : QString();
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
                info->error =
                    tr("%1: the node check did not finish within %2 s").arg(info->host).arg(60);
                ssh_channel_close(ch);
                ssh_channel_free(ch);
                return false;
            }
            // Blocks on the socket until the command writes to stdout or ends; stderr is read on
            // the next turn.
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
        qCDebug(lcSsh) << info->host << "node check pass" << pass << "exit status" << status
                       << "failed at" << (fail.isEmpty() ? QStringLiteral("nothing") : fail);
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
        qCDebug(lcSsh) << info->host << "deploy: the worker is not on the node, uploading" << size
                       << "bytes to" << sendTo;
        m_progress(tr("uploading the worker"), 0);
        int lastPercent = 0;
        const bool sent = m_session->upload(
            localWorkerPath, sendTo, 0600,
            [&](qint64 done, qint64 total) {
                const int percent = total > 0 ? int(done * 100 / total) : 100;
                if (percent != lastPercent) {
                    lastPercent = percent;
                    m_progress(tr("uploading the worker"), percent);
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
                          .arg(info->host, failDetail,
                               stderrText.isEmpty() ? tr("mkdir failed") : stderrText);
        return false;
    }
    if (fail == QLatin1String("shared")) {
        info->error = tr("%1: refusing the worker directory %2: it is not a directory of this user "
                         "that only this user may write to, so another user could put a program "
                         "there that every launch would run; set worker_directory in the profile "
                         "to a private one")
                          .arg(info->host, failDetail);
        return false;
    }
    if (fail == QLatin1String("nohash")) {
        info->error = tr("%1: the node has no sha256sum, shasum or openssl to check the worker "
                         "with")
                          .arg(info->host);
        return false;
    }
    if (fail == QLatin1String("upload")) {
        info->error = tr("%1: uploading the worker to %2 failed: %3")
                          .arg(info->host, failDetail,
                               !stderrText.isEmpty()    ? stderrText
                               : !uploadError.isEmpty() ? uploadError
                                                        : tr("the copy is incomplete"));
        return false;
    }
    if (fail == QLatin1String("install")) {
        info->error = tr("%1: cannot install the worker as %2: %3")
                          .arg(info->host, info->workerPath,
                               stderrText.isEmpty() ? tr("mv failed") : stderrText);
        return false;
    }
    if (status != 0 || !fail.isEmpty()) {
        info->error =
            tr("%1: the node check failed: %2")
                .arg(info->host,
                     !stderrText.isEmpty() ? stderrText : tr("exit status %1").arg(status));
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
                          .arg(info->host, !uploadError.isEmpty()  ? uploadError
                                           : !stderrText.isEmpty() ? stderrText
                                                                   : tr("no answer from the node"));
        return false;
    }
    info->workerUploaded = uploaded;
    qCDebug(lcSsh) << info->host << "deploy:" << info->workerPath
                   << (uploaded ? "uploaded and installed" : "already on the node")
                   << "libraries from"
                   << (info->libtorchDirectory.isEmpty() ? QStringLiteral("the system")
                                                         : info->libtorchDirectory)
                   << "missing" << missing;
    if (haveWorker)
        m_progress(tr("worker already on the node"), 100);
    if (!missing.isEmpty()) {
        const QString libDir = info->libtorchDirectory;
        info->error =
            tr("%1: the worker cannot find %2%3. Set libtorchPath in the profile to the directory "
               "with libtorch's .so files on this node, or install torch for the node's python3")
                .arg(info->host, missing.join(QStringLiteral(", ")),
                     libDir.isEmpty() ? QString() : tr(" (looked in %1 too)").arg(libDir));
        info->libtorchDirectory.clear();
        return false;
    }
    return true;
}

} // namespace rankdeck
