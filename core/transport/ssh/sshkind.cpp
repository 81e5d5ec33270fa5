// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshkind.h"

#include "transport/ssh/sshtransport.h"

#include "util/translation.h"

namespace rankdeck {

QString SshKind::name() const
{
    return QStringLiteral("ssh");
}

QString SshKind::displayName() const
{
    return tr("SSH to the nodes");
}

QString SshKind::nodesProblem(bool hasNodes, bool cli) const
{
    // A file without [[nodes]] is refused for every kind that does not choose them.
    if (!cli || hasNodes)
        return {};
    return tr("an ssh profile needs at least one --node");
}

Transport *SshKind::create(const Profile &profile, const QString &runId,
                           SshInteraction *interaction, QObject *parent) const
{
    return new SshTransport(profile, runId, interaction, parent);
}

} // namespace rankdeck
