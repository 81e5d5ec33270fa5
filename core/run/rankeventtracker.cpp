// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankeventtracker.h"

#include <algorithm>

namespace rankdeck {

RankEventTracker::Result RankEventTracker::apply(const WorkerEvent &event, qint64 nowUs,
                                                 RankStatus &status, RankRuntime &runtime)
{
    Result result;
    // Any event is a sign of life.
    status.lastHeartbeatUs = nowUs;
    if (status.silent) {
        status.silent = false;
        result.heartbeatsResumed = true;
    }
    switch (event.type()) {
    case WorkerEvent::Type::Hello:
        if (!event.host().isEmpty())
            status.host = event.host();
        if (event.pid() > 0 && status.pid == 0)
            status.pid = event.pid();
        status.device = event.string("device");
        status.backend = event.string("backend");
        if (event.integer("total_steps") > 0)
            status.totalSteps = event.integer("total_steps");
        // A supervised program is running once its supervisor speaks: the supervisor cannot see
        // the program's own rendezvous.
        if (event.fields().value(QStringLiteral("supervised")).toBool()) {
            if (status.state == RankState::Starting || status.state == RankState::Rendezvous) {
                runtime.lastStepChangeUs = nowUs;
                result.newState = RankState::Running;
            }
        } else if (status.state == RankState::Starting) {
            result.newState = RankState::Rendezvous;
        }
        break;
    case WorkerEvent::Type::Rendezvous:
        if (!event.string("backend").isEmpty())
            status.backend = event.string("backend");
        runtime.lastStepChangeUs = nowUs;
        if (status.state == RankState::Starting || status.state == RankState::Rendezvous)
            result.newState = RankState::Running;
        break;
    case WorkerEvent::Type::Step: {
        const qint64 step = event.step();
        if (step != status.step) {
            if (status.step >= 0)
                runtime.maxStepIntervalUs =
                    std::max(runtime.maxStepIntervalUs, nowUs - runtime.lastStepChangeUs);
            runtime.lastStepChangeUs = nowUs;
        }
        status.step = step;
        status.loss = event.loss();
        status.samplesPerSec = event.number("samples_per_s", 0);
        status.lastStepUs = nowUs;
        if (status.hung) {
            status.hung = false;
            runtime.dumpRequested = false;
            status.detail.clear();
            result.progressResumed = true;
        }
        if (status.state == RankState::Rendezvous || status.state == RankState::Starting)
            result.newState = RankState::Running;
        result.stepChanged = true;
        break;
    }
    case WorkerEvent::Type::Heartbeat:
        if (event.step() >= 0 && event.step() > status.step)
            status.step = event.step();
        break;
    case WorkerEvent::Type::Finished:
        if (event.step() >= 0)
            status.step = event.step();
        if (!qIsNaN(event.loss()))
            status.loss = event.loss();
        break;
    default:
        break;
    }
    return result;
}

} // namespace rankdeck
