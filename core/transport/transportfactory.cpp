// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/transportfactory.h"

#include "transport/localtransport.h"
#include "transport/slurm/slurmtransport.h"

#include <QCoreApplication>

#if __has_include("ssh/sshtransport.h")
#include "transport/ssh/sshtransport.h"
#define RANKDECK_HAVE_SSH_TRANSPORT 1
#endif

namespace rankdeck {

bool TransportFactory::sshAvailable()
{
#ifdef RANKDECK_HAVE_SSH_TRANSPORT
    return true;
#else
    return false;
#endif
}

Transport *TransportFactory::create(const Profile &profile, const QString &runId,
                                    SshInteraction *interaction, QObject *parent, QString *error)
{
    if (profile.isLocal())
        return new LocalTransport(parent);
    if (profile.transport == QLatin1String("ssh")) {
#ifdef RANKDECK_HAVE_SSH_TRANSPORT
        return new SshTransport(profile, runId, interaction, parent);
#else
        Q_UNUSED(runId);
        Q_UNUSED(interaction);
        if (error)
            *error = QCoreApplication::translate(
                         "rankdeck::TransportFactory",
                         "profile \"%1\": the SSH transport is not part of this build")
                         .arg(profile.name);
        return nullptr;
#endif
    }
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
