// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/processstats.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rankdeck::supervisor {
namespace {

std::string slurp(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::int64_t nsPerTick()
{
    static const std::int64_t ns = [] {
        const long hz = sysconf(_SC_CLK_TCK);
        return hz > 0 ? 1000000000ll / hz : 10000000ll;
    }();
    return ns;
}

std::int64_t monotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000ll + ts.tv_nsec;
}

std::int64_t fieldAfter(const std::string &text, const char *name)
{
    const std::size_t at = text.find(name);
    if (at == std::string::npos)
        return 0;
    return std::strtoll(text.c_str() + at + std::strlen(name), nullptr, 10);
}

// The cgroup (v2) the process is in, its cpu.stat's path; empty when not v2.
std::string cpuStatPath(pid_t pid)
{
    const std::string cgroup = slurp("/proc/" + std::to_string(pid) + "/cgroup");
    const std::size_t at = cgroup.find("0::");
    if (at == std::string::npos)
        return {};
    std::string path = cgroup.substr(at + 3);
    path = path.substr(0, path.find('\n'));
    return "/sys/fs/cgroup" + path + "/cpu.stat";
}

} // namespace

ProcessStats::Stat ProcessStats::parseStat(const std::string &text)
{
    Stat st;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos)
        return st;
    std::istringstream in(text.substr(close + 1));
    std::vector<std::string> f; // f[0] is field 3 (state)
    for (std::string w; in >> w;)
        f.push_back(w);
    auto num = [&](int field) {
        const std::size_t i = std::size_t(field - 3);
        return i < f.size() ? std::strtoll(f[i].c_str(), nullptr, 10) : 0ll;
    };
    if (f.size() < 22)
        return st;
    st.majorFaults = num(12);
    st.cpuTicks = num(14) + num(15);
    st.rssPages = num(24);
    st.blockIoTicks = num(42);
    st.ok = true;
    return st;
}

bool ProcessStats::parseSchedstat(const std::string &text, std::int64_t *runNs,
                                  std::int64_t *waitNs)
{
    long long run = 0, wait = 0;
    if (std::sscanf(text.c_str(), "%lld %lld", &run, &wait) != 2)
        return false;
    *runNs = run;
    *waitNs = wait;
    return true;
}

std::int64_t ProcessStats::parseThrottled(const std::string &cpuStat)
{
    const std::size_t at = cpuStat.find("throttled_usec ");
    if (at == std::string::npos)
        return -1;
    return std::strtoll(cpuStat.c_str() + at + 15, nullptr, 10) * 1000;
}

ProcessCounters ProcessStats::read(pid_t main, const std::vector<pid_t> &others)
{
    ProcessCounters c;
    c.wallNs = monotonicNs();
    if (main <= 0)
        return c;
    const std::string proc = "/proc/" + std::to_string(main);
    const Stat process = parseStat(slurp(proc + "/stat"));
    if (!process.ok)
        return c;
    c.valid = true;
    c.processCpuNs = process.cpuTicks * nsPerTick();
    c.majorFaults = process.majorFaults;
    c.rssBytes = process.rssPages * sysconf(_SC_PAGESIZE);
    c.blockIoNs = process.blockIoTicks * nsPerTick();
    const std::string task = proc + "/task/" + std::to_string(main);
    std::int64_t run = 0, wait = 0;
    // schedstat's run time is in ns where stat's ticks are 10 ms: the main thread's CPU comes
    // from it when the kernel keeps it.
    if (parseSchedstat(slurp(task + "/schedstat"), &run, &wait)) {
        c.mainCpuNs = run;
        c.mainRunQueueNs = wait;
    } else {
        c.mainCpuNs = parseStat(slurp(task + "/stat")).cpuTicks * nsPerTick();
    }
    c.involuntarySwitches = fieldAfter(slurp(task + "/status"), "nonvoluntary_ctxt_switches:");
    c.readChars = fieldAfter(slurp(proc + "/io"), "rchar:");
    for (pid_t pid : others) {
        const std::string other = "/proc/" + std::to_string(pid);
        const Stat st = parseStat(slurp(other + "/stat"));
        if (!st.ok)
            continue;
        std::int64_t r = 0, w = 0;
        parseSchedstat(slurp(other + "/schedstat"), &r, &w);
        c.others.push_back({pid, st.cpuTicks * nsPerTick(), w});
    }
    const std::string cpuStat = cpuStatPath(main);
    c.throttledNs = cpuStat.empty() ? -1 : parseThrottled(slurp(cpuStat));
    return c;
}

ProcessRates ProcessStats::rates(const ProcessCounters &before, const ProcessCounters &after)
{
    ProcessRates r;
    const double wall = double(after.wallNs - before.wallNs);
    if (!before.valid || !after.valid || wall <= 0)
        return r;
    auto share = [&](std::int64_t a, std::int64_t b) {
        return std::max(0.0, double(b - a) / wall);
    };
    r.cpuShare = std::min(1.0, share(before.mainCpuNs, after.mainCpuNs));
    r.runQueueShare = std::min(1.0, share(before.mainRunQueueNs, after.mainRunQueueNs));
    r.processCpu = share(before.processCpuNs, after.processCpuNs);
    // Only processes in both readings: one that started since would bring all its past CPU.
    for (const ProcessCounters::Other &o : after.others) {
        const auto was =
            std::find_if(before.others.begin(), before.others.end(),
                         [&](const ProcessCounters::Other &b) { return b.pid == o.pid; });
        if (was == before.others.end())
            continue;
        r.othersCpu += share(was->cpuNs, o.cpuNs);
        r.othersRunQueue += share(was->runQueueNs, o.runQueueNs);
    }
    r.blockIoShare = std::min(1.0, share(before.blockIoNs, after.blockIoNs));
    const double seconds = wall / 1e9;
    r.readBytesPerSec = std::max(0.0, double(after.readChars - before.readChars) / seconds);
    r.majorFaultsPerSec = std::max(0.0, double(after.majorFaults - before.majorFaults) / seconds);
    r.involuntarySwitchesPerSec =
        std::max(0.0, double(after.involuntarySwitches - before.involuntarySwitches) / seconds);
    if (before.throttledNs >= 0 && after.throttledNs >= 0)
        r.throttledShare = std::min(1.0, share(before.throttledNs, after.throttledNs));
    r.rssBytes = after.rssBytes;
    return r;
}

} // namespace rankdeck::supervisor
