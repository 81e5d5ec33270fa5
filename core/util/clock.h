// SPDX-License-Identifier: GPL-3.0-or-later
//
// The launcher's clock for everything it records: wall-clock microseconds since the epoch, the
// same unit and origin as the `t` of wire events, so that a rank's own timestamps and the
// launcher's observations sort on one axis.
#pragma once

#include <QtGlobal>

#include <chrono>

namespace rankdeck {

inline qint64 nowUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace rankdeck
