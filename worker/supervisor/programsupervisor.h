// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-supervisor: runs the user's own training program as one rank, the way the launcher
// runs rankdeck-worker, with no libtorch at all (a node may have only the user's Python).
//   - The program gets torchrun's environment contract (RANK, LOCAL_RANK, WORLD_SIZE,
//     LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_*, MASTER_ADDR, MASTER_PORT,
//     TORCHELASTIC_RUN_ID, _RESTART_COUNT, _MAX_RESTARTS, _SIGNALS_TO_HANDLE,
//     TORCH_NCCL_ASYNC_ERROR_HANDLING=1, OMP_NUM_THREADS=1 with several ranks on the node, as
//     torchrun sets them; TORCHELASTIC_USE_AGENT_STORE=False, as no agent serves the store) and
//     PYTHONUNBUFFERED=1, each unless the user set it; the hello event names the defaults
//     worth a notice (env_defaults). On rank 0 a MASTER_PORT of 0 is replaced by a reserved
//     free port (PortReservation), announced in a `store` event before the program starts.
//   - The program writes straight to the supervisor's stdout and stderr (it inherits them), so
//     every byte reaches the launcher, from print() as from C++, NCCL or the interpreter. The
//     supervisor's own events are single write()s of whole lines, never torn by the program's
//     output (the launcher finds an event after text on the same line).
//   - hello, heartbeat every 500 ms, then finished (exit 0), error (exit code) or crash (fatal
//     signal) with the program's status; the supervisor exits the way the program did.
//   - `stop` on stdin, SIGTERM, SIGINT, SIGHUP, or the end of stdin (the launcher is gone)
//     stop the whole process tree: SIGTERM to every descendant, SIGKILL after the grace period.
//     A stop it was asked for ends with exit 0 (a `stopping` event first), like the worker's.
//   - What killed the program and where (ProgramDiagnostics): the program is traced with
//     ptrace so that a fatal signal's native stack reaches the crash event, `dump-stacks` on
//     stdin answers with every thread's native and Python stacks while it keeps running,
//     torchelastic's error file fills the error event, and an OOM kill is named as such.
//   - --warm-python: a Python program is forked from a warm server that imported torch before
//     (WarmStartClient) instead of started cold; its waiter there is a subreaper whose reports
//     are the program's exit, and stop, SIGKILL and the sweep reach its whole tree the same way.
//     Whenever that is not possible the program starts cold, and stderr says why once.
//   - dump-flight-recorder <id> on stdin answers with the program's torch flight recorder
//     (FlightRecorderDumper), without stopping the loop; recording is on by default.
//   - The program's TensorBoard event files are followed and their bytes forwarded as
//     `tfevents` events (EventFileFollower), on the same loop, every 250 ms.
#pragma once

#include "supervisor/supervisoroptions.h"

namespace rankdeck::supervisor {

// Runs the program to its end; returns the exit status to leave with (or does not return: a
// program killed by a signal is mirrored by raising the same signal).
int runSupervised(const SupervisorOptions &options);

} // namespace rankdeck::supervisor
