// SPDX-License-Identifier: GPL-3.0-or-later
//
// Commands on recorded runs: runs, show, logs, stop, export, stacks. RUN is a run id or a run name
// (the newest run of that name).
#pragma once

#include <QStringList>

namespace rankdeck::cli {

class RunCommands
{
public:
    static int runs(const QStringList &args);
    static int show(const QStringList &args);
    static int logs(const QStringList &args);
    static int stop(const QStringList &args);
    static int exportRun(const QStringList &args);
    static int stacks(const QStringList &args);
};

} // namespace rankdeck::cli
