// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/processtree.h"

#include "supervisor/processidentity.h"

#include <dirent.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace rankdeck::supervisor {

namespace {

pid_t parentOf(pid_t pid)
{
    ProcStat s;
    return readProcStat(pid, &s) ? s.ppid : -1;
}

// Every process's parent, and its start time, read in the same look at its /proc/PID/stat: a
// signal from this snapshot goes only to a pid still started then (signalIfSame()).
void snapshot(std::unordered_multimap<pid_t, pid_t> *children,
              std::unordered_map<pid_t, unsigned long long> *starts)
{
    if (DIR *d = opendir("/proc")) {
        while (dirent *e = readdir(d)) {
            char *end = nullptr;
            const long pid = std::strtol(e->d_name, &end, 10);
            ProcStat s;
            if (pid <= 0 || (end && *end) || !readProcStat(pid_t(pid), &s) || s.ppid <= 0)
                continue;
            children->emplace(s.ppid, pid_t(pid));
            if (starts)
                (*starts)[pid_t(pid)] = s.startTicks;
        }
        closedir(d);
    }
}

} // namespace

std::vector<pid_t> descendantsOf(pid_t root)
{
    std::unordered_multimap<pid_t, pid_t> children;
    snapshot(&children, nullptr);
    return descendantsIn(children, root);
}

std::vector<pid_t> descendantsIn(const std::unordered_multimap<pid_t, pid_t> &children, pid_t root)
{
    std::vector<pid_t> out;
    std::unordered_set<pid_t> seen{root};
    std::vector<pid_t> todo{root};
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        auto [first, last] = children.equal_range(p);
        for (auto it = first; it != last; ++it) {
            if (!seen.insert(it->second).second)
                continue; // seen already: a pid reused during the scan closed a loop
            out.push_back(it->second);
            todo.push_back(it->second);
        }
    }
    return out;
}

bool isDescendant(pid_t pid, pid_t root)
{
    // A chain longer than this is a loop in a racing /proc, not a process tree.
    for (int depth = 0; pid > 1 && depth < 256; ++depth) {
        pid = parentOf(pid);
        if (pid == root)
            return true;
    }
    return false;
}

int signalDescendants(int signal)
{
    std::unordered_multimap<pid_t, pid_t> children;
    std::unordered_map<pid_t, unsigned long long> starts;
    snapshot(&children, &starts);
    const std::vector<pid_t> pids = descendantsIn(children, getpid());
    for (pid_t p : pids)
        signalIfSame(p, starts[p], signal);
    return int(pids.size());
}

} // namespace rankdeck::supervisor
