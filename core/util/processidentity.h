// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which process a pid meant when it was recorded. Pids wrap (pid_max is 32,768 on many
// machines), so a pid read back from state.json, a pid file or a QProcess that has ended may
// name an unrelated process by now, and a signal to it, or to its process group, would hit that
// process (docs/reliability.md, "RankDeck never signals a process it did not start").
//
// A process is named by its pid and its start time (field 22 of /proc/PID/stat, clock ticks
// after boot): a later process that gets the same pid has a later start time. Signals go only
// where both still match, and through a pidfd (Linux >= 5.3) where one is available: a pidfd
// names one process for good, so the process checked is the process signalled. Without pidfds
// (older kernels, a seccomp filter) the check and the kill() are two steps.
//
// worker/supervisor/processidentity.h is the same check in plain C++ for the supervisor (worker/
// may include nothing of core/ but core/wire/, and util/ may include nothing of core/).
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <functional>

namespace rankdeck {

// The fields of /proc/PID/stat that tell a process apart.
struct ProcStat
{
    char state = 0; // 'R', 'S', 'Z', …
    qint64 ppid = 0;
    qint64 pgrp = 0;
    qint64 session = 0;
    qint64 startTicks = 0; // field 22: clock ticks after boot
};

// /proc/PID/stat's text. The command name (field 2) may hold spaces, ')' and newlines, so the
// fields are counted from the last ')'. False when the text is no such line.
bool parseProcStat(QByteArrayView text, ProcStat *out);
// False when there is no such process (or /proc cannot be read).
bool readProcStat(qint64 pid, ProcStat *out);
// Now, in the clock /proc/PID/stat's start times count in (CLOCK_BOOTTIME, clock ticks).
qint64 bootTicksNow();

struct ProcessIdentity
{
    qint64 pid = 0;
    qint64 startTicks = 0; // 0: not known (a record written by an older RankDeck)

    // The process that has `pid` now (startTicks 0 when there is none). Read it while the
    // process cannot have been reaped yet (a child not yet waited for) to name it for good.
    static ProcessIdentity of(qint64 pid);
    // Whether `pid` is still this process: alive (or a zombie) with the same start time.
    bool isCurrent() const;
    bool operator==(const ProcessIdentity &) const = default;
};

enum class SignalTarget
{
    Process,
    Group, // the process group the process leads (a rank after setsid)
};

// Sends `signal` to the process `id` names, or to the group it leads, only if `id.pid` still is
// that process (its start time is the recorded one) and, for a group, leads it. A record without
// a start time (an older RankDeck's) is accepted only if `legacyCheck` accepts the live process
// (e.g. its environment carries the run's id); without one it is refused. Pids 0 and 1 are always
// refused: kill(0) and kill(-1) reach our own group and every process we may signal.
// True when the signal was sent; else *why (if given) says why not.
bool signalRecordedProcess(const ProcessIdentity &id, int signal, SignalTarget target,
                           const std::function<bool(qint64 pid)> &legacyCheck = {},
                           QString *why = nullptr);

// What is left of the group `leader` led, after the leader was reaped at `leaderEndTicks`
// (bootTicksNow() then). Once the group is empty its id may be reused by a new group, and no
// pidfd names a group: it is signalled only if one of its members started between the leader's
// start and its end, i.e. the group is still the one the leader made. True when signalled;
// false when the group is empty or not the leader's (then *why says so).
bool signalOrphanedGroup(const ProcessIdentity &leader, qint64 leaderEndTicks, int signal,
                         QString *why = nullptr);

// Whether /proc/PID/environ holds `entry` ("NAME=VALUE"), e.g. the run id a rank was given.
bool processEnvironmentContains(qint64 pid, const QByteArray &entry);

// A child the caller started and has not reaped yet (a QProcess before `finished`): its pid
// cannot be reused yet, so the pidfd opened now names it for good; signals through it fail
// once the child is reaped instead of reaching whatever got the pid next.
class HeldProcess
{
public:
    HeldProcess() = default;
    explicit HeldProcess(qint64 pid);
    ~HeldProcess();
    HeldProcess(const HeldProcess &) = delete;
    HeldProcess &operator=(const HeldProcess &) = delete;

    const ProcessIdentity &identity() const { return m_id; }
    bool hasPidfd() const { return m_pidfd >= 0; }
    // False when the process was reaped (or never started).
    bool signal(int signal) const;
    // To the group the process leads; false while it leads none (setsid() not run yet) and once
    // it was reaped (then its pid, the group's id, may name another group: signalOrphanedGroup()).
    bool signalGroup(int signal) const;

private:
    bool unreaped() const;

    ProcessIdentity m_id;
    int m_pidfd = -1;
};

} // namespace rankdeck
