// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/programtracer.h"

#include "supervisor/threadunwinder.h"
#include "supervisor/wallclock.h"

#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace rankdeck::supervisor {

namespace {

// Events travel as one line; the launcher's line splitter must never cut one (as the worker).
constexpr size_t kMaxStackText = 48 * 1024;
// A program that handles its own faults (a JIT, a GC) would otherwise be unwound at each one:
// a new capture only when the last one was survived for a while, and only a few.
constexpr std::int64_t kRecaptureAfterUs = 2'000'000;
constexpr int kMaxCaptures = 8;
// How long a thread may take to stop for a dump.
constexpr auto kInterruptTimeout = std::chrono::milliseconds(500);

bool isFatal(int sig)
{
    switch (sig) {
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
        return true;
    default:
        return false;
    }
}

bool isStopSignal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

std::vector<pid_t> tasksOf(pid_t pid)
{
    std::vector<pid_t> tids;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d)) {
            const int tid = std::atoi(e->d_name);
            if (tid > 0)
                tids.push_back(tid);
        }
        ::closedir(d);
    }
    std::sort(tids.begin(), tids.end());
    return tids;
}

std::string capped(std::string s)
{
    if (s.size() > kMaxStackText) {
        s.resize(kMaxStackText);
        const size_t nl = s.rfind('\n');
        if (nl != std::string::npos)
            s.resize(nl);
    }
    return s;
}

} // namespace

bool ProgramTracer::seize(pid_t pid, std::string *why)
{
    const long options = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC;
    if (::ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void *>(options)) != 0) {
        *why = std::string("ptrace: ") + std::strerror(errno);
        return false;
    }
    m_pid = pid;
    m_threads = {pid};
    return true;
}

void ProgramTracer::resume(pid_t tid, Resume how, int signal)
{
    if (how == Resume::Listen)
        ::ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);
    else
        ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void *>(static_cast<long>(signal)));
}

bool ProgramTracer::handleStatus(pid_t tid, int status)
{
    if (m_pid <= 0)
        return false;
    if (!WIFSTOPPED(status)) {
        // A thread other than the leader ended; the leader's end is the program's.
        if (tid != m_pid && m_threads.erase(tid) > 0) {
            m_held.erase(tid);
            return true;
        }
        return false;
    }
    // Only tracees stop (the supervisor never asks for WUNTRACED): a new thread may report its
    // first stop before its creator reports the clone event.
    m_threads.insert(tid);
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    Held held;
    if (event == PTRACE_EVENT_STOP) {
        // Group-stop, or a stop without a signal (a new thread, our PTRACE_INTERRUPT, the end
        // of a group-stop while listening).
        held.how = isStopSignal(sig) ? Resume::Listen : Resume::Continue;
    } else if (event == PTRACE_EVENT_CLONE) {
        unsigned long newTid = 0;
        if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &newTid) == 0 && newTid > 0)
            m_threads.insert(pid_t(newTid));
    } else if (event == PTRACE_EVENT_EXEC) {
        // The other threads are gone; the process goes on as its leader.
        m_threads = {m_pid, tid};
    } else if (event == 0) {
        // Signal-delivery-stop: the signal goes on to the program unchanged.
        held.signal = sig;
        if (isFatal(sig))
            captureFatal(tid, sig);
    }
    if (m_dumping)
        m_held[tid] = held;
    else
        resume(tid, held.how, held.signal);
    return true;
}

void ProgramTracer::captureFatal(pid_t tid, int signal)
{
    const std::int64_t now = wallUs();
    if (m_fatal.signal != 0 &&
        (now - m_lastCaptureUs < kRecaptureAfterUs || m_captures >= kMaxCaptures))
        return;
    FatalCapture c;
    c.signal = signal;
    c.timeUs = now;
    c.thread = threadLabel(m_pid, tid);
    char exe[4096];
    const ssize_t n =
        ::readlink(("/proc/" + std::to_string(m_pid) + "/exe").c_str(), exe, sizeof exe - 1);
    if (n > 0) {
        const std::string path(exe, size_t(n));
        c.executable = path.substr(path.rfind('/') + 1);
    }
    ThreadUnwinder unwinder(m_pid);
    if (unwinder.attached()) {
        const std::vector<crash::StackFrame> frames = unwinder.unwind(tid);
        c.stack = capped(crash::formatStack(frames));
        c.ownFrame = crash::firstOwnFrame(frames);
        if (frames.empty())
            c.unwindError = "no frames";
    } else {
        c.unwindError = unwinder.error();
    }
    m_fatal = std::move(c);
    ++m_captures;
    m_lastCaptureUs = wallUs();
}

std::string ProgramTracer::dumpAllThreads(const std::function<void(pid_t, int)> &other)
{
    if (m_pid <= 0)
        return {};
    const std::vector<pid_t> tids = tasksOf(m_pid);
    m_dumping = true;
    m_held.clear();
    std::set<pid_t> asked;
    for (pid_t tid : tids)
        if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0)
            asked.insert(tid);

    const auto deadline = std::chrono::steady_clock::now() + kInterruptTimeout;
    for (;;) {
        bool all = true;
        for (pid_t tid : asked)
            if (!m_held.count(tid) && m_threads.count(tid))
                all = false;
        if (all || std::chrono::steady_clock::now() >= deadline)
            break;
        int status = 0;
        const pid_t p = ::waitpid(-1, &status, WNOHANG | __WALL);
        if (p > 0) {
            if (!handleStatus(p, status))
                other(p, status);
            continue;
        }
        if (p < 0 && errno == ECHILD)
            break;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }

    struct Block
    {
        pid_t tid;
        std::string name;
        std::vector<crash::StackFrame> frames;
        std::string note;
    };
    std::vector<Block> blocks;
    {
        ThreadUnwinder unwinder(m_pid);
        for (pid_t tid : tids) {
            if (!m_threads.count(tid))
                continue; // ended meanwhile
            Block b{tid, {}, {}, {}};
            const std::string label = threadLabel(m_pid, tid);
            b.name = label.substr(0, label.rfind(" (tid "));
            if (tid == m_pid)
                b.name += ", main thread";
            if (!m_held.count(tid))
                b.note = "no stack: the thread did not stop within 0.5 s";
            else if (!unwinder.attached())
                b.note = "no stack: " + unwinder.error();
            else
                b.frames = unwinder.unwind(tid);
            blocks.push_back(std::move(b));
        }
    }
    m_dumping = false;
    for (const auto &[tid, held] : m_held)
        resume(tid, held.how, held.signal);
    m_held.clear();

    std::string text;
    for (size_t maxFrames : {64u, 24u, 10u, 4u}) {
        text.clear();
        for (const Block &b : blocks) {
            text += "thread " + std::to_string(b.tid) + " (" + b.name + "):\n";
            if (!b.note.empty()) {
                text += "  (" + b.note + ")\n";
                continue;
            }
            for (size_t i = 0; i < b.frames.size() && i < maxFrames; ++i)
                text += crash::formatFrame(int(i), b.frames[i]) + '\n';
            if (b.frames.size() > maxFrames)
                text += "  (" + std::to_string(b.frames.size() - maxFrames) + " more frames)\n";
        }
        if (text.size() <= kMaxStackText)
            break;
    }
    return capped(text);
}

} // namespace rankdeck::supervisor
