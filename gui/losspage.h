// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Loss" tab: the run's curves (any metric the workers report, loss by default) in a
// LossPlot fed from core's MetricsStore, refreshed by one timer.
#pragma once

#include <QWidget>

#include <memory>

class QComboBox;
class QTimer;

namespace rankdeck {

class LossPlot;
class MetricsPlotProvider;
class MetricsStore;

class LossPage : public QWidget
{
    Q_OBJECT
public:
    explicit LossPage(QWidget *parent = nullptr);
    ~LossPage() override;

    // Not owned; null shows an empty plot.
    void setMetricsStore(const MetricsStore *store);
    LossPlot *plot() const { return m_plot; }

public slots:
    void poll();

private:
    void updateMetricNames();

    LossPlot *m_plot = nullptr;
    QComboBox *m_metricCombo = nullptr;
    QTimer *m_timer = nullptr;
    const MetricsStore *m_store = nullptr;
    std::unique_ptr<MetricsPlotProvider> m_provider;
    quint64 m_namesGeneration = ~quint64(0);
};

} // namespace rankdeck
