// SPDX-License-Identifier: GPL-3.0-or-later
//
// The loss plot's data from core's MetricsStore: smoothing, bucketing and CSV all happen in
// core; this only translates between the plot's interface and the store's.
#pragma once

#include "plotdataprovider.h"

#include "stream/xbasis.h"

#include <QString>

namespace rankdeck {

class MetricsStore;

class MetricsPlotProvider : public PlotDataProvider
{
public:
    // store: not owned, must outlive the provider.
    explicit MetricsPlotProvider(const MetricsStore *store, const QString &metric);

    void setMetric(const QString &metric) { m_metric = metric; }
    QString metric() const { return m_metric; }
    const MetricsStore *store() const { return m_store; }

    quint64 generation() const override;
    QList<int> ranks() const override;
    PlotCurve curve(int rank, PlotXMode mode, double smoothingWeight, double xMin, double xMax,
                    int buckets) const override;
    bool xRange(PlotXMode mode, double *xMin, double *xMax) const override;
    // From each rank's series: the basis most ranks have titles the axis.
    QString stepAxisTitle() const override;
    QString curveNote(int rank) const override;
    bool foldedBefore(PlotXMode mode, double *x, qint64 *span) const override;
    bool writeCsv(QIODevice *out, QString *errorMessage) const override;
    bool writeTensorBoard(const QString &directory, QString *errorMessage) const override;

private:
    XBasis axisBasis() const;

    // axisBasis() of the store's generation it was counted at: curveNote() asks it for every
    // rank, and counting every rank each time made a rebuild of 512 curves O(ranks²).
    mutable quint64 m_basisGeneration = 0;
    mutable XBasis m_basis = XBasis::Step;
    mutable bool m_basisKnown = false;

    const MetricsStore *m_store;
    QString m_metric;
};

} // namespace rankdeck
