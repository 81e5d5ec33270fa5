// SPDX-License-Identifier: GPL-3.0-or-later
//
// The loss plot as it is read (issue 41): a y-range that holds the raw points unless outliers
// are ignored, colour-blind-safe rank colours (Okabe–Ito) that follow a light/dark switch, a
// hover read-out that lists the ranks furthest from the mean first, and the legend's filter and
// "only this rank".
#include "lossplotfixture.h"

#include <QApplication>
#include <QLineEdit>
#include <QMenu>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QToolButton>

using namespace rankdeck;
using namespace rankdeck::lossplottest;

class TestLossPlotReading : public QObject, private lossplottest::Fixture
{
    Q_OBJECT
private slots:
    void init() { Fixture::init(); }
    void cleanup() { Fixture::cleanup(); }
    void yRangeHoldsRawPoints_data();
    void yRangeHoldsRawPoints();
    void colourBlindSafeColours_data();
    void colourBlindSafeColours();
    void hoverListsOutliersFirst_data();
    void hoverListsOutliersFirst();
    void legendFilter_data();
    void legendFilter();
    void onlyThisRank();
    void paletteChangeRecolours_data();
    void paletteChangeRecolours();
};

void TestLossPlotReading::yRangeHoldsRawPoints_data()
{
    QTest::addColumn<double>("smoothing");
    QTest::addColumn<bool>("ignoreOutliers");
    QTest::newRow("smoothed, outliers shown") << 0.6 << false;
    QTest::newRow("raw, outliers shown") << 0.0 << false;
    QTest::newRow("smoothed, outliers ignored") << 0.6 << true;
    QTest::newRow("raw, outliers ignored") << 0.0 << true;
}

void TestLossPlotReading::yRangeHoldsRawPoints()
{
    QFETCH(double, smoothing);
    QFETCH(bool, ignoreOutliers);
    constexpr double Spike = 50.0;
    auto store = makeStore(2, Steps, [](int rank, int step) {
        return lossAt(rank, step) + (rank == 1 && step == 100 ? Spike : 0.0);
    });
    MetricsPlotProvider provider(store.get(), metric::Loss);
    const auto restore = qScopeGuard([&] { m_plot->setProvider(m_provider.get()); });
    m_plot->setProvider(&provider);
    m_plot->setSmoothing(smoothing);
    m_plot->setIgnoreOutliers(ignoreOutliers);
    m_plot->refreshNow();
    const QCPRange y = m_plot->customPlot()->yAxis->range();
    if (ignoreOutliers) {
        QVERIFY2(y.upper < Spike, qPrintable(QString::number(y.upper)));
        return;
    }
    for (const QString &name : {QStringLiteral("Rank 0"), QStringLiteral("Rank 1")}) {
        const QCPGraph *raw = rawGraph(*m_plot, name);
        QVERIFY(raw->visible());
        QCOMPARE(raw->dataCount(), Steps);
        for (const QCPGraphData &d : *raw->data())
            QVERIFY2(y.contains(d.value), qPrintable(QStringLiteral("%1 at step %2 outside %3–%4")
                                                         .arg(d.value)
                                                         .arg(d.key)
                                                         .arg(y.lower)
                                                         .arg(y.upper)));
    }
}

// Okabe–Ito for the first ranks, on a light and a dark background: rank 0 orange, rank 1 sky
// blue, the first eight (and the golden-angle ones after) told apart and off the background.
void TestLossPlotReading::colourBlindSafeColours_data()
{
    QTest::addColumn<bool>("dark");
    QTest::newRow("light") << false;
    QTest::newRow("dark") << true;
}

void TestLossPlotReading::colourBlindSafeColours()
{
    QFETCH(bool, dark);
    auto store = makeStore(16, 20, [](int rank, int step) { return lossAt(rank, step); });
    MetricsPlotProvider provider(store.get(), metric::Loss);
    const auto restore = qScopeGuard([&] { m_plot->setProvider(m_provider.get()); });
    if (dark)
        m_plot->setPalette(darkPalette(m_plot->palette()));
    m_plot->setProvider(&provider);
    m_plot->refreshNow();
    const QColor base = m_plot->palette().color(QPalette::Base);
    QCOMPARE(smoothGraph(*m_plot, QStringLiteral("Rank 0"))->pen().color().rgb(),
             QColor(0xE6, 0x9F, 0x00).rgb());
    QCOMPARE(smoothGraph(*m_plot, QStringLiteral("Rank 1"))->pen().color().rgb(),
             QColor(0x56, 0xB4, 0xE9).rgb());
    QList<QRgb> seen;
    for (int rank = 0; rank < 16; ++rank) {
        const QColor c = smoothGraph(*m_plot, QStringLiteral("Rank %1").arg(rank))->pen().color();
        QCOMPARE(c.rgb(), RunColors::color(rank, dark).rgb());
        QVERIFY2(!seen.contains(c.rgb()), qPrintable(QStringLiteral("rank %1").arg(rank)));
        seen << c.rgb();
        // Black on dark, yellow on white were the palette's invisible ones.
        QVERIFY2(contrast(c, base) >= 2.0,
                 qPrintable(QStringLiteral("rank %1: %2").arg(rank).arg(c.name())));
    }
}

// 96 ranks, one of them off: the read-out lists it first (after the mean), whatever its number,
// and says how many ranks it left out.
void TestLossPlotReading::hoverListsOutliersFirst_data()
{
    QTest::addColumn<int>("outlier");
    QTest::addColumn<double>("offset");
    QTest::addColumn<double>("smoothing");
    QTest::newRow("high, smoothed") << 57 << 2.0 << 0.6;
    QTest::newRow("high, raw") << 90 << 2.0 << 0.0;
    QTest::newRow("low, smoothed") << 40 << -0.5 << 0.6;
}

void TestLossPlotReading::hoverListsOutliersFirst()
{
    QFETCH(int, outlier);
    QFETCH(double, offset);
    QFETCH(double, smoothing);
    constexpr int Ranks = 96;
    auto store = makeStore(Ranks, 150, [&](int rank, int step) {
        return 1.0 + 0.001 * rank + 0.01 * std::sin(step) + (rank == outlier ? offset : 0.0);
    });
    MetricsPlotProvider provider(store.get(), metric::Loss);
    const auto restore = qScopeGuard([&] { m_plot->setProvider(m_provider.get()); });
    m_plot->setProvider(&provider);
    m_plot->setSmoothing(smoothing);
    m_plot->refreshNow();
    const QStringList lines = m_plot->hoverText(100.0).split(u'\n');
    QCOMPARE(lines.value(0), QStringLiteral("Step 100"));
    QVERIFY2(lines.value(1).startsWith(QStringLiteral("Mean: ")), qPrintable(lines.join(u'|')));
    QVERIFY2(lines.value(2).startsWith(QStringLiteral("Rank %1: ").arg(outlier)),
             qPrintable(lines.join(u'|')));
    QCOMPARE(lines.size(), 2 + 12 + 1);
    QCOMPARE(lines.last(), QStringLiteral("… 84 more ranks"));
    // Hidden ranks are neither listed nor counted.
    m_plot->setRankFilter(QStringLiteral("0-9"));
    m_plot->refreshNow();
    const QStringList few = m_plot->hoverText(100.0).split(u'\n');
    QCOMPARE(few.size(), 2 + 10);
    QVERIFY(!few.join(u'\n').contains(QStringLiteral("more ranks")));
}

void TestLossPlotReading::legendFilter_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QList<int>>("shown");
    QTest::newRow("none") << QString() << QList<int>{0, 1, 2, 3, 4, 5, 6, 7};
    QTest::newRow("one rank") << QStringLiteral("3") << QList<int>{3};
    QTest::newRow("range") << QStringLiteral("0-2") << QList<int>{0, 1, 2};
    QTest::newRow("list") << QStringLiteral("3,5") << QList<int>{3, 5};
    QTest::newRow("list of ranges") << QStringLiteral(" 1 - 2, 6") << QList<int>{1, 2, 6};
    QTest::newRow("name") << QStringLiteral("rank 7") << QList<int>{7};
    QTest::newRow("nothing") << QStringLiteral("12") << QList<int>{};
}

// Typed into the box: the other ranks leave the legend and the plot; the mean stays.
void TestLossPlotReading::legendFilter()
{
    QFETCH(QString, filter);
    QFETCH(QList<int>, shown);
    auto store = makeStore(8, 20, [](int rank, int step) { return lossAt(rank, step); });
    MetricsPlotProvider provider(store.get(), metric::Loss);
    const auto restore = qScopeGuard([&] { m_plot->setProvider(m_provider.get()); });
    m_plot->setProvider(&provider);
    m_plot->setSmoothing(0.0);
    m_plot->refreshNow();
    auto *edit = m_plot->findChild<QLineEdit *>(QStringLiteral("legendFilter"));
    QVERIFY(edit);
    QVERIFY(!edit->accessibleName().isEmpty() && !edit->toolTip().isEmpty());
    QTest::keyClicks(edit, filter);
    QCOMPARE(m_plot->rankFilter(), filter);
    m_plot->refreshNow();
    for (int rank = 0; rank < 8; ++rank) {
        const bool expected = shown.contains(rank);
        QCOMPARE(m_plot->isRankVisible(rank), expected);
        QCOMPARE(rawGraph(*m_plot, QStringLiteral("Rank %1").arg(rank))->visible(), expected);
        QCOMPARE(legendItem(*m_plot, rank)->isHidden(), !expected);
    }
    const bool meanKept = filter != QLatin1String("rank 7");
    QCOMPARE(rawGraph(*m_plot, QStringLiteral("Mean"))->visible(), meanKept);
    edit->clear();
    m_plot->refreshNow();
    QVERIFY(rawGraph(*m_plot, QStringLiteral("Rank 4"))->visible());
    QVERIFY(!legendItem(*m_plot, 4)->isHidden());
}

// "Only this rank" from a legend row's context menu and by double-click; back with "All".
void TestLossPlotReading::onlyThisRank()
{
    auto store = makeStore(8, 20, [](int rank, int step) { return lossAt(rank, step); });
    MetricsPlotProvider provider(store.get(), metric::Loss);
    const auto restore = qScopeGuard([&] { m_plot->setProvider(m_provider.get()); });
    m_plot->setProvider(&provider);
    m_plot->setSmoothing(0.0);
    m_plot->refreshNow();
    auto *legend = m_plot->findChild<QListWidget *>(QStringLiteral("lossLegend"));
    const auto shownRanks = [&] {
        m_plot->refreshNow();
        QList<int> out;
        for (int rank = 0; rank < 8; ++rank) {
            if (rawGraph(*m_plot, QStringLiteral("Rank %1").arg(rank))->visible())
                out << rank;
        }
        return out;
    };
    legendItem(*m_plot, 2)->setCheckState(Qt::Unchecked); // a rank the user unticked before
    const QRect row = legend->visualItemRect(legendItem(*m_plot, 4));
    emit legend->customContextMenuRequested(row.center());
    auto *menu = m_plot->findChild<QMenu *>(QStringLiteral("legendMenu"));
    QVERIFY(menu);
    auto *only = menu->findChild<QAction *>(QStringLiteral("onlyThisRankAction"));
    QVERIFY(only);
    QCOMPARE(only->text(), QStringLiteral("Show only Rank 4"));
    only->trigger();
    menu->close();
    QCOMPARE(shownRanks(), QList<int>{4});
    QVERIFY(rawGraph(*m_plot, QStringLiteral("Mean"))->visible());
    auto *all = m_plot->findChild<QToolButton *>(QStringLiteral("showAllRanksButton"));
    QVERIFY(all && !all->accessibleName().isEmpty() && !all->toolTip().isEmpty());
    QVERIFY(!all->text().contains(u'&'));
    all->click();
    QCOMPARE(shownRanks(), (QList<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    QVERIFY(m_plot->rankFilter().isEmpty());
    // Double-click: only that rank, then all again.
    emit legend->itemDoubleClicked(legendItem(*m_plot, 6));
    QCOMPARE(shownRanks(), QList<int>{6});
    emit legend->itemDoubleClicked(legendItem(*m_plot, 6));
    QCOMPARE(shownRanks().size(), 8);
    // The mean alone (it has no rank number to filter by), and back.
    emit legend->itemDoubleClicked(legendItem(*m_plot, PlotDataProvider::MeanCurve));
    QCOMPARE(shownRanks(), QList<int>{});
    QVERIFY(rawGraph(*m_plot, QStringLiteral("Mean"))->visible());
    emit legend->itemDoubleClicked(legendItem(*m_plot, PlotDataProvider::MeanCurve));
    QCOMPARE(shownRanks().size(), 8);
}

// A light/dark switch while running (the application's palette, or the widget's): background,
// axes and curves take the new palette's colours, compared runs too.
void TestLossPlotReading::paletteChangeRecolours_data()
{
    QTest::addColumn<bool>("application");
    QTest::addColumn<bool>("comparing");
    QTest::newRow("widget palette") << false << false;
    QTest::newRow("application palette") << true << false;
    QTest::newRow("compared runs") << true << true;
}

void TestLossPlotReading::paletteChangeRecolours()
{
    QFETCH(bool, application);
    QFETCH(bool, comparing);
    // Eight ranks (or runs): the eighth slot is Okabe–Ito's black, grey on dark.
    auto store = makeStore(8, 20, [](int rank, int step) { return lossAt(rank, step); });
    MetricsPlotProvider provider(store.get(), metric::Loss);
    const QPalette lightApp = QApplication::palette();
    const auto restore = qScopeGuard([&] {
        QApplication::setPalette(lightApp);
        m_plot->setComparedRuns({});
        m_plot->setProvider(m_provider.get());
    });
    QList<LossPlot::ComparedRun> runs;
    if (comparing) {
        for (int i = 0; i < 8; ++i)
            runs.append({QStringLiteral("run %1").arg(i), &provider, QString()});
        m_plot->setComparedRuns(runs);
    } else {
        m_plot->setProvider(&provider);
    }
    m_plot->refreshNow();
    const auto background = [&] {
        return m_plot->customPlot()->toPixmap(64, 64).toImage().pixelColor(0, 0).rgb();
    };
    const auto eighth = [&] {
        return comparing ? m_plot->runColor(7)
                         : smoothGraph(*m_plot, QStringLiteral("Rank 7"))->pen().color();
    };
    const QColor lightBase = m_plot->palette().color(QPalette::Base);
    QCOMPARE(background(), lightBase.rgb());
    QCOMPARE(eighth().rgb(), QColor(Qt::black).rgb());

    const QPalette dark = darkPalette(application ? lightApp : m_plot->palette());
    if (application)
        QApplication::setPalette(dark);
    else
        m_plot->setPalette(dark);
    // The application's palette may reach a window through its event loop.
    QTRY_COMPARE(m_plot->palette().color(QPalette::Base), dark.color(QPalette::Base));
    m_plot->refreshNow();
    QCOMPARE(background(), dark.color(QPalette::Base).rgb());
    QCOMPARE(m_plot->customPlot()->xAxis->tickLabelColor(), dark.color(QPalette::Text));
    QCOMPARE(eighth().rgb(), RunColors::color(7, true).rgb());
    QVERIFY(contrast(eighth(), dark.color(QPalette::Base)) > 4.5);
    if (comparing) {
        QCOMPARE(m_plot->comparedRun(7)->meanGraph()->pen().color().rgb(), eighth().rgb());
        QVERIFY(m_plot->comparedRun(7)->meanGraph()->dataCount() > 0);
    } else {
        QCOMPARE(smoothGraph(*m_plot, QStringLiteral("Mean"))->pen().color(),
                 dark.color(QPalette::Text));
        QCOMPARE(legendItem(*m_plot, 7)->icon().pixmap(12, 12).toImage().pixelColor(6, 6).rgb(),
                 eighth().rgb());
    }

    // And back.
    if (application)
        QApplication::setPalette(lightApp);
    else
        m_plot->setPalette(lightApp);
    QTRY_COMPARE(m_plot->palette().color(QPalette::Base), lightBase);
    m_plot->refreshNow();
    QCOMPARE(background(), lightBase.rgb());
    QCOMPARE(eighth().rgb(), QColor(Qt::black).rgb());
}

QTEST_MAIN(TestLossPlotReading)
#include "tst_lossplotreading.moc"
