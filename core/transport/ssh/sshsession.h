// SPDX-License-Identifier: GPL-3.0-or-later
//
// One authenticated libssh session to one node: ~/.ssh/config (with ProxyJump and
// ServerAliveInterval, which libssh does not handle), host key checking (SshHostKeyVerifier),
// authentication (SshAuthenticator), keepalives, short commands and SFTP uploads. Every call
// blocks, so a session lives on its node's own thread (SshNodeConnection) and is never touched
// from another one.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

struct ssh_session_struct;
struct ssh_callbacks_struct;
class QMutex;
class QTemporaryDir;

namespace rankdeck {

class SshAuthenticator;
class SshHostKeyVerifier;
class SshInteraction;
struct ProfileNode;

struct SshEndpoint
{
    QString host;         // name, address or ~/.ssh/config alias
    int port = 0;         // 0: ~/.ssh/config's Port, else 22
    QString user;         // empty: ~/.ssh/config's User, else the local user
    QString identityFile; // tried before the agent's, the config's and the default keys
    int connectTimeoutSec = 10;
    QString sshDirectory;   // empty: $HOME/.ssh
    QString knownHostsFile; // empty: <sshDirectory>/known_hosts
    QString configFile;     // empty: <sshDirectory>/config (read when it exists)
    // Seconds between keepalives on an idle connection; -1: ~/.ssh/config's ServerAliveInterval
    // for this host, else 60; 0: none.
    int keepAliveIntervalSec = -1;

    // A profile's port 22 is its default, so it lets ~/.ssh/config decide.
    static SshEndpoint fromProfileNode(const ProfileNode &node, int connectTimeoutSec);
    QString effectiveSshDirectory() const;
    QString effectiveKnownHostsFile() const;
    QString effectiveConfigFile() const;
};

struct SshExecResult
{
    int exitStatus = -1;
    QByteArray out;
    QByteArray err;
    QString error; // transport-level failure (channel, timeout); empty when the command ran
    bool ok() const { return error.isEmpty() && exitStatus == 0; }
    // One line for messages: the error, else stderr, else the exit status.
    QString describeFailure() const;
};

class SshSession
{
public:
    // interactionLock serializes questions across the nodes of one transport; both may be null
    // (then unknown host keys are refused and nothing is asked).
    SshSession(const SshEndpoint &endpoint, SshInteraction *interaction, QMutex *interactionLock);
    ~SshSession();
    SshSession(const SshSession &) = delete;
    SshSession &operator=(const SshSession &) = delete;

    // Connects, checks the host key, authenticates. On failure *error names the host and says
    // what went wrong and what to do. May be called again after a lost connection: a host key
    // accepted "once" is still trusted then.
    bool connect(QString *error);
    void disconnect();
    bool isConnected() const;

    ssh_session_struct *handle() const { return m_session; }
    const SshEndpoint &endpoint() const { return m_endpoint; }
    // "user@address:port" once connected (after ~/.ssh/config), else the profile's host.
    QString label() const;

    // Runs a command through the user's shell, feeds stdinData, collects both streams.
    SshExecResult exec(const QByteArray &command, int timeoutMs = 30000,
                       const QByteArray &stdinData = {});

    // Copies a local file to remotePath over SFTP (remotePath must not start with ~), or, when
    // the node has no SFTP subsystem, over an exec channel checked by a hash on the node
    // (SshExecUpload). progress gets (bytes sent, total).
    bool upload(const QString &localPath, const QString &remotePath, int mode,
                const std::function<void(qint64, qint64)> &progress, QString *error);

    // Fingerprint "SHA256:…" of the server's key from the last connect.
    QString serverFingerprint() const;
    // NAT gateways and firewalls forget connections that stay silent (a detached run's streams,
    // a rank that prints nothing for minutes). Sends an SSH_MSG_IGNORE when keepAliveIntervalSec()
    // passed since the connect or the last one; cheap when not due, so the node connection calls it
    // from its poll loop, on the session's thread. false when the connection is gone.
    bool keepAlive();
    // The interval in effect after connect() (see SshEndpoint::keepAliveIntervalSec); 0: off.
    int keepAliveIntervalSec() const { return m_keepAliveSec; }
    // Keepalives sent since the connect.
    int keepAlivesSent() const { return m_keepAlivesSent; }

    // The jump hosts of ~/.ssh/config's ProxyJump for this host ("a,user@b:2222"), empty when
    // it is reached directly. Set by connect().
    QString proxyJump() const { return m_proxyJump; }

private:
    bool applyProxyJump(QString *error);
    int configuredServerAliveInterval() const;
    QString proxyJumpOutput() const;

    SshEndpoint m_endpoint;
    // Both live as long as the session: a host key accepted "once" is still trusted on a reconnect.
    std::unique_ptr<SshHostKeyVerifier> m_hostKeys;
    std::unique_ptr<SshAuthenticator> m_authenticator;
    ssh_session_struct *m_session = nullptr;
    ssh_callbacks_struct *m_callbacks = nullptr;
    QString m_address;
    int m_port = 22;
    QString m_user;
    QString m_proxyJump;
    int m_keepAliveSec = 0;
    bool m_sftpAvailable = true; // false once the node said it has no SFTP subsystem
    int m_keepAlivesSent = 0;
    qint64 m_lastKeepAliveMs = 0;
    std::unique_ptr<QTemporaryDir> m_proxyFiles; // the jump's ssh config and its stderr
};

} // namespace rankdeck
