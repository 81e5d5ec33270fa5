// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace rankdeck {

// A binary that ships with the front ends (rankdeck-worker, rankdeck-supervisor): the path in
// $environmentVariable when set (tests, custom installs), else `name` next to this program.
QString bundledBinary(const char *environmentVariable, const QString &name);

} // namespace rankdeck
