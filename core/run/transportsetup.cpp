// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/transportsetup.h"

#include "config/syncmanifest.h"
#include "transport/transport.h"
#include "util/translation.h"

namespace rankdeck {

QStringList TransportSetup::apply(Transport &transport, const TrainingConfig &config, bool detach)
{
    QStringList notes;
    if (detach) {
        if (transport.can(Transport::Capability::Detach))
            transport.setDetached(true);
        else
            notes << tr("detach: %1 ranks cannot outlive their launcher; this run stops with it")
                         .arg(transport.describe());
    }
    if (!config.syncDirectory.isEmpty()) {
        if (transport.can(Transport::Capability::Sync))
            transport.setSyncDirectory(
                config.syncDirectory, config.syncLimitBytes > 0 ? config.syncLimitBytes
                                                                : SyncManifest::kDefaultLimitBytes);
        else {
            transport.setSyncDirectory(config.syncDirectory, 0);
            notes << tr("sync: %1 ranks see this machine's files; the program runs in %2 itself "
                        "(no copy)")
                         .arg(transport.describe(), config.syncDirectory);
        }
    }
    return notes;
}

} // namespace rankdeck
