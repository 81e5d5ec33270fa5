// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshexecupload.h"

#include "util/logging.h"
#include "util/translation.h"

#include "util/shellquote.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QFile>
#include <QRandomGenerator>

#include <libssh/libssh.h>

namespace rankdeck {

namespace {

// $1 temporary name, $2 target, $3 mode (octal), $4 expected SHA-256. Exit codes name the step
// that failed; "rankdeck-hash=" what the node computed when it differs.
const char kReceiveScript[] = R"SH(
umask 077
cat > "$1" || { rm -f -- "$1"; exit 10; }
chmod "$3" "$1" || { rm -f -- "$1"; exit 11; }
if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum < "$1")
elif command -v shasum >/dev/null 2>&1; then h=$(shasum -a 256 < "$1")
elif command -v openssl >/dev/null 2>&1; then h=$(openssl dgst -sha256 -r < "$1")
else rm -f -- "$1"; exit 14; fi
h=${h%% *}; h=${h##*= }
if [ "$h" != "$4" ]; then rm -f -- "$1"; printf 'rankdeck-hash=%s\n' "$h"; exit 12; fi
mv -f -- "$1" "$2" || { rm -f -- "$1"; exit 13; }
)SH";

} // namespace

bool SshExecUpload::upload(ssh_session_struct *session, const QString &label,
                           const QString &localPath, const QString &remotePath, int mode,
                           const std::function<void(qint64, qint64)> &progress, QString *error,
                           QByteArray *sha256)
{
    QFile local(localPath);
    if (!local.open(QIODevice::ReadOnly)) {
        *error = tr("cannot read %1: %2").arg(localPath, local.errorString());
        return false;
    }
    return upload(session, label, local, remotePath, mode, progress, error, sha256);
}

bool SshExecUpload::upload(ssh_session_struct *session, const QString &label, QIODevice &local,
                           const QString &remotePath, int mode,
                           const std::function<void(qint64, qint64)> &progress, QString *error,
                           QByteArray *sha256)
{
    // Hashed before it is sent, and the same bytes sent: a file that changes in between
    // arrives as a hash mismatch, never as a silent mix.
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&local) || !local.seek(0)) {
        *error =
            tr("cannot read what is to be sent to %1: %2").arg(remotePath, local.errorString());
        return false;
    }
    const QByteArray digest = hash.result().toHex();
    const QString temporary =
        remotePath + QStringLiteral(".rankdeck-part-%1")
                         .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'));
    const QByteArray command =
        "sh -c " + shell::quote(QByteArray(kReceiveScript)) + " rankdeck-receive " +
        shell::quoteAll({temporary, remotePath, QString::number(mode & 07777, 8)}) + ' ' +
        shell::quote(digest);

    ssh_session s = session;
    ssh_channel ch = ssh_channel_new(s);
    if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
        ssh_channel_request_exec(ch, command.constData()) != SSH_OK) {
        *error = tr("%1: cannot run a command to receive %2: %3")
                     .arg(label, remotePath, QString::fromUtf8(ssh_get_error(s)));
        if (ch)
            ssh_channel_free(ch);
        return false;
    }
    qCDebug(lcSsh) << label << "no SFTP: uploading" << local.size() << "bytes to" << remotePath
                   << "over an exec channel";
    const qint64 total = local.size();
    qint64 sent = 0;
    while (!local.atEnd()) {
        const QByteArray chunk = local.read(131072);
        if (chunk.isEmpty())
            break;
        if (ssh_channel_write(ch, chunk.constData(), uint32_t(chunk.size())) != chunk.size()) {
            *error = tr("%1: writing %2 failed: %3")
                         .arg(label, remotePath, QString::fromUtf8(ssh_get_error(s)));
            ssh_channel_free(ch);
            return false;
        }
        sent += chunk.size();
        if (progress)
            progress(sent, total);
    }
    if (total == 0 && progress)
        progress(0, 0);
    ssh_channel_send_eof(ch);

    QByteArray out, err;
    char buf[4096];
    QDeadlineTimer deadline(120000);
    for (;;) {
        bool got = false;
        for (int stream = 0; stream < 2; ++stream) {
            const int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, stream);
            if (n == SSH_ERROR) {
                *error =
                    tr("%1: the connection was lost while %2 was checked").arg(label, remotePath);
                ssh_channel_free(ch);
                return false;
            }
            if (n > 0) {
                (stream ? err : out).append(buf, n);
                got = true;
            }
        }
        if (got)
            continue;
        if (ssh_channel_is_eof(ch))
            break;
        if (deadline.hasExpired()) {
            *error = tr("%1: checking %2 did not finish within 120 s").arg(label, remotePath);
            ssh_channel_close(ch);
            ssh_channel_free(ch);
            return false;
        }
        ssh_channel_poll_timeout(ch, 100, 0);
    }
    const int status = ssh_channel_get_exit_status(ch);
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    const QString why = QString::fromUtf8(err.trimmed());
    switch (status) {
    case 0:
        if (sha256)
            *sha256 = digest;
        return true;
    case 10:
        *error = tr("%1: cannot write %2: %3").arg(label, temporary, why);
        break;
    case 11:
        *error = tr("%1: cannot set the mode of %2: %3").arg(label, temporary, why);
        break;
    case 12: {
        const QByteArray got = out.mid(out.indexOf("rankdeck-hash=") + 14).trimmed();
        *error = tr("%1: %2 arrived damaged (SHA-256 %3 on the node, %4 here); it was removed")
                     .arg(label, remotePath, QString::fromLatin1(got), QString::fromLatin1(digest));
        break;
    }
    case 13:
        *error = tr("%1: cannot rename %2 to %3: %4").arg(label, temporary, remotePath, why);
        break;
    case 14:
        *error = tr("%1: the node has no sha256sum, shasum or openssl to check %2 with, and no "
                    "SFTP")
                     .arg(label, remotePath);
        break;
    default:
        *error = tr("%1: receiving %2 failed (exit status %3): %4")
                     .arg(label, remotePath)
                     .arg(status)
                     .arg(why);
    }
    return false;
}

} // namespace rankdeck
