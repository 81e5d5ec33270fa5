// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_scale: issue 31's 512 ranks for real. One run of 512 synthetic ranks (rankdeck-loadgen,
// through the real local transport, line splitter, parser, stores and run controller) with the
// run page of the GUI open in this process, measured from start to stop:
//   launch   run.start() → every rank's first step event (scale_512_launch_s);
//   stall    then, for 60 s (15 s --quick), each rank printing 20 lines/s and 5 step events/s,
//            the GUI event loop's lateness on a 10 ms timer while the page shows the Overview,
//            the Logs and the Loss page in turn, a second each (scale_512_gui_stall_p99_ms);
//   rss      this process's peak resident memory over the whole run (scale_512_launcher_rss_mb);
//   stop     run.stop() → no process left in any rank's process group (scale_512_stop_s);
//   lines    what each rank says it wrote (its last words on stderr, after the `stop`) minus its
//            lines in the run record (scale_512_lines_missing);
//   fds and threads of this process per rank: the most seen during the run less those before.
// Prints one JSON line: {"results": {...}, "detail": "..."}. --ranks N runs another size (the
// keys then name N); --page overview|logs|loss keeps that one page shown (to find which costs);
// --slow-events MS prints to stderr which events kept the GUI thread over MS ms in one go
// during the loaded window (what the stall is made of).
#include "benchmeasure.h"
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "loadgenlog.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "store/logstore.h"
#include "stream/workerevent.h"
#include "timedapplication.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <functional>
#include <map>
#include <vector>

using namespace rankdeck;
using rankdeck::bench::percentile;
using rankdeck::bench::statusKb;
using rankdeck::bench::threadCpuMs;
using rankdeck::bench::waitFor;

namespace {

// Entries of a /proc folder, counted with readdir: QDir::entryList() sorted and made strings of
// 3,600 file descriptors, some 20 ms of the GUI thread once a second, inside the window it
// measures.
qint64 entries(const char *dir)
{
    DIR *d = ::opendir(dir);
    if (!d)
        return 0;
    qint64 n = 0;
    while (const dirent *e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            ++n;
    }
    ::closedir(d);
    return n;
}

QString binDir()
{
    const QString fromEnv = qEnvironmentVariable("RANKDECK_BIN_DIR");
    return fromEnv.isEmpty() ? QCoreApplication::applicationDirPath() + QStringLiteral("/../bin")
                             : fromEnv;
}

// Process groups (each rank leads its own) that still have a member.
int livingGroups(const std::vector<qint64> &groups)
{
    int alive = 0;
    for (qint64 g : groups) {
        if (g > 0 && (::kill(-pid_t(g), 0) == 0 || errno != ESRCH))
            ++alive;
    }
    return alive;
}

} // namespace

int main(int argc, char **argv)
{
    rankdeck::bench::TimedApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    const int slowAt = int(args.indexOf(QStringLiteral("--slow-events")));
    if (slowAt > 0)
        app.setThresholdMs(args.value(slowAt + 1).toDouble());
    const bool quick = args.contains(QStringLiteral("--quick"));
    const int ranksAt = int(args.indexOf(QStringLiteral("--ranks")));
    const int ranks = ranksAt > 0 ? std::max(1, args.value(ranksAt + 1).toInt()) : 512;
    const int seconds = quick ? 15 : 60;
    const int linesPerSec = 20, stepsPerSec = 5;
    const QString key = QStringLiteral("scale_%1_").arg(ranks);
    QJsonObject results;
    QStringList detail;
    const auto finish = [&](const QString &error) {
        if (!error.isEmpty())
            detail.prepend(QStringLiteral("not measured: ") + error);
        QJsonObject out;
        out[QStringLiteral("results")] = results;
        out[QStringLiteral("detail")] = detail.join(QStringLiteral("; "));
        std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
        return 0; // what was measured is in results; the rest is "not measured" with its reason
    };

    QTemporaryDir runs;
    TrainingConfig config;
    config.name = QStringLiteral("scale");
    // Longer than the bench: the run ends by the user's stop, which is measured too.
    config.workerArguments = {QStringLiteral("--lines-per-sec"), QString::number(linesPerSec),
                              QStringLiteral("--steps-per-sec"), QString::number(stepsPerSec),
                              QStringLiteral("--duration"),      QStringLiteral("3600")};
    RunController::Options options;
    options.workerPath = binDir() + QStringLiteral("/rankdeck-loadgen");
    options.runsDirectory = runs.path();
    options.hangTimeoutSec = 3600;
    RunController run(Profile::builtinLocal(ranks), config, options);

    RunView view;
    view.resize(1400, 900);
    view.show();
    view.setRun(&run);
    view.setCurrentIndex(RunView::Overview);
    QCoreApplication::processEvents();
    const char *fdDir = "/proc/self/fd";
    const char *taskDir = "/proc/self/task";
    const qint64 fdsBefore = entries(fdDir), threadsBefore = entries(taskDir);
    qint64 fdsMost = fdsBefore, threadsMost = threadsBefore;

    // The GUI thread's lateness on a 10 ms timer; `window` says which list a tick goes to.
    constexpr int tickMs = 10;
    std::vector<double> launchStalls, stalls;
    std::vector<double> *window = &launchStalls;
    QElapsedTimer tickClock;
    qint64 lastTick = -1;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = tickClock.nsecsElapsed();
        if (lastTick >= 0 && window)
            window->push_back(std::max(0.0, double(now - lastTick) / 1e6 - tickMs));
        lastTick = now;
    });
    // Once a second: the next page (Overview, Logs, Loss) and the process's fds and threads.
    const RunView::Page pages[] = {RunView::Overview, RunView::Logs, RunView::Loss};
    int pageTurn = 0;
    const int pageAt = int(args.indexOf(QStringLiteral("--page")));
    const QString onlyPage = pageAt > 0 ? args.value(pageAt + 1) : QString();
    const QStringList pageNames{QStringLiteral("overview"), QStringLiteral("logs"),
                                QStringLiteral("loss")};
    // What showing each page costs at once (its show and catch-up), the longest seen per page.
    double switchMs[3] = {0, 0, 0};
    QTimer everySecond;
    QObject::connect(&everySecond, &QTimer::timeout, &everySecond, [&] {
        const int turn =
            onlyPage.isEmpty() ? ++pageTurn % 3 : std::max(0, int(pageNames.indexOf(onlyPage)));
        QElapsedTimer switching;
        switching.start();
        view.setCurrentIndex(pages[turn]);
        if (window == &stalls)
            switchMs[turn] = std::max(switchMs[turn], double(switching.nsecsElapsed()) / 1e6);
        fdsMost = std::max(fdsMost, entries(fdDir));
        threadsMost = std::max(threadsMost, entries(taskDir));
    });

    std::vector<bool> stepped(size_t(ranks), false);
    int steppedCount = 0;
    QObject::connect(&run, &RunController::eventReceived, [&](const WorkerEvent &e) {
        if (e.type() == WorkerEvent::Type::Step && e.rank() >= 0 && e.rank() < ranks &&
            !stepped[size_t(e.rank())]) {
            stepped[size_t(e.rank())] = true;
            ++steppedCount;
        }
    });

    QElapsedTimer sinceStart;
    QString error;
    tickClock.start();
    tick.start(tickMs);
    everySecond.start(1000);
    sinceStart.start();
    if (!run.start(&error))
        return finish(error);
    const bool launched =
        waitFor([&] { return steppedCount == ranks || isTerminal(run.state()); }, 600'000);
    const double launchS = double(sinceStart.elapsed()) / 1000.0;
    if (!launched || steppedCount < ranks)
        return finish(QStringLiteral("%1 of %2 ranks stepped in %3 s; run %4: %5")
                          .arg(steppedCount)
                          .arg(ranks)
                          .arg(launchS, 0, 'f', 1)
                          .arg(runStateLabel(run.state()), run.rootCauseSummary()));
    results[key + QStringLiteral("launch_s")] = launchS;

    window = &stalls;
    app.setRecording(true);
    // The GUI thread's own CPU time over the window: unlike the lateness, it does not move with
    // what else the machine runs.
    const double cpuAtStart = threadCpuMs();
    QElapsedTimer loaded;
    loaded.start();
    const auto linesInStore = [&] {
        qint64 n = 0;
        for (int r = 0; r < ranks; ++r)
            n += run.logStore()->lineCount(r);
        return n;
    };
    const qint64 linesAtStart = linesInStore();
    waitFor([&] { return loaded.elapsed() >= qint64(seconds) * 1000 || isTerminal(run.state()); },
            seconds * 1000 + 5000, 100);
    const double loadedS = double(loaded.elapsed()) / 1000.0;
    const double guiCpuPct = (threadCpuMs() - cpuAtStart) / (10.0 * std::max(0.001, loadedS));
    const qint64 linesLoaded = linesInStore() - linesAtStart;
    window = nullptr;
    app.setRecording(false);
    if (slowAt > 0)
        app.printSlow();
    if (isTerminal(run.state()))
        return finish(QStringLiteral("the run ended by itself: %1 %2")
                          .arg(runStateLabel(run.state()), run.rootCauseSummary()));

    std::vector<qint64> groups;
    groups.reserve(ranks);
    for (int r = 0; r < ranks; ++r)
        groups.push_back(run.rankStatus(r).pid);
    fdsMost = std::max(fdsMost, entries(fdDir));
    threadsMost = std::max(threadsMost, entries(taskDir));
    QElapsedTimer stopping;
    stopping.start();
    run.stop();
    const bool gone = waitFor([&] { return livingGroups(groups) == 0; }, 120'000, 5);
    const double stopS = double(stopping.elapsed()) / 1000.0;
    const bool ended = waitFor([&] { return isTerminal(run.state()); }, 120'000);
    const double endedS = double(stopping.elapsed()) / 1000.0;
    tick.stop();
    everySecond.stop();
    if (!gone)
        return finish(QStringLiteral("%1 ranks' processes still there %2 s after the stop")
                          .arg(livingGroups(groups))
                          .arg(stopS, 0, 'f', 1));
    results[key + QStringLiteral("stop_s")] = stopS;

    // Every line each rank says it wrote must be in the record.
    qint64 missing = 0, recorded = 0, gaps = 0;
    int noSummary = 0;
    for (int r = 0; r < ranks; ++r) {
        qint64 lines = 0, wrote = -1, rankGaps = 0;
        rankLogCount(run.logStore()->logFilePath(r), r, &lines, &wrote, &rankGaps);
        recorded += lines;
        gaps += rankGaps;
        if (wrote < 0)
            ++noSummary; // killed before it could say: it cannot count as complete
        else
            missing += std::max<qint64>(0, wrote - lines);
    }
    results[key + QStringLiteral("lines_missing")] = double(missing);
    results[key + QStringLiteral("gui_stall_p99_ms")] = percentile(stalls, 99);
    results[key + QStringLiteral("launcher_rss_mb")] = double(statusKb("VmHWM:")) / 1024.0;
    results[QStringLiteral("fds_per_rank")] = double(fdsMost - fdsBefore) / ranks;
    results[QStringLiteral("threads_per_rank")] = double(threadsMost - threadsBefore) / ranks;

    detail << QStringLiteral("%1 local ranks × %2 lines/s + %3 steps/s: every rank's first step "
                             "%4 s after start (GUI stall p99 %5 ms while launching)")
                  .arg(ranks)
                  .arg(linesPerSec)
                  .arg(stepsPerSec)
                  .arg(launchS, 0, 'f', 1)
                  .arg(percentile(launchStalls, 99), 0, 'f', 1);
    detail << QStringLiteral("loaded %1 s: GUI thread CPU %8 %, GUI stall p99 %2 ms, median %3 ms, "
                             "max %4 ms (%5 ticks); %6 lines/s reached the record (%7 due)")
                  .arg(loadedS, 0, 'f', 1)
                  .arg(percentile(stalls, 99), 0, 'f', 1)
                  .arg(percentile(stalls, 50), 0, 'f', 1)
                  .arg(percentile(stalls, 100), 0, 'f', 1)
                  .arg(stalls.size())
                  .arg(double(linesLoaded) / std::max(0.001, loadedS), 0, 'f', 0)
                  .arg(ranks * linesPerSec)
                  .arg(guiCpuPct, 0, 'f', 0);
    if (onlyPage.isEmpty())
        detail << QStringLiteral("showing a page took at most: Overview %1 ms, Logs %2 ms, Loss "
                                 "%3 ms")
                      .arg(switchMs[0], 0, 'f', 1)
                      .arg(switchMs[1], 0, 'f', 1)
                      .arg(switchMs[2], 0, 'f', 1);
    detail << QStringLiteral("stop: every process gone in %1 s, run %2 after %3 s")
                  .arg(stopS, 0, 'f', 2)
                  .arg(ended ? runStateLabel(run.state()) : QStringLiteral("NOT ended"))
                  .arg(endedS, 0, 'f', 2);
    detail << QStringLiteral("lines: %1 in the record, %2 missing, %3 gaps, %4 ranks without "
                             "their count")
                  .arg(recorded)
                  .arg(missing)
                  .arg(gaps)
                  .arg(noSummary);
    detail << QStringLiteral("this process: peak RSS %1 MB; %2 fds and %3 threads before the run, "
                             "at most %4 and %5 during it")
                  .arg(double(statusKb("VmHWM:")) / 1024.0, 0, 'f', 0)
                  .arg(fdsBefore)
                  .arg(threadsBefore)
                  .arg(fdsMost)
                  .arg(threadsMost);
    view.setRun(nullptr);
    if (noSummary > 0 || gaps > 0) {
        // Lines of a rank killed before its count cannot be proven complete: no number.
        results.remove(key + QStringLiteral("lines_missing"));
        return finish(QStringLiteral("%1 ranks without their count, %2 gaps in the record")
                          .arg(noSummary)
                          .arg(gaps));
    }
    return finish(QString());
}
