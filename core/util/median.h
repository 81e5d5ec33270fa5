// SPDX-License-Identifier: GPL-3.0-or-later
//
// The median of some numbers (0 for none): what the diagnosis and the benchmarks compare
// ranks and runs by, written once.
#pragma once

#include <algorithm>
#include <vector>

namespace rankdeck {

inline double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace rankdeck
