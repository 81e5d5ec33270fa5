// SPDX-License-Identifier: GPL-3.0-or-later
#include "comparedruncurves.h"

#include <qcustomplot.h>

#include <cmath>
#include <limits>

namespace rankdeck {

const char ComparedRunCurves::BandLayer[] = "compareBands";
const char ComparedRunCurves::RankLayer[] = "compareRanks";

namespace {
// Translucent enough that two runs' bands overlapping still show both colours.
constexpr int BandAlpha = 56;
constexpr int RankAlpha = 120;
constexpr int FaintAlpha = 60;

// A graph whose opaque lines wider than a pixel are drawn as separate segments. Qt strokes a
// polyline with its joins into one polygon, and for a min/max-bucketed curve (a zig-zag within
// each bucket) that costs ~8× as much as the segments (6 ms against 0.7 ms for 1,300 points at
// 2.5 px); with an opaque pen and square caps the two look the same. Anything else (translucent
// pens, dashes, hairlines, PDF) takes QCustomPlot's own path.
class SegmentGraph : public QCPGraph
{
public:
    using QCPGraph::QCPGraph;

protected:
    void drawLinePlot(QCPPainter *painter, const QVector<QPointF> &lines) const override
    {
        const QPen &pen = painter->pen();
        if (pen.style() != Qt::SolidLine || pen.color().alpha() != 255 || pen.widthF() <= 1.0 ||
            pen.isCosmetic() || painter->modes().testFlag(QCPPainter::pmVectorized)) {
            QCPGraph::drawLinePlot(painter, lines);
            return;
        }
        applyDefaultAntialiasingHint(painter);
        QVector<QLineF> segments;
        segments.reserve(lines.size());
        const auto drawable = [](const QPointF &p) {
            return std::isfinite(p.x()) && std::isfinite(p.y());
        };
        for (qsizetype i = 1; i < lines.size(); ++i) {
            if (drawable(lines[i - 1]) && drawable(lines[i])) // NaN: a gap between segments
                segments.append(QLineF(lines[i - 1], lines[i]));
        }
        painter->drawLines(segments);
    }
};

QCPLayer *layerBelow(QCustomPlot *plot, const char *name, QCPLayer *above)
{
    const QString layerName = QString::fromLatin1(name);
    if (QCPLayer *existing = plot->layer(layerName))
        return existing;
    plot->addLayer(layerName, above, QCustomPlot::limBelow);
    return plot->layer(layerName);
}

void setCurve(QCPGraph *graph, const PlotCurve &curve)
{
    // Bucketed data, in key order within each segment: no sort, no copy through QCPGraphData.
    graph->setData(curve.x, curve.y, true);
}

} // namespace

const QCPGraphData *nearestPoint(const QCPGraph *graph, double x)
{
    const auto points = graph->data();
    if (!graph->visible() || points->isEmpty())
        return nullptr;
    auto it = points->findBegin(x, false);
    if (it == points->constEnd())
        --it;
    if (it != points->constBegin() && std::abs((it - 1)->key - x) < std::abs(it->key - x))
        --it;
    return std::isnan(it->value) ? nullptr : &*it;
}

ComparedRunCurves::ComparedRunCurves(QCustomPlot *plot, const PlotDataProvider *provider,
                                     const QString &name, const QColor &color)
    : m_plot(plot), m_provider(provider), m_name(name), m_color(color)
{
    QCPLayer *ranks = layerBelow(plot, RankLayer, plot->layer(QStringLiteral("main")));
    layerBelow(plot, BandLayer, ranks);
    m_bandLow = addGraph(BandLayer);
    m_bandHigh = addGraph(BandLayer);
    m_bandLow->setPen(Qt::NoPen);
    m_bandHigh->setPen(Qt::NoPen);
    QColor fill = color;
    fill.setAlpha(BandAlpha);
    m_bandHigh->setBrush(fill);
    m_bandHigh->setChannelFillGraph(m_bandLow);
    // Translucent, so its edge's antialiasing does not show; a quarter of the fill's cost.
    m_bandHigh->setAntialiasedFill(false);
    m_rawMean = addGraph("main");
    m_smoothMean = new SegmentGraph(plot->xAxis, plot->yAxis);
    m_smoothMean->setLayer(QStringLiteral("main"));
    m_smoothMean->setName(m_name);
}

ComparedRunCurves::~ComparedRunCurves()
{
    for (QCPGraph *g : std::as_const(m_rankGraphs))
        m_plot->removeGraph(g);
    for (QCPGraph *g : {m_bandHigh, m_bandLow, m_rawMean, m_smoothMean})
        m_plot->removeGraph(g);
}

QCPGraph *ComparedRunCurves::addGraph(const char *layer)
{
    QCPGraph *g = m_plot->addGraph();
    g->setLayer(QString::fromLatin1(layer));
    g->setName(m_name);
    return g;
}

void ComparedRunCurves::syncRankGraphs(int count)
{
    while (m_rankGraphs.size() > count)
        m_plot->removeGraph(m_rankGraphs.takeLast());
    while (m_rankGraphs.size() < count)
        m_rankGraphs.append(addGraph(RankLayer));
}

QCPGraph *ComparedRunCurves::meanGraph() const
{
    return m_smoothMean->visible() ? m_smoothMean : m_rawMean;
}

void ComparedRunCurves::setVisible(bool visible)
{
    if (visible == m_visible)
        return;
    m_visible = visible;
    m_fresh = false; // hidden graphs are not kept current: refetch when shown again
    if (!visible) {
        for (QCPGraph *g : {m_bandHigh, m_bandLow, m_rawMean, m_smoothMean})
            g->setVisible(false);
        for (QCPGraph *g : std::as_const(m_rankGraphs))
            g->setVisible(false);
    }
}

void ComparedRunCurves::applyPens(const CompareView &view)
{
    const bool smooth = view.weight > 0;
    QColor raw = m_color;
    raw.setAlpha(smooth ? FaintAlpha : 255);
    // Cosmetic one-pixel pens take Qt's fast hairline stroker; wider pens are stroked into
    // polygons (see LossPlot::rebuild()).
    QPen rawPen(raw, 1);
    rawPen.setCosmetic(true);
    m_rawMean->setPen(rawPen);
    m_smoothMean->setPen(QPen(m_color, 2.5));
    QColor rank = m_color;
    rank.setAlpha(RankAlpha);
    QPen rankPen(rank, 1);
    rankPen.setCosmetic(true);
    for (QCPGraph *g : std::as_const(m_rankGraphs))
        g->setPen(rankPen);
}

bool ComparedRunCurves::update(const CompareView &view)
{
    if (!m_visible)
        return false;
    const quint64 generation = m_provider->generation();
    if (m_fresh && generation == m_generation && view == m_view)
        return false;
    m_generation = generation;
    m_view = view;
    m_fresh = true;
    m_ranks = m_provider->ranks();
    const bool many = m_ranks.size() > 1;
    const bool band = many && view.ranks == CompareRanks::Band;
    const bool everyRank = many && view.ranks == CompareRanks::EveryRank;
    const bool smooth = view.weight > 0;
    const bool showRaw = !smooth || !view.crowded;
    syncRankGraphs(everyRank ? int(m_ranks.size()) : 0);
    applyPens(view);
    m_rawMean->setVisible(showRaw);
    m_smoothMean->setVisible(smooth);
    m_bandLow->setVisible(band);
    m_bandHigh->setVisible(band);
    for (QCPGraph *g : std::as_const(m_rankGraphs))
        g->setVisible(true);

    // Zoomed: the view's range, the same for every run. Fitted: the run's own extent, so that
    // a finished run's buckets do not move while a longer live run grows.
    double xMin = view.xMin, xMax = view.xMax;
    if (!(xMin < xMax) && (!m_provider->xRange(view.mode, &xMin, &xMax) || !(xMin < xMax)))
        xMin = xMax = 0.0; // nothing, or a single x: everything in one bucket
    const int mean = many ? PlotDataProvider::MeanCurve : m_ranks.value(0);
    const auto fetch = [&](int which, double weight) {
        return m_provider->curve(which, view.mode, weight, xMin, xMax, view.buckets);
    };
    if (showRaw)
        setCurve(m_rawMean, fetch(mean, 0.0));
    else
        m_rawMean->data()->clear();
    if (smooth)
        setCurve(m_smoothMean, fetch(mean, view.weight));
    else
        m_smoothMean->data()->clear();
    if (band) {
        // One point per bucket on each edge (its extreme), so the band's outline follows the
        // spikes without zig-zagging between a bucket's min and max.
        setCurve(m_bandLow, envelope(fetch(PlotDataProvider::MinCurve, view.weight), xMin, xMax,
                                     view.buckets, true));
        setCurve(m_bandHigh, envelope(fetch(PlotDataProvider::MaxCurve, view.weight), xMin, xMax,
                                      view.buckets, false));
    } else {
        m_bandLow->data()->clear();
        m_bandHigh->data()->clear();
    }
    for (qsizetype i = 0; i < m_rankGraphs.size(); ++i) {
        m_rankGraphs[i]->setName(QStringLiteral("%1 rank %2").arg(m_name).arg(m_ranks[i]));
        setCurve(m_rankGraphs[i], fetch(m_ranks[i], view.weight));
    }
    return true;
}

QList<QCPGraph *> ComparedRunCurves::rangeGraphs() const
{
    QList<QCPGraph *> out;
    if (!m_visible)
        return out;
    out << meanGraph();
    if (m_bandLow->visible())
        out << m_bandLow << m_bandHigh;
    out << m_rankGraphs;
    return out;
}

QString ComparedRunCurves::hoverText(double x, double *key) const
{
    const QCPGraphData *mean = nearestPoint(meanGraph(), x);
    if (!mean)
        return {};
    *key = mean->key;
    QString text = QStringLiteral("%1: %2").arg(m_name, QString::number(mean->value, 'g', 5));
    const QCPGraphData *lo = nearestPoint(m_bandLow, mean->key);
    const QCPGraphData *hi = nearestPoint(m_bandHigh, mean->key);
    if (lo && hi)
        text += QStringLiteral(" (%1–%2)")
                    .arg(QString::number(lo->value, 'g', 4), QString::number(hi->value, 'g', 4));
    return text;
}

PlotCurve ComparedRunCurves::envelope(const PlotCurve &points, double xMin, double xMax,
                                      int buckets, bool lower)
{
    PlotCurve out;
    out.x.reserve(std::min<qsizetype>(points.x.size(), qsizetype(buckets) * 2 + 16));
    out.y.reserve(out.x.capacity());
    const double width = xMax > xMin && buckets > 0 ? (xMax - xMin) / buckets : 0.0;
    qint64 group = 0;
    qsizetype best = -1, emitted = -1;
    const auto keep = [&](qsizetype i) {
        if (i >= 0 && i != emitted) {
            out.x.append(points.x[i]);
            out.y.append(points.y[i]);
            emitted = i;
        }
    };
    const qsizetype n = points.x.size();
    for (qsizetype i = 0; i < n; ++i) {
        const double y = points.y[i];
        if (std::isnan(y)) {
            keep(best); // a segment break stays one
            best = -1;
            keep(i);
            continue;
        }
        // Each segment's first and last point are kept too, so the band spans the curve.
        const bool first = i == 0 || std::isnan(points.y[i - 1]);
        const bool last = i + 1 == n || std::isnan(points.y[i + 1]);
        if (first)
            keep(i);
        const qint64 g = width > 0 ? qint64(std::floor((points.x[i] - xMin) / width)) : 0;
        if (best < 0 || g != group) {
            keep(best);
            group = g;
            best = i;
        } else if (lower ? y < points.y[best] : y > points.y[best]) {
            best = i;
        }
        if (last) {
            keep(best);
            best = -1;
            keep(i);
        }
    }
    keep(best);
    return out;
}

} // namespace rankdeck
