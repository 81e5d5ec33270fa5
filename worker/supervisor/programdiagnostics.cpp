// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/programdiagnostics.h"

#include "supervisor/wallclock.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rankdeck::supervisor {

namespace {

std::string signalName(int sig)
{
    if (const char *abbrev = sigabbrev_np(sig))
        return std::string("SIG") + abbrev;
    return "signal " + std::to_string(sig);
}

void writeFile(const std::string &path, const std::string &text)
{
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    // A new file of ours, never through a link someone left under the name (issue 29).
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    std::string_view rest = text;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd, rest.data(), rest.size());
        if (n <= 0)
            break;
        rest.remove_prefix(size_t(n));
    }
    ::close(fd);
    // Readers (the CLI, the launcher) see the old dump or the new one, never half of one.
    if (rest.empty())
        ::rename(tmp.c_str(), path.c_str());
    else
        ::unlink(tmp.c_str());
}

} // namespace

void ProgramDiagnostics::prepare(const std::string &runDirectory, int rank)
{
    m_runDirectory = runDirectory;
    const std::string r = std::to_string(rank);
    m_stacksPath = runDirectory + "/stacks-rank" + r + ".txt";
    // Python's own dump of every thread at a fatal signal goes to the program's stderr, which
    // the launcher parses; the user's choice (even 0) wins.
    if (!std::getenv("PYTHONFAULTHANDLER"))
        setenv("PYTHONFAULTHANDLER", "1", 1);
    m_errorFile.prepare(runDirectory + "/error-rank" + r + ".json");
    m_python.prepare(runDirectory, rank);
    m_oomBefore = m_oom.read();
}

void ProgramDiagnostics::attach(pid_t pid)
{
    m_pid = pid;
    const char *off = std::getenv("RANKDECK_NO_PTRACE");
    if (off && *off && std::string_view(off) != "0")
        return;
    std::string why;
    if (!m_tracer.seize(pid, &why)) {
        const std::string line = "rankdeck-supervisor: cannot trace the program (" + why +
                                 "): no native stacks at a crash or on dump-stacks\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
}

bool ProgramDiagnostics::isPython() const
{
    if (m_python.registered(m_pid))
        return true;
    const std::string &exe = m_tracer.fatal().executable;
    return exe.compare(0, 6, "python") == 0 || exe.compare(0, 4, "pypy") == 0;
}

wire::WireEventWriter ProgramDiagnostics::crashEvent(int rank, int sig,
                                                     const std::string &programName)
{
    const FatalCapture &fatal = m_tracer.fatal();
    const bool captured = fatal.signal == sig && fatal.signal != 0;
    bool oom = false;
    if (sig == SIGKILL && m_oomBefore >= 0) {
        const std::int64_t after = m_oom.read();
        oom = after > m_oomBefore;
    }
    wire::WireEventWriter ev(wire::event::Crash, rank, captured ? fatal.timeUs : wallUs());
    ev.addString(wire::field::Kind, "signal")
        .addInt(wire::field::Signal, sig)
        .addString(wire::field::SignalName, signalName(sig));
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    ev.addString(wire::field::Host, host).addInt(wire::field::Pid, m_pid);
    // What ran when it died: `sh -c 'exec trainer'` is the trainer by then.
    const std::string &name =
        captured && !fatal.executable.empty() ? fatal.executable : programName;
    ev.addString(wire::field::Message,
                 oom ? name + " was killed by the out-of-memory killer (SIGKILL)"
                     : name + " was killed by " + signalName(sig));
    if (oom)
        ev.addBool(wire::field::OutOfMemory, true);
    if (captured) {
        ev.addString(wire::field::Thread, fatal.thread);
        if (!fatal.stack.empty()) {
            ev.addString(wire::field::Stack, fatal.stack);
            // For a Python program the interpreter is the executable: none of its frames are
            // the user's code (that is in the faulthandler dump on stderr).
            ev.addInt(wire::field::OwnFrame, isPython() ? -1 : fatal.ownFrame);
        }
    }
    return ev;
}

bool ProgramDiagnostics::addErrorFields(wire::WireEventWriter &event) const
{
    const ElasticError e = m_errorFile.read();
    if (!e.valid)
        return false;
    if (!e.exceptionType.empty())
        event.addString(wire::field::ExceptionType, e.exceptionType);
    event.addString(wire::field::Message, e.message);
    if (!e.traceback.empty())
        event.addString(wire::field::Python, e.traceback);
    event.addString(wire::field::ErrorFile, m_errorFile.path());
    return true;
}

wire::WireEventWriter ProgramDiagnostics::stacksEvent(int rank, const std::string &reason,
                                                      const std::function<void()> &pump,
                                                      const std::function<void(pid_t, int)> &other,
                                                      const std::function<bool()> &gone)
{
    const std::int64_t ts = wallUs();
    // Python first, while every thread runs: its dump needs the program to take a signal.
    const pid_t python = m_python.registeredProcess(m_pid);
    const std::string pythonText = python > 0 ? m_python.dump(python, pump, gone) : std::string();
    const std::string native =
        m_tracer.tracing() && !gone() ? m_tracer.dumpAllThreads(other) : std::string();

    std::string file = "Stacks of rank " + std::to_string(rank) + " (pid " + std::to_string(m_pid) +
                       "), reason: " + reason + "\n" + native;
    if (!m_tracer.tracing())
        file += "(no native stacks: the program is not traced)\n";
    if (!pythonText.empty())
        file +=
            "\nPython stacks (faulthandler, pid " + std::to_string(python) + "):\n" + pythonText;
    writeFile(m_stacksPath, file);

    wire::WireEventWriter ev(wire::event::Stacks, rank, ts);
    ev.addString(wire::field::Reason, reason)
        .addInt(wire::field::Pid, m_pid)
        .addString(wire::field::Stack, native);
    if (!pythonText.empty())
        ev.addString(wire::field::Python, pythonText);
    ev.addString(wire::field::Path, m_stacksPath);
    return ev;
}

void ProgramDiagnostics::handOnWorkerFaults(const std::function<void(std::string_view)> &write)
{
    if (m_runDirectory.empty())
        return;
    std::vector<pid_t> ranks = m_python.registeredPids();
    ranks.push_back(m_pid);
    DIR *dir = opendir(m_runDirectory.c_str());
    if (!dir)
        return;
    std::vector<std::string> found;
    while (const dirent *entry = readdir(dir)) {
        const std::string_view name(entry->d_name);
        constexpr std::string_view prefix = "worker-fault-", suffix = ".txt";
        if (name.size() <= prefix.size() + suffix.size() ||
            name.substr(0, prefix.size()) != prefix ||
            name.substr(name.size() - suffix.size()) != suffix)
            continue;
        // worker-fault-<rank pid>-<worker pid>.txt: only this rank's workers.
        const pid_t owner =
            pid_t(std::strtol(std::string(name.substr(prefix.size())).c_str(), nullptr, 10));
        if (owner > 0 && std::find(ranks.begin(), ranks.end(), owner) != ranks.end())
            found.emplace_back(name);
    }
    closedir(dir);
    std::sort(found.begin(), found.end());
    for (const std::string &name : found) {
        const std::string path = m_runDirectory + "/" + name;
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue;
        std::string text;
        char buffer[65536];
        // A dump is a few KiB; the bound keeps a runaway file from filling the launcher's record.
        constexpr std::size_t kMaxBytes = 1 << 20;
        for (ssize_t n; text.size() < kMaxBytes && (n = read(fd, buffer, sizeof buffer)) > 0;)
            text.append(buffer, std::size_t(n));
        close(fd);
        unlink(path.c_str());
        if (!text.empty())
            write(text);
    }
}

} // namespace rankdeck::supervisor
