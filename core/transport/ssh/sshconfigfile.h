// SPDX-License-Identifier: GPL-3.0-or-later
//
// What RankDeck reads out of an OpenSSH client configuration itself, beside libssh: the text of
// ~/.ssh/config is the user's (or anybody's, on a shared account), so these are plain functions
// on bytes that tests/fuzz/ can feed anything.
//   - ServerAliveInterval, which libssh 0.10 parses and drops.
//   - The ProxyJump chain, from the ProxyCommand libssh 0.10 makes of a ProxyJump line, and the
//     OpenSSH command RankDeck runs in its place (SshSession::applyProxyJump says why).
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QStringList>

#include <optional>

namespace rankdeck::sshconfig {

// The ServerAliveInterval a `Host` block matching `host` (as the profile names it) sets in
// `configText`, first value wins. `Match` blocks other than `Match all` are skipped and `Include`
// is not followed. nullopt: not set; a negative value: set but not a number of seconds.
std::optional<int> serverAliveInterval(QByteArrayView configText, const QString &host);

struct ProxyJumpChain
{
    QString firstUser; // of the first hop; may be empty
    QString firstPort;
    QString firstHost;
    QStringList hops; // every hop, first to last, as "user@host:port"
    QString joined() const { return hops.join(QLatin1Char(',')); }
};

// The chain in libssh's own ProxyCommand for a ProxyJump line ("ssh [-l user] [-p port] [-J more]
// -W '[%h]:%p' first-hop"); nullopt for no command or the user's own ProxyCommand.
std::optional<ProxyJumpChain> proxyJumpFromLibsshCommand(const QString &proxyCommand);

// The OpenSSH client command that reaches the node through `chain` with the config file
// `configPath`, its stderr in `stderrPath`; every word shell-quoted, '%' doubled for libssh.
QByteArray proxyJumpCommand(const QString &ssh, const QString &configPath,
                            const QString &stderrPath, const ProxyJumpChain &chain);

} // namespace rankdeck::sshconfig
