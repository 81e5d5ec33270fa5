// SPDX-License-Identifier: GPL-3.0-or-later
//
// Uploads a file over a plain exec channel, for nodes whose sshd has no SFTP subsystem (many
// hardened configurations drop the `Subsystem sftp` line). The bytes go to `cat` on the node
// into a temporary name next to the target; the node hashes what arrived (sha256sum, shasum or
// openssl, whichever it has) and the file is renamed into place only when the hash is the one
// of the local file, so a node never sees a half-written or damaged file under its final name.
#pragma once

#include <QByteArray>
#include <QString>

#include <functional>

class QIODevice;
struct ssh_session_struct;

namespace rankdeck {

class SshExecUpload
{
public:
    // session: a connected libssh session (SshSession::handle()), label: how messages name it
    // (SshSession::label()); the raw handle, not SshSession, so that SshSession can use this.
    // remotePath absolute (or relative to the login directory); progress gets (sent, total);
    // *sha256 (hex), when given, is the hash of what was sent and checked.
    static bool upload(ssh_session_struct *session, const QString &label, const QString &localPath,
                       const QString &remotePath, int mode,
                       const std::function<void(qint64, qint64)> &progress, QString *error,
                       QByteArray *sha256 = nullptr);
    // The same from a device open for reading (a file, or bytes in a QBuffer).
    static bool upload(ssh_session_struct *session, const QString &label, QIODevice &local,
                       const QString &remotePath, int mode,
                       const std::function<void(qint64, qint64)> &progress, QString *error,
                       QByteArray *sha256 = nullptr);
};

} // namespace rankdeck
