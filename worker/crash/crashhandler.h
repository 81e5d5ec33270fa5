// SPDX-License-Identifier: GPL-3.0-or-later
//
// Crash reports and on-demand stack dumps for rankdeck-worker (no Qt, no libtorch headers).
//
// Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) and uncaught exceptions become one
// `crash` event on stdout (core/wire/wireprotocol.h), the same report as text on stderr and in
// <runDir>/crash-rank<R>.txt, then the process dies by the signal (SIGABRT for exceptions), so
// the launcher still sees the real cause in the exit status.
//
// Building: link rankdeck_crash (worker/crash/CMakeLists.txt), which has the handler's parts,
// worker/crash/stackdump.cpp (libdw) and worker/crash/faultinjection.cpp (only
// <c10/util/Exception.h>); the executable needs -Wl,--build-id for the reports' build id.
//
// Exceptions: let an exception that ends training escape main() (or rethrow it with `throw;`
// after printing): the terminate handler reports it as a `crash` with its type, message
// (c10::Error's included) and the stack of the throw site. An exception caught and turned into
// an `error` event carries no stack.
// RANKDECK_CRASH_RAW=1 skips symbolizing: the report then has module+offset frames only.
#pragma once

#include <string>

namespace rankdeck::crash {

struct Config
{
    int rank = 0;
    std::string runDir;  // where crash-rank<R>.txt and stack dumps go; empty: nowhere
    std::string buildId; // written into every report so the launcher can match the binary
};

// Installs the signal handlers, the terminate handler, the SIGUSR1 stack-dump trigger and
// the thread that serves stack dumps. Call early in main(), once; a second call only updates
// the config (e.g. when the rank becomes known after parsing flags).
void install(const Config &config);

// Asks for a `stacks` event with the stack of every thread of the process, which keeps
// running. Returns at once (the dump happens on a helper thread); safe to call from a
// signal handler. SIGUSR1 does the same with reason "SIGUSR1".
void requestStackDump(const char *reason);

// The GNU build id of the running executable as lower-case hex ("" if it has none).
std::string ownBuildId();

// Sets the NCCL environment RankDeck relies on, each variable only if the user has not set
// it: errors tear the process down instead of hanging (TORCH_NCCL_ASYNC_ERROR_HANDLING=1),
// and a collective timeout dumps the flight recorder into <runDir>/nccl-trace-rank<R>.
// Call before creating the NCCL process group.
void applyNcclDefaults(const std::string &runDir);

} // namespace rankdeck::crash
