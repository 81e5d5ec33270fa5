// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshauthenticator.h"

#include "util/logging.h"
#include "util/translation.h"

#include "transport/ssh/sshinteraction.h"

#include <QByteArray>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>

#include <libssh/libssh.h>

#include <cstring>
#include <optional>

namespace rankdeck {

namespace {

void wipe(QByteArray &secret)
{
    if (!secret.isEmpty())
        std::memset(secret.data(), 0, size_t(secret.size()));
    secret.clear();
}

} // namespace

SshAuthenticator::SshAuthenticator(SshInteraction *interaction, QMutex *interactionLock)
    : m_interaction(interaction), m_interactionLock(interactionLock)
{}

int SshAuthenticator::promptCallback(const char *prompt, char *buf, size_t len, int echo, int,
                                     void *userdata)
{
    auto *self = static_cast<SshAuthenticator *>(userdata);
    if (!self->m_interaction || len == 0)
        return -1;
    std::optional<QByteArray> answer;
    {
        // QMutexLocker does nothing for a null mutex.
        QMutexLocker lock(self->m_interactionLock);
        if (echo)
            answer = self->m_interaction->secret(self->m_account.host, self->m_account.user,
                                                 QString::fromUtf8(prompt), true);
        else
            answer = self->m_interaction->passphrase(
                self->m_account.host, self->m_currentKeyFile.isEmpty() ? QString::fromUtf8(prompt)
                                                                       : self->m_currentKeyFile);
    }
    if (!answer || size_t(answer->size()) >= len) {
        if (answer)
            wipe(*answer);
        return -1;
    }
    std::memcpy(buf, answer->constData(), size_t(answer->size()));
    buf[answer->size()] = '\0';
    wipe(*answer);
    return 0;
}

bool SshAuthenticator::tryIdentityFile(const QString &path, QStringList *tried)
{
    if (!QFileInfo::exists(path)) {
        tried->append(tr("identity file %1 (not found)").arg(path));
        return false;
    }
    const QByteArray file = QFile::encodeName(path);
    // Ask the server about the public half first, so no passphrase is asked for a key that would
    // be refused anyway.
    ssh_key pub = nullptr;
    if (ssh_pki_import_pubkey_file(QFile::encodeName(path + QStringLiteral(".pub")).constData(),
                                   &pub) == SSH_OK) {
        const int rc = ssh_userauth_try_publickey(m_session, nullptr, pub);
        ssh_key_free(pub);
        if (rc != SSH_AUTH_SUCCESS) {
            tried->append(tr("identity file %1 (refused)").arg(path));
            return false;
        }
    }
    ssh_key key = nullptr;
    m_currentKeyFile = path;
    const int rc = ssh_pki_import_privkey_file(file.constData(), nullptr,
                                               &SshAuthenticator::promptCallback, this, &key);
    m_currentKeyFile.clear();
    if (rc != SSH_OK) {
        tried->append(tr("identity file %1 (cannot be read or wrong passphrase)").arg(path));
        return false;
    }
    const int auth = ssh_userauth_publickey(m_session, nullptr, key);
    ssh_key_free(key);
    if (auth == SSH_AUTH_SUCCESS)
        return true;
    tried->append(tr("identity file %1 (refused)").arg(path));
    return false;
}

bool SshAuthenticator::tryKeyboardInteractive(QStringList *tried)
{
    if (!m_interaction)
        return false;
    int rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
    int asked = 0;
    for (int round = 0; rc == SSH_AUTH_INFO && round < 8; ++round) {
        const int prompts = ssh_userauth_kbdint_getnprompts(m_session);
        for (int i = 0; i < prompts; ++i) {
            char echo = 0;
            const char *prompt = ssh_userauth_kbdint_getprompt(m_session, unsigned(i), &echo);
            std::optional<QByteArray> answer;
            {
                QMutexLocker lock(m_interactionLock);
                answer = m_interaction->secret(m_account.host, m_account.user,
                                               QString::fromUtf8(prompt), echo != 0);
            }
            if (!answer) {
                tried->append(tr("keyboard-interactive (not answered)"));
                return false;
            }
            ++asked;
            answer->append('\0');
            ssh_userauth_kbdint_setanswer(m_session, unsigned(i), answer->constData());
            wipe(*answer);
        }
        rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
    }
    if (rc == SSH_AUTH_SUCCESS)
        return true;
    tried->append(asked > 0 ? tr("keyboard-interactive (refused)") : tr("keyboard-interactive"));
    return false;
}

bool SshAuthenticator::tryPassword(QStringList *tried)
{
    if (!m_interaction)
        return false;
    std::optional<QByteArray> answer;
    {
        QMutexLocker lock(m_interactionLock);
        answer = m_interaction->secret(
            m_account.host, m_account.user,
            tr("Password for %1@%2:").arg(m_account.user, m_account.address), false);
    }
    if (!answer) {
        tried->append(tr("password (not answered)"));
        return false;
    }
    answer->append('\0');
    const int rc = ssh_userauth_password(m_session, nullptr, answer->constData());
    wipe(*answer);
    if (rc == SSH_AUTH_SUCCESS)
        return true;
    tried->append(tr("password (refused)"));
    return false;
}

bool SshAuthenticator::authenticate(ssh_session session, const Account &account, QString *error)
{
    m_session = session;
    m_account = account;
    const auto done = [&](const char *method) {
        qCDebug(lcSsh) << account.host << "authenticated as" << account.label << "with" << method;
        return true;
    };
    int rc = ssh_userauth_none(m_session, nullptr);
    if (rc == SSH_AUTH_SUCCESS)
        return done("none");
    if (rc == SSH_AUTH_ERROR) {
        *error = tr("%1: authentication as %2 failed: %3")
                     .arg(account.host, account.label, QString::fromUtf8(ssh_get_error(m_session)));
        return false;
    }
    const int methods = ssh_userauth_list(m_session, nullptr);
    qCDebug(lcSsh) << account.host << "the server accepts publickey"
                   << bool(methods & SSH_AUTH_METHOD_PUBLICKEY) << "keyboard-interactive"
                   << bool(methods & SSH_AUTH_METHOD_INTERACTIVE) << "password"
                   << bool(methods & SSH_AUTH_METHOD_PASSWORD);
    QStringList tried;
    if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
        if (!account.identityFile.isEmpty() && tryIdentityFile(account.identityFile, &tried))
            return done("the profile's identity file");
        // The agent, then ~/.ssh/config's IdentityFile entries and the default keys; passphrases
        // come through promptCallback.
        rc = ssh_userauth_publickey_auto(m_session, nullptr, nullptr);
        if (rc == SSH_AUTH_SUCCESS)
            return done("the agent or a default key");
        tried.append(qEnvironmentVariableIsSet("SSH_AUTH_SOCK")
                         ? tr("ssh-agent and default keys in %1").arg(account.sshDirectory)
                         : tr("default keys in %1").arg(account.sshDirectory));
    }
    if ((methods & SSH_AUTH_METHOD_INTERACTIVE) && tryKeyboardInteractive(&tried))
        return done("keyboard-interactive");
    if ((methods & SSH_AUTH_METHOD_PASSWORD) && tryPassword(&tried))
        return done("password");

    QStringList offered;
    if (methods & SSH_AUTH_METHOD_PUBLICKEY)
        offered << QStringLiteral("publickey");
    if (methods & SSH_AUTH_METHOD_INTERACTIVE)
        offered << QStringLiteral("keyboard-interactive");
    if (methods & SSH_AUTH_METHOD_PASSWORD)
        offered << QStringLiteral("password");
    *error =
        tr("%1: permission denied for %2 (the server accepts %3; tried %4). Check the node's user "
           "and identity file in the profile, or add your public key to the node's authorized_keys")
            .arg(account.host, account.label,
                 offered.isEmpty() ? tr("no method RankDeck supports")
                                   : offered.join(QStringLiteral(", ")),
                 tried.isEmpty() ? tr("nothing") : tried.join(QStringLiteral(", ")));
    qCDebug(lcSsh) << account.host << "authentication failed; tried" << tried;
    return false;
}

} // namespace rankdeck
