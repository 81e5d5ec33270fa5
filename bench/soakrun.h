// SPDX-License-Identifier: GPL-3.0-or-later
//
// Issue 44's soak, shared by bench_soak and tst_soak: a run that `rankdeck-cli launch` drives
// (the launcher, a process of its own; its ranks rankdeck-loadgen printing like a chatty
// training job) while the app's window in this process follows it, picked in its run list as a
// user does. Over the soak it samples the window's and the launcher's resident memory and the
// GUI thread's lateness on a 10 ms timer; at the end it times `rankdeck-cli show` and the first
// line of `rankdeck-cli logs --follow`, stops the run, and counts every rank's lines in the
// record against what each rank says it wrote. The window's runs directory and the CLI's are
// the one XDG_DATA_HOME this process has: set it before the window is made.
#pragma once

#include <QMap>
#include <QString>
#include <QtGlobal>

#include <functional>
#include <vector>

namespace rankdeck {
class MainWindow;
} // namespace rankdeck

namespace rankdeck::bench {

struct SoakOptions
{
    int ranks = 8;
    int linesPerSecPerRank = 250; // 2,000 lines/s over 8 ranks
    int stepsPerSec = 5;
    int scalars = 14; // with the step event's own six metrics: 20 a step
    int seconds = 300;
    int sampleMs = 1000;
    bool turnPages = true; // Overview, Logs, Loss in turn, a second each (as bench_scale)
    int page = -1;         // with turnPages off: the RunView page kept shown (-1: Logs)
    // Called once when the last minute of the soak starts (bench_soak --slow-events).
    std::function<void()> lastMinute;
};

struct SoakSample
{
    double seconds = 0; // since the window followed the run
    qint64 guiRssKb = 0;
    qint64 launcherRssKb = 0;
};

struct SoakTick
{
    double seconds = 0;
    double latenessMs = 0;
};

struct SoakResult
{
    QString error; // empty: every number below was measured
    QString runId;
    double seconds = 0;
    std::vector<SoakSample> samples;
    std::vector<SoakTick> ticks;
    qint64 recorded = 0; // the ranks' numbered lines in the record
    qint64 printed = 0;  // what the ranks said they wrote
    qint64 missing = 0;  // printed − recorded, over ranks that said
    qint64 gaps = 0;
    int ranksWithoutCount = 0;
    qint64 recordBytes = 0;                  // every file of the run's directory
    QMap<QString, qint64> recordBytesByKind; // "rank-*.log", "rank-*.idx", "all.idx", …
    qint64 logBytes = 0;                     // the ranks' bytes as printed (rank-*.log)
    qint64 recordLines = 0;                  // every line of those files
    qint64 pointsDue = 0;                    // steps × metrics a step, from the ranks' counts
    qint64 pointsInGui = 0;                  // the followed run's metrics store at the end
    double showMs = -1;                      // `rankdeck-cli show RUN` to its exit
    double followFirstMs = -1;               // `rankdeck-cli logs RUN --follow` to its first line
};

// Resident memory of a process in kB (VmRSS of /proc/PID/status), -1 when it cannot be read.
qint64 processRssKb(qint64 pid);
// Growth in % from the samples around fraction `from` of the soak to its last ones (a median
// of the samples within 3 % of the soak each side, so one sample's noise does not count).
double rssGrowthPct(const std::vector<SoakSample> &samples, double from, bool launcher);
// The p-th percentile of the ticks' lateness within [fromS, toS).
double stallPercentile(const std::vector<SoakTick> &ticks, double fromS, double toS, double p);

// Runs the soak with `window` following it; binDir holds rankdeck-cli and rankdeck-loadgen.
SoakResult runSoak(MainWindow &window, const QString &binDir, const SoakOptions &options);

} // namespace rankdeck::bench
