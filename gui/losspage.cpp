// SPDX-License-Identifier: GPL-3.0-or-later
#include "losspage.h"

#include "lossplot.h"
#include "metricsplotprovider.h"
#include "store/metricsstore.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
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
    m_metricCombo->addItem(tr("Loss"), metric::Loss);
    connect(m_metricCombo, &QComboBox::currentIndexChanged, this, [this] {
        const QString name = m_metricCombo->currentData().toString();
        if (m_provider && !name.isEmpty() && name != m_provider->metric()) {
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

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_plot, 1);

    m_timer = new QTimer(this);
    m_timer->setInterval(PollIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &LossPage::poll);
}

LossPage::~LossPage()
{
    m_plot->setProvider(nullptr);
}

void LossPage::setMetricsStore(const MetricsStore *store)
{
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
    static const QHash<QString, QString> labels = {
        {metric::Loss, tr("Loss")},
        {metric::LearningRate, tr("Learning rate")},
        {metric::SamplesPerSec, tr("Samples/s")},
        {metric::StepTimeMs, tr("Step time (ms)")},
        {metric::CommWaitMs, tr("Communication wait (ms)")},
        {metric::GpuMemBytes, tr("GPU memory (bytes)")},
    };
    const QStringList names = m_store->metricNames();
    if (names.size() + (names.contains(metric::Loss) ? 0 : 1) == m_metricCombo->count())
        return;
    const QSignalBlocker blocker(m_metricCombo);
    const QString current = m_metricCombo->currentData().toString();
    m_metricCombo->clear();
    m_metricCombo->addItem(labels.value(metric::Loss), metric::Loss);
    for (const QString &name : names) {
        if (name != metric::Loss)
            m_metricCombo->addItem(labels.value(name, name), name);
    }
    m_metricCombo->setCurrentIndex(qMax(0, m_metricCombo->findData(current)));
}

void LossPage::poll()
{
    if (!m_store)
        return;
    const quint64 generation = m_store->generation();
    if (generation != m_namesGeneration) {
        m_namesGeneration = generation;
        updateMetricNames();
    }
    // Hidden pages keep their data current only when shown: the plot refetches on the next poll.
    if (isVisible())
        m_plot->poll();
}

} // namespace rankdeck
