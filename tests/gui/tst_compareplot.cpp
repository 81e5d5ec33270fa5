// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Loss plot comparing runs over core's real MetricsStore: each run's mean with a min–max
// band across its ranks (equal to the ranks' extremes, min <= mean <= max), or a line per rank;
// every x mode; one colour per run that stays when runs join or leave; only runs whose data
// changed are fetched again; the picture carries the band in each run's colour.
#include "comparedruncurves.h"
#include "lossplot.h"
#include "metricsplotprovider.h"
#include "runcolors.h"
#include "store/metricsstore.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QListWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <vector>

using namespace rankdeck;

namespace {
constexpr int Steps = 150;
constexpr int Ranks = 4;
constexpr qint64 StartUs = 1'700'000'000'000'000;

// A run with learning rate lr: ranks apart by a few percent and noisy, so the band has width.
double lossAt(double lr, int rank, int step)
{
    return 2.0 * std::exp(-lr * step) + 0.04 * rank + 0.03 * std::sin(step * (rank + 1));
}

// The real provider, counting what the plot asks of it.
class CountingProvider : public MetricsPlotProvider
{
public:
    using MetricsPlotProvider::MetricsPlotProvider;
    PlotCurve curve(int rank, PlotXMode mode, double weight, double xMin, double xMax,
                    int buckets) const override
    {
        ++calls;
        return MetricsPlotProvider::curve(rank, mode, weight, xMin, xMax, buckets);
    }
    mutable int calls = 0;
};

struct Run
{
    QString name;
    std::unique_ptr<MetricsStore> store;
    std::unique_ptr<CountingProvider> provider;
};

std::unique_ptr<Run> makeRun(const QString &name, double lr, qint64 startUs)
{
    auto run = std::make_unique<Run>();
    run->name = name;
    run->store = std::make_unique<MetricsStore>();
    for (int step = 1; step <= Steps; ++step)
        for (int rank = 0; rank < Ranks; ++rank)
            run->store->append(rank, metric::Loss, step, startUs + step * 100'000 + rank * 10,
                               lossAt(lr, rank, step));
    run->provider = std::make_unique<CountingProvider>(run->store.get(), metric::Loss);
    return run;
}

// Per step: the smallest and largest value of the ranks, from the store's full-resolution points.
std::map<qint64, std::pair<double, double>> extremesFromStore(const MetricsStore &store)
{
    std::map<qint64, std::pair<double, double>> out;
    for (int rank : store.ranks(metric::Loss)) {
        for (const MetricSegment &seg : store.segments(rank, metric::Loss)) {
            for (const MetricPoint &p : seg.points) {
                auto [it, fresh] = out.try_emplace(p.step, p.value, p.value);
                it->second.first = std::min(it->second.first, p.value);
                it->second.second = std::max(it->second.second, p.value);
            }
        }
    }
    return out;
}

QList<double> keys(const QCPGraph *g)
{
    QList<double> out;
    for (const QCPGraphData &d : *g->data())
        out << d.key;
    return out;
}

QList<double> values(const QCPGraph *g)
{
    QList<double> out;
    for (const QCPGraphData &d : *g->data())
        out << d.value;
    return out;
}
} // namespace

class TestComparePlot : public QObject
{
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void bandIsTheRanksExtremes_data();
    void bandIsTheRanksExtremes();
    void everyRankDrawsALinePerRank();
    void controlChoosesHowRanksShow();
    void coloursStayWhenRunsJoin();
    void runColorsAssignment();
    void onlyChangedRunsAreFetched();
    void pictureShowsBothBands();
    void envelopeKeepsBucketExtremes();

private:
    void compare(const QList<Run *> &runs);
    std::unique_ptr<Run> m_a, m_b, m_c;
    std::unique_ptr<LossPlot> m_plot;
};

void TestComparePlot::init()
{
    // Two runs with different learning rates, started at different times.
    m_a = makeRun(QStringLiteral("lr-0.05"), 0.05, StartUs);
    m_b = makeRun(QStringLiteral("lr-0.005"), 0.005, StartUs + 3'600'000'000);
    m_c = makeRun(QStringLiteral("lr-0.02"), 0.02, StartUs + 7'200'000'000);
    m_plot = std::make_unique<LossPlot>();
    m_plot->resize(1200, 600);
    m_plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_plot.get()));
    compare({m_a.get(), m_b.get()});
    // Enough pixel columns that bucketing keeps every step of this data.
    QVERIFY(m_plot->customPlot()->axisRect()->width() / 2 > Steps);
}

void TestComparePlot::cleanup()
{
    m_plot.reset();
    m_a.reset();
    m_b.reset();
    m_c.reset();
}

void TestComparePlot::compare(const QList<Run *> &runs)
{
    QList<LossPlot::ComparedRun> compared;
    for (Run *r : runs)
        compared.append({r->name, r->provider.get(), QStringLiteral("/runs/") + r->name});
    m_plot->setComparedRuns(compared);
    m_plot->refreshNow();
}

void TestComparePlot::bandIsTheRanksExtremes_data()
{
    QTest::addColumn<int>("mode");
    QTest::addColumn<double>("smoothing");
    QTest::newRow("step, raw") << int(PlotXMode::Step) << 0.0;
    QTest::newRow("step, smoothed") << int(PlotXMode::Step) << 0.6;
    QTest::newRow("relative time, raw") << int(PlotXMode::RelativeTime) << 0.0;
    QTest::newRow("relative time, smoothed") << int(PlotXMode::RelativeTime) << 0.9;
    QTest::newRow("wall time, raw") << int(PlotXMode::WallTime) << 0.0;
}

// The default: each run's mean with a band from the smallest to the largest rank's value per
// step. Unsmoothed, the band's edges are the ranks' extremes read back from the store and the
// mean lies between; smoothed (the same EMA for all three), the mean still lies between.
void TestComparePlot::bandIsTheRanksExtremes()
{
    QFETCH(int, mode);
    QFETCH(double, smoothing);
    QCOMPARE(m_plot->compareRanks(), CompareRanks::Band);
    m_plot->setXMode(PlotXMode(mode));
    m_plot->setSmoothing(smoothing);
    m_plot->refreshNow();
    QCOMPARE(m_plot->plottedRanks(), (QList<int>{0, 1}));
    for (int i = 0; i < 2; ++i) {
        Run *run = i == 0 ? m_a.get() : m_b.get();
        const ComparedRunCurves *curves = m_plot->comparedRun(i);
        QVERIFY(curves);
        QCOMPARE(curves->name(), run->name);
        const QCPGraph *lo = curves->bandLowGraph();
        const QCPGraph *hi = curves->bandHighGraph();
        const QCPGraph *mean = curves->meanGraph();
        QVERIFY(lo->visible() && hi->visible() && mean->visible());
        QCOMPARE(hi->channelFillGraph(), lo);
        QCOMPARE(hi->brush().color().rgb(), curves->color().rgb());
        QVERIFY(hi->brush().color().alpha() < 128); // translucent
        QCOMPARE(lo->dataCount(), Steps);
        QCOMPARE(hi->dataCount(), Steps);
        QCOMPARE(mean->dataCount(), Steps);
        QCOMPARE(m_plot->pointCount(i), Steps); // the raw mean behind, a point per step
        // The x mode: steps, seconds since the run's own first point, or since the epoch.
        const double firstKey = mode == int(PlotXMode::Step) ? 1.0
                                : mode == int(PlotXMode::RelativeTime)
                                    ? 0.0
                                    : double(run->store->startTimeUs()) / 1e6;
        QVERIFY(std::abs(keys(mean).first() - firstKey) < 1e-3);
        QCOMPARE(keys(lo), keys(mean));
        QCOMPARE(keys(hi), keys(mean));
        const QList<double> los = values(lo), his = values(hi), means = values(mean);
        const auto extremes = extremesFromStore(*run->store);
        QCOMPARE(int(extremes.size()), Steps);
        auto it = extremes.cbegin();
        for (int k = 0; k < Steps; ++k, ++it) {
            const QByteArray where = QStringLiteral("%1, step %2: %3 <= %4 <= %5")
                                         .arg(run->name)
                                         .arg(it->first)
                                         .arg(los[k])
                                         .arg(means[k])
                                         .arg(his[k])
                                         .toUtf8();
            QVERIFY2(los[k] <= means[k] && means[k] <= his[k], where.constData());
            if (smoothing == 0.0) {
                QVERIFY2(los[k] == it->second.first, where.constData());
                QVERIFY2(his[k] == it->second.second, where.constData());
                QVERIFY2(los[k] < his[k], where.constData()); // the ranks differ: a band
            }
        }
    }
    // The two runs are told apart: different colours, the legend by run name.
    QVERIFY(m_plot->runColor(0) != m_plot->runColor(1));
    auto *legend = m_plot->findChild<QListWidget *>(QStringLiteral("lossLegend"));
    QCOMPARE(legend->count(), 2);
    QCOMPARE(legend->item(0)->text(), m_a->name);
    QCOMPARE(legend->item(1)->text(), m_b->name);
    // The y axis holds the bands, not only the means.
    for (int i = 0; i < 2; ++i) {
        const ComparedRunCurves *curves = m_plot->comparedRun(i);
        for (const QCPGraph *g : {curves->bandLowGraph(), curves->bandHighGraph()})
            for (double v : values(g))
                QVERIFY(m_plot->customPlot()->yAxis->range().contains(v));
    }
}

void TestComparePlot::everyRankDrawsALinePerRank()
{
    m_plot->setCompareRanks(CompareRanks::EveryRank);
    m_plot->setSmoothing(0.0);
    m_plot->refreshNow();
    int rankGraphs = 0;
    for (int i = 0; i < 2; ++i) {
        Run *run = i == 0 ? m_a.get() : m_b.get();
        const ComparedRunCurves *curves = m_plot->comparedRun(i);
        QCOMPARE(curves->rankGraphs().size(), Ranks);
        QVERIFY(!curves->bandLowGraph()->visible());
        for (int rank = 0; rank < Ranks; ++rank) {
            const QCPGraph *g = curves->rankGraphs()[rank];
            QVERIFY(g->visible());
            QCOMPARE(g->dataCount(), Steps);
            QCOMPARE(g->data()->at(9)->value, lossAt(i == 0 ? 0.05 : 0.005, rank, 10));
            // Thin, in the run's colour.
            QCOMPARE(g->pen().color().rgb(), curves->color().rgb());
            QVERIFY(g->pen().isCosmetic() && g->pen().widthF() <= 1.0);
            ++rankGraphs;
        }
        QCOMPARE(curves->meanGraph()->dataCount(), Steps); // the mean stays on top
        Q_UNUSED(run);
    }
    // One graph per rank per run on the rank layer, nothing else there.
    int onLayer = 0;
    QCustomPlot *cp = m_plot->customPlot();
    for (int i = 0; i < cp->graphCount(); ++i)
        onLayer +=
            cp->graph(i)->layer()->name() == QString::fromLatin1(ComparedRunCurves::RankLayer) &&
                    cp->graph(i)->visible()
                ? 1
                : 0;
    QCOMPARE(onLayer, 2 * Ranks);
    QCOMPARE(rankGraphs, 2 * Ranks);

    // Mean only: no band, no rank lines.
    m_plot->setCompareRanks(CompareRanks::Mean);
    m_plot->refreshNow();
    for (int i = 0; i < 2; ++i) {
        const ComparedRunCurves *curves = m_plot->comparedRun(i);
        QVERIFY(curves->rankGraphs().isEmpty());
        QVERIFY(!curves->bandLowGraph()->visible() && !curves->bandHighGraph()->visible());
        QCOMPARE(curves->meanGraph()->dataCount(), Steps);
    }
}

void TestComparePlot::controlChoosesHowRanksShow()
{
    auto *combo = m_plot->findChild<QComboBox *>(QStringLiteral("compareRanksCombo"));
    QVERIFY(combo);
    QVERIFY(combo->isVisible());
    combo->setCurrentIndex(combo->findData(int(CompareRanks::EveryRank)));
    QCOMPARE(m_plot->compareRanks(), CompareRanks::EveryRank);
    m_plot->refreshNow();
    QCOMPARE(m_plot->comparedRun(0)->rankGraphs().size(), Ranks);
    m_plot->setCompareRanks(CompareRanks::Band);
    QCOMPARE(combo->currentData().toInt(), int(CompareRanks::Band));
    // One run again: the control is about compared runs only.
    MetricsPlotProvider single(m_a->store.get(), metric::Loss);
    m_plot->setComparedRuns({});
    m_plot->setProvider(&single);
    m_plot->refreshNow();
    QVERIFY(!combo->isVisible());
    m_plot->setProvider(nullptr);
}

// A third run joins the selection (listed first, as a newer run is in the side panel): the two
// runs on screen keep their colours, the new one gets a colour of its own; selecting the first
// two again brings back the same colours.
void TestComparePlot::coloursStayWhenRunsJoin()
{
    const QColor a = m_plot->runColor(0), b = m_plot->runColor(1);
    QVERIFY(a != b);
    compare({m_c.get(), m_a.get(), m_b.get()});
    QCOMPARE(m_plot->comparedRun(1)->name(), m_a->name);
    QCOMPARE(m_plot->runColor(1), a);
    QCOMPARE(m_plot->runColor(2), b);
    const QColor c = m_plot->runColor(0);
    QVERIFY(c != a && c != b);
    // Drawn in those colours too.
    QCOMPARE(m_plot->comparedRun(1)->meanGraph()->pen().color().rgb(), a.rgb());
    QCOMPARE(m_plot->comparedRun(2)->bandHighGraph()->brush().color().rgb(), b.rgb());
    compare({m_b.get(), m_a.get()});
    QCOMPARE(m_plot->runColor(0), b);
    QCOMPARE(m_plot->runColor(1), a);
    compare({m_a.get(), m_c.get()});
    QCOMPARE(m_plot->runColor(1), c);
}

void TestComparePlot::runColorsAssignment()
{
    RunColors colors;
    QCOMPARE(colors.assign({QStringLiteral("a"), QStringLiteral("b")}), (QList<int>{0, 1}));
    // b left, c came: c takes a slot nobody had, so b's stays b's.
    QCOMPARE(colors.assign({QStringLiteral("a"), QStringLiteral("c")}), (QList<int>{0, 2}));
    QCOMPARE(colors.assign({QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}),
             (QList<int>{2, 1, 0}));
    // Twelve runs at once: all distinct.
    QStringList many;
    for (int i = 0; i < 12; ++i)
        many << QStringLiteral("run-%1").arg(i);
    const QList<int> chosen = colors.assign(many);
    QCOMPARE(QSet<int>(chosen.cbegin(), chosen.cend()).size(), 12);
    QSet<QRgb> rgbs;
    for (int s : chosen)
        rgbs.insert(RunColors::color(s).rgb());
    QCOMPARE(rgbs.size(), 12);
}

// A finished run next to a live one: a refresh after new data in one run fetches that run's
// curves only.
void TestComparePlot::onlyChangedRunsAreFetched()
{
    m_plot->setSmoothing(0.0);
    m_plot->refreshNow();
    const int a0 = m_a->provider->calls, b0 = m_b->provider->calls;
    m_plot->refreshNow(); // nothing new
    QCOMPARE(m_a->provider->calls, a0);
    QCOMPARE(m_b->provider->calls, b0);
    for (int rank = 0; rank < Ranks; ++rank)
        m_b->store->append(rank, metric::Loss, Steps + 1, StartUs + 3'600'000'000 + 99'000'000,
                           0.5 + rank);
    m_plot->poll();
    QCOMPARE(m_a->provider->calls, a0);
    QVERIFY(m_b->provider->calls > b0);
    QCOMPARE(m_plot->comparedRun(1)->bandHighGraph()->dataCount(), Steps + 1);
    QCOMPARE(m_plot->comparedRun(1)->bandHighGraph()->data()->at(Steps)->value, 0.5 + Ranks - 1);
    // Zooming is a new view for every run.
    m_plot->customPlot()->xAxis->setRange(10, 60);
    m_plot->poll();
    QVERIFY(m_a->provider->calls > a0);
}

void TestComparePlot::pictureShowsBothBands()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("compare.png"));
    m_plot->setSmoothing(0.0);
    QVERIFY(m_plot->renderToFile(path, 800, 500, false));
    QImage image(path);
    QCOMPARE(image.size(), QSize(800, 500));
    // The band's tint of each run's colour over the white background, in the plot area.
    for (int i = 0; i < 2; ++i) {
        const QColor c = m_plot->runColor(i);
        const QColor bg = image.pixelColor(image.width() - 3, image.height() - 3);
        int tinted = 0;
        const double alpha = m_plot->comparedRun(i)->bandHighGraph()->brush().color().alphaF();
        const auto blend = [&](int fg, int back) { return int(fg * alpha + back * (1 - alpha)); };
        for (int y = image.height() / 10; y < image.height() * 9 / 10; ++y)
            for (int x = image.width() / 8; x < image.width() * 7 / 8; ++x) {
                const QColor p = image.pixelColor(x, y);
                tinted += std::abs(p.red() - blend(c.red(), bg.red())) +
                                      std::abs(p.green() - blend(c.green(), bg.green())) +
                                      std::abs(p.blue() - blend(c.blue(), bg.blue())) <
                                  12
                              ? 1
                              : 0;
            }
        QVERIFY2(tinted > 300,
                 qPrintable(QStringLiteral("run %1: %2 tinted pixels").arg(i).arg(tinted)));
    }
}

void TestComparePlot::envelopeKeepsBucketExtremes()
{
    // Buckets of width 1 over [0, 4): each keeps its lowest (highest) point at its own x, and
    // each segment its first and last point, so the band spans the curve.
    PlotCurve c;
    c.x = {0.1, 0.5, 0.9, 1.2, 1.8, 2.5, 2.6, 3.0, 3.5, 3.7};
    c.y = {5, 1, 3, 2, 4, std::numeric_limits<double>::quiet_NaN(), 7, 6, 9, 8};
    const PlotCurve lo = ComparedRunCurves::envelope(c, 0, 4, 4, true);
    QCOMPARE(lo.x, (QVector<double>{0.1, 0.5, 1.2, 1.8, 2.5, 2.6, 3.0, 3.7}));
    QCOMPARE(lo.y.size(), 8);
    QCOMPARE(lo.y[1], 1.0);
    QCOMPARE(lo.y[2], 2.0);
    QVERIFY(std::isnan(lo.y[4])); // the segment break stays
    QCOMPARE(lo.y[6], 6.0);
    const PlotCurve hi = ComparedRunCurves::envelope(c, 0, 4, 4, false);
    QCOMPARE(hi.x, (QVector<double>{0.1, 1.8, 2.5, 2.6, 3.5, 3.7}));
    // Many points per bucket: one per bucket (and the ends) is what is left.
    PlotCurve dense;
    for (int i = 0; i < 1000; ++i) {
        dense.x << i;
        dense.y << std::sin(i * 0.7);
    }
    QCOMPARE(ComparedRunCurves::envelope(dense, 0, 999, 50, true).x.size(), 50 + 2);
}

QTEST_MAIN(TestComparePlot)
#include "tst_compareplot.moc"
