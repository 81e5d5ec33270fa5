// SPDX-License-Identifier: GPL-3.0-or-later
// The GNU build id of the running executable: crash reports and the hello event carry it so a
// stack can be matched to the exact binary that produced it. Plain C++ (no libtorch), so the
// crash handler's test program can use it too.
#pragma once

#include <string>

namespace rankdeck {
// Hex build id from the executable's PT_NOTE segment; empty when it was linked without one.
std::string readGnuBuildId();
} // namespace rankdeck
