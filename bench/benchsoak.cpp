// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_soak: issue 44's soak. 8 local ranks (rankdeck-loadgen) print like a chatty training
// job, 2,000 lines/s in all and 20 metrics a step, 5 steps/s a rank, under `rankdeck-cli
// launch` for 30 minutes (5 with --quick; --seconds S for another length), while the app's
// window in this process follows the run (bench/soakrun.h). Keys:
//   soak_rss_growth_pct            the window's RSS from 10 % of the soak to its end, in %
//   soak_launcher_rss_growth_pct   the same for the launcher (rankdeck-cli launch)
//   soak_lines_missing             lines the ranks wrote less lines in the record
//   soak_stall_p99_start_ms / _end_ms  the GUI thread's lateness on a 10 ms timer, p99, in the
//                                  first and the last minute
//   soak_bytes_per_line            every byte of the record's directory / lines in it
//   soak_bytes_per_line_vs_line    that over the ranks' own bytes a line (rank-*.log)
//   soak_show_ms                   `rankdeck-cli show RUN` at the end, to its exit
//   soak_logs_follow_ms            `rankdeck-cli logs RUN --follow` at the end, to its first line
// Prints one JSON line: {"results": {...}, "detail": "..."}. --steps-per-sec N and --scalars N
// change the metrics' rate (0 steps: none, to tell their memory from the rest's); --page P keeps
// RunView page P shown instead of turning them; --slow-events MS prints to stderr which events
// kept the GUI thread over MS ms in one go during the last minute (bench/timedapplication.h).
#include "benchmeasure.h"
#include "mainwindow.h"
#include "soakrun.h"
#include "timedapplication.h"

#include <QApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>

using namespace rankdeck;
using namespace rankdeck::bench;

int main(int argc, char **argv)
{
    // The window's runs directory and the CLI's: one throw-away XDG tree, set before the window
    // reads it.
    QTemporaryDir home;
    qputenv("XDG_CONFIG_HOME", home.filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", home.filePath(QStringLiteral("data")).toUtf8());
    qputenv("XDG_CACHE_HOME", home.filePath(QStringLiteral("cache")).toUtf8());
    TimedApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-bench"));
    QCoreApplication::setApplicationName(QStringLiteral("bench_soak"));
    const QStringList args = QCoreApplication::arguments();
    SoakOptions options;
    options.seconds = args.contains(QStringLiteral("--quick")) ? 300 : 1800;
    const auto intArg = [&](const char *name, int fallback) {
        const int at = int(args.indexOf(QLatin1String(name)));
        return at > 0 ? args.value(at + 1).toInt() : fallback;
    };
    options.seconds = std::max(60, intArg("--seconds", options.seconds));
    options.stepsPerSec = intArg("--steps-per-sec", options.stepsPerSec);
    options.scalars = intArg("--scalars", options.scalars);
    options.page = intArg("--page", -1);
    options.turnPages = options.page < 0;
    if (const int slowMs = intArg("--slow-events", 0); slowMs > 0) {
        app.setThresholdMs(slowMs);
        options.lastMinute = [&app] { app.setRecording(true); };
    }
    const QString fromEnv = qEnvironmentVariable("RANKDECK_BIN_DIR");
    const QString binDir = fromEnv.isEmpty()
                               ? QCoreApplication::applicationDirPath() + QStringLiteral("/../bin")
                               : fromEnv;

    MainWindow window;
    window.resize(1400, 900);
    window.show();
    const SoakResult soak = runSoak(window, binDir, options);
    if (app.timing())
        app.printSlow();

    QJsonObject results;
    QStringList detail;
    const auto put = [&](const QString &key, double value) {
        results[key] = value;
        // One soak: its spread is the runs in docs/benchmarks.md.
        results[key + QStringLiteral("_runs")] = QJsonArray{value};
    };
    const double end = soak.seconds;
    const double stallStart = stallPercentile(soak.ticks, 0, 60, 99);
    const double stallEnd = stallPercentile(soak.ticks, std::max(0.0, end - 60), end + 1, 99);
    const double guiGrowth = rssGrowthPct(soak.samples, 0.1, false);
    const double launcherGrowth = rssGrowthPct(soak.samples, 0.1, true);
    const auto rssAt = [&](double fraction, bool launcher) {
        for (const SoakSample &s : soak.samples) {
            if (s.seconds >= fraction * end || &s == &soak.samples.back())
                return double(launcher ? s.launcherRssKb : s.guiRssKb) / 1024.0;
        }
        return 0.0;
    };
    if (!soak.samples.empty()) {
        put(QStringLiteral("soak_rss_growth_pct"), guiGrowth);
        put(QStringLiteral("soak_launcher_rss_growth_pct"), launcherGrowth);
        put(QStringLiteral("soak_stall_p99_start_ms"), stallStart);
        put(QStringLiteral("soak_stall_p99_end_ms"), stallEnd);
        detail << QStringLiteral("%1 ranks × %2 lines/s, %3 steps/s × %4 metrics for %5 s, "
                                 "window following (pages in turn)")
                      .arg(options.ranks)
                      .arg(options.linesPerSecPerRank)
                      .arg(options.stepsPerSec)
                      .arg(6 + options.scalars)
                      .arg(end, 0, 'f', 0);
        detail << QStringLiteral("RSS MB at 10/50/100 %: window %1/%2/%3 (growth %4 %), "
                                 "launcher %5/%6/%7 (growth %8 %)")
                      .arg(rssAt(0.1, false), 0, 'f', 0)
                      .arg(rssAt(0.5, false), 0, 'f', 0)
                      .arg(rssAt(1.0, false), 0, 'f', 0)
                      .arg(guiGrowth, 0, 'f', 1)
                      .arg(rssAt(0.1, true), 0, 'f', 0)
                      .arg(rssAt(0.5, true), 0, 'f', 0)
                      .arg(rssAt(1.0, true), 0, 'f', 0)
                      .arg(launcherGrowth, 0, 'f', 1);
        detail << QStringLiteral("GUI stall p99 first minute %1 ms, last minute %2 ms (max %3 ms, "
                                 "%4 ticks)")
                      .arg(stallStart, 0, 'f', 1)
                      .arg(stallEnd, 0, 'f', 1)
                      .arg(stallPercentile(soak.ticks, 0, end + 1, 100), 0, 'f', 1)
                      .arg(soak.ticks.size());
    }
    if (soak.showMs >= 0)
        put(QStringLiteral("soak_show_ms"), soak.showMs);
    if (soak.followFirstMs >= 0)
        put(QStringLiteral("soak_logs_follow_ms"), soak.followFirstMs);
    if (soak.recordLines > 0) {
        const double perLine = double(soak.recordBytes) / double(soak.recordLines);
        const double lineBytes = double(soak.logBytes) / double(soak.recordLines);
        put(QStringLiteral("soak_bytes_per_line"), perLine);
        put(QStringLiteral("soak_bytes_per_line_vs_line"), perLine / lineBytes);
        detail << QStringLiteral("record %1 MB for %2 lines: %3 bytes a line, the lines "
                                 "themselves %4 (with their newline)")
                      .arg(double(soak.recordBytes) / 1048576.0, 0, 'f', 1)
                      .arg(soak.recordLines)
                      .arg(perLine, 0, 'f', 1)
                      .arg(lineBytes, 0, 'f', 1);
        QStringList kinds;
        for (auto it = soak.recordBytesByKind.cbegin(); it != soak.recordBytesByKind.cend(); ++it)
            kinds << QStringLiteral("%1 %2").arg(it.key()).arg(
                double(it.value()) / double(soak.recordLines), 0, 'f', 1);
        detail << QStringLiteral("bytes a line by file: ") + kinds.join(QStringLiteral(", "));
        detail << QStringLiteral("show %1 ms, logs --follow first line %2 ms; points: %3 due, "
                                 "%4 in the window's store")
                      .arg(soak.showMs, 0, 'f', 0)
                      .arg(soak.followFirstMs, 0, 'f', 0)
                      .arg(soak.pointsDue)
                      .arg(soak.pointsInGui);
    }
    if (soak.error.isEmpty()) {
        put(QStringLiteral("soak_lines_missing"), double(soak.missing));
        detail << QStringLiteral("lines: %1 written, %2 in the record, %3 missing")
                      .arg(soak.printed)
                      .arg(soak.recorded)
                      .arg(soak.missing);
    } else {
        detail.prepend(QStringLiteral("not measured: ") + soak.error);
    }
    QJsonObject json;
    json[QStringLiteral("results")] = results;
    json[QStringLiteral("detail")] = detail.join(QStringLiteral("; "));
    std::printf("%s\n", QJsonDocument(json).toJson(QJsonDocument::Compact).constData());
    return 0;
}
