// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/threadstackdumper.h"

#include "crash/crashstate.h"
#include "crash/signalsafe.h"
#include "crash/stackdump.h"
#include "wire/wireprotocol.h"

#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace rankdeck::crash::detail {

namespace {

// How long one thread may take to answer a stack-dump signal.
constexpr int kCaptureTimeoutMs = 500;
// Events travel as one line; the launcher's line splitter must never cut one.
constexpr std::size_t kMaxStacksText = 48 * 1024;
constexpr int kMaxCaptureSlots = 1024;

int g_wakePipe[2] = {-1, -1};
char g_dumpReason[128] = "request";
int g_captureSignal = 0;

// One slot per thread asked in a dump. A thread answers only a slot that is still pending, so
// a late answer can never write into a slot that was given up on and reused.
enum SlotState : int
{
    SlotFree = 0,
    SlotPending,
    SlotWriting,
    SlotDone,
    SlotAbandoned
};
struct CaptureSlot
{
    std::atomic<pid_t> tid{0};
    std::atomic<int> state{SlotFree};
    void *pcs[kMaxFrames];
    int count = 0;
};
CaptureSlot g_slots[kMaxCaptureSlots];

void onCaptureSignal(int, siginfo_t *, void *ucontext)
{
    const int savedErrno = errno;
    const pid_t tid = currentTid();
    for (CaptureSlot &slot : g_slots) {
        if (slot.tid.load(std::memory_order_acquire) != tid)
            continue;
        int pending = SlotPending;
        if (!slot.state.compare_exchange_strong(pending, SlotWriting))
            continue;
        int n = ::backtrace(slot.pcs, kMaxFrames);
        slot.count = trimToContext(slot.pcs, n, contextPc(ucontext));
        slot.state.store(SlotDone, std::memory_order_release);
        break;
    }
    errno = savedErrno;
}

void onDumpSignal(int)
{
    requestThreadStackDump("SIGUSR1");
}

std::string readSmallFile(const std::string &path)
{
    std::string s;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return s;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
        s.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return s;
}

bool threadBlocksSignal(pid_t tid, int sig)
{
    const std::string status = readSmallFile("/proc/self/task/" + std::to_string(tid) + "/status");
    const std::size_t pos = status.find("SigBlk:");
    if (pos == std::string::npos)
        return false;
    const unsigned long long mask = std::strtoull(status.c_str() + pos + 7, nullptr, 16);
    return (mask >> (sig - 1)) & 1ull;
}

struct ThreadStack
{
    pid_t tid = 0;
    std::string name;
    std::vector<void *> pcs;
    std::string unavailable; // why there is no stack
};

std::string buildStacksText(const std::vector<ThreadStack> &threads,
                            const std::vector<std::vector<StackFrame>> &frames,
                            std::size_t maxFrames)
{
    std::string text;
    for (std::size_t t = 0; t < threads.size(); ++t) {
        text += "thread " + std::to_string(threads[t].tid) + " (" + threads[t].name + "):\n";
        if (!threads[t].unavailable.empty()) {
            text += "  (" + threads[t].unavailable + ")\n";
            continue;
        }
        const auto &f = frames[t];
        for (std::size_t i = 0; i < f.size() && i < maxFrames; ++i)
            text += formatFrame(static_cast<int>(i), f[i]) + '\n';
        if (f.size() > maxFrames)
            text += "  (" + std::to_string(f.size() - maxFrames) + " more frames)\n";
    }
    return text;
}

void dumpAllThreads(const std::string &reason)
{
    const pid_t self = currentTid();
    const pid_t pid = ::getpid();
    std::vector<pid_t> tids;
    if (DIR *dir = ::opendir("/proc/self/task")) {
        while (dirent *e = ::readdir(dir)) {
            const int tid = std::atoi(e->d_name);
            if (tid > 0 && tid != self)
                tids.push_back(tid);
        }
        ::closedir(dir);
    }
    std::sort(tids.begin(), tids.end());
    if (tids.size() > static_cast<std::size_t>(kMaxCaptureSlots))
        tids.resize(kMaxCaptureSlots);

    std::vector<ThreadStack> threads;
    for (std::size_t i = 0; i < tids.size(); ++i) {
        CaptureSlot &slot = g_slots[i];
        // A slot still being written by a late answer from an earlier dump is skipped over.
        int state = slot.state.load();
        if (state == SlotWriting)
            continue;
        ThreadStack ts;
        ts.tid = tids[i];
        ts.name = readSmallFile("/proc/self/task/" + std::to_string(ts.tid) + "/comm");
        while (!ts.name.empty() && ts.name.back() == '\n')
            ts.name.pop_back();
        if (ts.tid == pid)
            ts.name += ", main thread";
        slot.count = 0;
        slot.tid.store(ts.tid, std::memory_order_release);
        slot.state.store(SlotPending, std::memory_order_release);
        if (::syscall(SYS_tgkill, pid, ts.tid, g_captureSignal) != 0) {
            slot.state.store(SlotFree);
            continue; // the thread ended meanwhile
        }
        bool done = false;
        for (int waited = 0; waited < kCaptureTimeoutMs; ++waited) {
            if (slot.state.load(std::memory_order_acquire) == SlotDone) {
                done = true;
                break;
            }
            sleepMs(1);
        }
        if (!done) {
            int pending = SlotPending;
            if (!slot.state.compare_exchange_strong(pending, SlotAbandoned)) {
                // It started writing just now: give it a moment to finish.
                for (int w = 0; w < 100 && slot.state.load() != SlotDone; ++w)
                    sleepMs(1);
                done = slot.state.load() == SlotDone;
            }
        }
        if (done) {
            ts.pcs.assign(slot.pcs, slot.pcs + slot.count);
            slot.state.store(SlotFree);
        } else {
            ts.unavailable = threadBlocksSignal(ts.tid, g_captureSignal)
                                 ? "no stack: the thread blocks signals"
                                 : "no stack: the thread did not answer within 0.5 s";
        }
        slot.tid.store(0);
        threads.push_back(std::move(ts));
    }

    std::vector<std::vector<StackFrame>> frames(threads.size());
    {
        StackSymbolizer symbolizer;
        for (std::size_t t = 0; t < threads.size(); ++t)
            frames[t] = symbolizer.symbolize(threads[t].pcs.data(),
                                             static_cast<int>(threads[t].pcs.size()), true);
    }
    std::string text;
    for (std::size_t maxFrames : {64u, 24u, 10u, 4u}) {
        text = buildStacksText(threads, frames, maxFrames);
        if (text.size() <= kMaxStacksText)
            break;
    }
    if (text.size() > kMaxStacksText)
        text.resize(kMaxStacksText);

    wire::WireEventWriter ev(wire::event::Stacks, g_settings.rank, nowUs());
    ev.addString(wire::field::Reason, reason);
    ev.addInt(wire::field::Pid, pid);
    ev.addString(wire::field::Stack, text);
    if (g_settings.stacksPath[0])
        ev.addString(wire::field::Path, g_settings.stacksPath);
    const std::string line = ev.line();
    writeAll(STDOUT_FILENO, line.data(), line.size());

    if (g_settings.stacksPath[0]) {
        const int out = ::open(g_settings.stacksPath,
                               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out >= 0) {
            const std::string head = "Stacks of rank " + std::to_string(g_settings.rank) +
                                     " (pid " + std::to_string(pid) + "), reason: " + reason + "\n";
            writeAll(out, head.data(), head.size());
            writeAll(out, text.data(), text.size());
            ::close(out);
        }
    }
}

void dumpThreadMain()
{
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
    ::prctl(PR_SET_NAME, "rdk-stackdump", 0, 0, 0);
    for (;;) {
        char buf[64];
        const ssize_t n = ::read(g_wakePipe[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        char reason[sizeof g_dumpReason];
        copyString(reason, sizeof reason, g_dumpReason);
        dumpAllThreads(reason);
    }
}

} // namespace

void startThreadStackDumper()
{
    if (::pipe2(g_wakePipe, O_CLOEXEC) == 0) {
        // Real-time signals are queued and unused by libtorch, NCCL and gloo.
        g_captureSignal = SIGRTMIN + 7;
        struct sigaction cap
        {
        };
        cap.sa_sigaction = onCaptureSignal;
        cap.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigemptyset(&cap.sa_mask);
        ::sigaction(g_captureSignal, &cap, nullptr);

        struct sigaction usr
        {
        };
        usr.sa_handler = onDumpSignal;
        usr.sa_flags = SA_RESTART;
        sigemptyset(&usr.sa_mask);
        // The capture signal waits until this handler returned, so that the stack of the
        // thread that took SIGUSR1 shows its own code, not this handler.
        sigaddset(&usr.sa_mask, g_captureSignal);
        ::sigaction(SIGUSR1, &usr, nullptr);
        std::thread(dumpThreadMain).detach();
    }
}

void requestThreadStackDump(const char *reason)
{
    copyString(g_dumpReason, sizeof g_dumpReason, reason ? reason : "request");
    if (g_wakePipe[1] >= 0) {
        const char c = 1;
        (void)!::write(g_wakePipe[1], &c, 1);
    }
}

} // namespace rankdeck::crash::detail
