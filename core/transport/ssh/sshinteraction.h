// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the SSH transport needs to ask a person: whether to trust an unknown host key, the
// passphrase of a key, a password or keyboard-interactive answers. The GUI answers with dialogs,
// the CLI on the terminal (or by policy: --accept-new-host-keys), tests with PolicySshInteraction.
//
// Threading: every method is called from a node's connection thread, never from the thread that
// owns the transport, and the transport serializes the calls (one question at a time, even when
// several nodes connect in parallel), so an implementation may block until the person answered
// (a GUI typically hops to its own thread with Qt::BlockingQueuedConnection). The object must
// outlive every transport that uses it.
//
// Secrets are handed back in QByteArray so that callers can wipe them after use; neither side may
// log or store them.
#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace rankdeck {

class SshInteraction
{
public:
    enum class HostKeyDecision
    {
        Reject,            // refuse the connection (the default answer)
        AcceptOnce,        // trust it for this transport only, do not write known_hosts
        AcceptAndRemember, // trust it and append it to the known_hosts file
    };

    struct HostKeyQuestion
    {
        QString host;    // as the profile names it (alias or address)
        QString address; // the host name really connected to (after ~/.ssh/config)
        int port = 22;
        QString keyType;        // "ssh-ed25519", "ecdsa-sha2-nistp256", …
        QString fingerprint;    // "SHA256:…", as `ssh-keygen -lf` prints it
        QString knownHostsFile; // where an accepted key would be written
    };

    virtual ~SshInteraction() = default;

    virtual HostKeyDecision unknownHostKey(const HostKeyQuestion &question) = 0;

    // The passphrase of an encrypted private key; std::nullopt cancels (the key is skipped).
    virtual std::optional<QByteArray> passphrase(const QString &host, const QString &keyFile) = 0;

    // One prompt of password or keyboard-interactive authentication ("Password:", "Verification
    // code:"); echo says whether the answer may be shown while typed. std::nullopt cancels.
    virtual std::optional<QByteArray> secret(const QString &host, const QString &user,
                                             const QString &prompt, bool echo) = 0;
};

} // namespace rankdeck
