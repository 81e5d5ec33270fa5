// SPDX-License-Identifier: GPL-3.0-or-later
// What this binary is: versions and the GNU build id, which crash reports carry so that a
// stack trace can be matched to the exact binary that produced it.
#pragma once

#include <string>

namespace rankdeck::buildinfo {

std::string workerVersion();
std::string torchVersion();
// Hex GNU build id of the running executable, or a hash of it when the note is missing.
std::string buildId();

} // namespace rankdeck::buildinfo
