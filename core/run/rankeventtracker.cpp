// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankeventtracker.h"

#include <algorithm>

namespace rankdeck {

RankEventTracker::Result RankEventTracker::apply(const WorkerEvent &e, qint64 now, RankStatus &s,
                                                 RankRuntime &rt)
{
    Result result;
    // Any event is a sign of life.
    s.lastHeartbeatUs = now;
    if (s.silent) {
        s.silent = false;
        result.heartbeatsResumed = true;
    }
    switch (e.type()) {
    case WorkerEvent::Type::Hello:
        if (!e.host().isEmpty())
            s.host = e.host();
        if (e.pid() > 0 && s.pid == 0)
            s.pid = e.pid();
        s.device = e.string("device");
        s.backend = e.string("backend");
        if (e.integer("total_steps") > 0)
            s.totalSteps = e.integer("total_steps");
        // A supervised program is running once its supervisor speaks: the supervisor cannot see
        // the program's own rendezvous.
        if (e.fields().value(QStringLiteral("supervised")).toBool()) {
            if (s.state == RankState::Starting || s.state == RankState::Rendezvous) {
                rt.lastStepChangeUs = now;
                result.newState = RankState::Running;
            }
        } else if (s.state == RankState::Starting) {
            result.newState = RankState::Rendezvous;
        }
        break;
    case WorkerEvent::Type::Rendezvous:
        if (!e.string("backend").isEmpty())
            s.backend = e.string("backend");
        rt.lastStepChangeUs = now;
        if (s.state == RankState::Starting || s.state == RankState::Rendezvous)
            result.newState = RankState::Running;
        break;
    case WorkerEvent::Type::Step: {
        const qint64 step = e.step();
        if (step != s.step) {
            if (s.step >= 0)
                rt.maxStepIntervalUs = std::max(rt.maxStepIntervalUs, now - rt.lastStepChangeUs);
            rt.lastStepChangeUs = now;
        }
        s.step = step;
        s.loss = e.loss();
        s.samplesPerSec = e.number("samples_per_s", 0);
        s.lastStepUs = now;
        if (s.hung) {
            s.hung = false;
            rt.dumpRequested = false;
            s.detail.clear();
            result.progressResumed = true;
        }
        if (s.state == RankState::Rendezvous || s.state == RankState::Starting)
            result.newState = RankState::Running;
        result.stepChanged = true;
        break;
    }
    case WorkerEvent::Type::Heartbeat:
        if (e.step() >= 0 && e.step() > s.step)
            s.step = e.step();
        break;
    case WorkerEvent::Type::Finished:
        if (e.step() >= 0)
            s.step = e.step();
        if (!qIsNaN(e.loss()))
            s.loss = e.loss();
        break;
    default:
        break;
    }
    return result;
}

} // namespace rankdeck
