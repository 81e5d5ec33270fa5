// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/processtree.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace rankdeck::supervisor {

namespace {

// The parent pid from /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields after it are found from the last ')'.
pid_t parentOf(pid_t pid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
    FILE *f = std::fopen(path, "re");
    if (!f)
        return -1;
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char *close = std::strrchr(buf, ')');
    if (!close)
        return -1;
    char state = 0;
    int ppid = -1;
    if (std::sscanf(close + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return pid_t(ppid);
}

} // namespace

std::vector<pid_t> descendantsOf(pid_t root)
{
    std::unordered_multimap<pid_t, pid_t> children;
    if (DIR *d = opendir("/proc")) {
        while (dirent *e = readdir(d)) {
            char *end = nullptr;
            const long pid = std::strtol(e->d_name, &end, 10);
            if (pid <= 0 || (end && *end))
                continue;
            const pid_t ppid = parentOf(pid_t(pid));
            if (ppid > 0)
                children.emplace(ppid, pid_t(pid));
        }
        closedir(d);
    }
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
    const std::vector<pid_t> pids = descendantsOf(getpid());
    for (pid_t p : pids)
        kill(p, signal);
    return int(pids.size());
}

} // namespace rankdeck::supervisor
