// SPDX-License-Identifier: GPL-3.0-or-later
//
// The loss plot over core's real MetricsStore: a point per step per rank plus the mean,
// smoothing with the raw curve behind, legend toggles, x modes, log scale, outlier-robust
// scaling, restarts drawn as separate segments, PNG/PDF/CSV/TensorBoard export, and what x
// counts (steps, epochs, reports) said on the axis and, for a rank that differs, in the legend.
// How it is read (range, colours, hover, legend filter) is tst_lossplotreading's.
#include "lossplotfixture.h"

#include <QApplication>
#include <QLineEdit>
#include <QMenu>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QToolButton>

using namespace rankdeck;
using namespace rankdeck::lossplottest;

class TestLossPlot : public QObject, private lossplottest::Fixture
{
    Q_OBJECT
private slots:
    void init() { Fixture::init(); }
    void cleanup() { Fixture::cleanup(); }
    void pointPerStepPerRankAndMean();
    void legendTogglesRanks();
    void smoothingKeepsRawBehind();
    void xModes_data();
    void xModes();
    void logScaleAndOutliers();
    void restartsAreSegments();
    void exports_data();
    void exports();
    void exportsOfAFoldedRunAreWhole();
    void foldedHistoryIsSaid();
    void followsNewData();
    void spikesSurvivePanAndLiveAppends_data();
    void spikesSurvivePanAndLiveAppends();
    void axisSaysWhatXCounts_data();
    void axisSaysWhatXCounts();
};

void TestLossPlot::pointPerStepPerRankAndMean()
{
    QCOMPARE(m_plot->plottedRanks(), (QList<int>{0, 1}));
    QCOMPARE(m_plot->pointCount(0), Steps);
    QCOMPARE(m_plot->pointCount(1), Steps);
    QCOMPARE(m_plot->pointCount(PlotDataProvider::MeanCurve), Steps);
    QCPGraph *raw = rawGraph(*m_plot, QStringLiteral("Rank 1"));
    QVERIFY(raw);
    QCOMPARE(raw->data()->at(9)->key, 10.0);
    QCOMPARE(raw->data()->at(9)->value, lossAt(1, 10));
    auto *legend = m_plot->findChild<QListWidget *>(QStringLiteral("lossLegend"));
    QCOMPARE(legend->count(), 3); // mean, rank 0, rank 1
}

void TestLossPlot::legendTogglesRanks()
{
    auto *legend = m_plot->findChild<QListWidget *>(QStringLiteral("lossLegend"));
    QListWidgetItem *rank1 = nullptr;
    for (int i = 0; i < legend->count(); ++i) {
        if (legend->item(i)->data(Qt::UserRole).toInt() == 1)
            rank1 = legend->item(i);
    }
    QVERIFY(rank1);
    rank1->setCheckState(Qt::Unchecked);
    QVERIFY(!m_plot->isRankVisible(1));
    m_plot->refreshNow();
    QVERIFY(!rawGraph(*m_plot, QStringLiteral("Rank 1"))->visible());
    QVERIFY(rawGraph(*m_plot, QStringLiteral("Rank 0"))->visible());
    rank1->setCheckState(Qt::Checked);
    m_plot->refreshNow();
    QVERIFY(rawGraph(*m_plot, QStringLiteral("Rank 1"))->visible());
}

void TestLossPlot::smoothingKeepsRawBehind()
{
    m_plot->setSmoothing(0.9);
    m_plot->refreshNow();
    QCustomPlot *cp = m_plot->customPlot();
    QList<QCPGraph *> rank0;
    for (int i = 0; i < cp->graphCount(); ++i) {
        if (cp->graph(i)->name() == QLatin1String("Rank 0"))
            rank0 << cp->graph(i);
    }
    QCOMPARE(rank0.size(), 2);
    QCPGraph *raw = rank0[0];
    QCPGraph *smooth = rank0[1];
    QVERIFY(raw->visible() && smooth->visible());
    QVERIFY(raw->pen().color().alpha() < smooth->pen().color().alpha()); // faint behind
    QCOMPARE(smooth->data()->size(), raw->data()->size());
    // The first smoothed value equals the first raw one (debiased); later ones lag behind.
    QCOMPARE(smooth->data()->at(0)->value, raw->data()->at(0)->value);
    QVERIFY(smooth->data()->at(50)->value != raw->data()->at(50)->value);

    m_plot->setSmoothing(0);
    m_plot->refreshNow();
    QVERIFY(!smooth->visible());
    QCOMPARE(raw->pen().color().alpha(), 255);
}

void TestLossPlot::xModes_data()
{
    QTest::addColumn<int>("mode");
    QTest::addColumn<double>("firstKey");
    QTest::newRow("step") << int(PlotXMode::Step) << 1.0;
    QTest::newRow("relative time") << int(PlotXMode::RelativeTime) << 0.0;
    QTest::newRow("wall time") << int(PlotXMode::WallTime) << (StartUs + 100'000) / 1e6;
}

void TestLossPlot::xModes()
{
    QFETCH(int, mode);
    QFETCH(double, firstKey);
    m_plot->setXMode(PlotXMode(mode));
    m_plot->refreshNow();
    QCPGraph *raw = rawGraph(*m_plot, QStringLiteral("Rank 0"));
    QVERIFY(qAbs(raw->data()->at(0)->key - firstKey) < 1e-3);
    QCOMPARE(m_plot->pointCount(0), Steps);
    // Auto-range shows all of it.
    QVERIFY(m_plot->customPlot()->xAxis->range().contains(raw->data()->at(0)->key));
    QVERIFY(m_plot->customPlot()->xAxis->range().contains((raw->data()->constEnd() - 1)->key));
}

void TestLossPlot::logScaleAndOutliers()
{
    m_store->append(0, metric::Loss, Steps + 1, StartUs + (Steps + 1) * 100'000, 1e6);
    m_plot->setSmoothing(0);
    m_plot->refreshNow();
    QVERIFY(m_plot->customPlot()->yAxis->range().upper >= 1e6);
    m_plot->setIgnoreOutliers(true);
    m_plot->refreshNow();
    QVERIFY(m_plot->customPlot()->yAxis->range().upper < 100);
    m_plot->setLogScale(true);
    m_plot->refreshNow();
    QCOMPARE(m_plot->customPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(m_plot->customPlot()->yAxis->range().lower > 0);
}

void TestLossPlot::restartsAreSegments()
{
    // A restart from step 150: steps go backwards, the series gets a second segment.
    for (int step = 150; step <= 160; ++step)
        m_store->append(0, metric::Loss, step, StartUs + (Steps + step) * 100'000, 0.1);
    m_plot->refreshNow();
    QCPGraph *raw = rawGraph(*m_plot, QStringLiteral("Rank 0"));
    int nans = 0;
    for (const QCPGraphData &d : *raw->data())
        nans += std::isnan(d.value) ? 1 : 0;
    QCOMPARE(nans, 1);
    QCOMPARE(m_plot->pointCount(0), Steps + 11);
}

void TestLossPlot::exports_data()
{
    QTest::addColumn<QString>("suffix");
    QTest::newRow("png") << "png";
    QTest::newRow("pdf") << "pdf";
    QTest::newRow("csv") << "csv";
    QTest::newRow("tensorboard") << "tensorboard";
}

// A run that printed for long holds a folded history (MetricsStore::kRunHistory): the plot
// shows it as min/max groups, but the CSV and TensorBoard exports still hold every point, read
// from the record.
void TestLossPlot::exportsOfAFoldedRunAreWhole()
{
    QTemporaryDir record;
    MetricsStore store;
    store.setHistoryBudget(MetricsStore::kRunHistory);
    QVERIFY(store.open(record.path()));
    constexpr int Long = 5'000;
    for (int step = 0; step < Long; ++step)
        for (int rank = 0; rank < 2; ++rank)
            store.append(rank, metric::Loss, step, StartUs + step * 1000, lossAt(rank, step));
    QVERIFY(store.folded());
    MetricsPlotProvider provider(&store, metric::Loss);
    m_plot->setProvider(&provider);
    QTemporaryDir out;
    QString error;
    const QString csv = out.filePath(QStringLiteral("loss.csv"));
    QVERIFY2(m_plot->exportCsv(csv, &error), qPrintable(error));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll().count('\n'), 1 + 2 * Long);
    QVERIFY2(m_plot->exportTensorBoard(out.filePath(QStringLiteral("tb")), &error),
             qPrintable(error));
    QCOMPARE(QDir(out.filePath(QStringLiteral("tb/rank-1")))
                 .entryList({QStringLiteral("events.out.tfevents.*")})
                 .size(),
             1);
    m_plot->setProvider(m_provider.get());
}

void TestLossPlot::foldedHistoryIsSaid()
{
    // The fixture's run shows every point: nothing to say.
    m_plot->refreshNow();
    QVERIFY(m_plot->historyNote().isEmpty());
    MetricsStore store;
    store.setHistoryBudget(MetricsStore::kRunHistory);
    constexpr int Long = 5'000;
    for (int step = 0; step < Long; ++step)
        for (int rank = 0; rank < 2; ++rank)
            store.append(rank, metric::Loss, step, StartUs + step * 1000, lossAt(rank, step));
    double x = 0;
    qint64 span = 0;
    QVERIFY(store.foldedBefore(metric::Loss, MetricXAxis::Step, &x, &span));
    QVERIFY2(x > 4000 && x < Long && span >= 2,
             qPrintable(QStringLiteral("%1 %2").arg(x).arg(span)));
    MetricsPlotProvider provider(&store, metric::Loss);
    m_plot->setProvider(&provider);
    m_plot->refreshNow();
    const QString note = m_plot->historyNote();
    QVERIFY2(note.contains(QStringLiteral("%1 steps").arg(span)), qPrintable(note));
    QCustomPlot *cp = m_plot->customPlot();
    QCOMPARE(cp->accessibleDescription(), note);
    bool line = false;
    for (int i = 0; i < cp->itemCount(); ++i) {
        auto *l = qobject_cast<QCPItemStraightLine *>(cp->item(i));
        line = line || (l && l->visible() && l->point1->key() == x && l->point2->key() == x);
    }
    QVERIFY(line);
    // Zoomed into the newest steps, where every point is drawn: nothing is said.
    cp->xAxis->setRange(x + 10, Long);
    m_plot->refreshNow();
    QVERIFY(m_plot->historyNote().isEmpty());
    QVERIFY(cp->accessibleDescription().isEmpty());
    m_plot->setProvider(m_provider.get());
    m_plot->resetView();
}

void TestLossPlot::exports()
{
    QFETCH(QString, suffix);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("loss.") + suffix);
    QString error;
    bool ok = false;
    if (suffix == QLatin1String("png"))
        ok = m_plot->exportPng(path);
    else if (suffix == QLatin1String("pdf"))
        ok = m_plot->exportPdf(path);
    else if (suffix == QLatin1String("csv"))
        ok = m_plot->exportCsv(path, &error);
    else
        ok = m_plot->exportTensorBoard(path, &error);
    QVERIFY2(ok, qPrintable(error));
    if (suffix == QLatin1String("tensorboard")) {
        // One run per rank; what is in the files tst_tensorboardexport reads with TensorBoard.
        for (int rank = 0; rank < 2; ++rank) {
            const QStringList files = QDir(path + QStringLiteral("/rank-%1").arg(rank))
                                          .entryList({QStringLiteral("events.out.tfevents.*")});
            QCOMPARE(files.size(), 1);
        }
        return;
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray content = file.readAll();
    if (suffix == QLatin1String("png")) {
        QImage image;
        QVERIFY(image.loadFromData(content, "PNG"));
        QVERIFY(image.width() >= m_plot->customPlot()->width());
    } else if (suffix == QLatin1String("pdf")) {
        QVERIFY(content.startsWith("%PDF"));
    } else {
        // Full resolution: a header and one row per point of each rank, not the bucketed curve.
        QCOMPARE(content.count('\n'), 1 + 2 * Steps);
    }
}

void TestLossPlot::followsNewData()
{
    const int before = m_plot->pointCount(1);
    m_store->append(1, metric::Loss, Steps + 1, StartUs + (Steps + 1) * 100'000, 0.3);
    m_plot->poll(); // what the page's timer calls
    QCOMPARE(m_plot->pointCount(1), before + 1);
    QVERIFY(m_plot->customPlot()->xAxis->range().contains(Steps + 1));
    // Nothing new: poll is a no-op and keeps the user's zoom.
    m_plot->customPlot()->xAxis->setRange(10, 20);
    m_plot->poll();
    QCOMPARE(m_plot->customPlot()->xAxis->range().lower, 10.0);
}

void TestLossPlot::spikesSurvivePanAndLiveAppends_data()
{
    QTest::addColumn<int>("spikeStep");
    QTest::addColumn<double>("viewFrom"); // panned view, in steps
    QTest::addColumn<double>("viewTo");
    QTest::newRow("whole run") << 123457 << 0.0 << 0.0;
    QTest::newRow("spike in a panned view") << 61234 << 50000.0 << 90000.0;
    QTest::newRow("spike at the view's left edge") << 70000 << 70000.0 << 150000.0;
    QTest::newRow("spike at the view's right edge") << 150001 << 70000.5 << 150001.0;
}

// A long run (far more points than pixels): however the view is panned and while ranks append,
// a one-step spike stays on screen at its own step, and the mean follows the new steps.
void TestLossPlot::spikesSurvivePanAndLiveAppends()
{
    QFETCH(int, spikeStep);
    QFETCH(double, viewFrom);
    QFETCH(double, viewTo);
    MetricsStore store;
    constexpr int LongRun = 200'000;
    for (int step = 1; step <= LongRun; ++step) {
        for (int rank = 0; rank < 3; ++rank) {
            const double spike = rank == 2 && step == spikeStep ? 50.0 : 0.0;
            store.append(rank, metric::Loss, step, StartUs + step * 1000,
                         lossAt(rank, step) + spike);
        }
    }
    MetricsPlotProvider provider(&store, metric::Loss);
    m_plot->setSmoothing(0.0); // raw curves at full strength
    m_plot->setProvider(&provider);
    m_plot->refreshNow();
    if (viewTo > viewFrom) {
        m_plot->customPlot()->xAxis->setRange(viewFrom, viewTo);
        m_plot->refreshNow();
    }
    const auto spikeShown = [&] {
        const QCPGraph *raw = rawGraph(*m_plot, QStringLiteral("Rank 2"));
        for (const QCPGraphData &d : *raw->data()) {
            if (d.value == lossAt(2, spikeStep) + 50.0)
                return d.key == spikeStep;
        }
        return false;
    };
    QVERIFY(spikeShown());
    QVERIFY(m_plot->pointCount(2) < LongRun / 20); // bucketed, not every point

    // Live: every rank reports a new step; the next refresh shows it and keeps the spike.
    for (int rank = 0; rank < 3; ++rank)
        store.append(rank, metric::Loss, LongRun + 1, StartUs + (LongRun + 1) * 1000,
                     0.25 * (rank + 1));
    m_plot->resetView();
    m_plot->refreshNow();
    QVERIFY(spikeShown());
    const QCPGraph *mean = rawGraph(*m_plot, QStringLiteral("Mean"));
    QVERIFY(mean && !mean->data()->isEmpty());
    QCOMPARE((mean->data()->constEnd() - 1)->key, double(LongRun + 1));
    QCOMPARE((mean->data()->constEnd() - 1)->value, (0.25 + 0.5 + 0.75) / 3);
    m_plot->setProvider(m_provider.get()); // the store goes away before the plot
}

// A metric whose x counts epochs (or reports: no step in the line) is titled so on the step
// axis; a rank whose x counts something else than most is marked in the legend, never drawn
// on that axis unsaid. Time axes are what they are.
void TestLossPlot::axisSaysWhatXCounts_data()
{
    QTest::addColumn<QList<int>>("bases"); // XBasis of val_loss per rank
    QTest::addColumn<QString>("title");
    QTest::addColumn<QStringList>("legend");
    QTest::newRow("steps") << QList<int>{0, 0} << QStringLiteral("Step")
                           << QStringList{QStringLiteral("Mean"), QStringLiteral("Rank 0"),
                                          QStringLiteral("Rank 1")};
    QTest::newRow("epochs") << QList<int>{1, 1} << QStringLiteral("Epoch")
                            << QStringList{QStringLiteral("Mean"), QStringLiteral("Rank 0"),
                                           QStringLiteral("Rank 1")};
    QTest::newRow("reports") << QList<int>{2} << QStringLiteral("Report # (no step in the line)")
                             << QStringList{QStringLiteral("Rank 0")};
    QTest::newRow("one rank on epochs")
        << QList<int>{0, 1, 0} << QStringLiteral("Step")
        << QStringList{QStringLiteral("Mean (x: mixed)"), QStringLiteral("Rank 0"),
                       QStringLiteral("Rank 1 (x: epoch)"), QStringLiteral("Rank 2")};
}

void TestLossPlot::axisSaysWhatXCounts()
{
    QFETCH(QList<int>, bases);
    QFETCH(QString, title);
    QFETCH(QStringList, legend);
    const QString name = QStringLiteral("val_loss");
    for (int rank = 0; rank < bases.size(); ++rank) {
        for (int x = 0; x < 5; ++x)
            m_store->append(rank, name, x, StartUs + x * 1000, 1.0 / (1 + x), XBasis(bases[rank]));
    }
    MetricsPlotProvider provider(m_store.get(), name);
    m_plot->setProvider(&provider);
    m_plot->refreshNow();
    QCOMPARE(m_plot->customPlot()->xAxis->label(), title);
    auto *list = m_plot->findChild<QListWidget *>(QStringLiteral("lossLegend"));
    QStringList shown;
    for (int i = 0; i < list->count(); ++i)
        shown << list->item(i)->text();
    QCOMPARE(shown, legend);
    QVERIFY(rawGraph(*m_plot, legend.last()));
    m_plot->setXMode(PlotXMode::RelativeTime);
    m_plot->refreshNow();
    QCOMPARE(m_plot->customPlot()->xAxis->label(), QStringLiteral("Seconds since start"));
    m_plot->setXMode(PlotXMode::Step);
    m_plot->refreshNow();
    QCOMPARE(m_plot->customPlot()->xAxis->label(), title);
    m_plot->setProvider(m_provider.get());
}

// A one-step spike of one rank: with outliers not ignored every raw point drawn (the faint ones
// behind smoothed curves too) is inside the y-range; ignoring outliers leaves the spike out.
QTEST_MAIN(TestLossPlot)
#include "tst_lossplot.moc"
