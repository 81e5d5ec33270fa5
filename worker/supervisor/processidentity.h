// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which process a pid meant when the supervisor saw it. The supervisor signals the program's
// tree from a snapshot of /proc (processtree.h), read one process at a time while pids are
// freed and reused: a pid from the snapshot may name another process by the time the signal goes
// out. A process is named by its pid and its start time (field 22 of /proc/PID/stat, clock ticks
// after boot), which a later process with the same pid does not share, and the signal goes only
// where both still match, through a pidfd (Linux >= 5.3) where there is one, so that the process
// checked is the process signalled.
//
// The plain C++ twin of core/util/processidentity.h: worker/ may include nothing of core/ but
// core/wire/ (scripts/check-layout.py), and core/util/ nothing of core/. Header-only, so that a
// test can use it without the supervisor's sources.
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace rankdeck::supervisor {

struct ProcStat
{
    char state = 0;
    pid_t ppid = 0;
    pid_t pgrp = 0;
    pid_t session = 0;
    unsigned long long startTicks = 0; // field 22
};

// /proc/PID/stat's text. The command name (field 2) may hold spaces, ')' and newlines, so the
// fields are counted from the last ')'.
inline bool parseProcStat(std::string_view text, ProcStat *out)
{
    const size_t close = text.rfind(')');
    if (close == std::string_view::npos || text.find('(') == std::string_view::npos)
        return false;
    std::string_view rest = text.substr(close + 1);
    std::string_view fields[20];
    for (std::string_view &field : fields) {
        const size_t start = rest.find_first_not_of(' ');
        if (start == std::string_view::npos)
            return false;
        rest.remove_prefix(start);
        const size_t end = rest.find_first_of(" \n");
        field = rest.substr(0, end);
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
    const auto number = [](std::string_view f, long long *v) {
        char buf[32];
        if (f.empty() || f.size() >= sizeof buf)
            return false;
        f.copy(buf, f.size());
        buf[f.size()] = '\0';
        char *end = nullptr;
        *v = std::strtoll(buf, &end, 10);
        return *end == '\0';
    };
    long long ppid = 0, pgrp = 0, session = 0, start = 0;
    if (fields[0].size() != 1 || !number(fields[1], &ppid) || !number(fields[2], &pgrp) ||
        !number(fields[3], &session) || !number(fields[19], &start) || start < 0)
        return false;
    *out = ProcStat{fields[0][0], pid_t(ppid), pid_t(pgrp), pid_t(session),
                    static_cast<unsigned long long>(start)};
    return true;
}

// False when there is no such process.
inline bool readProcStat(pid_t pid, ProcStat *out)
{
    if (pid <= 0)
        return false;
    char path[48];
    std::snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[2048];
    ssize_t n;
    do {
        n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    return n > 0 && parseProcStat(std::string_view(buf, size_t(n)), out);
}

// -1 with ENOSYS or EPERM where there are no pidfds (an old kernel, a seccomp filter).
inline int pidfdOpen(pid_t pid)
{
#ifdef SYS_pidfd_open
    return int(::syscall(SYS_pidfd_open, pid, 0u));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

inline int pidfdSendSignal(int fd, int signal)
{
#ifdef SYS_pidfd_send_signal
    return int(::syscall(SYS_pidfd_send_signal, fd, signal, nullptr, 0u));
#else
    (void)fd;
    (void)signal;
    errno = ENOSYS;
    return -1;
#endif
}

// Sends `signal` to `pid` only if it is still the process that started at `startTicks`; false
// when it is not (or has ended). Pids 0 and 1 are never signalled: kill(0) is our own group.
inline bool signalIfSame(pid_t pid, unsigned long long startTicks, int signal)
{
    if (pid <= 1 || startTicks == 0)
        return false;
    // Opened before the check: should the pid be reused after it, the pidfd still names the
    // process the check read, which has then ended, and the signal fails instead of going astray.
    const int fd = pidfdOpen(pid);
    ProcStat s;
    bool sent = false;
    if (readProcStat(pid, &s) && s.startTicks == startTicks)
        sent = fd >= 0 ? pidfdSendSignal(fd, signal) == 0 : ::kill(pid, signal) == 0;
    if (fd >= 0)
        ::close(fd);
    return sent;
}

} // namespace rankdeck::supervisor
