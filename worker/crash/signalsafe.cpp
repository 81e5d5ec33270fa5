// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/signalsafe.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>

namespace rankdeck::crash::detail {

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
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "signal";
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
    case SIGILL:
        return "Illegal instruction";
    case SIGABRT:
        return "Aborted";
    default:
        return "Fatal signal";
    }
}

bool faultHasAddress(int sig, int code)
{
    return code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

} // namespace rankdeck::crash::detail
