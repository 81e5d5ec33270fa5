// SPDX-License-Identifier: GPL-3.0-or-later
#include "cpuaffinity.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace rankdeck {

std::vector<int> allowedCpus()
{
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set))
            cpus.push_back(c);
    return cpus;
}

std::vector<int> cpuSliceFor(const std::vector<int> &allowed, int localRank, int localWorldSize)
{
    if (allowed.empty() || localWorldSize < 1 || localRank < 0)
        return {};
    const int n = int(allowed.size());
    if (n <= localWorldSize)
        return {allowed[std::size_t(localRank % n)]};
    // The first n % world ranks get one CPU more.
    const int base = n / localWorldSize;
    const int extra = n % localWorldSize;
    const int begin = localRank * base + std::min(localRank, extra);
    const int size = base + (localRank < extra ? 1 : 0);
    return {allowed.begin() + begin, allowed.begin() + begin + size};
}

std::string formatCpuList(const std::vector<int> &cpus)
{
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!out.empty())
            out += ',';
        out += std::to_string(cpus[i]);
        if (j > i)
            out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

std::string bindToCpus(const std::vector<int> &cpus)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int c : cpus)
        CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        return std::strerror(errno);
    return {};
}

} // namespace rankdeck
