// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/factory/transportfactory.h"

#include "transport/transportkind.h"
#include "util/filelimit.h"

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
    // Every local rank holds 7 files in the launcher: 512 pass the soft limit of 1,024 many
    // systems set, and the ranks past it would fail to start.
    if (QString limitError;
        profile.isLocal() && !ensureOpenFilesForLocalRanks(profile.worldSize(), &limitError)) {
        if (error)
            *error = limitError;
        return nullptr;
    }
    if (const TransportKind *kind = TransportKindRegistry::find(profile.transport))
        return kind->create(profile, runId, interaction, parent);
    if (error)
        *error = QCoreApplication::translate("rankdeck::TransportFactory",
                                             R"(profile "%1": unknown transport "%2" (use %3))")
                     .arg(profile.name, profile.transport, ProfileKinds::list(true));
    return nullptr;
}

} // namespace rankdeck
