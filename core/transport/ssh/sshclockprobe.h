// SPDX-License-Identifier: GPL-3.0-or-later
//
// Measures a node's clock offset over its SSH session (see NodeClock): one exec channel runs a
// loop that answers each line on its stdin with the node's `date +%s%N`, so that every sample
// is exactly one round trip on an open channel (no channel setup or process start in it but
// date's own); the shortest of a few is kept. Blocking, on the node connection's thread, a few
// round trips long.
#pragma once

#include "util/nodeclock.h"

namespace rankdeck {

class SshSession;

class SshClockProbe
{
public:
    static constexpr int kConnectSamples = 5;
    static constexpr int kRefreshSamples = 3;

    // false (and clock->error) when the node gave no usable answer within timeoutMs.
    static bool measure(SshSession *session, int samples, int timeoutMs, NodeClock *clock);
};

} // namespace rankdeck
