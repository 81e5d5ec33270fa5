// SPDX-License-Identifier: GPL-3.0-or-later
//
// Event → rank status: what a rank's hello, rendezvous, step, heartbeat and finished events say
// about it (host, device, backend, step, loss, throughput, liveness, rendezvous → running).
// Plain data in, plain data out, so that every transition is unit-tested without processes;
// the controller applies the state change and says what it means. Events about failures,
// stacks and the store are the controller's and the failure policy's.
#pragma once

#include "diagnosis/rankruntime.h"
#include "record/runstate.h"
#include "stream/workerevent.h"

#include <optional>

namespace rankdeck {

class RankEventTracker
{
public:
    struct Result
    {
        std::optional<RankState> newState; // the rank moves on (Rendezvous, Running)
        bool heartbeatsResumed = false;    // it had gone silent and speaks again
        bool progressResumed = false;      // it was hung and made a step
        bool stepChanged = false;          // a step event: views and state.json follow
    };

    // Applies one event of the rank (nowUs: launcher clock) to its status and runtime.
    static Result apply(const WorkerEvent &event, qint64 nowUs, RankStatus &status,
                        RankRuntime &runtime);
};

} // namespace rankdeck
