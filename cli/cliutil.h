// SPDX-License-Identifier: GPL-3.0-or-later
//
// What every rankdeck-cli command shares: exit codes, output streams, option parsing that
// reports usage errors with exit code 2 instead of QCommandLineParser's 1.
#pragma once

#include <QCommandLineParser>
#include <QString>
#include <QStringList>
#include <QTextStream>

namespace rankdeck {
class MetricsStore;
class RunRecord;
} // namespace rankdeck

namespace rankdeck::cli {

enum ExitCode
{
    ExitOk = 0,
    ExitFailed = 1,
    ExitUsage = 2
};

class CliUtil
{
public:
    static QTextStream &out();
    static QTextStream &err();
    static QString tr(const char *text);

    // Parses `args` (args[0] is "rankdeck-cli <command>"). Prints --help and returns ExitOk
    // through *exitCode, or a usage error (exit 2); returns true when the command should run.
    static bool parse(QCommandLineParser &parser, const QStringList &args,
                      const QString &description, int *exitCode);
    static int usageError(const QString &message, const QString &command);
    static bool parseInt(const QString &text, int min, int max, int *value);

    static QString runsDirectory();
    // Resolves RUN (an id or a name) and opens its record, or prints why not (*code: the exit
    // status).
    static bool openRun(const QString &run, RunRecord *record, int *code);
    static QString formatDuration(qint64 us);
    // "step 40/100", or "step 40" when the total is unknown (a user's program).
    static QString formatStep(qint64 step, qint64 total);
    static QString formatTime(qint64 us);
    static bool stdoutIsTerminal();

    // The points of a run record's metrics.csv (names empty: every metric) added to *store,
    // read only: a running run may still be appending to the file. False when it cannot be
    // read, with every good row added and the first bad one named in *error.
    static bool loadRecordedMetrics(const QString &runDirectory, MetricsStore *store,
                                    QString *error, const QStringList &names = {});
    // The same for the file's last `tailBytes` only (from its first whole line there): what
    // `show` needs for the last steps, in bounded time however long the run has been recording
    // (the whole file took 2.7 s after a 30-minute soak, docs/benchmarks.md).
    static bool loadRecentMetrics(const QString &runDirectory, MetricsStore *store, QString *error,
                                  const QStringList &names, qint64 tailBytes);
};

} // namespace rankdeck::cli
