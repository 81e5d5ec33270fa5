// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which ranks look dead or stuck, judged on the launcher's clock every watch tick:
//   - silent: no event at all (not even a heartbeat) for the heartbeat timeout; the control
//     channel may be stuck too, so its stacks are asked for with SIGUSR1;
//   - hung: heartbeats go on but the step does not move for the hang timeout, or three times
//     the slowest step seen so far, whichever is longer (slow steps are not hangs); its stacks
//     are asked for on the control channel. A user's program may report no steps at all: for
//     it, a new line of output or a new metric value counts as progress too, so it is hung when
//     it prints nothing and reports nothing for the hang timeout (or three times its longest
//     quiet gap so far) while its process lives; before its first line it gets the start-up
//     grace too, since `import torch` and data loading print nothing for a while;
//   - rendezvous overdue: rank 0 has not reported its store port in time, so the others can
//     never start.
// It marks the statuses and says what it found; the controller acts and tells the user.
#pragma once

#include "diagnosis/rankruntime.h"
#include "record/runstate.h"

#include <QList>

namespace rankdeck {

class HangWatchdog
{
public:
    struct Limits
    {
        qint64 heartbeatUs = 0;
        qint64 hangUs = 0;
        bool autoDumpStacks = true;
        // A user's program: progress is a step, a line of output or a metric value
        // (RankRuntime::lastActivityUs), whether or not it ever reports a step.
        bool outputIsProgress = false;
        // With outputIsProgress: the least a program that has printed nothing yet may take.
        qint64 startupUs = 0;
    };
    struct Findings
    {
        QList<int> silent;        // newly silent: detail set, status changed
        QList<int> hung;          // newly hung (silent ones included)
        QList<int> changed;       // statuses that changed
        QList<int> dumpBySignal;  // ask with SIGUSR1
        QList<int> dumpByCommand; // ask with `dump-stacks`
        bool anyHung = false;     // some rank not yet ended is hung
    };

    static Findings check(qint64 nowUs, const Limits &limits, QList<RankStatus> &ranks,
                          QList<RankRuntime> &runtimes);

    // Rank 0 started at rank0StartUs and still has not reported its port after timeoutSec.
    static bool rendezvousOverdue(qint64 nowUs, qint64 rank0StartUs, int timeoutSec);
};

} // namespace rankdeck
