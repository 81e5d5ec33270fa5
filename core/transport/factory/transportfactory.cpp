// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/factory/transportfactory.h"

#include "transport/transportkind.h"

#include <QCoreApplication>

namespace rankdeck {

// The SSH transport is always built (core/transport/ssh is added unconditionally and libssh is a
// required dependency; the Slurm transport needs it too), so this is always true.
bool TransportFactory::sshAvailable()
{
    return true;
}

Transport *TransportFactory::create(const Profile &profile, const QString &runId,
                                    SshInteraction *interaction, QObject *parent, QString *error)
{
    if (const TransportKind *kind = TransportKindRegistry::find(profile.transport))
        return kind->create(profile, runId, interaction, parent);
    if (error)
        *error = QCoreApplication::translate("rankdeck::TransportFactory",
                                             R"(profile "%1": unknown transport "%2" (use %3))")
                     .arg(profile.name, profile.transport, ProfileKinds::list(true));
    return nullptr;
}

} // namespace rankdeck
