// SPDX-License-Identifier: GPL-3.0-or-later
//
// The /proc counters that say why a rank is slow, read by the supervisor from outside the
// program (the program needs nothing): how much its main thread ran and how long it waited for
// a CPU (schedstat: the run queue, where a rank sharing a core with a busy process loses its
// time), what its other processes (DataLoader workers) ran, block-I/O delay, bytes read, major
// faults, RSS, involuntary switches, and its cgroup's CPU throttling (cpu.stat). Counters are
// cumulative; ProcessStats::rates() turns two readings into shares of the wall clock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rankdeck::supervisor {

struct ProcessCounters
{
    std::int64_t wallNs = 0;
    std::int64_t mainCpuNs = 0;      // the main thread, user + system
    std::int64_t mainRunQueueNs = 0; // the main thread, runnable but not running
    std::int64_t processCpuNs = 0;   // every thread of the process
    struct Other
    {
        pid_t pid = 0;
        std::int64_t cpuNs = 0;
        std::int64_t runQueueNs = 0;
    };
    std::vector<Other> others;  // the other processes of the program (compared by pid)
    std::int64_t blockIoNs = 0; // delay accounting (0 where the kernel does not keep it)
    std::int64_t readChars = 0; // /proc/PID/io rchar
    std::int64_t majorFaults = 0;
    std::int64_t involuntarySwitches = 0; // the main thread
    std::int64_t rssBytes = 0;
    std::int64_t throttledNs = 0; // the cgroup's, -1: unknown
    bool valid = false;
};

struct ProcessRates
{
    double cpuShare = 0;      // the main thread on a CPU, of the wall clock
    double runQueueShare = 0; // the main thread waiting for a CPU
    double processCpu = 0;    // cores
    double othersCpu = 0;     // cores
    double othersRunQueue = 0;
    double blockIoShare = 0;
    double readBytesPerSec = 0;
    double majorFaultsPerSec = 0;
    double involuntarySwitchesPerSec = 0;
    double throttledShare = 0;
    std::int64_t rssBytes = 0;
};

class ProcessStats
{
public:
    // `main`: the program's main process; `others`: its other processes.
    static ProcessCounters read(pid_t main, const std::vector<pid_t> &others);
    static ProcessRates rates(const ProcessCounters &before, const ProcessCounters &after);

    // Parsers, apart for the tests: /proc/PID/stat (utime, stime, majflt, rss pages,
    // delayacct_blkio_ticks), /proc/PID/schedstat ("run wait slices", ns).
    struct Stat
    {
        std::int64_t cpuTicks = 0;
        std::int64_t majorFaults = 0;
        std::int64_t rssPages = 0;
        std::int64_t blockIoTicks = 0;
        bool ok = false;
    };
    static Stat parseStat(const std::string &text);
    static bool parseSchedstat(const std::string &text, std::int64_t *runNs, std::int64_t *waitNs);
    // cpu.stat's throttled_usec, in ns; -1 when absent.
    static std::int64_t parseThrottled(const std::string &cpuStat);
};

} // namespace rankdeck::supervisor
