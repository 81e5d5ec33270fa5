// SPDX-License-Identifier: GPL-3.0-or-later
//
// How a crash report is made without doing anything unsafe in a signal handler:
//   1. The handler records the faulting thread's program counters (backtrace(), whose
//      unwinder was loaded at install time and finds objects lock-free through
//      _dl_find_object) into static memory (crash/crashstate.h).
//   2. It forks with _Fork() (async-signal-safe, skips atfork handlers). The child is a frozen
//      copy of the crashed process: it symbolizes the PCs with libdw against its own copy of
//      the address space, in ordinary (non-handler) code, writes the `crash` event, the text
//      report and <runDir>/crash-rank<R>.txt, and exits (crash/crashreport.h).
//   3. The parent waits for the child with a bounded timeout. If the child does not finish
//      (say the crashing thread held the malloc lock), the parent writes a raw report itself
//      using only write(): module+offset per frame, which can be symbolized later
//      (crash/rawcrashreport.h).
//   4. The parent restores the default action and re-raises, so the exit status is the signal.
// Uncaught exceptions go through a terminate handler, which runs in ordinary context and
// symbolizes in-process; a __cxa_throw hook remembers where each exception was thrown, so the
// stack shows the throw site even when unwinding already left it.
// Stack dumps on demand are crash/threadstackdumper.h.
#include "crash/crashhandler.h"
#include "crash/buildid.h"

#include "crash/crashreport.h"
#include "crash/crashstate.h"
#include "crash/rawcrashreport.h"
#include "crash/signalsafe.h"
#include "crash/stackdump.h"
#include "crash/threadstackdumper.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>

namespace rankdeck::crash {

using namespace detail;

namespace {

std::atomic<pid_t> g_crashingTid{0};
// RANKDECK_CRASH_RAW=1: skip symbolizing and write the raw report (for nodes where libdw
// misbehaves, and to test the fallback).
bool g_rawOnly = false;

// Where the last exception of each thread was thrown (see the __cxa_throw hook below).
struct ThrowRecord
{
    const std::type_info *type = nullptr;
    std::int64_t timeUs = 0;
    void *pcs[kMaxFrames];
    int count = 0;
};
thread_local ThrowRecord t_lastThrow;

void dieBySignal(int sig)
{
    struct sigaction sa
    {
    };
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
        symbolizeCrashInChild();
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
        writeRawCrashReport();
    dieBySignal(sig);
    errno = savedErrno;
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

    CrashReport r;
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
    emitCrashReport(r);
    dieBySignal(SIGABRT);
    std::abort();
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

        struct sigaction sa
        {
        };
        sa.sa_sigaction = onFatalSignal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (int sig : kFatalSignals)
            ::sigaction(sig, &sa, nullptr);
        std::set_terminate(onTerminate);

        startThreadStackDumper();
    });
}

void requestStackDump(const char *reason)
{
    requestThreadStackDump(reason);
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
    const int n = ::backtrace(record.pcs, rankdeck::crash::detail::kMaxFrames);
    // Frame 0 is this hook; the throw site is its caller.
    record.count = n > 1 ? n - 1 : 0;
    if (n > 1)
        std::memmove(record.pcs, record.pcs + 1, sizeof(void *) * static_cast<std::size_t>(n - 1));
    record.type = static_cast<const std::type_info *>(type);
    record.timeUs = rankdeck::crash::detail::nowUs();
    realThrow(object, type, destructor);
    __builtin_unreachable();
}
