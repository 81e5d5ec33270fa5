// SPDX-License-Identifier: GPL-3.0-or-later
//
// SshFixture: a small cluster of real OpenSSH servers for tests and benchmarks.
//
// Node i is `/usr/sbin/sshd -D` listening on 127.0.0.(2+i) on a free high port, with its own
// generated host key, its own home directory (sshd's SetEnv HOME, so "~" on node 0 and node 1 are
// different directories, like on two machines) and one authorized client key. Logins are as the
// current user, which must be root (CI runs as root): sshd cannot switch users otherwise.
// Everything lives in one temporary directory that is removed, and every sshd stopped, when the
// fixture is destroyed.
//
// Password logins (setOptions() and addPasswordUser() before start()): the nodes then also offer
// password and/or keyboard-interactive authentication (the latter through PAM, UsePAM yes, so
// the password is asked by pam_unix's conversation as on a stock Debian server) for a throw-away
// local account created with useradd and a hashed password; the destructor removes it again.
// Accounts left behind by a test that crashed are removed by the next fixture that adds one.
// Each node's sshd log (logFile()) holds the per-connection messages too (authentication,
// forwarding), at Options::logLevel.
//
// Typical use:
//     SshFixture ssh;
//     if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
//         QSKIP(qPrintable(why));
//     QVERIFY2(ssh.start(2), qPrintable(ssh.lastError()));
//     ssh.writeKnownHosts(home + "/.ssh/known_hosts");
//     profile node i: host ssh.address(i), port ssh.port(i), identityFile ssh.clientKey()
//
// Build: link the `rankdeck_sshfixture` library (defined in tests/common/CMakeLists.txt), or add
// tests/common/sshfixture.cpp to your sources; it needs Qt6::Core and Qt6::Network only.
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

class QProcess;

class SshFixture
{
public:
    struct Options
    {
        bool passwordAuthentication = false;
        bool kbdInteractiveAuthentication = false;    // through PAM (UsePAM yes)
        QString logLevel = QStringLiteral("VERBOSE"); // DEBUG1 also logs direct-tcpip forwards
        // NAME=VALUE pairs every session gets (sshd's SetEnv), e.g. SLURM_CONF for a login node.
        QStringList environment;
        // false: no Subsystem line at all, as on many hardened servers (no SFTP; scp -O and
        // exec channels still work).
        bool sftp = true;
    };

    SshFixture();
    ~SshFixture();
    SshFixture(const SshFixture &) = delete;
    SshFixture &operator=(const SshFixture &) = delete;

    // Why sshd-based tests cannot run on this machine (not root, sshd or ssh-keygen missing);
    // empty when they can. Tests QSKIP with this text.
    static QString unavailableReason();

    // Why addPasswordUser() cannot work here (not root, useradd/userdel/openssl missing); empty
    // when it can.
    static QString passwordUserUnavailableReason();

    // Before start(); applies to every node.
    void setOptions(const Options &options) { m_options = options; }
    // Before start(): "NAME=VALUE" words that sshd sets (SetEnv) in every session of one node,
    // e.g. LD_PRELOAD=…/libfaketime.so.1 FAKETIME=-5s for a node whose clock is 5 s behind.
    void setNodeEnvironment(int node, const QStringList &assignments)
    {
        m_nodeEnvironment[node] = assignments;
    }
    // Before start(): node `node` listens on `address` (port 2222) instead of 127.0.0.x, and its
    // sshd is started through `prefix` (e.g. {"ip", "netns", "exec", NAME}: a node in a network
    // namespace of tests/common/netnsfixture.h, reached over a veth pair). The prefix must exec
    // sshd, so that serverPid() and sessionPids() are sshd's.
    void setNodeNetwork(int node, const QString &address, const QStringList &prefix)
    {
        m_nodeNetwork[node] = {address, prefix};
    }
    // Before start(): creates the local account passwordUser() (no login shell restrictions, a
    // home of its own on each node) whose password is `password`. false and lastError() when
    // it cannot.
    bool addPasswordUser(const QByteArray &password);
    QString passwordUser() const { return m_passwordUser; }
    // passwordUser()'s $HOME on a node (owned by that user).
    QString passwordUserHome(int node) const;

    // Generates the keys and starts nodeCount servers; waits until each answers with its banner.
    bool start(int nodeCount);
    QString lastError() const { return m_error; }

    int nodeCount() const { return int(m_nodes.size()); }
    QString address(int node) const; // "127.0.0.2", "127.0.0.3", …
    int port(int node) const;
    QString home(int node) const;     // the node's $HOME (an existing, empty directory at start)
    QString user() const;             // the login name (the current user)
    qint64 serverPid(int node) const; // the listening sshd
    QString logFile(int node) const;  // sshd's log, listener and connections
    QByteArray log(int node) const;   // its content so far

    // Private key authorized on every node, no passphrase.
    QString clientKey() const { return m_clientKey; }
    // A new ed25519 key pair in the fixture's directory; authorize: append it to every node's
    // authorized keys. Returns the private key's path (the public one is path + ".pub").
    QString createKey(const QString &name, const QByteArray &passphrase = {},
                      bool authorize = true);

    // known_hosts line for a node ("[127.0.0.2]:40123 ssh-ed25519 AAAA…") and the fingerprint
    // "SHA256:…" of its host key.
    QString knownHostsLine(int node) const;
    QString hostFingerprint(int node) const;
    // Writes the lines of every node (or of `nodes`) to path, creating its directory; hashed:
    // HashKnownHosts form (ssh-keygen -H), as Debian's ssh writes it.
    bool writeKnownHosts(const QString &path, bool hashed = false,
                         const QList<int> &nodes = {}) const;

    // Stops a node's server (its port is then closed) and starts it again on the same port.
    bool stopNode(int node);
    bool startNode(int node);
    // Gives the node a new host key and restarts it (a "reinstalled" machine).
    bool changeHostKey(int node);

    // Per-connection sshd processes of a node (not the listener) and a way to cut every
    // connection at once, as a network failure would: SIGKILL to those processes. The commands
    // they ran survive, like on a real node. Returns how many processes were killed.
    QList<qint64> sessionPids(int node) const;
    int killSessions(int node);

    QString directory() const { return m_dir.path(); }

private:
    struct Node
    {
        QString address;
        int port = 0;
        QString dir;
        QString hostKey;
        QStringList environment; // SetEnv words beside HOME
        QStringList prefix;      // runs sshd (setNodeNetwork)
        std::unique_ptr<QProcess> process;
    };
    bool runTool(const QString &program, const QStringList &args, QByteArray *out = nullptr);
    bool generateHostKey(Node &node);
    bool writeConfig(const Node &node);
    bool launch(Node &node);
    void removePasswordUser();

    QTemporaryDir m_dir;
    QString m_error;
    QString m_clientKey;
    QString m_authorizedKeys;
    Options m_options;
    QString m_passwordUser;
    QHash<int, QStringList> m_nodeEnvironment;
    QHash<int, QPair<QString, QStringList>> m_nodeNetwork;
    QList<std::shared_ptr<Node>> m_nodes;
};
