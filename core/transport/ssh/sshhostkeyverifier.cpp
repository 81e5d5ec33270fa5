// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshhostkeyverifier.h"

#include "util/logging.h"
#include "util/translation.h"

#include "transport/ssh/sshinteraction.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QList>
#include <QMessageAuthenticationCode>
#include <QMutex>
#include <QMutexLocker>

#include <libssh/libssh.h>

namespace rankdeck {

namespace {

QString fingerprintOf(ssh_key key)
{
    unsigned char *hash = nullptr;
    size_t len = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != 0)
        return {};
    char *text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
    ssh_clean_pubkey_hash(&hash);
    if (!text)
        return {};
    QString fp = QString::fromLatin1(text);
    ssh_string_free_char(text);
    return fp;
}

} // namespace

SshHostKeyVerifier::SshHostKeyVerifier(SshInteraction *interaction, QMutex *interactionLock)
    : m_interaction(interaction), m_interactionLock(interactionLock)
{}

QString SshHostKeyVerifier::knownHostsName(const QString &address, int port)
{
    if (port == 22)
        return address;
    return QStringLiteral("[%1]:%2").arg(address).arg(port);
}

// libssh reports CHANGED without the entry it compared against; the message must show the old
// fingerprint too, so the known_hosts file is read here (plain and hashed host names).
QString SshHostKeyVerifier::knownFingerprint(const QString &knownHostsFile, const QString &hostName,
                                             const QString &keyType)
{
    QFile file(knownHostsFile);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray name = hostName.toUtf8();
    while (!file.atEnd()) {
        const QList<QByteArray> fields = file.readLine().simplified().split(' ');
        if (fields.size() < 3 || fields[0].startsWith('#') || fields[0].startsWith('@'))
            continue;
        bool match = false;
        if (fields[0].startsWith("|1|")) {
            const QList<QByteArray> parts = fields[0].split('|');
            if (parts.size() == 4) {
                const QByteArray salt = QByteArray::fromBase64(parts[2]);
                const QByteArray mac =
                    QMessageAuthenticationCode::hash(name, salt, QCryptographicHash::Sha1);
                match = mac == QByteArray::fromBase64(parts[3]);
            }
        } else {
            for (const QByteArray &pattern : fields[0].split(','))
                match = match || pattern == name;
        }
        if (!match || QString::fromLatin1(fields[1]) != keyType)
            continue;
        ssh_key key = nullptr;
        if (ssh_pki_import_pubkey_base64(fields[2].constData(),
                                         ssh_key_type_from_name(fields[1].constData()),
                                         &key) != SSH_OK)
            continue;
        QString fp = fingerprintOf(key);
        ssh_key_free(key);
        return fp;
    }
    return {};
}

bool SshHostKeyVerifier::verify(ssh_session session, Server server, QString *error)
{
    ssh_key serverKey = nullptr;
    if (ssh_get_server_publickey(session, &serverKey) != SSH_OK) {
        *error = tr("%1: the server sent no host key").arg(server.host);
        return false;
    }
    server.keyType = QString::fromLatin1(ssh_key_type_to_char(ssh_key_type(serverKey)));
    m_serverFingerprint = fingerprintOf(serverKey);
    server.fingerprint = m_serverFingerprint;
    ssh_key_free(serverKey);

    KnownHosts known = KnownHosts::Unknown;
    switch (ssh_session_is_known_server(session)) {
    case SSH_KNOWN_HOSTS_OK:
        known = KnownHosts::Match;
        break;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
        known = KnownHosts::Changed;
        break;
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
        break;
    case SSH_KNOWN_HOSTS_ERROR:
    default:
        *error =
            tr("%1: cannot check the host key against %2: %3")
                .arg(server.host, server.knownHostsFile, QString::fromUtf8(ssh_get_error(session)));
        return false;
    }

    switch (decide(known, server, error)) {
    case Verdict::Trust:
        return true;
    case Verdict::TrustAndRemember:
        QDir().mkpath(QFileInfo(server.knownHostsFile).absolutePath());
        if (ssh_session_update_known_hosts(session) != SSH_OK) {
            *error = tr("%1: cannot add the host key to %2: %3")
                         .arg(server.host, server.knownHostsFile,
                              QString::fromUtf8(ssh_get_error(session)));
            return false;
        }
        qCDebug(lcSsh) << server.host << "host key" << server.fingerprint << "added to"
                       << server.knownHostsFile;
        m_acceptedOnceFingerprint = server.fingerprint;
        return true;
    case Verdict::Refuse:
        break;
    }
    return false;
}

SshHostKeyVerifier::Verdict SshHostKeyVerifier::decide(KnownHosts known, const Server &server,
                                                       QString *error)
{
    const QString name = knownHostsName(server.address, server.port);
    if (known == KnownHosts::Match) {
        qCDebug(lcSsh) << server.host << "host key" << server.fingerprint << "is in"
                       << server.knownHostsFile;
        return Verdict::Trust;
    }
    if (known == KnownHosts::Changed) {
        QString old = knownFingerprint(server.knownHostsFile, name, server.keyType);
        if (old.isEmpty())
            old = tr("a key of another type");
        *error = tr("%1: the host key of %2 has CHANGED: %3 lists %4, the server now offers %5 %6. "
                    "Someone could be intercepting the connection, or the node was reinstalled; if "
                    "you trust the new key, remove the old one with: ssh-keygen -R '%2' -f '%3'")
                     .arg(server.host, name, server.knownHostsFile, old, server.keyType,
                          server.fingerprint);
        return Verdict::Refuse;
    }

    if (!m_acceptedOnceFingerprint.isEmpty() && m_acceptedOnceFingerprint == server.fingerprint) {
        qCDebug(lcSsh) << server.host << "host key" << server.fingerprint << "was accepted before";
        return Verdict::Trust;
    }

    SshInteraction::HostKeyDecision decision = SshInteraction::HostKeyDecision::Reject;
    if (m_interaction) {
        SshInteraction::HostKeyQuestion q;
        q.host = server.host;
        q.address = server.address;
        q.port = server.port;
        q.keyType = server.keyType;
        q.fingerprint = server.fingerprint;
        q.knownHostsFile = server.knownHostsFile;
        // QMutexLocker does nothing for a null mutex.
        QMutexLocker lock(m_interactionLock);
        decision = m_interaction->unknownHostKey(q);
    }
    qCDebug(lcSsh) << server.host << "unknown host key" << server.keyType << server.fingerprint
                   << "answer:" << int(decision);
    switch (decision) {
    case SshInteraction::HostKeyDecision::AcceptOnce:
        m_acceptedOnceFingerprint = server.fingerprint;
        return Verdict::Trust;
    case SshInteraction::HostKeyDecision::AcceptAndRemember:
        return Verdict::TrustAndRemember;
    case SshInteraction::HostKeyDecision::Reject:
        break;
    }
    *error =
        tr("%1: the host key of %2 is unknown (%3 %4) and was not accepted; accept it when asked "
           "(rankdeck-cli: --accept-new-host-keys) or add it to %5")
            .arg(server.host, name, server.keyType, server.fingerprint, server.knownHostsFile);
    return Verdict::Refuse;
}

} // namespace rankdeck
