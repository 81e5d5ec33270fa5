// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the crash handler's signal handlers read and write, shared by its parts (the handler
// itself, the raw and the symbolized report, the stack dumper). Everything is fixed-size static
// storage: a handler can neither allocate nor take a lock, so install() fills it beforehand.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>

namespace rankdeck::crash::detail {

constexpr int kMaxFrames = 128;
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Written by install(), read by every handler.
struct CrashSettings
{
    int rank = 0;
    char runDir[2048] = {};
    char buildId[128] = {};
    char reportPath[2200] = {};
    char stacksPath[2200] = {};
    char host[256] = {};
};
extern CrashSettings g_settings;

// The fatal signal as its handler recorded it, for the report written after it.
struct CrashCapture
{
    void *pcs[kMaxFrames];
    int count = 0;
    bool firstIsExact = false;
    int signal = 0;
    int code = 0;
    void *address = nullptr;
    pid_t senderPid = 0;
    pid_t pid = 0;           // of the crashed process: the symbolizing child has its own
    std::int64_t timeUs = 0; // when the signal arrived: the root cause is chosen by this time
    pid_t tid = 0;
    char threadName[32] = {};
};
extern CrashCapture g_crash;

} // namespace rankdeck::crash::detail
