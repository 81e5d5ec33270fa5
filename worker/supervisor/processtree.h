// SPDX-License-Identifier: GPL-3.0-or-later
//
// Every process below the supervisor. The supervisor is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so a grandchild whose parent died, or that called setsid() and was
// orphaned, is re-parented to it instead of init: walking /proc by parent pid from the
// supervisor therefore finds the whole program, DataLoader workers and daemonised helpers
// included, and nothing escapes a stop.
#pragma once

#include <sys/types.h>

#include <unordered_map>
#include <vector>

namespace rankdeck::supervisor {

// The pids of every descendant of `root` (not root itself), parents before children.
std::vector<pid_t> descendantsOf(pid_t root);
// The same in a snapshot of parent -> child pairs. /proc is read one process at a time while
// pids are freed and reused, so the snapshot may hold a cycle (a pid recorded as its own
// ancestor): each pid is visited once, and the walk ends.
std::vector<pid_t> descendantsIn(const std::unordered_multimap<pid_t, pid_t> &children, pid_t root);

// Whether `pid` is a live descendant of `root` (its parent chain in /proc leads there).
bool isDescendant(pid_t pid, pid_t root);

// Sends `signal` to every descendant of the calling process; returns how many there were. Each
// only while its pid is still the process the walk found (processidentity.h): one that ended
// during the walk may have left its pid to another process.
int signalDescendants(int signal);

} // namespace rankdeck::supervisor
