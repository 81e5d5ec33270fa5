// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli profile RUN [--seconds N] [--ranks LIST]: asks the launcher that owns a running
// run (through its record: profile-request) to record every rank's sampled stacks for N
// seconds, waits for profiles/<id>/, and prints where the collapsed stacks are (one file per
// rank, for flamegraph.pl or speedscope) and what each rank spends its time on.
#pragma once

#include <QStringList>

namespace rankdeck::cli {

class ProfileCommand
{
public:
    static int run(const QStringList &args);
    // "0,2-3,7" → {0, 2, 3, 7}; false on anything else.
    static bool parseRanks(const QString &text, QList<int> *ranks);
};

} // namespace rankdeck::cli
