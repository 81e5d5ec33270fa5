// SPDX-License-Identifier: GPL-3.0-or-later
//
// Logs a connected, verified session in as OpenSSH would: the profile's identity file, then the
// agent, ~/.ssh/config's and the default keys, then keyboard-interactive, then password.
// Passphrases, passwords and the server's prompts go to the SshInteraction (one question at a
// time across the nodes of a transport); the answers are wiped after use and never logged.
#pragma once

#include <QString>
#include <QStringList>

#include <cstddef>

struct ssh_session_struct;
class QMutex;

namespace rankdeck {

class SshInteraction;

class SshAuthenticator
{
public:
    // Who logs in where, as the questions and messages name it.
    struct Account
    {
        QString host; // as the profile names it
        QString user;
        QString address;      // the host name really connected to (after ~/.ssh/config)
        QString label;        // "user@address:port"
        QString identityFile; // the profile's, "~" expanded; empty: none
        QString sshDirectory; // where the default keys are
    };

    // Both may be null: then only keys without a passphrase and the agent are tried.
    SshAuthenticator(SshInteraction *interaction, QMutex *interactionLock);

    // On failure *error names the account, the methods the server accepts and those tried.
    bool authenticate(ssh_session_struct *session, const Account &account, QString *error);

    // libssh's auth_function (ssh_callbacks_struct) for passphrases while authenticate() runs;
    // userdata is the authenticator.
    static int promptCallback(const char *prompt, char *buf, size_t len, int echo, int verify,
                              void *userdata);

private:
    bool tryIdentityFile(const QString &path, QStringList *tried);
    bool tryKeyboardInteractive(QStringList *tried);
    bool tryPassword(QStringList *tried);

    SshInteraction *m_interaction;
    QMutex *m_interactionLock;
    ssh_session_struct *m_session = nullptr;
    Account m_account;
    QString m_currentKeyFile;
};

} // namespace rankdeck
