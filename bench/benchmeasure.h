// SPDX-License-Identifier: GPL-3.0-or-later
//
// Measurements the in-process benchmarks (bench_gui, bench_scale) share: percentiles of samples,
// the process's memory from /proc, the calling thread's CPU time.
#pragma once

#include <QtGlobal>

#include <functional>

#include <vector>

namespace rankdeck::bench {

// The p-th percentile (0–100) of v, nearest rank; 0 for no samples.
double percentile(std::vector<double> v, double p);
// A field of /proc/self/status in kB ("VmHWM:", "VmRSS:"), -1 when it cannot be read.
qint64 statusKb(const char *key);
// CPU time of this thread next to wall time: on a shared machine the wall time also holds the
// time other processes had the core, the CPU time does not.
double threadCpuMs();

// Runs the event loop until `done` holds, checking every `everyMs`; false after `timeoutMs`.
bool waitFor(const std::function<bool()> &done, int timeoutMs, int everyMs = 20);

} // namespace rankdeck::bench
