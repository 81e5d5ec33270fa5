// SPDX-License-Identifier: GPL-3.0-or-later
// Which steps valgrind's callgrind counts. bench/run.py measures the telemetry's cost as
// instructions per step (a count does not drift with the machine's load, wall time does), and
// runs the worker under `valgrind --tool=callgrind --instr-atstart=no` with
// RANKDECK_COUNT_STEPS=FROM:TO: libtorch's start-up (about a billion instructions, half a
// minute under callgrind) then runs at valgrind's uninstrumented speed and is not counted, and
// the count holds every thread of the process (the heartbeat thread's writes included) from the
// start of step FROM to the start of step TO. Outside valgrind both calls are a few no-op
// instructions.
#pragma once

namespace rankdeck::instructioncount {

// False when the worker was built without valgrind's <valgrind/callgrind.h>.
bool available();
void start();
void stop();

} // namespace rankdeck::instructioncount
