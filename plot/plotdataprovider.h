// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the loss plot needs from the data side. The plot widget knows nothing about runs or
// stores: the run page hands it a provider over core's MetricsStore (metricsplotprovider.h),
// and the benchmarks can hand it one over synthetic data through the same interface.
#pragma once

#include <QList>
#include <QString>
#include <QVector>

class QIODevice;

namespace rankdeck {

enum class PlotXMode
{
    Step,
    RelativeTime,
    WallTime
};

// One drawable curve. A NaN in y breaks the line: segments (restarts that made steps go
// backwards) are separated that way, so that no zig-zag is drawn between them.
struct PlotCurve
{
    QVector<double> x;
    QVector<double> y;
};

class PlotDataProvider
{
public:
    // Curves across ranks, asked for in place of a rank: per step the mean, smallest and largest
    // value of the ranks that reported it (core's MetricsStore::MeanCurve and its siblings).
    static constexpr int MeanCurve = -1;
    static constexpr int MinCurve = -2;
    static constexpr int MaxCurve = -3;

    virtual ~PlotDataProvider() = default;

    // Bumps whenever new data arrived; the plot polls it on its timer and refetches only then.
    virtual quint64 generation() const = 0;
    // Ranks that have data for the plotted metric, ascending.
    virtual QList<int> ranks() const = 0;
    // The curve of one rank (or MeanCurve, MinCurve, MaxCurve) in the requested x mode, smoothed on
    // the full data with the debiased EMA weight (0 = raw), then bucketed to about `buckets`
    // min/max buckets over [xMin, xMax] (an empty range means everything). Relative time is in
    // seconds since the first point of the run; wall time in seconds since the Unix epoch.
    virtual PlotCurve curve(int rank, PlotXMode mode, double smoothingWeight, double xMin,
                            double xMax, int buckets) const = 0;
    // The x extent of all the data in that mode; false when there is none. Cheap (no points
    // copied): the compare overlay buckets every run over one shared range.
    virtual bool xRange(PlotXMode mode, double *xMin, double *xMax) const = 0;
    // What x counts in PlotXMode::Step, as the axis title ("Step", "Epoch", "Report # (no step
    // in the line)"); empty: "Step". Ranks whose x counts something else are named in
    // curveNote(), never drawn on that axis unsaid.
    virtual QString stepAxisTitle() const { return QString(); }
    // Said after the curve's name in the legend ("x: epoch") when that rank's x counts something
    // other than stepAxisTitle() says; empty otherwise.
    virtual QString curveNote(int rank) const
    {
        Q_UNUSED(rank);
        return QString();
    }
    // Where the curves stop showing every point (a long run's history, folded to each group's
    // lowest and highest value): left of *x, groups of up to *span steps. false: every point.
    virtual bool foldedBefore(PlotXMode mode, double *x, qint64 *span) const
    {
        Q_UNUSED(mode);
        Q_UNUSED(x);
        Q_UNUSED(span);
        return false;
    }
    // Full-resolution CSV of everything plotted (no bucketing, no smoothing).
    virtual bool writeCsv(QIODevice *out, QString *errorMessage) const = 0;
    // Every metric of every rank as TensorBoard event files, one sub-directory per rank.
    virtual bool writeTensorBoard(const QString &directory, QString *errorMessage) const = 0;
};

} // namespace rankdeck
