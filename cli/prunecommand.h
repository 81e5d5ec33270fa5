// SPDX-License-Identifier: GPL-3.0-or-later
//
// `rankdeck-cli runs prune [--older-than AGE] [--keep N] [--dry-run]`: deletes recorded runs by
// age or count, never one that may still be going (record/runprune.h), and says what each held
// and how much was freed.
#pragma once

#include <QStringList>

namespace rankdeck::cli {

class PruneCommand
{
public:
    // args[0] is "rankdeck-cli runs prune".
    static int run(const QStringList &args);
};

} // namespace rankdeck::cli
