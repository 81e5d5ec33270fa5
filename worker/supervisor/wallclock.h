// SPDX-License-Identifier: GPL-3.0-or-later
//
// The wall clock the supervisor stamps its wire events with: µs since the Unix epoch, every
// event's `ts` (docs/protocol.md). Defined once, so that the supervisor's files agree on it.
#pragma once

#include <chrono>
#include <cstdint>

namespace rankdeck::supervisor {

inline std::int64_t wallUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace rankdeck::supervisor
