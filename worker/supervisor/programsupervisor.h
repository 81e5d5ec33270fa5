// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-supervisor: runs the user's own training program as one rank, the way the launcher
// runs rankdeck-worker, with no libtorch at all (a node may have only the user's Python).
//   - The program gets torchrun's environment contract (RANK, LOCAL_RANK, WORLD_SIZE,
//     LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
//     TORCHELASTIC_RUN_ID) and PYTHONUNBUFFERED=1 unless the user set it. On rank 0 a
//     MASTER_PORT of 0 is replaced by a reserved free port (PortReservation), announced in a
//     `store` event before the program starts.
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
//   - The program's TensorBoard event files are followed and their bytes forwarded as
//     `tfevents` events (EventFileFollower), on the same loop, every 250 ms.
#pragma once

#include <string>
#include <vector>

namespace rankdeck::supervisor {

struct SupervisorOptions
{
    std::vector<std::string> command; // PROGRAM ARGS…
    bool controlStdin = false;        // commands on stdin, its end means the launcher is gone
    int stopGraceMs = 5000;           // SIGTERM → SIGKILL
    std::string runDirectory;         // the rank's run directory on the node (may be empty)
    bool warmPython = false;          // --warm-python: fork a Python program from a warm server
    // Where the program's TensorBoard event files are (EventFileFollower); empty: its --logdir
    // argument, else runs/.
    std::string tensorBoardDir;
};

// Parses the command line; false and *error for a usage error.
bool parseOptions(int argc, char **argv, SupervisorOptions *options, std::string *error);

// Runs the program to its end; returns the exit status to leave with (or does not return: a
// program killed by a signal is mirrored by raising the same signal).
int runSupervised(const SupervisorOptions &options);

} // namespace rankdeck::supervisor
