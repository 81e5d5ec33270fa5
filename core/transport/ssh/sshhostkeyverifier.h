// SPDX-License-Identifier: GPL-3.0-or-later
//
// Whether to trust the host key a server offers, as OpenSSH decides it: the known_hosts file
// first; a changed key is refused; an unknown one is up to the SshInteraction (one question at a
// time across the nodes of a transport), which may accept it once or for good (appended to
// known_hosts). A key accepted once stays trusted for the verifier's lifetime, so reconnecting
// the same session does not ask again.
#pragma once

#include <QString>

struct ssh_session_struct;
class QMutex;

namespace rankdeck {

class SshInteraction;

class SshHostKeyVerifier
{
public:
    // The server as the question and the messages name it.
    struct Server
    {
        QString host;    // as the profile names it
        QString address; // the host name really connected to (after ~/.ssh/config)
        int port = 22;
        QString knownHostsFile;
        QString keyType;     // "ssh-ed25519", … (verify() fills it in)
        QString fingerprint; // "SHA256:…" (verify() fills it in)
    };
    // What known_hosts says about the server's key.
    enum class KnownHosts
    {
        Match,
        Changed,
        Unknown
    };
    enum class Verdict
    {
        Trust,
        TrustAndRemember,
        Refuse
    };

    // Both may be null: then unknown keys are refused and nothing is asked.
    SshHostKeyVerifier(SshInteraction *interaction, QMutex *interactionLock);

    // Checks the key of a session that has just connected (and appends it to known_hosts when the
    // answer says so). On failure *error names the host and says what to do.
    bool verify(ssh_session_struct *session, Server server, QString *error);
    // The fingerprint of the key of the last verify() ("SHA256:…").
    QString serverFingerprint() const { return m_serverFingerprint; }

    // verify()'s decision once known_hosts was read: a key it does not confirm is refused with
    // the reason in *error, trusted as accepted before, or put to the interaction.
    Verdict decide(KnownHosts known, const Server &server, QString *error);

    // The host's name in known_hosts: "address", or "[address]:port" off port 22.
    static QString knownHostsName(const QString &address, int port);
    // The fingerprint of the keyType key that knownHostsFile lists for name (plain or hashed
    // entries); empty when there is none.
    static QString knownFingerprint(const QString &knownHostsFile, const QString &name,
                                    const QString &keyType);

private:
    SshInteraction *m_interaction;
    QMutex *m_interactionLock;
    QString m_serverFingerprint;
    QString m_acceptedOnceFingerprint;
};

} // namespace rankdeck
