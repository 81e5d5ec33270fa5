// SPDX-License-Identifier: GPL-3.0-or-later
//
// Helpers the crash handler's signal handlers call: every one of them is async-signal-safe
// (plain syscalls, no malloc, no locks, no stdio), so they may run inside a handler.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace rankdeck::crash::detail {

pid_t currentTid();
std::int64_t nowUs();
void sleepMs(int ms);
// Copies at most size - 1 characters and always terminates dst.
void copyString(char *dst, std::size_t size, const char *src);
void writeAll(int fd, const char *data, std::size_t size);

// The program counter the kernel saved in a handler's ucontext (0 where unknown).
std::uintptr_t contextPc(void *ucontext);
// backtrace() from a handler starts with the handler itself and the kernel's signal
// trampoline: drops those frames so that pcs[0] is the interrupted code. Returns the new count.
int trimToContext(void **pcs, int count, std::uintptr_t pc);

const char *signalName(int sig);
const char *signalDescription(int sig, int code);
bool faultHasAddress(int sig, int code);

} // namespace rankdeck::crash::detail
