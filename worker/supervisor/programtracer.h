// SPDX-License-Identifier: GPL-3.0-or-later
//
// Native stacks of the user's program without root: the supervisor is the program's parent,
// which Yama's ptrace_scope=1 allows to trace it. Seized right after fork (before exec), with
// every thread traced (PTRACE_O_TRACECLONE) and exec reported as an event (otherwise an exec
// under ptrace raises SIGTRAP, which would kill the program). Forked children (DataLoader
// workers) are not traced: their parent's waitpid sees them exactly as without us.
//
// Every ptrace stop comes through the supervisor's waitpid(__WALL) loop into handleStatus():
//   - signal-delivery-stop: the signal is re-injected unchanged, so the program's handlers,
//     its default actions and its own children behave as without tracing. A fatal signal
//     (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) first unwinds the faulting
//     thread, which is stopped at the faulting instruction (before any handler: Python's
//     faulthandler then runs and re-raises, and the first capture is kept).
//   - group-stop (SIGSTOP & co.): PTRACE_LISTEN, so the program stays stopped as it would be.
//   - clone/exec events, a new thread's first stop, our own PTRACE_INTERRUPT: resumed.
// A SIGKILL of the supervisor detaches every tracee (no PTRACE_O_EXITKILL): a thread held in a
// stop is woken, its pending signal delivered.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace rankdeck::supervisor {

struct FatalCapture
{
    int signal = 0;
    std::int64_t timeUs = 0; // wall clock when the thread stopped with the signal
    std::string thread;      // "python3 (tid 42, main thread)"
    std::string stack;       // one frame per line, the `stack` field's format
    int ownFrame = -1;       // first frame in the program's executable, -1 none
    std::string unwindError; // why there is no stack
    std::string executable;  // file name of the program's executable then ("python3.11")
};

class ProgramTracer
{
public:
    // Called by the parent between fork and the child's exec. false (with *why) when the
    // kernel refuses (seccomp, a container without ptrace): the program then runs untraced.
    bool seize(pid_t pid, std::string *why);
    bool tracing() const { return m_pid > 0; }

    // One waitpid(-1, …, __WALL) result. true when it was ours and is dealt with (a ptrace stop,
    // or the end of a non-leader thread); false for anything the supervisor must see itself.
    bool handleStatus(pid_t tid, int status);

    // The first fatal signal's stack (signal 0: none was seen).
    const FatalCapture &fatal() const { return m_fatal; }

    // dump-stacks: interrupts every thread, unwinds them all, resumes them. The text has one
    // block per thread under "thread <tid> (<name>[, main thread]):" headers, as the worker's
    // stacks event. `other` gets waitpid results that are not the tracer's meanwhile.
    std::string dumpAllThreads(const std::function<void(pid_t, int)> &other);

private:
    enum class Resume
    {
        Continue, // PTRACE_CONT with m_held's signal
        Listen    // stay in group-stop
    };
    struct Held
    {
        Resume how = Resume::Continue;
        int signal = 0;
    };
    void resume(pid_t tid, Resume how, int signal);
    void captureFatal(pid_t tid, int signal);

    pid_t m_pid = 0;
    std::set<pid_t> m_threads;
    FatalCapture m_fatal;
    std::int64_t m_lastCaptureUs = 0;
    int m_captures = 0;
    bool m_dumping = false;       // hold every thread that stops, do not resume it
    std::map<pid_t, Held> m_held; // threads held for a dump and how to resume them
};

} // namespace rankdeck::supervisor
