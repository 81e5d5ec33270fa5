// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/processidentity.h"

#include "util/translation.h"

#include <QFile>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rankdeck {

namespace {

// Raw syscalls: glibc has wrappers only from 2.36 on, and the build must run on older nodes'
// headers too. ENOSYS (old kernel) and EPERM (a seccomp filter) mean "no pidfds here".
int pidfdOpen(qint64 pid)
{
#ifdef SYS_pidfd_open
    return int(::syscall(SYS_pidfd_open, pid_t(pid), 0u));
#else
    Q_UNUSED(pid);
    errno = ENOSYS;
    return -1;
#endif
}

int pidfdSendSignal(int fd, int signal)
{
#ifdef SYS_pidfd_send_signal
    return int(::syscall(SYS_pidfd_send_signal, fd, signal, nullptr, 0u));
#else
    Q_UNUSED(fd);
    Q_UNUSED(signal);
    errno = ENOSYS;
    return -1;
#endif
}

bool parseNumber(QByteArrayView field, qint64 *out)
{
    bool ok = false;
    *out = field.toLongLong(&ok);
    return ok;
}

void setWhy(QString *why, const QString &text)
{
    if (why)
        *why = text;
}

} // namespace

bool parseProcStat(QByteArrayView text, ProcStat *out)
{
    // "PID (COMM) STATE PPID PGRP SESSION TTY TPGID FLAGS … STARTTIME …": after the last ')',
    // the state is the 1st field and the start time (field 22 of the line) the 20th.
    const qsizetype open = text.indexOf('(');
    const qsizetype close = text.lastIndexOf(')');
    if (open < 2 || close < open || text.at(open - 1) != ' ')
        return false;
    qint64 pid = 0;
    if (!parseNumber(text.first(open - 1), &pid) || pid <= 0)
        return false;
    QByteArrayView rest = text.sliced(close + 1);
    QByteArrayView fields[20];
    int n = 0;
    while (n < 20) {
        while (!rest.isEmpty() && rest.front() == ' ')
            rest = rest.sliced(1);
        if (rest.isEmpty())
            return false;
        qsizetype end = rest.indexOf(' ');
        if (end < 0)
            end = rest.size();
        fields[n++] = rest.first(end);
        rest = rest.sliced(end);
    }
    ProcStat s;
    if (fields[0].size() != 1)
        return false;
    s.state = fields[0].front();
    if (!parseNumber(fields[1], &s.ppid) || !parseNumber(fields[2], &s.pgrp) ||
        !parseNumber(fields[3], &s.session) || !parseNumber(fields[19].trimmed(), &s.startTicks))
        return false;
    *out = s;
    return true;
}

bool readProcStat(qint64 pid, ProcStat *out)
{
    if (pid <= 0)
        return false;
    // Plain read(): this runs for every process of /proc in signalOrphanedGroup().
    char path[48];
    std::snprintf(path, sizeof path, "/proc/%lld/stat", static_cast<long long>(pid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[2048];
    ssize_t n;
    do {
        n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    return n > 0 && parseProcStat(QByteArrayView(buf, n), out);
}

qint64 bootTicksNow()
{
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    const long hz = ::sysconf(_SC_CLK_TCK);
    const qint64 nsPerTick = 1'000'000'000 / (hz > 0 ? hz : 100);
    return (qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec) / nsPerTick;
}

ProcessIdentity ProcessIdentity::of(qint64 pid)
{
    ProcStat s;
    return {pid, readProcStat(pid, &s) ? s.startTicks : 0};
}

bool ProcessIdentity::isCurrent() const
{
    ProcStat s;
    return pid > 1 && startTicks > 0 && readProcStat(pid, &s) && s.startTicks == startTicks;
}

bool signalRecordedProcess(const ProcessIdentity &id, int signal, SignalTarget target,
                           const std::function<bool(qint64)> &legacyCheck, QString *why)
{
    if (id.pid <= 1) {
        setWhy(why, tr("pid %1 names no single process").arg(id.pid));
        return false;
    }
    // Opened before the check: if the pid is reused after it, the pidfd still names the process
    // the check read, which then has ended, and the signal fails instead of going astray.
    const int fd = pidfdOpen(id.pid);
    ProcStat s;
    if (!readProcStat(id.pid, &s)) {
        if (fd >= 0)
            ::close(fd);
        setWhy(why, tr("pid %1 has ended").arg(id.pid));
        return false;
    }
    QString refusal;
    if (id.startTicks > 0 && s.startTicks != id.startTicks)
        refusal = tr("pid %1 is another process now (started at tick %2, not %3)")
                      .arg(id.pid)
                      .arg(s.startTicks)
                      .arg(id.startTicks);
    else if (id.startTicks <= 0 && !(legacyCheck && legacyCheck(id.pid)))
        refusal = tr("the record of pid %1 has no start time, and the process that has that pid "
                     "now is not recognisably ours")
                      .arg(id.pid);
    else if (target == SignalTarget::Group && s.pgrp != id.pid)
        refusal = tr("pid %1 leads no process group (its group is %2)").arg(id.pid).arg(s.pgrp);
    if (!refusal.isEmpty()) {
        if (fd >= 0)
            ::close(fd);
        setWhy(why, refusal);
        return false;
    }
    int rc;
    if (target == SignalTarget::Process)
        rc = fd >= 0 ? pidfdSendSignal(fd, signal) : ::kill(pid_t(id.pid), signal);
    else
        // No pidfd names a group; while the leader the pidfd holds is not reaped, its pid (the
        // group's id) cannot name another group.
        rc = fd >= 0 && pidfdSendSignal(fd, 0) != 0 && errno == ESRCH
                 ? -1
                 : ::kill(-pid_t(id.pid), signal);
    const int err = errno;
    if (fd >= 0)
        ::close(fd);
    if (rc != 0)
        setWhy(why, err == ESRCH ? tr("pid %1 has ended").arg(id.pid)
                                 : tr("cannot signal pid %1: %2")
                                       .arg(id.pid)
                                       .arg(QString::fromLocal8Bit(std::strerror(err))));
    return rc == 0;
}

bool signalOrphanedGroup(const ProcessIdentity &leader, qint64 leaderEndTicks, int signal,
                         QString *why)
{
    setWhy(why, QString());
    if (leader.pid <= 1 || ::kill(-pid_t(leader.pid), 0) != 0)
        return false; // empty: the common case, without a walk through /proc
    bool ours = false;
    int members = 0;
    if (DIR *d = ::opendir("/proc")) {
        while (const dirent *e = ::readdir(d)) {
            char *end = nullptr;
            const long long pid = std::strtoll(e->d_name, &end, 10);
            ProcStat s;
            if (pid <= 0 || *end || !readProcStat(pid, &s) || s.pgrp != leader.pid)
                continue;
            ++members;
            if (s.startTicks >= leader.startTicks && s.startTicks <= leaderEndTicks) {
                ours = true;
                break;
            }
        }
        ::closedir(d);
    }
    if (!ours) {
        if (members > 0)
            setWhy(why, tr("process group %1 is not the one its leader made: its %2 process(es) "
                           "all started after the leader ended")
                            .arg(leader.pid)
                            .arg(members));
        return false;
    }
    // One of ours is in it, so the id cannot have been reused: the whole group at once, so that
    // what its members fork meanwhile goes too.
    return ::kill(-pid_t(leader.pid), signal) == 0;
}

bool processEnvironmentContains(qint64 pid, const QByteArray &entry)
{
    if (pid <= 0)
        return false;
    QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
    return environ.open(QIODevice::ReadOnly) && environ.readAll().split('\0').contains(entry);
}

HeldProcess::HeldProcess(qint64 pid)
{
    if (pid <= 1)
        return;
    m_pidfd = pidfdOpen(pid);
    m_id = ProcessIdentity::of(pid); // startTicks 0 when already gone: then nothing is sent
}

HeldProcess::~HeldProcess()
{
    if (m_pidfd >= 0)
        ::close(m_pidfd);
}

bool HeldProcess::unreaped() const
{
    if (m_pidfd >= 0)
        return pidfdSendSignal(m_pidfd, 0) == 0 || errno == EPERM;
    return m_id.isCurrent();
}

bool HeldProcess::signal(int signal) const
{
    if (m_id.pid <= 1 || m_id.startTicks == 0)
        return false;
    if (m_pidfd >= 0)
        return pidfdSendSignal(m_pidfd, signal) == 0;
    return m_id.isCurrent() && ::kill(pid_t(m_id.pid), signal) == 0;
}

bool HeldProcess::signalGroup(int signal) const
{
    if (m_id.pid <= 1 || m_id.startTicks == 0 || !unreaped())
        return false;
    return ::kill(-pid_t(m_id.pid), signal) == 0;
}

} // namespace rankdeck
