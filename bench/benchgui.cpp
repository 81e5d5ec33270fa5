// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one benchmark program whose five phases each run in a
// child process of this same binary; they share its measuring helpers and its JSON output.
//
// bench_gui: how the app holds up under cluster-scale load. Five phases, each in a fresh child
// process of this program so that one phase's memory does not colour another's:
//   stall   64 synthetic ranks (rankdeck-loadgen through the real local transport, line
//           splitter, parser and stores) × 2,000 log lines/s and 20 step events/s each, with the
//           run page open on the merged log; p99 of the GUI event loop's lateness; then every
//           rank's log file in the run record is checked line by line for gaps.
//   rss     one run pushes N log lines (100 million; --quick: 20 million) through the app with
//           the run page open; resident memory afterwards.
//   replot  the loss plot holding 64 ranks × 1 million points; the GUI thread's CPU time for a
//           full refresh (fetch, min/max bucketing in core, mean across ranks, draw), each one
//           after every rank appended a step (live) or after that and a 3 % pan (zoomed in), at
//           least 30 of each; the key is the slower median of the two. CPU time, because the
//           wall time also holds the time other processes had the core; the wall time is
//           reported beside it, with min and max. Refreshing unchanged data (the earlier
//           definition) is reported too.
//   heatmap the Overview's step-time heatmap at 512 ranks × 100k steps, refreshed after every
//           rank appended a step (benchheatmap.cpp).
//   compare the Loss page overlaying 8 runs × 64 ranks × 100k points (means and min–max bands),
//           GUI-thread CPU time of a refresh after new data, as replot.
// Prints one JSON line: {"results": {...}, "detail": "..."}. --phase NAME runs one phase alone;
// --slow-events MS prints to stderr which events kept the GUI thread over MS ms in one go during
// the stall and rss runs (what a stall is made of; bench/timedapplication.h).
#include "benchheatmap.h"
#include "benchmeasure.h"
#include "lossplot.h"
#include "timedapplication.h"

#include "config/profile.h"
#include "config/trainingconfig.h"
#include "loadgenlog.h"
#include "logspage.h"
#include "metricsplotprovider.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include <qcustomplot.h>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

using namespace rankdeck;
using rankdeck::bench::percentile;
using rankdeck::bench::statusKb;
using rankdeck::bench::threadCpuMs;

namespace {

double median(std::vector<double> v)
{
    return percentile(std::move(v), 50);
}

QJsonArray array(const std::vector<double> &v)
{
    QJsonArray a;
    for (double x : v)
        a.append(x);
    return a;
}

QString binDir()
{
    const QString fromEnv = qEnvironmentVariable("RANKDECK_BIN_DIR");
    return fromEnv.isEmpty() ? QCoreApplication::applicationDirPath() + QStringLiteral("/../bin")
                             : fromEnv;
}

struct RunOutcome
{
    bool ok = false;
    QString error;
    std::vector<double> stallsMs;
    qint64 lines = 0;
    qint64 missing = 0;
    double seconds = 0;
};

// One synthetic run with the run page open; measures event-loop lateness throughout.
RunOutcome syntheticRun(int ranks, const QStringList &loadgenArgs, RunView::Page page, bool verify)
{
    RunOutcome out;
    QTemporaryDir runs;
    Profile profile = Profile::builtinLocal(ranks);
    TrainingConfig config;
    config.name = QStringLiteral("bench");
    config.workerArguments = loadgenArgs;
    RunController::Options options;
    options.workerPath = binDir() + QStringLiteral("/rankdeck-loadgen");
    options.runsDirectory = runs.path();
    options.hangTimeoutSec = 3600;
    RunController run(profile, config, options);

    RunView view;
    view.resize(1400, 900);
    view.show();
    view.setRun(&run);
    view.setCurrentIndex(page);

    // A 10 ms tick; lateness beyond its period is time the event loop could not serve the user.
    constexpr int tickMs = 10;
    QElapsedTimer clock;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    qint64 last = 0;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (last > 0)
            out.stallsMs.push_back(std::max(0.0, double(now - last) / 1e6 - tickMs));
        last = now;
    });

    QEventLoop loop;
    QObject::connect(&run, &RunController::finished, &loop, &QEventLoop::quit);
    QString error;
    if (!run.start(&error)) {
        out.error = error;
        return out;
    }
    auto *app = static_cast<rankdeck::bench::TimedApplication *>(QCoreApplication::instance());
    clock.start();
    tick.start(tickMs);
    app->setRecording(true);
    loop.exec();
    app->setRecording(false);
    tick.stop();
    if (app->timing())
        app->printSlow();
    out.seconds = double(clock.elapsed()) / 1000.0;
    if (run.state() != RunState::Finished) {
        out.error =
            QStringLiteral("run ended %1: %2").arg(int(run.state())).arg(run.rootCauseSummary());
        return out;
    }
    if (verify) {
        for (int r = 0; r < ranks; ++r) {
            qint64 count = 0;
            QString problem;
            if (!rankLogComplete(run.logStore()->logFilePath(r), r, &count, &problem)) {
                out.error = problem;
                return out;
            }
            out.lines += count;
        }
    } else {
        for (int r = 0; r < ranks; ++r)
            out.lines += run.logStore()->lineCount(r);
    }
    out.ok = true;
    return out;
}

int phaseStall(bool quick)
{
    const int seconds = quick ? 15 : 60;
    const int ranks = 64, linesPerSec = 2000, stepsPerSec = 20;
    RunOutcome o = syntheticRun(ranks,
                                {QStringLiteral("--lines-per-sec"), QString::number(linesPerSec),
                                 QStringLiteral("--steps-per-sec"), QString::number(stepsPerSec),
                                 QStringLiteral("--duration"), QString::number(seconds)},
                                RunView::Logs, true);
    QJsonObject r;
    if (!o.ok) {
        r[QStringLiteral("error")] = o.error;
    } else {
        const qint64 due = qint64(ranks) * linesPerSec * seconds;
        r[QStringLiteral("p99_ms")] = percentile(o.stallsMs, 99);
        r[QStringLiteral("max_ms")] = percentile(o.stallsMs, 100);
        r[QStringLiteral("lines")] = o.lines;
        // Lines the generators were due to print but did not (they run late on a loaded
        // machine) are not lines lost by the launcher; gaps inside a log would have failed above.
        r[QStringLiteral("due")] = due;
        r[QStringLiteral("seconds")] = o.seconds;
        r[QStringLiteral("missing")] = 0;
    }
    std::printf("%s\n", QJsonDocument(r).toJson(QJsonDocument::Compact).constData());
    return o.ok ? 0 : 1;
}

int phaseRss(bool quick)
{
    const qint64 total = quick ? 20'000'000 : 100'000'000;
    const int ranks = 8;
    RunOutcome o = syntheticRun(ranks,
                                {QStringLiteral("--lines-per-sec"), QStringLiteral("0"),
                                 QStringLiteral("--steps-per-sec"), QStringLiteral("20"),
                                 QStringLiteral("--total-lines"), QString::number(total / ranks)},
                                RunView::Logs, false);
    QJsonObject r;
    if (!o.ok) {
        r[QStringLiteral("error")] = o.error;
    } else {
        r[QStringLiteral("rss_mb")] = double(statusKb("VmRSS:")) / 1024.0;
        r[QStringLiteral("peak_mb")] = double(statusKb("VmHWM:")) / 1024.0;
        r[QStringLiteral("lines")] = o.lines;
        r[QStringLiteral("seconds")] = o.seconds;
    }
    std::printf("%s\n", QJsonDocument(r).toJson(QJsonDocument::Compact).constData());
    return o.ok ? 0 : 1;
}

int phaseReplot(int reps)
{
    const int ranks = 64;
    const qint64 points = 1'000'000;
    MetricsStore store;
    const qint64 t0 = 1'700'000'000'000'000;
    const auto appendStep = [&](int r, qint64 s) {
        // A falling curve with noise and rare spikes, so bucketing has extremes to keep.
        const double noise = double((s * 2654435761U + qint64(r) * 40503U) % 1000) / 1e4;
        const double spike = (s % 99991 == 0) ? 5.0 : 0.0;
        store.append(r, QStringLiteral("loss"), s, t0 + s * 1000,
                     2.0 / (1.0 + s / 1e4) + noise + spike);
    };
    for (int r = 0; r < ranks; ++r) {
        for (qint64 s = 1; s <= points; ++s)
            appendStep(r, s);
    }
    MetricsPlotProvider provider(&store, QStringLiteral("loss"));
    LossPlot plot;
    plot.resize(1400, 800);
    plot.show();
    plot.setProvider(&provider);
    plot.refreshNow(); // first build of the graphs is not a replot

    // Every timed refresh below follows a real change, as a user sees it: nothing a frame cache
    // could replay. The appends themselves are the training run's work, not the plot's, and stay
    // outside the timing.
    qint64 nextStep = points + 1;
    const auto newStepOnEveryRank = [&] {
        for (int r = 0; r < ranks; ++r)
            appendStep(r, nextStep);
        ++nextStep;
    };
    std::vector<double> cpu;
    const auto timeRefresh = [&](std::vector<double> &total, std::vector<double> *draw) {
        QElapsedTimer t;
        const double cpu0 = threadCpuMs();
        t.start();
        plot.refreshNow();
        total.push_back(double(t.nsecsElapsed()) / 1e6);
        cpu.push_back(threadCpuMs() - cpu0);
        if (draw)
            draw->push_back(plot.lastReplotMs());
    };
    // At least 30 refreshes of each kind: a median of a few moved by several ms between runs.
    const int timed = std::max(30, reps * 8);
    // The earlier definition: the same full refresh (fetch, bucketing, mean, draw) of unchanged
    // data, kept to compare with numbers measured before.
    std::vector<double> unchanged;
    for (int i = 0; i < timed; ++i)
        timeRefresh(unchanged, nullptr);
    // Live training: every rank appended a step since the last refresh; the view follows the data.
    std::vector<double> live, drawOnly;
    const std::vector<double> cpuUnchanged = std::exchange(cpu, {});
    for (int i = 0; i < timed; ++i) {
        newStepOnEveryRank();
        timeRefresh(live, &drawOnly);
    }
    const std::vector<double> cpuLive = std::exchange(cpu, {});
    // Zoomed to the newer half and panned by 3 % of the view before each refresh, while ranks go
    // on appending: every refresh buckets a new x range.
    std::vector<double> pan;
    QCPAxis *x = plot.customPlot()->xAxis;
    x->setRange(double(points) * 0.4, double(points) * 0.9);
    plot.refreshNow();
    for (int i = 0; i < timed; ++i) {
        newStepOnEveryRank();
        const double shift = (i % 10 < 5 ? 0.03 : -0.03) * x->range().size();
        x->setRange(x->range().lower + shift, x->range().upper + shift);
        timeRefresh(pan, nullptr);
    }
    const std::vector<double> cpuPan = std::exchange(cpu, {});
    // A new smoothing weight (the slider moved): the EMA is recomputed on the full data of every
    // rank, by design (an EMA of bucketed data would not be TensorBoard's curve). For the record.
    std::vector<double> reweight;
    for (int i = 1; i <= 3; ++i) {
        plot.setSmoothing(0.6 + 0.01 * i);
        timeRefresh(reweight, nullptr);
    }
    // The slower of the two kinds, by CPU time (the held figure) and by wall time (beside it).
    const bool panSlower = median(cpuPan) > median(cpuLive);
    const bool panSlowerWall = median(pan) > median(live);
    QJsonObject r;
    r[QStringLiteral("reweight_ms")] = median(reweight);
    r[QStringLiteral("cpu_ms")] = median(panSlower ? cpuPan : cpuLive);
    r[QStringLiteral("cpu_kind")] = panSlower ? QStringLiteral("panned") : QStringLiteral("live");
    r[QStringLiteral("cpu_runs")] = array(panSlower ? cpuPan : cpuLive);
    r[QStringLiteral("refresh_ms")] = median(panSlowerWall ? pan : live);
    r[QStringLiteral("wall_runs")] = array(panSlowerWall ? pan : live);
    r[QStringLiteral("refreshes")] = timed;
    r[QStringLiteral("cpu_live_ms")] = median(cpuLive);
    r[QStringLiteral("cpu_pan_ms")] = median(cpuPan);
    r[QStringLiteral("cpu_unchanged_ms")] = median(cpuUnchanged);
    r[QStringLiteral("live_ms")] = median(live);
    r[QStringLiteral("pan_ms")] = median(pan);
    r[QStringLiteral("unchanged_ms")] = median(unchanged);
    r[QStringLiteral("draw_ms")] = median(drawOnly);
    r[QStringLiteral("points")] = double(store.totalPoints());
    int drawn = 0;
    for (int i = 0; i < plot.customPlot()->graphCount(); ++i)
        drawn +=
            plot.customPlot()->graph(i)->visible() ? plot.customPlot()->graph(i)->dataCount() : 0;
    r[QStringLiteral("drawn_points")] = drawn;
    std::printf("%s\n", QJsonDocument(r).toJson(QJsonDocument::Compact).constData());
    return 0;
}

// The Loss page overlaying 8 runs × 64 ranks × 100k points, each run's mean across its ranks
// with its min–max band (the Loss page's default), smoothed: the GUI thread's CPU time for a full
// refresh (fetch, bucketing in core, the band's edges, draw) after every rank of every run
// appended a step (live), and after that and a 3 % pan of a zoomed view (panned), at least 30 of
// each; the key is the slower median of the two, as for replot. The mean alone and every rank
// (512 thin lines) are measured the same way and reported beside it.
int phaseCompare(int reps)
{
    constexpr int runs = 8, ranks = 64, points = 100'000;
    std::vector<std::unique_ptr<MetricsStore>> stores;
    std::vector<std::unique_ptr<MetricsPlotProvider>> providers;
    QList<LossPlot::ComparedRun> compared;
    qint64 step = 0;
    for (int k = 0; k < runs; ++k) {
        stores.push_back(std::make_unique<MetricsStore>());
        providers.push_back(
            std::make_unique<MetricsPlotProvider>(stores.back().get(), metric::Loss));
        compared.append({QStringLiteral("run-%1").arg(k), providers.back().get(), {}});
    }
    // Each run its own learning rate; ranks apart by a few percent, rare spikes on one rank, so
    // that the band has width and extremes to keep.
    const auto appendStep = [&] {
        for (int k = 0; k < runs; ++k)
            for (int r = 0; r < ranks; ++r)
                stores[size_t(k)]->append(r, metric::Loss, step,
                                          1'700'000'000'000'000 + step * 1000,
                                          2.0 / (1.0 + double(step) * 1e-4 * (k + 1)) +
                                              double((step * 31 + r) % 17) * 0.01 +
                                              (r == 5 && step % 9973 == 0 ? 1.0 : 0.0));
        ++step;
    };
    while (step < points)
        appendStep();
    LossPlot plot;
    plot.resize(1400, 800);
    plot.show();
    plot.setComparedRuns(compared);
    QCPAxis *x = plot.customPlot()->xAxis;
    const int timed = std::max(30, reps * 8);
    struct Timings
    {
        std::vector<double> cpuLive, cpuPan, wallLive, wallPan, cpuFetch, cpuDraw;
        double draw = 0;
    };
    const auto measure = [&](CompareRanks how) {
        Timings t;
        plot.setCompareRanks(how);
        plot.resetView();
        plot.refreshNow(); // the first smoothing pass over a new column is not a refresh
        // The page timer's refresh in its two halves: poll() fetches what changed (bucketed in
        // core), the replot draws it.
        const auto once = [&](std::vector<double> &cpu, std::vector<double> &wall) {
            QElapsedTimer clock;
            const double cpu0 = threadCpuMs();
            clock.start();
            plot.poll();
            const double cpu1 = threadCpuMs();
            plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
            wall.push_back(double(clock.nsecsElapsed()) / 1e6);
            const double cpu2 = threadCpuMs();
            cpu.push_back(cpu2 - cpu0);
            t.cpuFetch.push_back(cpu1 - cpu0);
            t.cpuDraw.push_back(cpu2 - cpu1);
        };
        for (int i = 0; i < timed; ++i) {
            appendStep();
            once(t.cpuLive, t.wallLive);
        }
        t.draw = plot.lastReplotMs();
        x->setRange(double(step) * 0.4, double(step) * 0.9);
        plot.refreshNow();
        for (int i = 0; i < timed; ++i) {
            appendStep();
            const double shift = (i % 10 < 5 ? 0.03 : -0.03) * x->range().size();
            x->setRange(x->range().lower + shift, x->range().upper + shift);
            once(t.cpuPan, t.wallPan);
        }
        return t;
    };
    const Timings band = measure(CompareRanks::Band);
    const Timings mean = measure(CompareRanks::Mean);
    const Timings every = measure(CompareRanks::EveryRank);
    const auto slower = [](const std::vector<double> &a, const std::vector<double> &b) {
        return median(a) >= median(b) ? a : b;
    };
    QJsonObject r;
    r[QStringLiteral("cpu_ms")] = median(slower(band.cpuLive, band.cpuPan));
    r[QStringLiteral("cpu_kind")] = median(band.cpuLive) >= median(band.cpuPan)
                                        ? QStringLiteral("live")
                                        : QStringLiteral("panned");
    r[QStringLiteral("cpu_runs")] = array(slower(band.cpuLive, band.cpuPan));
    r[QStringLiteral("refreshes")] = timed;
    r[QStringLiteral("cpu_live_ms")] = median(band.cpuLive);
    r[QStringLiteral("cpu_pan_ms")] = median(band.cpuPan);
    r[QStringLiteral("wall_ms")] = median(slower(band.wallLive, band.wallPan));
    r[QStringLiteral("draw_ms")] = band.draw;
    r[QStringLiteral("fetch_cpu_ms")] = median(band.cpuFetch);
    r[QStringLiteral("draw_cpu_ms")] = median(band.cpuDraw);
    r[QStringLiteral("every_rank_fetch_cpu_ms")] = median(every.cpuFetch);
    r[QStringLiteral("every_rank_draw_cpu_ms")] = median(every.cpuDraw);
    r[QStringLiteral("mean_cpu_ms")] = median(slower(mean.cpuLive, mean.cpuPan));
    r[QStringLiteral("every_rank_cpu_ms")] = median(slower(every.cpuLive, every.cpuPan));
    qint64 total = 0;
    for (const auto &s : stores)
        total += s->totalPoints();
    r[QStringLiteral("points")] = double(total);
    std::printf("%s\n", QJsonDocument(r).toJson(QJsonDocument::Compact).constData());
    return 0;
}

QJsonObject runPhase(const QString &phase, bool quick, int reps)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QStringList args{QStringLiteral("--phase"), phase, QStringLiteral("--reps"),
                     QString::number(reps)};
    if (quick)
        args << QStringLiteral("--quick");
    const QStringList own = QCoreApplication::arguments();
    if (const int slowAt = int(own.indexOf(QStringLiteral("--slow-events"))); slowAt > 0)
        args << QStringLiteral("--slow-events") << own.value(slowAt + 1);
    p.start(QCoreApplication::applicationFilePath(), args);
    p.waitForFinished(-1);
    const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
    QJsonObject o = QJsonDocument::fromJson(lines.value(lines.size() - 1)).object();
    if (o.isEmpty())
        o[QStringLiteral("error")] =
            QStringLiteral("phase %1 printed no result (exit %2)").arg(phase).arg(p.exitCode());
    return o;
}

} // namespace

int main(int argc, char **argv)
{
    rankdeck::bench::TimedApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    if (const int slowAt = int(args.indexOf(QStringLiteral("--slow-events"))); slowAt > 0)
        app.setThresholdMs(args.value(slowAt + 1).toDouble());
    const bool quick = args.contains(QStringLiteral("--quick"));
    const int repsAt = int(args.indexOf(QStringLiteral("--reps")));
    const int reps = repsAt > 0 ? std::max(1, args.value(repsAt + 1).toInt()) : 5;
    const int phaseAt = int(args.indexOf(QStringLiteral("--phase")));
    if (phaseAt > 0) {
        const QString phase = args.value(phaseAt + 1);
        if (phase == QLatin1String("stall"))
            return phaseStall(quick);
        if (phase == QLatin1String("rss"))
            return phaseRss(quick);
        if (phase == QLatin1String("replot"))
            return phaseReplot(reps);
        if (phase == QLatin1String("heatmap"))
            return phaseHeatmap(reps);
        if (phase == QLatin1String("compare"))
            return phaseCompare(reps);
        std::fprintf(stderr, "bench_gui: unknown phase %s\n", qPrintable(phase));
        return 2;
    }

    QJsonObject results;
    QStringList detail;
    const QJsonObject replot = runPhase(QStringLiteral("replot"), quick, reps);
    if (replot.contains(QStringLiteral("cpu_ms"))) {
        const QJsonArray cpuRuns = replot[QStringLiteral("cpu_runs")].toArray();
        const QJsonArray wallRuns = replot[QStringLiteral("wall_runs")].toArray();
        results[QStringLiteral("plot_replot_ms_64x1m")] = replot[QStringLiteral("cpu_ms")];
        results[QStringLiteral("plot_replot_ms_64x1m_runs")] = cpuRuns;
        results[QStringLiteral("plot_replot_wall_ms_64x1m")] = replot[QStringLiteral("refresh_ms")];
        results[QStringLiteral("plot_replot_wall_ms_64x1m_runs")] = wallRuns;
        const auto range = [](const QJsonArray &a) {
            std::vector<double> v;
            for (const auto &ms : a)
                v.push_back(ms.toDouble());
            return QStringLiteral("min %1, max %2")
                .arg(percentile(v, 0), 0, 'f', 1)
                .arg(percentile(v, 100), 0, 'f', 1);
        };
        detail << QStringLiteral("replot: GUI thread CPU %1 ms a refresh after new data (%2, "
                                 "median of %3; %4; CPU live %5, panned %6 ms), wall %7 ms (%8; "
                                 "live %9 ms, panned %10 ms)")
                      .arg(replot[QStringLiteral("cpu_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("cpu_kind")].toString())
                      .arg(replot[QStringLiteral("refreshes")].toInt())
                      .arg(range(cpuRuns))
                      .arg(replot[QStringLiteral("cpu_live_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("cpu_pan_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("refresh_ms")].toDouble(), 0, 'f', 1)
                      .arg(range(wallRuns))
                      .arg(replot[QStringLiteral("live_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("pan_ms")].toDouble(), 0, 'f', 1);
        detail << QStringLiteral("replot: unchanged data %1 ms (CPU %2 ms); draw %3 ms; new "
                                 "smoothing weight %4 ms; %5 points, %6 drawn")
                      .arg(replot[QStringLiteral("unchanged_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("cpu_unchanged_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("draw_ms")].toDouble(), 0, 'f', 1)
                      .arg(replot[QStringLiteral("reweight_ms")].toDouble(), 0, 'f', 0)
                      .arg(replot[QStringLiteral("points")].toDouble(), 0, 'f', 0)
                      .arg(replot[QStringLiteral("drawn_points")].toInt());
    } else {
        detail << QStringLiteral("replot: ") + replot[QStringLiteral("error")].toString();
    }
    const QJsonObject heatmap = runPhase(QStringLiteral("heatmap"), quick, reps);
    if (heatmap.contains(QStringLiteral("refresh_ms"))) {
        const auto num = [&](const char *key) { return heatmap[QLatin1String(key)].toDouble(); };
        results[QStringLiteral("heatmap_refresh_ms_512x100k")] = num("refresh_ms");
        results[QStringLiteral("heatmap_refresh_ms_512x100k_runs")] =
            heatmap[QStringLiteral("refresh_runs")];
        results[QStringLiteral("heatmap_refresh_wall_ms_512x100k")] = num("refresh_wall_ms");
        results[QStringLiteral("heatmap_refresh_wall_ms_512x100k_runs")] =
            heatmap[QStringLiteral("refresh_wall_runs")];
        results[QStringLiteral("heatmap_rebuild_ms_512x100k")] = num("rebuild_ms");
        results[QStringLiteral("heatmap_rebuild_ms_512x100k_runs")] =
            heatmap[QStringLiteral("rebuild_runs")];
        detail << QStringLiteral("heatmap: GUI thread CPU %1 ms a refresh after a new step on "
                                 "every rank (median of %2; the grid's update %3 ms, %4 points "
                                 "read, %5 cells redrawn), wall %6 ms; rebuild (first paint) "
                                 "%7 ms CPU, %8 ms wall, %9 points read; toggle to comm wait "
                                 "%10 ms, back %11 ms; straggler text %12 ms (%13); %14 points, "
                                 "%15 cells, %16 steps a column")
                      .arg(num("refresh_ms"), 0, 'f', 2)
                      .arg(heatmap[QStringLiteral("refreshes")].toInt())
                      .arg(num("update_ms"), 0, 'f', 2)
                      .arg(num("read_points"), 0, 'f', 0)
                      .arg(num("redrawn_cells"), 0, 'f', 0)
                      .arg(num("refresh_wall_ms"), 0, 'f', 2)
                      .arg(num("rebuild_ms"), 0, 'f', 0)
                      .arg(num("rebuild_wall_ms"), 0, 'f', 0)
                      .arg(num("rebuild_read_points"), 0, 'f', 0)
                      .arg(num("toggle_ms"), 0, 'f', 0)
                      .arg(num("toggle_back_ms"), 0, 'f', 1)
                      .arg(num("straggler_ms"), 0, 'f', 1)
                      .arg(heatmap[QStringLiteral("straggler_names_slow")].toBool()
                               ? QStringLiteral("names rank 300")
                               : QStringLiteral("does NOT name rank 300"))
                      .arg(num("points"), 0, 'f', 0)
                      .arg(num("cells"), 0, 'f', 0)
                      .arg(num("steps_per_column"), 0, 'f', 0);
    } else {
        detail << QStringLiteral("heatmap: ") + heatmap[QStringLiteral("error")].toString();
    }
    const QJsonObject compare = runPhase(QStringLiteral("compare"), quick, reps);
    if (compare.contains(QStringLiteral("cpu_ms"))) {
        results[QStringLiteral("compare_replot_ms_8runs")] = compare[QStringLiteral("cpu_ms")];
        results[QStringLiteral("compare_replot_ms_8runs_runs")] =
            compare[QStringLiteral("cpu_runs")];
        const auto ms = [&](const char *key) {
            return QString::number(compare[QLatin1String(key)].toDouble(), 'f', 1);
        };
        detail << QStringLiteral("compare: GUI thread CPU %1 ms a refresh after new data, mean "
                                 "and min–max band (%2, median of %3; live %4, panned %5 ms; "
                                 "fetch %6, draw %7 ms CPU; wall %8 ms); mean only %9 ms; every "
                                 "rank %10 ms (fetch %11, draw %12 ms); %13 points in 8 runs")
                      .arg(ms("cpu_ms"), compare[QStringLiteral("cpu_kind")].toString(),
                           QString::number(compare[QStringLiteral("refreshes")].toInt()),
                           ms("cpu_live_ms"), ms("cpu_pan_ms"), ms("fetch_cpu_ms"),
                           ms("draw_cpu_ms"), ms("wall_ms"), ms("mean_cpu_ms"),
                           ms("every_rank_cpu_ms"), ms("every_rank_fetch_cpu_ms"),
                           ms("every_rank_draw_cpu_ms"),
                           QString::number(compare[QStringLiteral("points")].toDouble(), 'f', 0));
    } else {
        detail << QStringLiteral("compare: ") + compare[QStringLiteral("error")].toString();
    }
    const QJsonObject stall = runPhase(QStringLiteral("stall"), quick, reps);
    if (stall.contains(QStringLiteral("p99_ms"))) {
        results[QStringLiteral("gui_stall_p99_ms")] = stall[QStringLiteral("p99_ms")];
        // One run (a p99 over thousands of ticks): its spread is the two --quick runs in
        // docs/benchmarks.md.
        results[QStringLiteral("gui_stall_p99_ms_runs")] =
            QJsonArray{stall[QStringLiteral("p99_ms")]};
        detail << QStringLiteral(
                      "stall: p99 %1 ms, max %2 ms, %3 lines checked gap-free (%4 due) in %5 s")
                      .arg(stall[QStringLiteral("p99_ms")].toDouble(), 0, 'f', 1)
                      .arg(stall[QStringLiteral("max_ms")].toDouble(), 0, 'f', 1)
                      .arg(stall[QStringLiteral("lines")].toDouble(), 0, 'f', 0)
                      .arg(stall[QStringLiteral("due")].toDouble(), 0, 'f', 0)
                      .arg(stall[QStringLiteral("seconds")].toDouble(), 0, 'f', 0);
    } else {
        detail << QStringLiteral("stall: ") + stall[QStringLiteral("error")].toString();
    }
    const QJsonObject rss = runPhase(QStringLiteral("rss"), quick, reps);
    if (rss.contains(QStringLiteral("rss_mb"))) {
        const double lines = rss[QStringLiteral("lines")].toDouble();
        // The key names 100 million lines; a quick run pushes fewer and says so.
        if (lines >= 1e8) {
            results[QStringLiteral("gui_rss_mb_100m_lines")] = rss[QStringLiteral("rss_mb")];
            results[QStringLiteral("gui_rss_mb_100m_lines_runs")] =
                QJsonArray{rss[QStringLiteral("rss_mb")]};
        }
        detail << QStringLiteral("rss: %1 MB resident (peak %2 MB) after %3 lines in %4 s")
                      .arg(rss[QStringLiteral("rss_mb")].toDouble(), 0, 'f', 0)
                      .arg(rss[QStringLiteral("peak_mb")].toDouble(), 0, 'f', 0)
                      .arg(lines, 0, 'f', 0)
                      .arg(rss[QStringLiteral("seconds")].toDouble(), 0, 'f', 0);
    } else {
        detail << QStringLiteral("rss: ") + rss[QStringLiteral("error")].toString();
    }
    QJsonObject out;
    out[QStringLiteral("results")] = results;
    out[QStringLiteral("detail")] = detail.join(QStringLiteral("; "));
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return 0;
}
