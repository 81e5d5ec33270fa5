// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshdirectorysync.h"

#include "config/syncdiff.h"
#include "config/syncmanifest.h"
#include "util/logging.h"
#include "util/translation.h"

#include "transport/ssh/sshexecupload.h"
#include "transport/ssh/sshsession.h"
#include "util/shellquote.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHash>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <fcntl.h>

namespace rankdeck {

namespace {

// $1 the copy, $2 its manifest. Answers the manifest's length on a line of its own, the manifest,
// then `find`'s listing of the copy, NUL-separated (names may hold newlines). Without GNU find's
// -printf the listing is empty and every file is sent again: slower, never wrong.
const char kStateScript[] = R"SH(
umask 077
mkdir -p -- "$1" || exit 3
cd -- "$1" || exit 3
if [ -f "$2" ]; then wc -c <"$2"; cat -- "$2"; else echo 0; fi
find . \( -type f -o -type d \) -printf '%y %s %m %P\0' 2>/dev/null || :
)SH";

QString sftpError(sftp_session sftp, ssh_session s)
{
    switch (sftp_get_error(sftp)) {
    case SSH_FX_PERMISSION_DENIED:
        return tr("permission denied");
    case SSH_FX_NO_SUCH_FILE:
    case SSH_FX_NO_SUCH_PATH:
        return tr("no such file or directory");
    case SSH_FX_FAILURE:
        // OpenSSH's sftp-server reports ENOSPC and EDQUOT as a bare failure.
        return tr("the node refused (disk full or over quota?)");
    default:
        return QString::fromUtf8(ssh_get_error(s));
    }
}

} // namespace

SshDirectorySync::SshDirectorySync(SshSession *session, const QString &host, const QString &home,
                                   Progress progress)
    : m_session(session), m_host(host), m_home(home), m_progress(std::move(progress))
{}

bool SshDirectorySync::run(const SyncManifest &manifest, SyncStats *stats, QString *error)
{
    QElapsedTimer clock;
    clock.start();
    const QString root =
        m_home + QLatin1Char('/') + baseDirectory() + QLatin1Char('/') + manifest.remoteName();
    const QString manifestPath = root + QStringLiteral(".manifest.json");
    stats->directory = root;

    QByteArray command = "exec /bin/sh -c " + shell::quote(QByteArray(kStateScript)) + " rankdeck";
    command += ' ' + shell::quote(root) + ' ' + shell::quote(manifestPath);
    const SshExecResult state = m_session->exec(command, 120000);
    if (!state.ok()) {
        *error = tr("%1: sync: cannot create %2: %3").arg(m_host, root, state.describeFailure());
        return false;
    }
    const qsizetype nl = state.out.indexOf('\n');
    bool okLength = false;
    const qsizetype length = nl < 0 ? -1 : state.out.left(nl).trimmed().toLongLong(&okLength);
    // length > size - (nl + 1), not nl + 1 + length > size: a length near 2^63 must not overflow.
    if (!okLength || length < 0 || length > state.out.size() - (nl + 1)) {
        *error = tr("%1: sync: the node's answer about %2 is not readable").arg(m_host, root);
        return false;
    }
    const QByteArray oldManifest = state.out.mid(nl + 1, length);
    QHash<QString, SyncFile> previous;
    QString parseError;
    if (!oldManifest.isEmpty() && !SyncManifest::parseJson(oldManifest, &previous, &parseError))
        qCDebug(lcSsh) << m_host << "sync: ignoring the manifest on the node:" << parseError;
    const QHash<QString, SyncNodeEntry> onNode =
        SyncDiff::parseListing(state.out.mid(nl + 1 + length));
    const SyncDiff diff = SyncDiff::compute(manifest.files(), previous, onNode);
    qCDebug(lcSsh) << m_host << "sync:" << diff.upload.size() << "to send," << diff.unchanged
                   << "unchanged," << diff.remove.size() << "to remove," << onNode.size()
                   << "entries on the node";

    const QByteArray newManifest = manifest.toJson();
    stats->filesUnchanged = diff.unchanged;
    if (diff.isEmpty() && oldManifest == newManifest) {
        stats->elapsedMs = clock.elapsed();
        return true;
    }

    ssh_session s = m_session->handle();
    sftp_session sftp = sftp_new(s);
    if (!sftp || sftp_init(sftp) != SSH_OK) {
        qCDebug(lcSsh) << m_host << "sync: no SFTP (" << ssh_get_error(s)
                       << "), syncing over exec channels";
        if (sftp)
            sftp_free(sftp);
        if (!m_session->isConnected()) {
            *error = tr("%1: sync: the connection was lost").arg(m_host);
            return false;
        }
        const bool ok = runOverExec(manifest, diff, root, manifestPath, stats, error);
        stats->elapsedMs = clock.elapsed();
        return ok;
    }
    auto remote = [&](const QString &path) { return (root + QLatin1Char('/') + path).toUtf8(); };
    auto fail = [&](const QString &message) {
        *error = message;
        sftp_free(sftp);
        return false;
    };
    // From here until the new manifest is written the node's copy is not what any manifest says.
    sftp_unlink(sftp, manifestPath.toUtf8().constData());

    for (const QString &dir : diff.createDirectories) {
        if (sftp_mkdir(sftp, remote(dir).constData(), 0700) != SSH_OK) {
            sftp_attributes a = sftp_stat(sftp, remote(dir).constData());
            const bool isDir = a && a->type == SSH_FILEXFER_TYPE_DIRECTORY;
            if (a)
                sftp_attributes_free(a);
            if (!isDir)
                return fail(tr("%1: sync: cannot create the directory %2 in %3: %4")
                                .arg(m_host, dir, root, sftpError(sftp, s)));
        }
    }
    for (const QString &path : diff.remove) {
        if (sftp_unlink(sftp, remote(path).constData()) != SSH_OK &&
            sftp_get_error(sftp) != SSH_FX_NO_SUCH_FILE)
            return fail(tr("%1: sync: cannot remove %2 from %3: %4")
                            .arg(m_host, path, root, sftpError(sftp, s)));
    }
    const qint64 total = diff.uploadBytes();
    qint64 sent = 0;
    int lastTenth = -1; // progress in steps of 10%: a line per step in the launcher's log
    const QString stage = tr("syncing %1").arg(manifest.directory());
    // The hashes of what was actually sent, should a file change between the scan and now.
    SyncManifest sentManifest = manifest;
    for (const SyncFile &f : diff.upload) {
        QFile local(manifest.directory() + QLatin1Char('/') + f.path);
        if (!local.open(QIODevice::ReadOnly))
            return fail(tr("%1: sync: cannot read %2: %3")
                            .arg(m_host, local.fileName(), local.errorString()));
        const QByteArray target = remote(f.path);
        sftp_file file =
            sftp_open(sftp, target.constData(), O_WRONLY | O_CREAT | O_TRUNC, mode_t(f.mode));
        if (!file)
            return fail(tr("%1: sync: cannot write %2 in %3: %4")
                            .arg(m_host, f.path, root, sftpError(sftp, s)));
        QCryptographicHash hash(QCryptographicHash::Sha256);
        bool ok = true;
        qint64 fileBytes = 0;
        while (ok && !local.atEnd()) {
            // 128 KiB requests, as SshSession::upload (below OpenSSH's 256 KiB limit).
            const QByteArray chunk = local.read(131072);
            if (chunk.isEmpty())
                break;
            hash.addData(chunk);
            for (qsizetype off = 0; off < chunk.size();) {
                const ssize_t n =
                    sftp_write(file, chunk.constData() + off, size_t(chunk.size() - off));
                if (n <= 0) {
                    ok = false;
                    break;
                }
                off += n;
            }
            fileBytes += chunk.size();
            const int percent = total > 0 ? int((sent + fileBytes) * 100 / total) : 100;
            if (percent / 10 != lastTenth) {
                lastTenth = percent / 10;
                m_progress(stage, percent);
            }
        }
        const QString why = ok ? QString() : sftpError(sftp, s);
        if (sftp_close(file) != SSH_OK && ok)
            return fail(tr("%1: sync: closing %2 in %3 failed: %4")
                            .arg(m_host, f.path, root, sftpError(sftp, s)));
        if (!ok)
            return fail(tr("%1: sync: writing %2 in %3 failed: %4").arg(m_host, f.path, root, why));
        // An existing file keeps its mode through O_TRUNC.
        const auto there = onNode.constFind(f.path);
        if (there != onNode.constEnd() && (there->mode & 0777) != f.mode)
            sftp_chmod(sftp, target.constData(), mode_t(f.mode));
        if (const QByteArray hex = hash.result().toHex(); hex != f.sha256)
            sentManifest.setSha256(f.path, hex);
        sent += fileBytes;
        ++stats->filesUploaded;
    }
    stats->bytesUploaded = sent;
    for (const SyncFile &f : diff.chmod) {
        if (sftp_chmod(sftp, remote(f.path).constData(), mode_t(f.mode)) != SSH_OK)
            return fail(tr("%1: sync: cannot change the mode of %2 in %3: %4")
                            .arg(m_host, f.path, root, sftpError(sftp, s)));
    }
    stats->filesRemoved = int(diff.remove.size());

    const QByteArray json = sentManifest.toJson();
    const QByteArray manifestTarget = manifestPath.toUtf8();
    sftp_file mf = sftp_open(sftp, manifestTarget.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool ok = mf != nullptr;
    for (qsizetype off = 0; ok && off < json.size();) {
        const ssize_t n = sftp_write(mf, json.constData() + off, size_t(json.size() - off));
        ok = n > 0;
        off += n;
    }
    if (mf && sftp_close(mf) != SSH_OK)
        ok = false;
    if (!ok)
        return fail(tr("%1: sync: cannot write the manifest %2: %3")
                        .arg(m_host, manifestPath, sftpError(sftp, s)));
    sftp_free(sftp);
    stats->elapsedMs = clock.elapsed();
    return true;
}

bool SshDirectorySync::runOverExec(const SyncManifest &manifest, const SyncDiff &diff,
                                   const QString &root, const QString &manifestPath,
                                   SyncStats *stats, QString *error)
{
    auto remote = [&](const QString &path) { return root + QLatin1Char('/') + path; };
    // The manifest goes first, as over SFTP: until the new one is written, the copy is not what
    // any manifest says. The script comes on stdin: no command-line limit however many files.
    QByteArray script = "umask 077\nrm -f -- " + shell::quote(manifestPath) + " || exit 1\n";
    for (const QString &dir : diff.createDirectories)
        script += "mkdir -p -- " + shell::quote(remote(dir)) + " || exit 2\n";
    for (const QString &path : diff.remove)
        script += "rm -f -- " + shell::quote(remote(path)) + " || exit 3\n";
    for (const SyncFile &f : diff.chmod)
        script += "chmod " + QByteArray::number(f.mode & 07777, 8) + ' ' +
                  shell::quote(remote(f.path)) + " || exit 4\n";
    const SshExecResult changed = m_session->exec("exec /bin/sh -s", 120000, script);
    if (!changed.ok()) {
        *error = tr("%1: sync: cannot prepare %2: %3").arg(m_host, root, changed.describeFailure());
        return false;
    }
    const qint64 total = diff.uploadBytes();
    qint64 sent = 0;
    int lastTenth = -1;
    const QString stage = tr("syncing %1").arg(manifest.directory());
    SyncManifest sentManifest = manifest;
    for (const SyncFile &f : diff.upload) {
        QByteArray sha;
        QString why;
        const qint64 before = sent;
        if (!SshExecUpload::upload(
                m_session->handle(), m_session->label(),
                manifest.directory() + QLatin1Char('/') + f.path, remote(f.path), f.mode,
                [&](qint64 done, qint64) {
                    const int percent = total > 0 ? int((before + done) * 100 / total) : 100;
                    if (percent / 10 != lastTenth) {
                        lastTenth = percent / 10;
                        m_progress(stage, percent);
                    }
                },
                &why, &sha)) {
            *error = tr("%1: sync: %2 in %3: %4").arg(m_host, f.path, root, why);
            return false;
        }
        if (sha != f.sha256)
            sentManifest.setSha256(f.path, sha);
        sent += QFileInfo(manifest.directory() + QLatin1Char('/') + f.path).size();
        ++stats->filesUploaded;
    }
    stats->bytesUploaded = sent;
    stats->filesRemoved = int(diff.remove.size());
    QByteArray json = sentManifest.toJson();
    QBuffer buffer(&json);
    buffer.open(QIODevice::ReadOnly);
    QString why;
    if (!SshExecUpload::upload(m_session->handle(), m_session->label(), buffer, manifestPath, 0600,
                               {}, &why)) {
        *error = tr("%1: sync: cannot write the manifest %2: %3").arg(m_host, manifestPath, why);
        return false;
    }
    return true;
}

} // namespace rankdeck
