// SPDX-License-Identifier: GPL-3.0-or-later
#include "metricsplotprovider.h"

#include "store/csvexport.h"
#include "store/metricsstore.h"
#include "store/tensorboardexport.h"

#include <QCoreApplication>

namespace rankdeck {

MetricsPlotProvider::MetricsPlotProvider(const MetricsStore *store, const QString &metric)
    : m_store(store), m_metric(metric)
{}

quint64 MetricsPlotProvider::generation() const
{
    return m_store->generation();
}

QList<int> MetricsPlotProvider::ranks() const
{
    return m_store->ranks(m_metric);
}

namespace {
MetricXAxis axisOf(PlotXMode mode)
{
    switch (mode) {
    case PlotXMode::RelativeTime:
        return MetricXAxis::RelativeTime;
    case PlotXMode::WallTime:
        return MetricXAxis::WallTime;
    case PlotXMode::Step:
        break;
    }
    return MetricXAxis::Step;
}
} // namespace

PlotCurve MetricsPlotProvider::curve(int rank, PlotXMode mode, double smoothingWeight, double xMin,
                                     double xMax, int buckets) const
{
    static_assert(PlotDataProvider::MeanCurve == MetricsStore::MeanCurve);
    static_assert(PlotDataProvider::MinCurve == MetricsStore::MinCurve);
    static_assert(PlotDataProvider::MaxCurve == MetricsStore::MaxCurve);
    MetricCurve c =
        m_store->curve(rank, m_metric, axisOf(mode), smoothingWeight, xMin, xMax, buckets);
    PlotCurve out;
    out.x = std::move(c.x);
    out.y = std::move(c.y);
    return out;
}

bool MetricsPlotProvider::xRange(PlotXMode mode, double *xMin, double *xMax) const
{
    return m_store->xRange(m_metric, axisOf(mode), xMin, xMax);
}

bool MetricsPlotProvider::foldedBefore(PlotXMode mode, double *x, qint64 *span) const
{
    return m_store->foldedBefore(m_metric, axisOf(mode), x, span);
}

XBasis MetricsPlotProvider::axisBasis() const
{
    const quint64 generation = m_store->generation();
    if (m_basisKnown && generation == m_basisGeneration)
        return m_basis;
    int counts[3] = {0, 0, 0};
    for (int rank : m_store->ranks(m_metric))
        ++counts[int(m_store->xBasis(rank, m_metric))];
    int best = 0;
    for (int b = 1; b < 3; ++b) {
        if (counts[b] > counts[best])
            best = b;
    }
    m_basis = XBasis(best);
    m_basisGeneration = generation;
    m_basisKnown = true;
    return m_basis;
}

QString MetricsPlotProvider::stepAxisTitle() const
{
    return xBasisLabel(axisBasis());
}

QString MetricsPlotProvider::curveNote(int rank) const
{
    if (rank < 0) {
        // The mean, min and max go by x as it is: across ranks that count different things, say
        // so.
        const QList<int> ranks = m_store->ranks(m_metric);
        for (int r : ranks) {
            if (m_store->xBasis(r, m_metric) != m_store->xBasis(ranks.first(), m_metric))
                return QCoreApplication::translate("rankdeck::MetricsPlotProvider", "x: mixed");
        }
        return QString();
    }
    const XBasis basis = m_store->xBasis(rank, m_metric);
    return basis == axisBasis()
               ? QString()
               : QCoreApplication::translate("rankdeck::MetricsPlotProvider", "x: %1")
                     .arg(xBasisKey(basis));
}

namespace {
// A run's store keeps a bounded history (MetricsStore::kRunHistory): once it folded some, an
// export reads every point from the record's metrics.csv instead, with no budget.
template <typename Write>
bool withEveryPoint(const MetricsStore &store, QString *errorMessage, const Write &write)
{
    if (!store.folded() || store.directory().isEmpty())
        return write(store);
    MetricsStore every;
    if (!every.open(store.directory(), errorMessage))
        return false;
    return write(every);
}
} // namespace

bool MetricsPlotProvider::writeCsv(QIODevice *out, QString *errorMessage) const
{
    return withEveryPoint(*m_store, errorMessage, [&](const MetricsStore &store) {
        return CsvExport::write(store, out, errorMessage);
    });
}

bool MetricsPlotProvider::writeTensorBoard(const QString &directory, QString *errorMessage) const
{
    return withEveryPoint(*m_store, errorMessage, [&](const MetricsStore &store) {
        return TensorBoardExport::write(store, directory, {}, nullptr, errorMessage);
    });
}

} // namespace rankdeck
