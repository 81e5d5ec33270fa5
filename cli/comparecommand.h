// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli compare RUN RUN...: what differs between recorded runs, side by side (core's
// RunDiffModel as text): worker flags or the program's command line, profile, world size,
// duration, final and best value of each metric.
#pragma once

#include <QStringList>

namespace rankdeck::cli {

class CompareCommand
{
public:
    static int run(const QStringList &args);
};

} // namespace rankdeck::cli
