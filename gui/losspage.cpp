// SPDX-License-Identifier: GPL-3.0-or-later
#include "losspage.h"

#include "lossplot.h"
#include "metricsplotprovider.h"
#include "models/metricnames.h"
#include "models/rundiffmodel.h"
#include "store/metricsstore.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace rankdeck {

namespace {
constexpr int PollIntervalMs = 40;
} // namespace

LossPage::LossPage(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("lossPage"));
    m_plot = new LossPlot(this);
    m_metricCombo = new QComboBox(this);
    m_metricCombo->setObjectName(QStringLiteral("metricCombo"));
    m_metricCombo->addItem(metric::displayName(metric::Loss), metric::Loss);
    connect(m_metricCombo, &QComboBox::currentIndexChanged, this, [this] {
        const QString name = m_metricCombo->currentData().toString();
        if (isComparing()) {
            applyComparedMetric();
        } else if (m_provider && !name.isEmpty() && name != m_provider->metric()) {
            m_provider->setMetric(name);
            m_plot->customPlot()->yAxis->setLabel(m_metricCombo->currentText());
            m_plot->setProvider(m_provider.get());
        }
    });

    auto *top = new QHBoxLayout;
    auto *metricLabel = new QLabel(tr("&Metric:"), this);
    metricLabel->setBuddy(m_metricCombo);
    top->addWidget(metricLabel);
    top->addWidget(m_metricCombo);
    top->addStretch();

    m_diffModel = new RunDiffModel(this);
    m_diffTable = new QTableView(this);
    m_diffTable->setObjectName(QStringLiteral("runDiffTable"));
    m_diffTable->setModel(m_diffModel);
    m_diffTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_diffTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_diffTable->setToolTip(
        tr("What differs between the compared runs (equal things are left out)"));
    m_diffTable->hide();
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_plot);
    split->addWidget(m_diffTable);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    m_timer = new QTimer(this);
    m_timer->setInterval(PollIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &LossPage::poll);
}

LossPage::~LossPage()
{
    m_plot->setProvider(nullptr);
}

void LossPage::setComparedRuns(const QList<ComparedRun> &runs)
{
    m_plot->setComparedRuns({});
    m_compared.clear();
    m_comparedNames.clear();
    m_comparedDirectories.clear();
    QList<RunSummary> summaries;
    if (runs.size() >= 2) {
        for (const ComparedRun &run : runs) {
            m_compared.push_back(std::make_unique<MetricsPlotProvider>(
                run.store, m_metricCombo->currentData().toString()));
            m_comparedNames << run.name;
            m_comparedDirectories << run.directory;
            RunSummary s;
            QString error;
            if (!RunSummary::fromRecord(run.directory, &s, &error))
                s.name = run.name; // an unreadable record still gets its column
            s.name = run.name;
            summaries << s;
        }
    }
    m_diffModel->setRuns(summaries);
    m_diffTable->setVisible(isComparing());
    m_namesGeneration = ~quint64(0);
    if (isComparing()) {
        applyComparedMetric();
        m_timer->start();
    } else {
        m_plot->setProvider(m_provider.get());
        if (!m_store)
            m_timer->stop();
    }
    m_plot->poll();
}

void LossPage::applyComparedMetric()
{
    const QString name = m_metricCombo->currentData().toString();
    QList<LossPlot::ComparedRun> runs;
    for (size_t i = 0; i < m_compared.size(); ++i) {
        m_compared[i]->setMetric(name);
        // Keyed by the record's directory: a run keeps its colour when others join or leave.
        runs.append({m_comparedNames.value(qsizetype(i)), m_compared[i].get(),
                     m_comparedDirectories.value(qsizetype(i))});
    }
    m_plot->customPlot()->yAxis->setLabel(m_metricCombo->currentText());
    m_plot->setComparedRuns(runs);
}

const MetricsStore *LossPage::comparedStore(int index) const
{
    return index >= 0 && size_t(index) < m_compared.size() ? m_compared[size_t(index)]->store()
                                                           : nullptr;
}

const MetricsStore *LossPage::namesStore() const
{
    return isComparing() ? m_compared.front()->store() : m_store;
}

void LossPage::setMetricsStore(const MetricsStore *store)
{
    if (isComparing())
        setComparedRuns({});
    m_store = store;
    m_plot->setProvider(nullptr);
    m_provider.reset();
    m_namesGeneration = ~quint64(0);
    if (store) {
        m_provider = std::make_unique<MetricsPlotProvider>(store, metric::Loss);
        const QSignalBlocker blocker(m_metricCombo);
        m_metricCombo->setCurrentIndex(0);
        m_plot->setProvider(m_provider.get());
        m_timer->start();
    } else {
        m_timer->stop();
    }
    m_plot->poll();
}

void LossPage::updateMetricNames()
{
    const QStringList names = namesStore()->metricNames();
    if (names.size() + (names.contains(metric::Loss) ? 0 : 1) == m_metricCombo->count())
        return;
    const QSignalBlocker blocker(m_metricCombo);
    const QString current = m_metricCombo->currentData().toString();
    m_metricCombo->clear();
    m_metricCombo->addItem(metric::displayName(metric::Loss), metric::Loss);
    for (const QString &name : names) {
        if (name != metric::Loss)
            m_metricCombo->addItem(metric::displayName(name), name);
    }
    m_metricCombo->setCurrentIndex(qMax(0, m_metricCombo->findData(current)));
}

void LossPage::poll()
{
    const MetricsStore *store = namesStore();
    if (!store)
        return;
    const quint64 generation = store->generation();
    if (generation != m_namesGeneration) {
        m_namesGeneration = generation;
        updateMetricNames();
    }
    // Hidden pages keep their data current only when shown: the plot refetches on the next poll.
    if (isVisible())
        m_plot->poll();
}

} // namespace rankdeck
