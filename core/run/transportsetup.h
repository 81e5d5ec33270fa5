// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a launch asks of its transport before the nodes are prepared, and what it says where the
// transport cannot give it: ranks that outlive the launcher (--detach: Capability::Detach), and
// a --sync directory copied to each node (Capability::Sync; without it, ranks see this
// machine's files and the program runs in the directory itself).
#pragma once

#include "config/trainingconfig.h"

#include <QStringList>

namespace rankdeck {

class Transport;

class TransportSetup
{
public:
    // Returns the lines for the launcher log, each about what the transport could not do.
    static QStringList apply(Transport &transport, const TrainingConfig &config, bool detach);
};

} // namespace rankdeck
