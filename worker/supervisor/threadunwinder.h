// SPDX-License-Identifier: GPL-3.0-or-later
//
// Unwinds threads of the supervised program as eu-stack does: libdwfl reads the program's
// modules from /proc/<pid>/maps, attaches to the process as "already ptrace-stopped"
// (the supervisor is its tracer and stops the threads itself), and walks each thread's stack
// with the CFI of every module, reading registers and memory through ptrace. The frames are
// symbolized with the worker's own symbolizer (crash/stackdump.h), so a supervised program's
// stack reads like a worker's.
#pragma once

#include "crash/stackdump.h"

#include <sys/types.h>

#include <string>
#include <vector>

namespace rankdeck::supervisor {

class ThreadUnwinder
{
public:
    explicit ThreadUnwinder(pid_t pid);
    // false when libdw could not attach (then unwind() returns nothing); error() says why.
    bool attached() const { return m_attached; }
    const std::string &error() const { return m_error; }

    // The frames of `tid`, innermost first. The thread must be in a ptrace-stop of ours.
    std::vector<crash::StackFrame> unwind(pid_t tid, int maxFrames = 256);

private:
    crash::StackSymbolizer m_symbolizer;
    bool m_attached = false;
    std::string m_error;
};

// "python3 (tid 42, main thread)": the `thread` field's form, as the worker writes it.
std::string threadLabel(pid_t pid, pid_t tid);

} // namespace rankdeck::supervisor
