// SPDX-License-Identifier: GPL-3.0-or-later
//
// Makes the transport a profile asks for: its kind's (TransportKindRegistry).
#pragma once

#include "config/profile.h"
#include "transport/transport.h"

namespace rankdeck {

class SshInteraction;

class TransportFactory
{
public:
    // nullptr and *error when the profile's transport is unknown, or when a local profile has
    // more ranks than this process may hold open files for (ensureOpenFilesForLocalRanks()).
    static Transport *create(const Profile &profile, const QString &runId,
                             SshInteraction *interaction, QObject *parent, QString *error);
    static bool sshAvailable();
};

} // namespace rankdeck
