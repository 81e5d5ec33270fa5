// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the launcher knows about one rank in the current attempt beyond what it shows
// (RankStatus): whether it has a process, whether the launcher itself is stopping it, and the
// step timing the hang watchdog judges by. The controller keeps one per rank; the tracker, the
// watchdog and the failure policy read and update it.
#pragma once

#include <QtGlobal>

namespace rankdeck {

struct RankRuntime
{
    bool started = false; // startRank was called in this attempt
    bool exited = false;
    bool pidKnown = false;        // rankStarted came
    bool launcherStopped = false; // the launcher asked it to stop
    bool consequence = false;     // ... because another rank failed
    bool ownFailure = false;      // it reported an error/crash itself
    bool dumpRequested = false;   // the watchdog asked it for its stacks
    qint64 lastStepChangeUs = 0;  // launcher clock
    // A user's program: its last line of output or metric value (launcher clock). Such a
    // program may report no steps, so what it prints is its progress.
    qint64 lastActivityUs = 0;
    qint64 maxStepIntervalUs = 0; // slowest step seen so far
    // A user's program: the longest quiet gap between two lines or metric values so far, so
    // that one printing once per long epoch is not called hung between its lines.
    qint64 maxActivityIntervalUs = 0;
};

} // namespace rankdeck
