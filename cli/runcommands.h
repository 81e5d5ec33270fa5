// SPDX-License-Identifier: GPL-3.0-or-later
//
// Commands on recorded runs: runs, show, logs, stop, export, stacks. RUN is a run id or a
// run name (the newest run of that name).
#pragma once

#include <QList>
#include <QStringList>

namespace rankdeck {
struct MetricPattern;
class MetricsStore;
class RunRecord;
} // namespace rankdeck

namespace rankdeck::cli {

class RunCommands
{
public:
    static int runs(const QStringList &args);
    static int show(const QStringList &args);
    static int printArtifacts(const RunRecord &record);
    static int logs(const QStringList &args);
    static int stop(const QStringList &args);
    static int exportRun(const QStringList &args);
    static int stacks(const QStringList &args);

private:
    // Runs the patterns over every recorded line of the run in `dir`, adding to `store`.
    static bool extractFromRecord(const QString &dir, const QList<MetricPattern> &patterns,
                                  MetricsStore *store, QString *error);
};

} // namespace rankdeck::cli
