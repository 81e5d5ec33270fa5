// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the SSH end-to-end tests and bench_ssh set up the same way around an SshFixture: a
// private home and XDG tree for the launcher, and a profile whose nodes are the fixture's sshds.
#pragma once

#include "config/profile.h"
#include "sshfixture.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>

#include <initializer_list>

namespace rankdeck::testing {

// Points each variable at `root`/<name> (created) and drops SSH_AUTH_SOCK, so that the launcher
// reads and writes ~/.ssh, its profiles and its runs there, and tries no agent keys of the
// machine's user. false when a directory cannot be made.
inline bool isolateUserDirectories(const QString &root,
                                   std::initializer_list<const char *> variables = {
                                       "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                       "XDG_CACHE_HOME"})
{
    bool ok = true;
    for (const char *var : variables) {
        const QString dir = root + QLatin1Char('/') + QString::fromLatin1(var);
        ok = QDir().mkpath(dir) && ok;
        qputenv(var, QFile::encodeName(dir));
    }
    qunsetenv("SSH_AUTH_SOCK");
    return ok;
}

// An ssh profile named `name` over the fixture's first `nodes` sshds, `ranksPerNode` ranks each,
// logging in with the fixture's key; everything else is the caller's to set.
inline Profile fixtureProfile(const SshFixture &ssh, const QString &name, int nodes,
                              int ranksPerNode)
{
    Profile p;
    p.name = name;
    p.transport = QStringLiteral("ssh");
    for (int i = 0; i < nodes; ++i) {
        ProfileNode n;
        n.host = ssh.address(i);
        n.port = ssh.port(i);
        n.user = ssh.user();
        n.identityFile = ssh.clientKey();
        n.ranksPerNode = ranksPerNode;
        p.nodes.append(n);
    }
    return p;
}

// Where a run's files live on fixture node `node` with the profile's default run directory.
inline QString nodeRunDirectory(const SshFixture &ssh, int node, const QString &runId)
{
    return ssh.home(node) + QStringLiteral("/.cache/rankdeck/runs/") + runId;
}

} // namespace rankdeck::testing
