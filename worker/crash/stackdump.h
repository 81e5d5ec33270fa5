// SPDX-License-Identifier: GPL-3.0-or-later
//
// Turns program counters captured by the crash handler into readable frames with libdw:
// demangled names, file:line where debug information exists (the worker's own code, built
// RelWithDebInfo), inlined calls expanded, and the module each frame lives in.
// Uses malloc and file I/O: never call it inside a signal handler.
// libdw only (no libtorch, no Qt): rankdeck-worker symbolizes itself with it, and
// rankdeck-supervisor symbolizes the user's program (another process) with the same code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

struct Dwfl; // elfutils' libdwfl session (libdwfl.h), for callers that unwind through it

namespace rankdeck::crash {

struct StackFrame
{
    std::uintptr_t pc = 0;
    std::string function; // demangled; empty when unknown
    std::string file;     // source file; empty when unknown
    int line = 0;
    std::string module; // file name of the ELF object ("rankdeck-worker", "libc.so.6")
    std::uintptr_t moduleOffset = 0;
    bool inlined = false; // an inlined call inside the next frame's function
    bool own = false;     // in the executable itself (the worker's own code)
};

class StackSymbolizer
{
public:
    StackSymbolizer(); // this process
    // Another process: its maps and its executable (the supervisor's program). Own frames are
    // those of that executable.
    explicit StackSymbolizer(pid_t pid);
    ~StackSymbolizer();
    StackSymbolizer(const StackSymbolizer &) = delete;
    StackSymbolizer &operator=(const StackSymbolizer &) = delete;

    // pcs innermost first. firstIsExact: pcs[0] is the faulting instruction itself (from a
    // signal context) rather than a return address, which points after the call.
    std::vector<StackFrame> symbolize(const void *const *pcs, int count, bool firstIsExact);

    // The session with the process's modules reported; null when its maps could not be read.
    // The supervisor attaches it to a ptrace-stopped process to unwind (dwfl_linux_proc_attach).
    ::Dwfl *dwfl() const;

private:
    struct Impl;
    Impl *m_impl;
};

// One frame per line, innermost first, as the `stack` field of `crash`/`stacks` carries it:
//   #3 0x000055d0c1a2b3c4 in ns::f(int) at /src/worker/x.cpp:42 [rankdeck-worker]
//   #4 0x00007f1e2a3b4c5d in ?? [libc.so.6+0x29d8f]
std::string formatFrame(int index, const StackFrame &frame);
std::string formatStack(const std::vector<StackFrame> &frames);
// Index of the first frame in the executable's own code, -1 if none.
int firstOwnFrame(const std::vector<StackFrame> &frames);

} // namespace rankdeck::crash
