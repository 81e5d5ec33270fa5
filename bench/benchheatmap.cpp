// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_gui's heatmap phase: the Overview's step-time heatmap at 512 ranks × 100k steps of
// step_ms and comm_wait_ms (rank 300 slower, the others waiting for it), as RunView refreshes
// it: StepHeatmapCache::update() (only the points appended since the last refresh), then
// StepHeatmapView::setHeatmap() (the image redrawn from the first changed column) and a
// synchronous repaint at 1200 × 320 px.
//   live     each timed refresh follows a new step on every rank, as in a live run, so that no
//            cached frame can answer it; the GUI thread's CPU time (the key, as
//            plot_replot_ms_64x1m), its wall time beside it;
//   rebuild  the first paint of a fresh grid (every point of every rank read), 3 times;
//   toggle   the first switch to communication wait (a rebuild of that grid), and the switch
//            back after 5 more steps (the step-time grid catches up from where it was);
//   straggler  StragglerReport::analyze() of the same store (the text above the heatmap).
#include "benchheatmap.h"
#include "benchmeasure.h"

#include "diagnosis/stragglerreport.h"
#include "models/stepheatmapcache.h"
#include "stepheatmapview.h"
#include "store/metricsstore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace rankdeck;
using rankdeck::bench::threadCpuMs;

namespace {

double middle(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

QJsonArray toArray(const std::vector<double> &v)
{
    QJsonArray a;
    for (double x : v)
        a.append(x);
    return a;
}

struct Timings
{
    std::vector<double> cpu, wall;
    template <typename F> void time(F &&f)
    {
        QElapsedTimer t;
        const double cpu0 = threadCpuMs();
        t.start();
        f();
        wall.push_back(double(t.nsecsElapsed()) / 1e6);
        cpu.push_back(threadCpuMs() - cpu0);
    }
};

} // namespace

int phaseHeatmap(int reps)
{
    constexpr int ranks = 512, points = 100'000, slow = 300;
    MetricsStore store;
    qint64 step = 0;
    const auto appendStep = [&] {
        const qint64 t = 1'700'000'000'000'000 + step * 1000;
        for (int r = 0; r < ranks; ++r) {
            const double noise = double(step * 7 % 13) * 0.1;
            store.append(r, metric::StepTimeMs, step, t, 20.0 + (r == slow ? 15.0 : 0.0) + noise);
            store.append(r, metric::CommWaitMs, step, t, r == slow ? 0.3 : 15.0 + noise);
        }
        ++step;
    };
    while (step < points)
        appendStep();
    StepHeatmapView view;
    view.resize(1200, 320);
    view.show();
    QCoreApplication::processEvents();
    const QString unit = QStringLiteral("ms");
    const auto show = [&](StepHeatmapCache &cache, const QString &metric) {
        const int from = cache.update(store, metric, view.wantedColumns());
        view.setHeatmap(cache.heatmap(), unit, from);
        view.repaint();
    };

    // First paint: a fresh grid from every point.
    Timings rebuild;
    StepHeatmapCache stepTimes;
    for (int i = 0; i < 3; ++i) {
        stepTimes = StepHeatmapCache();
        view.setHeatmap({}, unit); // nothing drawn to keep
        rebuild.time([&] { show(stepTimes, metric::StepTimeMs); });
    }
    const qint64 rebuildRead = stepTimes.lastReadPoints();

    // Live: a new step on every rank before each refresh.
    Timings live;
    std::vector<double> updateCpu;
    qint64 read = 0, redrawn = 0;
    const int timed = std::max(30, reps * 8);
    for (int i = 0; i < timed; ++i) {
        appendStep();
        live.time([&] {
            const double cpu0 = threadCpuMs();
            const int from = stepTimes.update(store, metric::StepTimeMs, view.wantedColumns());
            updateCpu.push_back(threadCpuMs() - cpu0);
            view.setHeatmap(stepTimes.heatmap(), unit, from);
            view.repaint();
        });
        read = std::max(read, stepTimes.lastReadPoints());
        redrawn = std::max(redrawn, view.lastRedrawnCells());
    }

    // The toggle to communication wait (its grid built from every point), and back.
    Timings toggle, back;
    StepHeatmapCache waits;
    toggle.time([&] { show(waits, metric::CommWaitMs); });
    for (int i = 0; i < 5; ++i)
        appendStep();
    back.time([&] { show(stepTimes, metric::StepTimeMs); });

    Timings straggler;
    QString text;
    for (int i = 0; i < 5; ++i)
        straggler.time([&] { text = StragglerReport::analyze(store).text(); });

    const StepHeatmap &h = view.heatmap();
    QJsonObject r;
    r[QStringLiteral("refresh_ms")] = middle(live.cpu);
    r[QStringLiteral("refresh_runs")] = toArray(live.cpu);
    r[QStringLiteral("refresh_wall_ms")] = middle(live.wall);
    r[QStringLiteral("refresh_wall_runs")] = toArray(live.wall);
    r[QStringLiteral("refreshes")] = timed;
    r[QStringLiteral("update_ms")] = middle(updateCpu);
    r[QStringLiteral("read_points")] = double(read);
    r[QStringLiteral("redrawn_cells")] = double(redrawn);
    r[QStringLiteral("rebuild_ms")] = middle(rebuild.cpu);
    r[QStringLiteral("rebuild_runs")] = toArray(rebuild.cpu);
    r[QStringLiteral("rebuild_wall_ms")] = middle(rebuild.wall);
    r[QStringLiteral("rebuild_read_points")] = double(rebuildRead);
    r[QStringLiteral("toggle_ms")] = toggle.cpu.front();
    r[QStringLiteral("toggle_back_ms")] = back.cpu.front();
    r[QStringLiteral("straggler_ms")] = middle(straggler.cpu);
    r[QStringLiteral("straggler_names_slow")] =
        text.startsWith(QStringLiteral("rank %1:").arg(slow));
    r[QStringLiteral("cells")] = double(h.ranks.size()) * h.columns;
    r[QStringLiteral("columns")] = h.columns;
    r[QStringLiteral("steps_per_column")] = double(h.stepsPerColumn());
    r[QStringLiteral("points")] = double(store.totalPoints());
    std::printf("%s\n", QJsonDocument(r).toJson(QJsonDocument::Compact).constData());
    return 0;
}
