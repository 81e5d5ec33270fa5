// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/hangwatchdog.h"

#include "util/translation.h"

#include <algorithm>

namespace rankdeck {

HangWatchdog::Findings HangWatchdog::check(qint64 now, const Limits &limits,
                                           QList<RankStatus> &ranks, QList<RankRuntime> &runtimes)
{
    Findings found;
    for (int r = 0; r < ranks.size() && r < runtimes.size(); ++r) {
        RankStatus &s = ranks[r];
        RankRuntime &rt = runtimes[r];
        if (!rt.started || rt.exited || isTerminal(s.state) || rt.launcherStopped)
            continue;
        if (s.state != RankState::Rendezvous && s.state != RankState::Running)
            continue;
        const qint64 quiet = now - s.lastHeartbeatUs;
        if (quiet > limits.heartbeatUs && !s.silent) {
            s.silent = true;
            s.detail = tr("no heartbeat for %1 s").arg(quiet / 1'000'000);
            found.silent << r;
            found.changed << r;
            if (!s.hung) {
                s.hung = true;
                found.hung << r;
                if (limits.autoDumpStacks && !rt.dumpRequested) {
                    rt.dumpRequested = true;
                    found.dumpBySignal << r;
                }
            }
        }
        if (s.state != RankState::Running || s.silent)
            continue;
        qint64 limit = std::max(limits.hangUs, 3 * rt.maxStepIntervalUs);
        if (limits.outputIsProgress) {
            limit = std::max(limit, 3 * rt.maxActivityIntervalUs);
            if (rt.lastActivityUs == 0)
                limit = std::max(limit, limits.startupUs);
        }
        const qint64 lastProgress = limits.outputIsProgress
                                        ? std::max(rt.lastStepChangeUs, rt.lastActivityUs)
                                        : rt.lastStepChangeUs;
        const qint64 stalled = now - lastProgress;
        if (stalled > limit && !s.hung) {
            s.hung = true;
            s.detail = limits.outputIsProgress
                           ? tr("no output and no new metric for %1 s while the process lives")
                                 .arg(stalled / 1'000'000)
                           : tr("no step for %1 s while heartbeats go on").arg(stalled / 1'000'000);
            found.hung << r;
            found.changed << r;
            if (limits.autoDumpStacks && !rt.dumpRequested) {
                rt.dumpRequested = true;
                found.dumpByCommand << r;
            }
        }
    }
    for (const RankStatus &s : ranks)
        found.anyHung = found.anyHung || (s.hung && !isTerminal(s.state));
    return found;
}

bool HangWatchdog::rendezvousOverdue(qint64 now, qint64 rank0StartUs, int timeoutSec)
{
    return now - rank0StartUs > qint64(timeoutSec) * 1'000'000;
}

} // namespace rankdeck
