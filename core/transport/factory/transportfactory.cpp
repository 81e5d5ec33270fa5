// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/factory/transportfactory.h"

#include "transport/localtransport.h"
#include "transport/slurm/slurmtransport.h"
#include "transport/ssh/sshtransport.h"

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
    if (profile.isLocal())
        return new LocalTransport(parent);
    if (profile.transport == QLatin1String("ssh"))
        return new SshTransport(profile, runId, interaction, parent);
    if (profile.isSlurm())
        return new SlurmTransport(profile, runId, interaction, parent);
    if (error)
        *error = QCoreApplication::translate(
                     "rankdeck::TransportFactory",
                     "profile \"%1\": unknown transport \"%2\" (use \"local\", \"ssh\" or "
                     "\"slurm\")")
                     .arg(profile.name, profile.transport);
    return nullptr;
}

} // namespace rankdeck
