// SPDX-License-Identifier: GPL-3.0-or-later
// Binding the ranks that share a node to disjoint slices of its CPUs.
#pragma once

#include <string>
#include <vector>

namespace rankdeck {

// The CPUs this process may run on (sched_getaffinity), in ascending order.
std::vector<int> allowedCpus();

// The slice of `allowed` that local rank `localRank` of `localWorldSize` gets: contiguous,
// sizes differing by at most one; with fewer CPUs than ranks, ranks share them round robin.
std::vector<int> cpuSliceFor(const std::vector<int> &allowed, int localRank, int localWorldSize);

// "0-3,8,10-11"
std::string formatCpuList(const std::vector<int> &cpus);

// Binds the calling thread (and every thread it creates afterwards) to `cpus`. Returns an
// empty string, or why it failed.
std::string bindToCpus(const std::vector<int> &cpus);

} // namespace rankdeck
