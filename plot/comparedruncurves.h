// SPDX-License-Identifier: GPL-3.0-or-later
//
// The graphs of one run in the Loss page's overlay of several runs, in the run's colour: its
// mean across ranks (smoothed, with the raw mean faint behind), optionally a translucent band
// between the per-step min and max across ranks (a QCustomPlot channel fill between two graphs),
// or a thin line per rank. The data comes pre-bucketed from the run's provider (core's running
// per-step sums and extremes, min/max bucketed to the view's pixel columns); update() refetches
// only when the run's data or the view changed, so a finished run next to a live one costs
// nothing per refresh.
#pragma once

#include "plotdataprovider.h"

#include <QColor>
#include <QList>
#include <QString>

class QCPGraph;
class QCPGraphData;
class QCustomPlot;

namespace rankdeck {

// The point of a graph nearest to x: null without data, on a gap between segments (NaN), or
// for a hidden graph. The hover read-outs of the loss plot and of compared runs share it.
const QCPGraphData *nearestPoint(const QCPGraph *graph, double x);

// How a compared run shows its ranks.
enum class CompareRanks
{
    Mean,     // the mean across ranks only
    Band,     // the mean and a min–max band across ranks
    EveryRank // the mean and a thin line per rank
};

// What one refresh asks of every compared run: the same x mode and smoothing for all.
struct CompareView
{
    PlotXMode mode = PlotXMode::Step;
    double weight = 0.0;
    double xMin = 0.0; // xMin < xMax: the range the user zoomed to; else each run's own extent
    double xMax = 0.0;
    int buckets = 0;
    CompareRanks ranks = CompareRanks::Band;
    bool crowded = false; // many curves on screen: no faint raw curves, hairline ranks
    friend bool operator==(const CompareView &, const CompareView &) = default;
};

class ComparedRunCurves
{
public:
    // Layers (of `plot`) for the bands and the rank lines, below the means; created if missing.
    static const char BandLayer[];
    static const char RankLayer[];

    // provider: not owned.
    ComparedRunCurves(QCustomPlot *plot, const PlotDataProvider *provider, const QString &name,
                      const QColor &color);
    ~ComparedRunCurves(); // removes its graphs from the plot
    ComparedRunCurves(const ComparedRunCurves &) = delete;
    ComparedRunCurves &operator=(const ComparedRunCurves &) = delete;

    // Brings the graphs up to the provider's data and `view`; false (and nothing fetched) when
    // neither changed since the last call.
    bool update(const CompareView &view);
    void setVisible(bool visible);
    bool isVisible() const { return m_visible; }

    QString name() const { return m_name; }
    QColor color() const { return m_color; }
    int rankCount() const { return int(m_ranks.size()); }
    // The run's curve as drawn (smoothed when smoothing is on) and its raw mean.
    QCPGraph *meanGraph() const;
    QCPGraph *rawMeanGraph() const { return m_rawMean; }
    // The band's edges (empty unless the band is shown) and the per-rank lines.
    QCPGraph *bandLowGraph() const { return m_bandLow; }
    QCPGraph *bandHighGraph() const { return m_bandHigh; }
    const QList<QCPGraph *> &rankGraphs() const { return m_rankGraphs; }
    // The graphs the y axis is fitted to.
    QList<QCPGraph *> rangeGraphs() const;
    // "name: 0.512 (0.48–0.57)" at x, or empty when the run has no point there.
    QString hoverText(double x, double *key) const;

    // The lower (or upper) edge of min/max-bucketed points: one point per bucket of
    // [xMin, xMax] / buckets, its smallest (largest) value; NaN separators kept.
    static PlotCurve envelope(const PlotCurve &points, double xMin, double xMax, int buckets,
                              bool lower);

private:
    QCPGraph *addGraph(const char *layer);
    void applyPens(const CompareView &view);
    void syncRankGraphs(int count);

    QCustomPlot *m_plot;
    const PlotDataProvider *m_provider;
    QString m_name;
    QColor m_color;
    QCPGraph *m_rawMean = nullptr;
    QCPGraph *m_smoothMean = nullptr;
    QCPGraph *m_bandLow = nullptr;
    QCPGraph *m_bandHigh = nullptr;
    QList<QCPGraph *> m_rankGraphs;
    QList<int> m_ranks;
    CompareView m_view;
    quint64 m_generation = ~quint64(0);
    bool m_visible = true;
    bool m_fresh = false; // m_view and m_generation describe what the graphs hold
};

} // namespace rankdeck
