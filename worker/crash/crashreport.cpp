// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/crashreport.h"

#include "crash/crashstate.h"
#include "crash/signalsafe.h"
#include "wire/wireprotocol.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string_view>

namespace rankdeck::crash::detail {

namespace {

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

std::string signalMessage()
{
    std::string msg = signalDescription(g_crash.signal, g_crash.code);
    if (faultHasAddress(g_crash.signal, g_crash.code)) {
        char addr[40];
        std::snprintf(addr, sizeof addr, " at address 0x%" PRIxPTR,
                      reinterpret_cast<std::uintptr_t>(g_crash.address));
        msg += addr;
    } else if (g_crash.code <= 0 && g_crash.senderPid > 0) {
        msg += g_crash.senderPid == g_crash.pid
                   ? " (raised by the process itself)"
                   : " (sent by pid " + std::to_string(g_crash.senderPid) + ")";
    }
    return msg;
}

} // namespace

void emitCrashReport(const CrashReport &r)
{
    const int own = firstOwnFrame(r.frames);
    std::string stack;
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        if (i)
            stack += '\n';
        stack += formatFrame(static_cast<int>(i), r.frames[i]);
    }

    wire::WireEventWriter ev(wire::event::Crash, g_settings.rank,
                             r.timeUs > 0 ? r.timeUs : nowUs());
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
        const int out = ::open(g_settings.reportPath,
                               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
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

// c10::Error::what() appends a long C++ backtrace of its own ("frame #0: …"); the report has a
// better stack already, so keep only the message and the "Exception raised from" line.
std::string trimExceptionMessage(std::string msg)
{
    const std::size_t frames = msg.find("\nframe #");
    if (frames != std::string::npos)
        msg.resize(frames);
    constexpr std::string_view trailer = " (most recent call first):";
    if (msg.size() >= trailer.size() &&
        msg.compare(msg.size() - trailer.size(), trailer.size(), trailer) == 0)
        msg.resize(msg.size() - trailer.size());
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
        msg.pop_back();
    return msg;
}

[[noreturn]] void symbolizeCrashInChild()
{
    for (int sig : kFatalSignals)
        ::signal(sig, SIG_DFL);
    ::alarm(kSymbolizeTimeoutMs / 1000 + 1);
    CrashReport r;
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
    emitCrashReport(r);
    ::_exit(0);
}

} // namespace rankdeck::crash::detail
