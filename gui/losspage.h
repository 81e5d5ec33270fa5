// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Loss" tab: the run's curves (any metric the workers report, loss by default) in a
// LossPlot fed from core's MetricsStore, refreshed by one timer. With several runs selected it
// compares them: their curves overlaid (each run's mean with a min–max band across its ranks or
// its every rank, one colour per run that stays the run's) over a table of what differs between
// them (core's RunDiffModel).
#pragma once

#include <QWidget>

#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

class QComboBox;
class QTableView;
class QTimer;

namespace rankdeck {

class LossPlot;
class MetricsPlotProvider;
class MetricsStore;
class RunDiffModel;

class LossPage : public QWidget
{
    Q_OBJECT
public:
    explicit LossPage(QWidget *parent = nullptr);
    ~LossPage() override;

    // Not owned; null shows an empty plot.
    void setMetricsStore(const MetricsStore *store);
    LossPlot *plot() const { return m_plot; }

    struct ComparedRun
    {
        QString name;
        QString directory;                   // its record, for the table of differences
        const MetricsStore *store = nullptr; // not owned
    };
    // Two or more runs overlaid; an empty list goes back to the run of setMetricsStore().
    void setComparedRuns(const QList<ComparedRun> &runs);
    bool isComparing() const { return !m_compared.empty(); }
    // The i-th compared run's store (in the plot's order), null when out of range.
    const MetricsStore *comparedStore(int index) const;
    RunDiffModel *diffModel() const { return m_diffModel; }
    QTableView *diffTable() const { return m_diffTable; }

public slots:
    void poll();

private:
    void updateMetricNames();
    void applyComparedMetric();
    const MetricsStore *namesStore() const;

    LossPlot *m_plot = nullptr;
    QComboBox *m_metricCombo = nullptr;
    QTimer *m_timer = nullptr;
    const MetricsStore *m_store = nullptr;
    std::unique_ptr<MetricsPlotProvider> m_provider;
    std::vector<std::unique_ptr<MetricsPlotProvider>> m_compared;
    QStringList m_comparedNames;
    QStringList m_comparedDirectories;
    RunDiffModel *m_diffModel = nullptr;
    QTableView *m_diffTable = nullptr;
    quint64 m_namesGeneration = ~quint64(0);
};

} // namespace rankdeck
