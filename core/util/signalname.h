// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace rankdeck {

// "SIGSEGV" for 11 (glibc's abbreviation), "signal 99" when there is none, empty for 0.
QString signalName(int signal);

} // namespace rankdeck
