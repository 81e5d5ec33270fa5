// SPDX-License-Identifier: GPL-3.0-or-later
//
// The symbolized crash report: frames from libdw (crash/stackdump.h), written as the `crash`
// wire event on stdout, human text on stderr and <runDir>/crash-rank<R>.txt. It allocates and
// reads files, so it runs in ordinary context only: in the child the signal handler forks, or
// in the terminate handler, never in a signal handler itself.
#pragma once

#include "crash/stackdump.h"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rankdeck::crash::detail {

// The symbolizing child normally needs well under a second; past this the raw report is used.
constexpr int kSymbolizeTimeoutMs = 8000;

struct CrashReport
{
    std::string kind; // "signal" or "exception"
    int signal = 0;
    std::string signalName;
    std::string exceptionType;
    std::string message;
    std::string thread;
    pid_t pid = 0;
    std::int64_t timeUs = 0;
    std::vector<StackFrame> frames;
};

void emitCrashReport(const CrashReport &r);

// "name (tid N)", with ", main thread" for the process's first thread.
std::string threadLabel(const char *name, pid_t tid, pid_t pid);

// c10::Error::what() without c10's own backtrace (the report has a better stack).
std::string trimExceptionMessage(std::string msg);

// Runs in the child the signal handler forked: a single-threaded frozen copy of the crashed
// process. Symbolizes g_crash, emits the report and exits 0 (the parent's sign of success).
[[noreturn]] void symbolizeCrashInChild();

} // namespace rankdeck::crash::detail
