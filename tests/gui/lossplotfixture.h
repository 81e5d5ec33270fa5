// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the loss plot's tests share: two ranks' loss over Steps steps in a real MetricsStore,
// the plot on screen over it, and helpers that find a rank's curves and legend row.
#pragma once

#include "lossplot.h"
#include "metricsplotprovider.h"
#include "store/metricsstore.h"

#include <qcustomplot.h>

#include <QListWidget>
#include <QPalette>
#include <QtTest>

#include <cmath>
#include <functional>
#include <memory>

namespace rankdeck::lossplottest {
inline constexpr int Steps = 200;
inline constexpr qint64 StartUs = 1'700'000'000'000'000;

inline double lossAt(int rank, int step)
{
    return 2.0 * std::exp(-step / 60.0) + 0.05 * rank + 0.02 * std::sin(step);
}

inline QCPGraph *rawGraph(LossPlot &plot, const QString &name)
{
    // The raw curve is the first graph of a rank's pair.
    for (int i = 0; i < plot.customPlot()->graphCount(); ++i) {
        if (plot.customPlot()->graph(i)->name() == name)
            return plot.customPlot()->graph(i);
    }
    return nullptr;
}

inline QCPGraph *smoothGraph(LossPlot &plot, const QString &name)
{
    // The smoothed curve is the second graph of a rank's pair, drawn at full strength.
    QCPGraph *first = nullptr;
    for (int i = 0; i < plot.customPlot()->graphCount(); ++i) {
        if (plot.customPlot()->graph(i)->name() != name)
            continue;
        if (first)
            return plot.customPlot()->graph(i);
        first = plot.customPlot()->graph(i);
    }
    return nullptr;
}

// `ranks` ranks of `steps` steps each, loss(rank, step).
inline std::unique_ptr<MetricsStore> makeStore(int ranks, int steps,
                                               const std::function<double(int, int)> &loss)
{
    auto store = std::make_unique<MetricsStore>();
    for (int step = 1; step <= steps; ++step) {
        for (int rank = 0; rank < ranks; ++rank)
            store->append(rank, metric::Loss, step, StartUs + step * 100'000 + rank * 10,
                          loss(rank, step));
    }
    return store;
}

inline QPalette darkPalette(QPalette p)
{
    for (auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        p.setColor(group, QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        p.setColor(group, QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        p.setColor(group, QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
        p.setColor(group, QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
        p.setColor(group, QPalette::Mid, QColor(0x60, 0x60, 0x60));
        p.setColor(group, QPalette::Midlight, QColor(0x48, 0x48, 0x48));
    }
    return p;
}

// WCAG contrast ratio.
inline double contrast(const QColor &a, const QColor &b)
{
    const auto lum = [](const QColor &c) {
        const auto lin = [](double v) {
            return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
    };
    const double la = lum(a), lb = lum(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

inline QListWidgetItem *legendItem(LossPlot &plot, int rank)
{
    auto *legend = plot.findChild<QListWidget *>(QStringLiteral("lossLegend"));
    for (int i = 0; i < legend->count(); ++i) {
        if (legend->item(i)->data(Qt::UserRole).toInt() == rank)
            return legend->item(i);
    }
    return nullptr;
}

// The plot on screen over two ranks' loss; init() from a test's init(), the checks inside.
struct Fixture
{
    std::unique_ptr<MetricsStore> m_store;
    std::unique_ptr<MetricsPlotProvider> m_provider;
    std::unique_ptr<LossPlot> m_plot;

    void init()
    {
        m_store = makeStore(2, Steps, lossAt);
        m_provider = std::make_unique<MetricsPlotProvider>(m_store.get(), metric::Loss);
        m_plot = std::make_unique<LossPlot>();
        m_plot->resize(1200, 600);
        m_plot->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_plot.get()));
        m_plot->setProvider(m_provider.get());
        m_plot->refreshNow();
        // Enough pixel columns that bucketing keeps every point of this data.
        QVERIFY(m_plot->customPlot()->axisRect()->width() / 2 > Steps);
    }
    void cleanup()
    {
        m_plot.reset();
        m_provider.reset();
        m_store.reset();
    }
};

} // namespace rankdeck::lossplottest
