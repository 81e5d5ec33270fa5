// SPDX-License-Identifier: GPL-3.0-or-later
//
// How a crash report is made without doing anything unsafe in a signal handler:
//   1. The handler records the faulting thread's program counters (backtrace(), whose
//      unwinder was loaded at install time and finds objects lock-free through
//      _dl_find_object) into static memory.
//   2. It forks with _Fork() (async-signal-safe, skips atfork handlers). The child is a frozen
//      copy of the crashed process: it symbolizes the PCs with libdw against its own copy of
//      the address space, in ordinary (non-handler) code, writes the `crash` event, the text
//      report and <runDir>/crash-rank<R>.txt, and exits.
//   3. The parent waits for the child with a bounded timeout. If the child does not finish
//      (say the crashing thread held the malloc lock), the parent writes a raw report itself
//      using only write(): module+offset per frame, which can be symbolized later.
//   4. The parent restores the default action and re-raises, so the exit status is the signal.
// Uncaught exceptions go through a terminate handler, which runs in ordinary context and
// symbolizes in-process; a __cxa_throw hook remembers where each exception was thrown, so the
// stack shows the throw site even when unwinding already left it.
// Stack dumps on demand use a real-time signal sent to each thread in turn (tgkill): the
// thread records its own PCs into a slot and returns; a helper thread symbolizes and emits a
// `stacks` event while the process keeps running.
#include "crash/crashhandler.h"
#include "crash/buildid.h"

#include "crash/stackdump.h"
#include "wire/wireprotocol.h"

#include <cxxabi.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

namespace rankdeck::crash {

namespace {

constexpr int kMaxFrames = 128;
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// The symbolizing child normally needs well under a second; past this the raw report is used.
constexpr int kSymbolizeTimeoutMs = 8000;
// How long one thread may take to answer a stack-dump signal.
constexpr int kCaptureTimeoutMs = 500;
// Events travel as one line; the launcher's line splitter must never cut one.
constexpr std::size_t kMaxStacksText = 48 * 1024;
constexpr int kMaxCaptureSlots = 1024;

// Everything the signal handler reads is in fixed-size static storage, written by install().
struct Settings
{
    int rank = 0;
    char runDir[2048] = {};
    char buildId[128] = {};
    char reportPath[2200] = {};
    char stacksPath[2200] = {};
    char host[256] = {};
};
Settings g_settings;

std::atomic<pid_t> g_crashingTid{0};
// RANKDECK_CRASH_RAW=1: skip symbolizing and write the raw report (for nodes where libdw
// misbehaves, and to test the fallback).
bool g_rawOnly = false;

struct CrashCapture
{
    void *pcs[kMaxFrames];
    int count = 0;
    bool firstIsExact = false;
    int signal = 0;
    int code = 0;
    void *address = nullptr;
    pid_t senderPid = 0;
    pid_t pid = 0; // of the crashed process: the symbolizing child has its own
    std::int64_t timeUs = 0; // when the signal arrived: the root cause is chosen by this time
    pid_t tid = 0;
    char threadName[32] = {};
};
CrashCapture g_crash;

// Where the last exception of each thread was thrown (see the __cxa_throw hook below).
struct ThrowRecord
{
    const std::type_info *type = nullptr;
    std::int64_t timeUs = 0;
    void *pcs[kMaxFrames];
    int count = 0;
};
thread_local ThrowRecord t_lastThrow;

int g_wakePipe[2] = {-1, -1};
char g_dumpReason[128] = "request";
int g_captureSignal = 0;

// One slot per thread asked in a dump. A thread answers only a slot that is still pending, so
// a late answer can never write into a slot that was given up on and reused.
enum SlotState : int { SlotFree = 0, SlotPending, SlotWriting, SlotDone, SlotAbandoned };
struct CaptureSlot
{
    std::atomic<pid_t> tid{0};
    std::atomic<int> state{SlotFree};
    void *pcs[kMaxFrames];
    int count = 0;
};
CaptureSlot g_slots[kMaxCaptureSlots];

pid_t currentTid()
{
    return static_cast<pid_t>(::syscall(SYS_gettid));
}

std::int64_t nowUs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void sleepMs(int ms)
{
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void copyString(char *dst, std::size_t size, const char *src)
{
    std::size_t i = 0;
    for (; src && src[i] && i + 1 < size; ++i)
        dst[i] = src[i];
    dst[i] = '\0';
}

void writeAll(int fd, const char *data, std::size_t size)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

std::uintptr_t contextPc(void *ucontext)
{
    auto *uc = static_cast<ucontext_t *>(ucontext);
#if defined(__x86_64__)
    return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
    (void)uc;
    return 0;
#endif
}

// backtrace() from a handler starts with the handler itself and the kernel's signal
// trampoline; the interrupted code begins at the PC the kernel saved in the context.
int trimToContext(void **pcs, int count, std::uintptr_t pc)
{
    if (pc == 0)
        return count;
    for (int i = 0; i < count; ++i) {
        if (reinterpret_cast<std::uintptr_t>(pcs[i]) == pc) {
            for (int j = i; j < count; ++j)
                pcs[j - i] = pcs[j];
            return count - i;
        }
    }
    // The unwinder could not cross the signal frame: the faulting PC is all we know.
    pcs[0] = reinterpret_cast<void *>(pc);
    return 1;
}

const char *signalName(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
    }
}

const char *signalDescription(int sig, int code)
{
    switch (sig) {
    case SIGSEGV:
        if (code == SEGV_MAPERR)
            return "Segmentation fault (address not mapped)";
        if (code == SEGV_ACCERR)
            return "Segmentation fault (invalid permissions for mapped object)";
        return "Segmentation fault";
    case SIGBUS:
        if (code == BUS_ADRALN)
            return "Bus error (invalid address alignment)";
        if (code == BUS_ADRERR)
            return "Bus error (nonexistent physical address, e.g. a truncated mapped file)";
        return "Bus error";
    case SIGFPE:
        if (code == FPE_INTDIV)
            return "Floating-point exception (integer divide by zero)";
        if (code == FPE_INTOVF)
            return "Floating-point exception (integer overflow)";
        return "Floating-point exception";
    case SIGILL: return "Illegal instruction";
    case SIGABRT: return "Aborted";
    default: return "Fatal signal";
    }
}

bool faultHasAddress(int sig, int code)
{
    return code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

// ---- Fixed-buffer formatting for the raw fallback (no malloc, no locale, no stdio). ----
struct RawBuffer
{
    static constexpr std::size_t kCapacity = 64 * 1024;
    char data[kCapacity];
    std::size_t size = 0;

    void clear() { size = 0; }
    void put(const char *s, std::size_t n)
    {
        for (std::size_t i = 0; i < n && size < kCapacity; ++i)
            data[size++] = s[i];
    }
    void put(const char *s) { put(s, std::strlen(s)); }
    void putChar(char c) { put(&c, 1); }
    void putDec(long long v)
    {
        char tmp[24];
        int n = 0;
        const bool neg = v < 0;
        unsigned long long u = neg ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
        do {
            tmp[n++] = static_cast<char>('0' + u % 10);
            u /= 10;
        } while (u);
        if (neg)
            putChar('-');
        while (n)
            putChar(tmp[--n]);
    }
    void putHex(std::uintptr_t v, int minDigits = 1)
    {
        static constexpr char hex[] = "0123456789abcdef";
        char tmp[20];
        int n = 0;
        do {
            tmp[n++] = hex[v & 0xf];
            v >>= 4;
        } while (v || n < minDigits);
        put("0x");
        while (n)
            putChar(tmp[--n]);
    }
    void putJsonString(const char *s, std::size_t n)
    {
        static constexpr char hex[] = "0123456789abcdef";
        putChar('"');
        for (std::size_t i = 0; i < n; ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c == '"' || c == '\\') {
                putChar('\\');
                putChar(static_cast<char>(c));
            } else if (c == '\n') {
                put("\\n");
            } else if (c < 0x20 || c == 0x7f) {
                put("\\u00");
                putChar(hex[c >> 4]);
                putChar(hex[c & 0xf]);
            } else {
                putChar(static_cast<char>(c));
            }
        }
        putChar('"');
    }
    void putJsonKey(std::string_view key)
    {
        if (size > 1)
            putChar(',');
        putJsonString(key.data(), key.size());
        putChar(':');
    }
};
RawBuffer g_rawJson;
RawBuffer g_rawLine;
RawBuffer g_rawStack;
char g_maps[512 * 1024];

// Module path and file offset for a PC, read from /proc/self/maps with plain syscalls.
bool lookupMapping(const char *maps, std::size_t mapsSize, std::uintptr_t pc, const char **path,
                   std::size_t *pathLen, std::uintptr_t *offset)
{
    std::size_t pos = 0;
    while (pos < mapsSize) {
        std::size_t end = pos;
        while (end < mapsSize && maps[end] != '\n')
            ++end;
        // "start-end perms offset dev inode   path"
        auto parseHex = [&](std::size_t &p, std::uintptr_t &out) {
            out = 0;
            while (p < end) {
                const char c = maps[p];
                int d;
                if (c >= '0' && c <= '9')
                    d = c - '0';
                else if (c >= 'a' && c <= 'f')
                    d = c - 'a' + 10;
                else
                    break;
                out = (out << 4) | static_cast<std::uintptr_t>(d);
                ++p;
            }
        };
        std::size_t p = pos;
        std::uintptr_t lo = 0, hi = 0, fileOffset = 0;
        parseHex(p, lo);
        ++p;
        parseHex(p, hi);
        if (pc >= lo && pc < hi) {
            while (p < end && maps[p] != ' ')
                ++p;
            ++p; // perms
            while (p < end && maps[p] != ' ')
                ++p;
            ++p;
            parseHex(p, fileOffset);
            for (int field = 0; field < 2 && p < end; ++field) { // dev, inode
                while (p < end && maps[p] == ' ')
                    ++p;
                while (p < end && maps[p] != ' ')
                    ++p;
            }
            while (p < end && maps[p] == ' ')
                ++p;
            *path = maps + p;
            *pathLen = end - p;
            *offset = pc - lo + fileOffset;
            return true;
        }
        pos = end + 1;
    }
    return false;
}

// The report the parent writes when the symbolizing child could not: async-signal-safe.
void writeRawReport()
{
    std::size_t mapsSize = 0;
    const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n;
        while (mapsSize < sizeof g_maps && (n = ::read(fd, g_maps + mapsSize, sizeof g_maps - mapsSize)) != 0) {
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            mapsSize += static_cast<std::size_t>(n);
        }
        ::close(fd);
    }
    RawBuffer &st = g_rawStack;
    st.clear();
    for (int i = 0; i < g_crash.count; ++i) {
        const auto pc = reinterpret_cast<std::uintptr_t>(g_crash.pcs[i]);
        if (i)
            st.putChar('\n');
        st.putChar('#');
        st.putDec(i);
        st.putChar(' ');
        st.putHex(pc, 16);
        st.put(" in ??");
        const char *path = nullptr;
        std::size_t pathLen = 0;
        std::uintptr_t offset = 0;
        if (lookupMapping(g_maps, mapsSize, pc, &path, &pathLen, &offset) && pathLen > 0) {
            std::size_t base = pathLen;
            while (base > 0 && path[base - 1] != '/')
                --base;
            st.put(" [");
            st.put(path + base, pathLen - base);
            st.putChar('+');
            st.putHex(offset);
            st.putChar(']');
        }
    }

    RawBuffer &msg = g_rawLine; // reused below for the event line; the message is copied first
    msg.clear();
    msg.put(signalDescription(g_crash.signal, g_crash.code));
    if (faultHasAddress(g_crash.signal, g_crash.code)) {
        msg.put(" at address ");
        msg.putHex(reinterpret_cast<std::uintptr_t>(g_crash.address));
    }
    msg.put(" (stack not symbolized: the symbolizer did not finish)");

    RawBuffer &js = g_rawJson;
    js.clear();
    js.putChar('{');
    js.putJsonKey(wire::field::Type);
    js.putJsonString(wire::event::Crash.data(), wire::event::Crash.size());
    js.putJsonKey(wire::field::Time);
    js.putDec(g_crash.timeUs);
    js.putJsonKey(wire::field::Rank);
    js.putDec(g_settings.rank);
    js.putJsonKey(wire::field::Kind);
    js.putJsonString("signal", 6);
    js.putJsonKey(wire::field::Signal);
    js.putDec(g_crash.signal);
    js.putJsonKey(wire::field::SignalName);
    js.put("\"");
    js.put(signalName(g_crash.signal));
    js.put("\"");
    js.putJsonKey(wire::field::Message);
    js.putJsonString(msg.data, msg.size);
    js.putJsonKey(wire::field::Thread);
    {
        RawBuffer &t = g_rawLine;
        t.clear();
        t.put(g_crash.threadName);
        t.put(" (tid ");
        t.putDec(g_crash.tid);
        t.put(g_crash.tid == ::getpid() ? ", main thread)" : ")");
        js.putJsonString(t.data, t.size);
    }
    js.putJsonKey(wire::field::Pid);
    js.putDec(::getpid());
    js.putJsonKey(wire::field::Stack);
    js.putJsonString(st.data, st.size);
    js.putJsonKey(wire::field::BuildId);
    js.putJsonString(g_settings.buildId, std::strlen(g_settings.buildId));
    js.putChar('}');

    RawBuffer &line = g_rawLine;
    line.clear();
    line.put(wire::kMarker.data(), wire::kMarker.size());
    const std::uint32_t crc = wire::crc32(std::string_view(js.data, js.size));
    static constexpr char hex[] = "0123456789abcdef";
    for (int shift = 28; shift >= 0; shift -= 4)
        line.putChar(hex[(crc >> shift) & 0xf]);
    line.putChar(' ');
    line.put(js.data, js.size);
    line.putChar('\n');
    writeAll(STDOUT_FILENO, line.data, line.size);

    static const char header[] = "rankdeck-worker: fatal signal, raw stack (most recent call first):\n";
    writeAll(STDERR_FILENO, header, sizeof header - 1);
    writeAll(STDERR_FILENO, st.data, st.size);
    writeAll(STDERR_FILENO, "\n", 1);
    if (g_settings.reportPath[0]) {
        const int out = ::open(g_settings.reportPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out >= 0) {
            writeAll(out, header, sizeof header - 1);
            writeAll(out, st.data, st.size);
            writeAll(out, "\n", 1);
            writeAll(out, line.data, line.size);
            ::close(out);
        }
    }
}

// ---- The symbolized report (ordinary context: the forked child or the terminate handler). --

struct Report
{
    std::string kind;          // "signal" or "exception"
    int signal = 0;
    std::string signalName;
    std::string exceptionType;
    std::string message;
    std::string thread;
    pid_t pid = 0;
    std::int64_t timeUs = 0;
    std::vector<StackFrame> frames;
};

std::string hostName()
{
    return g_settings.host;
}

// Pending log lines are in stdio's buffer; the report must not overtake them. Only try: the
// lock may belong to a thread that will never release it.
void flushStdioIfPossible()
{
    for (FILE *f : {stdout, stderr}) {
        if (ftrylockfile(f) == 0) {
            fflush_unlocked(f);
            funlockfile(f);
        }
    }
}

void emitReport(const Report &r)
{
    const int own = firstOwnFrame(r.frames);
    std::string stack;
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        if (i)
            stack += '\n';
        stack += formatFrame(static_cast<int>(i), r.frames[i]);
    }

    wire::WireEventWriter ev(wire::event::Crash, g_settings.rank, r.timeUs > 0 ? r.timeUs : nowUs());
    ev.addString(wire::field::Kind, r.kind);
    if (r.kind == "signal") {
        ev.addInt(wire::field::Signal, r.signal);
        ev.addString(wire::field::SignalName, r.signalName);
    } else {
        ev.addString(wire::field::ExceptionType, r.exceptionType);
    }
    ev.addString(wire::field::Message, r.message);
    ev.addString(wire::field::Thread, r.thread);
    ev.addInt(wire::field::Pid, r.pid);
    ev.addString(wire::field::Stack, stack);
    ev.addInt(wire::field::OwnFrame, own);
    ev.addString(wire::field::BuildId, g_settings.buildId);
    if (g_settings.reportPath[0])
        ev.addString(wire::field::Path, g_settings.reportPath);
    const std::string line = ev.line();

    std::string text = "rankdeck-worker: rank " + std::to_string(g_settings.rank);
    if (r.kind == "signal")
        text += " crashed: " + r.signalName + ": " + r.message + "\n";
    else
        text += " terminated by an uncaught exception " + r.exceptionType + ": " + r.message + "\n";
    text += "  thread " + r.thread + ", pid " + std::to_string(r.pid) + ", host " + hostName() +
        ", build id " + (g_settings.buildId[0] ? g_settings.buildId : "unknown") + "\n";
    text += "Stack (most recent call first):\n";
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        text += static_cast<int>(i) == own ? "→ " : "  ";
        text += formatFrame(static_cast<int>(i), r.frames[i]);
        text += '\n';
    }

    flushStdioIfPossible();
    writeAll(STDOUT_FILENO, line.data(), line.size());
    writeAll(STDERR_FILENO, text.data(), text.size());
    if (g_settings.reportPath[0]) {
        const int out = ::open(g_settings.reportPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out >= 0) {
            writeAll(out, text.data(), text.size());
            // The event as the last line lets the launcher read the report back from the file
            // when the connection to the node was lost.
            writeAll(out, line.data(), line.size());
            ::close(out);
        }
    }
}

std::string threadLabel(const char *name, pid_t tid, pid_t pid)
{
    std::string s = (name && *name) ? name : "?";
    s += " (tid " + std::to_string(tid);
    s += tid == pid ? ", main thread)" : ")";
    return s;
}

std::string signalMessage()
{
    std::string msg = signalDescription(g_crash.signal, g_crash.code);
    if (faultHasAddress(g_crash.signal, g_crash.code)) {
        char addr[40];
        std::snprintf(addr, sizeof addr, " at address 0x%" PRIxPTR, reinterpret_cast<std::uintptr_t>(g_crash.address));
        msg += addr;
    } else if (g_crash.code <= 0 && g_crash.senderPid > 0) {
        msg += g_crash.senderPid == g_crash.pid ? " (raised by the process itself)"
                                                : " (sent by pid " + std::to_string(g_crash.senderPid) + ")";
    }
    return msg;
}

// Runs in the forked child: a single-threaded frozen copy of the crashed process.
[[noreturn]] void symbolizeInChild()
{
    for (int sig : kFatalSignals)
        ::signal(sig, SIG_DFL);
    ::alarm(kSymbolizeTimeoutMs / 1000 + 1);
    Report r;
    r.kind = "signal";
    r.signal = g_crash.signal;
    r.signalName = signalName(g_crash.signal);
    r.message = signalMessage();
    r.thread = threadLabel(g_crash.threadName, g_crash.tid, g_crash.pid);
    r.pid = g_crash.pid;
    r.timeUs = g_crash.timeUs;
    {
        StackSymbolizer symbolizer;
        r.frames = symbolizer.symbolize(g_crash.pcs, g_crash.count, g_crash.firstIsExact);
    }
    emitReport(r);
    ::_exit(0);
}

void dieBySignal(int sig)
{
    struct sigaction sa{};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
    // Inside the handler the signal is blocked: it stays pending and is delivered with the
    // default action as soon as the handler returns. Outside a handler it kills at once.
    ::syscall(SYS_tgkill, ::getpid(), currentTid(), sig);
}

[[noreturn]] void waitToBeKilled()
{
    for (;;)
        ::pause();
}

void onFatalSignal(int sig, siginfo_t *info, void *ucontext)
{
    const int savedErrno = errno;
    const pid_t tid = currentTid();
    pid_t expected = 0;
    if (!g_crashingTid.compare_exchange_strong(expected, tid)) {
        if (expected == tid) {
            // A fault while reporting, or abort() after the terminate handler reported.
            dieBySignal(sig);
            errno = savedErrno;
            return;
        }
        // Another thread is already reporting and will end the process.
        waitToBeKilled();
    }

    g_crash.count = ::backtrace(g_crash.pcs, kMaxFrames);
    g_crash.count = trimToContext(g_crash.pcs, g_crash.count, contextPc(ucontext));
    g_crash.firstIsExact = true;
    g_crash.signal = sig;
    g_crash.code = info ? info->si_code : 0;
    g_crash.address = info ? info->si_addr : nullptr;
    g_crash.senderPid = (info && info->si_code <= 0) ? info->si_pid : 0;
    g_crash.tid = tid;
    g_crash.pid = ::getpid();
    g_crash.timeUs = nowUs();
    ::prctl(PR_GET_NAME, g_crash.threadName, 0, 0, 0);

    bool reported = false;
    const pid_t child = g_rawOnly ? -1 : _Fork();
    if (child == 0)
        symbolizeInChild();
    if (child > 0) {
        bool reaped = false;
        for (int waited = 0; waited < kSymbolizeTimeoutMs; waited += 10) {
            int status = 0;
            const pid_t r = ::waitpid(child, &status, WNOHANG);
            if (r == child) {
                reaped = true;
                reported = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                break;
            }
            if (r < 0 && errno != EINTR)
                break;
            sleepMs(10);
        }
        if (!reaped) {
            ::kill(child, SIGKILL);
            int status = 0;
            while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }
    if (!reported)
        writeRawReport();
    dieBySignal(sig);
    errno = savedErrno;
}

// c10::Error::what() appends a long C++ backtrace of its own ("frame #0: …"); the report has a
// better stack already, so keep only the message and the "Exception raised from" line.
std::string trimExceptionMessage(std::string msg)
{
    const std::size_t frames = msg.find("\nframe #");
    if (frames != std::string::npos)
        msg.resize(frames);
    constexpr std::string_view trailer = " (most recent call first):";
    if (msg.size() >= trailer.size() && msg.compare(msg.size() - trailer.size(), trailer.size(), trailer) == 0)
        msg.resize(msg.size() - trailer.size());
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
        msg.pop_back();
    return msg;
}

[[noreturn]] void onTerminate()
{
    const pid_t tid = currentTid();
    pid_t expected = 0;
    if (!g_crashingTid.compare_exchange_strong(expected, tid)) {
        if (expected != tid)
            waitToBeKilled();
        ::signal(SIGABRT, SIG_DFL);
        std::abort();
    }

    Report r;
    r.kind = "exception";
    char name[32] = {};
    ::prctl(PR_GET_NAME, name, 0, 0, 0);
    r.thread = threadLabel(name, tid, ::getpid());
    r.pid = ::getpid();
    r.timeUs = nowUs();
    const std::type_info *type = abi::__cxa_current_exception_type();
    if (type) {
        int status = 0;
        std::unique_ptr<char, decltype(&std::free)> demangled(
            abi::__cxa_demangle(type->name(), nullptr, nullptr, &status), &std::free);
        r.exceptionType = (status == 0 && demangled) ? demangled.get() : type->name();
        try {
            throw;
        } catch (const std::exception &e) {
            r.message = trimExceptionMessage(e.what());
        } catch (...) {
            r.message = "(the exception is not a std::exception; no message)";
        }
    } else {
        r.exceptionType = "std::terminate";
        r.message = "std::terminate() called without an active exception";
    }

    void *pcs[kMaxFrames];
    int count = 0;
    if (type && t_lastThrow.type == type && t_lastThrow.count > 0) {
        r.timeUs = t_lastThrow.timeUs;
        count = t_lastThrow.count;
        std::memcpy(pcs, t_lastThrow.pcs, sizeof(void *) * static_cast<std::size_t>(count));
    } else {
        count = ::backtrace(pcs, kMaxFrames);
        if (count > 1) { // drop this handler's own frame
            std::memmove(pcs, pcs + 1, sizeof(void *) * static_cast<std::size_t>(count - 1));
            --count;
        }
    }
    {
        StackSymbolizer symbolizer;
        r.frames = symbolizer.symbolize(pcs, count, false);
    }
    emitReport(r);
    dieBySignal(SIGABRT);
    std::abort();
}

// ---- Stack dumps on demand. ----

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
    requestStackDump("SIGUSR1");
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
                            const std::vector<std::vector<StackFrame>> &frames, std::size_t maxFrames)
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
            frames[t] = symbolizer.symbolize(threads[t].pcs.data(), static_cast<int>(threads[t].pcs.size()), true);
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
        const int out = ::open(g_settings.stacksPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out >= 0) {
            const std::string head = "Stacks of rank " + std::to_string(g_settings.rank) + " (pid " +
                std::to_string(pid) + "), reason: " + reason + "\n";
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

void makeDirectories(const std::string &path)
{
    for (std::size_t pos = 1; pos <= path.size(); ++pos) {
        if (pos == path.size() || path[pos] == '/')
            ::mkdir(path.substr(0, pos).c_str(), 0700);
    }
}

} // namespace

void install(const Config &config)
{
    g_settings.rank = config.rank;
    copyString(g_settings.buildId, sizeof g_settings.buildId, config.buildId.c_str());
    copyString(g_settings.runDir, sizeof g_settings.runDir, config.runDir.c_str());
    if (!config.runDir.empty()) {
        makeDirectories(config.runDir);
        const std::string base = config.runDir + "/";
        copyString(g_settings.reportPath, sizeof g_settings.reportPath,
                   (base + "crash-rank" + std::to_string(config.rank) + ".txt").c_str());
        copyString(g_settings.stacksPath, sizeof g_settings.stacksPath,
                   (base + "stacks-rank" + std::to_string(config.rank) + ".txt").c_str());
    } else {
        g_settings.reportPath[0] = '\0';
        g_settings.stacksPath[0] = '\0';
    }
    const char *raw = std::getenv("RANKDECK_CRASH_RAW");
    g_rawOnly = raw && std::strcmp(raw, "1") == 0;
    if (::gethostname(g_settings.host, sizeof g_settings.host - 1) != 0)
        copyString(g_settings.host, sizeof g_settings.host, "?");

    static std::once_flag once;
    std::call_once(once, [] {
        // A report is one line of up to ~50 KiB. A pipe writer that finds the pipe full waits
        // with the pipe unlocked, and another thread's line could land inside the report; a
        // bigger pipe buffer (the unprivileged maximum is 1 MiB) makes that all but impossible.
        for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
            const int size = ::fcntl(fd, F_GETPIPE_SZ);
            if (size > 0 && size < (1 << 20))
                (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
        }

        // The first backtrace() loads libgcc_s with dlopen, which must not happen in a handler.
        void *warmup[4];
        (void)::backtrace(warmup, 4);

        // A stack overflow on the main thread still gets a report.
        stack_t alt{};
        alt.ss_size = 256 * 1024;
        alt.ss_sp = std::malloc(alt.ss_size);
        if (alt.ss_sp)
            ::sigaltstack(&alt, nullptr);

        struct sigaction sa{};
        sa.sa_sigaction = onFatalSignal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (int sig : kFatalSignals)
            ::sigaction(sig, &sa, nullptr);
        std::set_terminate(onTerminate);

        if (::pipe2(g_wakePipe, O_CLOEXEC) == 0) {
            // Real-time signals are queued and unused by libtorch, NCCL and gloo.
            g_captureSignal = SIGRTMIN + 7;
            struct sigaction cap{};
            cap.sa_sigaction = onCaptureSignal;
            cap.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
            sigemptyset(&cap.sa_mask);
            ::sigaction(g_captureSignal, &cap, nullptr);

            struct sigaction usr{};
            usr.sa_handler = onDumpSignal;
            usr.sa_flags = SA_RESTART;
            sigemptyset(&usr.sa_mask);
            // The capture signal waits until this handler returned, so that the stack of the
            // thread that took SIGUSR1 shows its own code, not this handler.
            sigaddset(&usr.sa_mask, g_captureSignal);
            ::sigaction(SIGUSR1, &usr, nullptr);
            std::thread(dumpThreadMain).detach();
        }
    });
}

void requestStackDump(const char *reason)
{
    copyString(g_dumpReason, sizeof g_dumpReason, reason ? reason : "request");
    if (g_wakePipe[1] >= 0) {
        const char c = 1;
        (void)!::write(g_wakePipe[1], &c, 1);
    }
}

std::string ownBuildId()
{
    return readGnuBuildId();
}

void applyNcclDefaults(const std::string &runDir)
{
    // 1: a failed or timed-out collective aborts the communicator and ends the process (with a
    // crash report), instead of leaving it hanging until the launcher kills it.
    ::setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 0);
    // The flight recorder keeps the last collectives of each rank; on a timeout it is dumped,
    // which shows which rank did not join which collective.
    ::setenv("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000", 0);
    ::setenv("TORCH_FR_BUFFER_SIZE", "2000", 0);
    ::setenv("TORCH_NCCL_DUMP_ON_TIMEOUT", "1", 0);
    if (!runDir.empty()) {
        makeDirectories(runDir);
        // torch appends the rank: <runDir>/nccl-trace-rank<R>.
        ::setenv("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", (runDir + "/nccl-trace-rank").c_str(), 0);
    }
}

} // namespace rankdeck::crash

// Remembers where each exception was thrown, so that the report of an uncaught exception shows
// the throw site even when the stack was unwound before std::terminate ran (noexcept
// boundaries, rethrows). Defined in the executable, it takes precedence over libstdc++'s
// __cxa_throw for every throw in the process, libtorch's included; it costs one backtrace()
// per throw, which is small next to the cost of the throw itself.
// The signature is the one libstdc++'s headers declare (the type as void *).
extern "C" void __cxa_throw(void *object, void *type, void (*destructor)(void *))
{
    using Throw = void (*)(void *, void *, void (*)(void *));
    static Throw realThrow = reinterpret_cast<Throw>(::dlsym(RTLD_NEXT, "__cxa_throw"));
    auto &record = rankdeck::crash::t_lastThrow;
    const int n = ::backtrace(record.pcs, rankdeck::crash::kMaxFrames);
    // Frame 0 is this hook; the throw site is its caller.
    record.count = n > 1 ? n - 1 : 0;
    if (n > 1)
        std::memmove(record.pcs, record.pcs + 1, sizeof(void *) * static_cast<std::size_t>(n - 1));
    record.type = static_cast<const std::type_info *>(type);
    record.timeUs = rankdeck::crash::nowUs();
    realThrow(object, type, destructor);
    __builtin_unreachable();
}
