// SPDX-License-Identifier: GPL-3.0-or-later
//
// One node of a cluster profile: where its ranks run and how to reach it. A header of its own so
// that a transport kind's profile part (profilekind.h) can name it without Profile.
#pragma once

#include <QString>

namespace rankdeck {

struct ProfileNode
{
    QString host; // host name, address or ~/.ssh/config alias
    int port = 22;
    QString user;         // empty: ssh config / current user
    QString identityFile; // empty: agent and default keys
    int ranksPerNode = 1;
    int gpusPerNode = 0;

    bool operator==(const ProfileNode &) const = default;
};

// HOST or HOST:PORT, but not a bare IPv6 address; [v6]:PORT works. *port is left as it is when
// the spec has none. false and *why ("missing host") when it cannot be read. The CLI's --node and
// a kind's own host flags (Slurm's --login) read it alike.
bool parseHostPort(const QString &spec, QString *host, int *port, QString *why);

} // namespace rankdeck
