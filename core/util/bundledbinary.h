// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace rankdeck {

// A binary that ships with the front ends (rankdeck-worker, rankdeck-supervisor): the path in
// $environmentVariable when set (tests, custom installs); else, in an installed tree,
// <bin>/../libexec/rankdeck/name relative to this program (RANKDECK_LIBEXEC_FROM_BIN, from
// CMake's install directories), so that a tree moved or copied elsewhere still finds its own;
// else `name` next to this program (the build tree, where every binary is in bin/). Never an
// absolute path from build time: an installed program must not reach back into the build tree.
QString bundledBinary(const char *environmentVariable, const QString &name);

// The same lookup for a program started as `applicationDir`/…, for tests.
QString bundledBinaryIn(const QString &applicationDir, const QString &name);

} // namespace rankdeck
