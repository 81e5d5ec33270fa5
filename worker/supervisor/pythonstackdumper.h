// SPDX-License-Identifier: GPL-3.0-or-later
//
// Python stacks of a running program on dump-stacks, without stopping it and without py-spy:
// the startup hook (python/startup/sitecustomize.py) registers a faulthandler dump of every
// thread on a real-time signal nobody claims (SIGRTMIN+6; NCCL and others take SIGUSR1) into a
// file, and writes "pid signal" to a ready marker. The supervisor sends the signal only to a
// pid the marker names that also catches that signal right now (/proc/<pid>/status SigCgt): a
// process that never registered — a native program, a reused pid — would be killed by it.
// faulthandler writes the dump from its C handler, without the GIL, so a thread blocked in a
// collective does not hold it up; the dump is complete when the file stops growing.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace rankdeck::supervisor {

class PythonStackDumper
{
public:
    // Files in the run directory; removes stale ones and sets the hook's environment.
    void prepare(const std::string &runDirectory, int rank);
    int signalNumber() const { return m_signal; }
    const std::string &stacksPath() const { return m_stacksPath; }

    // The process to ask: `program` if it registered, else the first registered descendant
    // (a Python started by a shell wrapper); 0 when none did.
    pid_t registeredProcess(pid_t program) const;
    // Whether `pid` ever registered (alive or not): it is a Python program.
    bool registered(pid_t pid) const;

    // Sends the signal and waits (at most ~1 s) until the dump is complete; the dump's text,
    // empty when nothing came. `pump` runs every few ms (the supervisor's ptrace stops and
    // reaping must go on meanwhile); `gone` ends the wait early when the program died.
    std::string dump(pid_t pid, const std::function<void()> &pump,
                     const std::function<bool()> &gone) const;

    // Every process that registered, in the order they did.
    std::vector<pid_t> registeredPids() const;

private:
    int m_signal = 0;
    std::string m_stacksPath;
    std::string m_readyPath;
};

} // namespace rankdeck::supervisor
