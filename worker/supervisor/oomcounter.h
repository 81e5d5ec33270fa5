// SPDX-License-Identifier: GPL-3.0-or-later
//
// Tells a SIGKILL from the out-of-memory killer from any other: the kernel counts OOM kills per
// memory cgroup, so the supervisor reads its own cgroup's counter before the program starts and
// again after it died. cgroup v2: `oom_kill` in memory.events; cgroup v1 (a hybrid host whose
// memory controller is still on v1): `oom_kill` in memory.oom_control. The cgroup and where its
// hierarchy is mounted come from /proc/self/cgroup and /proc/self/mountinfo.
// A kill elsewhere in the cgroup between the two reads is counted too: it is the same cgroup's
// memory that ran out, and the program was killed in that window.
#pragma once

#include <cstdint>
#include <string>

namespace rankdeck::supervisor {

class OomCounter
{
public:
    // Finds the counter file; later reads are one small read each.
    OomCounter();
    bool available() const { return !m_file.empty(); }
    const std::string &file() const { return m_file; }
    // The current count, -1 when it cannot be read.
    std::int64_t read() const;

private:
    std::string m_file;
};

} // namespace rankdeck::supervisor
