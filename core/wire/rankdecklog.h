// SPDX-License-Identifier: GPL-3.0-or-later
//
// Curves with one line of code, for C++ programs: rankdeck::log(step, {{"acc", 0.93}}) writes a
// wire-format `step` event on stdout inside a RankDeck run (RANKDECK_RUN_ID set) and does
// nothing elsewhere. Header-only, on wireprotocol.h; the twin of python/rankdeck. The event is
// one write() to fd 1: flush a stdio buffer you print into first, so that the order holds.
#pragma once

#include "wire/wireprotocol.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace rankdeck {

inline void log(std::int64_t step,
                std::initializer_list<std::pair<std::string_view, double>> scalars)
{
    const char *run = std::getenv("RANKDECK_RUN_ID");
    if (!run || !*run)
        return;
    const char *rank = std::getenv("RANK");
    const std::int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    wire::WireEventWriter e(wire::event::Step, rank ? std::atoi(rank) : 0, now);
    e.addInt(wire::field::Step, step).addDoubles("scalars", scalars);
    const std::string line = e.line();
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(1, line.data() + done, line.size() - done);
        if (n <= 0)
            return;
        done += std::size_t(n);
    }
}

} // namespace rankdeck
