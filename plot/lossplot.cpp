// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one QCustomPlot widget whose curves, axes, ranges and
// export all act on the same graphs. The legend, colours and hover read-out are in
// lossplotlegend.cpp.
#include "lossplot.h"

#include "store/smoothing.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QSet>
#include <QSlider>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace rankdeck {

namespace {
constexpr int SliderSteps = 1000;
constexpr int CrowdedCurves = 16;
} // namespace

LossPlot::LossPlot(QWidget *parent) : QWidget(parent)
{
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("lossCustomPlot"));
    // OpenGL stays off: it breaks in VMs and remote sessions; bucketed data keeps the CPU path
    // fast.
    m_plot->setNoAntialiasingOnDrag(true);
    // The legend is our own list; QCustomPlot's would search itself for every added graph,
    // which is quadratic in the number of ranks.
    m_plot->setAutoAddPlottableToLegend(false);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    m_plot->setMinimumSize(320, 200);
    m_plot->yAxis->setLabel(tr("Loss"));
    // Hover marks live on their own buffered layer so that moving the mouse repaints only them.
    m_plot->addLayer(QString::fromLatin1(HoverLayer), nullptr, QCustomPlot::limAbove);
    m_plot->layer(QString::fromLatin1(HoverLayer))->setMode(QCPLayer::lmBuffered);
    m_hoverLine = new QCPItemStraightLine(m_plot);
    m_hoverLine->setLayer(QString::fromLatin1(HoverLayer));
    m_hoverLine->setVisible(false);
    // Where a long run's folded history ends (updateHistoryMark()).
    m_historyLine = new QCPItemStraightLine(m_plot);
    m_historyLine->setVisible(false);
    m_historyText = new QCPItemText(m_plot);
    m_historyText->setVisible(false);
    m_historyText->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    m_historyText->setPadding(QMargins(4, 2, 4, 2));
    for (QCPItemPosition *p :
         {m_historyLine->point1, m_historyLine->point2, m_historyText->position})
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);

    connect(m_plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this, [this] {
        if (m_rebuilding)
            return;
        // The user zoomed or panned: keep their view and refetch buckets for it.
        m_autoRange = false;
        markDirty();
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, &LossPlot::resetView);

    m_smoothingSlider = new QSlider(Qt::Horizontal, this);
    m_smoothingSlider->setObjectName(QStringLiteral("smoothingSlider"));
    m_smoothingSlider->setAccessibleName(tr("Smoothing"));
    m_smoothingSlider->setRange(0, SliderSteps - 1);
    m_smoothingSlider->setToolTip(
        tr("Debiased exponential moving average weight (TensorBoard style), computed on the full "
           "data. A curve of n points gets at most n / (n + %1), so that a sparse one (a value "
           "per epoch) does not trail behind its points: the default 0.6 applies from %2 "
           "points on.")
            .arg(Smoothing::kSparsePoints)
            .arg(int(std::ceil(Smoothing::kDefaultWeight * Smoothing::kSparsePoints /
                               (1.0 - Smoothing::kDefaultWeight)))));
    m_smoothingLabel = new QLabel(this);
    m_smoothingLabel->setMinimumWidth(
        m_smoothingLabel->fontMetrics().horizontalAdvance(QStringLiteral("0.000")));
    connect(m_smoothingSlider, &QSlider::valueChanged, this, [this](int v) {
        m_smoothingLabel->setText(QString::number(double(v) / SliderSteps, 'f', 3));
        markDirty();
    });

    m_xModeCombo = new QComboBox(this);
    m_xModeCombo->setObjectName(QStringLiteral("xModeCombo"));
    m_xModeCombo->addItem(tr("Step"), int(PlotXMode::Step));
    m_xModeCombo->addItem(tr("Relative time"), int(PlotXMode::RelativeTime));
    m_xModeCombo->addItem(tr("Wall time"), int(PlotXMode::WallTime));
    connect(m_xModeCombo, &QComboBox::currentIndexChanged, this,
            [this](int) { setXMode(PlotXMode(m_xModeCombo->currentData().toInt())); });

    // Only while comparing runs: how each run shows its ranks.
    m_ranksCombo = new QComboBox(this);
    m_ranksCombo->setObjectName(QStringLiteral("compareRanksCombo"));
    m_ranksCombo->addItem(tr("Mean"), int(CompareRanks::Mean));
    m_ranksCombo->addItem(tr("Mean and min–max band"), int(CompareRanks::Band));
    m_ranksCombo->addItem(tr("Every rank"), int(CompareRanks::EveryRank));
    m_ranksCombo->setCurrentIndex(m_ranksCombo->findData(int(m_compareRanks)));
    m_ranksCombo->setToolTip(tr("Each compared run: its mean across ranks, with a band from the "
                                "smallest to the largest rank's value per step, or a thin line "
                                "per rank"));
    connect(m_ranksCombo, &QComboBox::currentIndexChanged, this,
            [this](int) { setCompareRanks(CompareRanks(m_ranksCombo->currentData().toInt())); });
    m_ranksLabel = new QLabel(tr("Ran&ks:"), this);
    m_ranksLabel->setBuddy(m_ranksCombo);
    m_ranksLabel->hide();
    m_ranksCombo->hide();

    m_logCheck = new QCheckBox(tr("Log s&cale"), this);
    m_logCheck->setObjectName(QStringLiteral("logScaleCheck"));
    connect(m_logCheck, &QCheckBox::toggled, this, &LossPlot::setLogScale);
    m_outlierCheck = new QCheckBox(tr("&Ignore outliers"), this);
    m_outlierCheck->setObjectName(QStringLiteral("ignoreOutliersCheck"));
    m_outlierCheck->setToolTip(
        tr("Scale the y axis to the 2nd–98th percentile of the visible data"));
    connect(m_outlierCheck, &QCheckBox::toggled, this, &LossPlot::setIgnoreOutliers);

    auto *resetButton = new QToolButton(this);
    resetButton->setText(tr("Reset view"));
    resetButton->setToolTip(tr("Fit all data (double-click the plot does the same)"));
    connect(resetButton, &QToolButton::clicked, this, &LossPlot::resetView);

    m_exportButton = new QToolButton(this);
    m_exportButton->setObjectName(QStringLiteral("exportButton"));
    m_exportButton->setText(tr("Export…"));
    m_exportButton->setPopupMode(QToolButton::InstantPopup);
    auto *exportMenu = new QMenu(m_exportButton);
    exportMenu->setObjectName(QStringLiteral("exportMenu"));
    exportMenu->addAction(tr("PNG, PDF or full-resolution CSV…"), this,
                          &LossPlot::exportInteractive);
    exportMenu->addAction(tr("TensorBoard event files (one run per rank)…"), this,
                          &LossPlot::exportTensorBoardInteractive);
    m_exportButton->setMenu(exportMenu);

    m_legend = new QListWidget(this);
    m_legend->setObjectName(QStringLiteral("lossLegend"));
    m_legend->setUniformItemSizes(true);
    m_legend->setAccessibleName(tr("Curves"));
    m_legend->setToolTip(tr("Tick a rank to show its curve; double-click one, or right-click it, "
                            "to show only that rank"));
    m_legend->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_legend, &QListWidget::itemChanged, this, [this](QListWidgetItem *item) {
        const int rank = item->data(Qt::UserRole).toInt();
        setRankVisible(rank, item->checkState() == Qt::Checked);
    });
    connect(m_legend, &QListWidget::customContextMenuRequested, this, &LossPlot::showLegendMenu);
    connect(m_legend, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem *item) {
        const int rank = item->data(Qt::UserRole).toInt();
        // A second double-click on the one rank shown is the way back.
        const bool alone =
            std::none_of(m_legendItems.keyBegin(), m_legendItems.keyEnd(), [&](int key) {
                return key != rank && isRankVisible(key) &&
                       (isComparing() || key != PlotDataProvider::MeanCurve);
            });
        if (alone && isRankVisible(rank))
            showAllRanks();
        else
            showOnlyRank(rank);
    });

    // Among 96 ranks the one to read is found by number: "3", "0-7", "3,5" (or part of a name).
    m_filterEdit = new QLineEdit(this);
    m_filterEdit->setObjectName(QStringLiteral("legendFilter"));
    m_filterEdit->setAccessibleName(tr("Filter ranks"));
    m_filterEdit->setPlaceholderText(tr("Filter: 3, 0-7, 3,5"));
    m_filterEdit->setToolTip(tr("Show only the ranks matching: a rank (3), a range (0-7), a list "
                                "(3,5,8-11), or part of a curve's name; the mean stays"));
    m_filterEdit->setClearButtonEnabled(true);
    connect(m_filterEdit, &QLineEdit::textChanged, this, &LossPlot::setRankFilter);
    m_showAllButton = new QToolButton(this);
    m_showAllButton->setObjectName(QStringLiteral("showAllRanksButton"));
    m_showAllButton->setText(tr("All"));
    m_showAllButton->setAccessibleName(tr("Show all ranks"));
    m_showAllButton->setToolTip(tr("Show every rank again: clears the filter and ticks all"));
    connect(m_showAllButton, &QToolButton::clicked, this, &LossPlot::showAllRanks);
    auto *legendPane = new QWidget(this);
    legendPane->setMinimumWidth(130);
    legendPane->setMaximumWidth(220);
    auto *filterRow = new QHBoxLayout;
    filterRow->addWidget(m_filterEdit, 1);
    filterRow->addWidget(m_showAllButton);
    auto *legendLayout = new QVBoxLayout(legendPane);
    legendLayout->setContentsMargins(0, 0, 0, 0);
    legendLayout->addLayout(filterRow);
    legendLayout->addWidget(m_legend, 1);

    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Smoothing:"), this));
    controls->addWidget(m_smoothingSlider, 1);
    controls->addWidget(m_smoothingLabel);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("X axis:"), this));
    controls->addWidget(m_xModeCombo);
    controls->addWidget(m_ranksLabel);
    controls->addWidget(m_ranksCombo);
    controls->addWidget(m_logCheck);
    controls->addWidget(m_outlierCheck);
    controls->addWidget(resetButton);
    controls->addWidget(m_exportButton);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_plot);
    splitter->addWidget(legendPane);
    splitter->setStretchFactor(0, 1);
    splitter->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(controls);
    layout->addWidget(splitter, 1);

    // TensorBoard's default weight; users know it.
    m_smoothingSlider->setValue(600);
    m_smoothingLabel->setText(QString::number(0.6, 'f', 3));
    applyAxisMode();
    applyTheme();
}

LossPlot::~LossPlot() = default;

void LossPlot::setProvider(const PlotDataProvider *provider)
{
    m_provider = provider;
    m_generation = ~quint64(0);
    m_autoRange = true;
    markDirty();
}

void LossPlot::setComparedRuns(const QList<ComparedRun> &runs)
{
    // Curves are keyed by rank or by run index: drop them all, the keys change meaning.
    m_runCurves.clear();
    m_plot->clearGraphs();
    m_curves.clear();
    m_legend->clear();
    m_legendItems.clear();
    m_hiddenRanks.clear();
    // A filter by rank means nothing to runs, nor one by run name to ranks.
    if (runs.isEmpty() != m_compared.isEmpty())
        setRankFilter(QString());
    m_compared = runs;
    QStringList keys;
    for (const ComparedRun &run : runs)
        keys << (run.key.isEmpty() ? run.name : run.key);
    m_runSlots = m_runColors.assign(keys);
    createRunCurves();
    m_ranksLabel->setVisible(isComparing());
    m_ranksCombo->setVisible(isComparing());
    m_generation = ~quint64(0);
    m_autoRange = true;
    markDirty();
}

void LossPlot::createRunCurves()
{
    m_runCurves.clear();
    const bool dark = RunColors::isDark(palette().color(QPalette::Base));
    for (qsizetype i = 0; i < m_compared.size(); ++i)
        m_runCurves.push_back(
            std::make_unique<ComparedRunCurves>(m_plot, m_compared[i].provider, m_compared[i].name,
                                                RunColors::color(m_runSlots.value(i), dark)));
}

const ComparedRunCurves *LossPlot::comparedRun(int index) const
{
    return index >= 0 && size_t(index) < m_runCurves.size() ? m_runCurves[size_t(index)].get()
                                                            : nullptr;
}

void LossPlot::setCompareRanks(CompareRanks ranks)
{
    if (ranks == m_compareRanks)
        return;
    m_compareRanks = ranks;
    const int index = m_ranksCombo->findData(int(ranks));
    if (index != m_ranksCombo->currentIndex())
        m_ranksCombo->setCurrentIndex(index);
    m_autoRange = true; // a band or the ranks reach further than the mean
    markDirty();
}

double LossPlot::smoothing() const
{
    return double(m_smoothingSlider->value()) / SliderSteps;
}

void LossPlot::setSmoothing(double weight)
{
    m_smoothingSlider->setValue(qBound(0, int(std::lround(weight * SliderSteps)), SliderSteps - 1));
}

void LossPlot::setXMode(PlotXMode mode)
{
    if (mode == m_xMode)
        return;
    m_xMode = mode;
    const int index = m_xModeCombo->findData(int(mode));
    if (index != m_xModeCombo->currentIndex())
        m_xModeCombo->setCurrentIndex(index);
    applyAxisMode();
    m_autoRange = true;
    markDirty();
}

void LossPlot::setLogScale(bool on)
{
    if (on == m_logScale)
        return;
    m_logScale = on;
    m_logCheck->setChecked(on);
    applyAxisMode();
    markDirty();
}

void LossPlot::setIgnoreOutliers(bool on)
{
    if (on == m_ignoreOutliers)
        return;
    m_ignoreOutliers = on;
    m_outlierCheck->setChecked(on);
    markDirty();
}

int LossPlot::pointCount(int rank) const
{
    const QCPGraph *raw = nullptr;
    if (isComparing()) {
        if (const ComparedRunCurves *run = comparedRun(rank))
            raw = run->rawMeanGraph();
    } else if (const auto it = m_curves.constFind(rank); it != m_curves.constEnd()) {
        raw = it->raw;
    }
    if (!raw)
        return 0;
    // NaN separators between segments are not points.
    int n = 0;
    for (const QCPGraphData &d : *raw->data())
        n += std::isnan(d.value) ? 0 : 1;
    return n;
}

double LossPlot::lastReplotMs() const
{
    return m_plot->replotTime(false);
}

void LossPlot::markDirty()
{
    m_dirty = true;
}

void LossPlot::poll()
{
    if (!m_provider && m_compared.isEmpty()) {
        if (m_dirty && !m_curves.isEmpty()) {
            m_plot->clearGraphs();
            m_curves.clear();
            m_legend->clear();
            m_legendItems.clear();
            m_rankOrder.clear();
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        }
        m_dirty = false;
        return;
    }
    quint64 generation = m_provider ? m_provider->generation() : 0;
    for (const ComparedRun &run : std::as_const(m_compared))
        generation += run.provider->generation();
    if (generation == m_generation && !m_dirty)
        return;
    // New data redraws at most once every four times its cost when that cost is felt (over
    // 10 ms): at 512 ranks a rebuild and replot took ~40 ms and the data changed on every 40 ms
    // poll, which left the GUI thread nothing else. What the user changes (m_dirty) redraws at
    // once.
    constexpr double FeltCostMs = 10;
    // (m_refreshCostMs is set only with m_sinceRefresh started.)
    if (!m_dirty && m_refreshCostMs > FeltCostMs &&
        double(m_sinceRefresh.elapsed()) < 4 * m_refreshCostMs)
        return;
    m_generation = generation;
    m_dirty = false;
    QElapsedTimer cost;
    cost.start();
    rebuild();
    // The replot is queued: its cost is the last one's, which QCustomPlot measures.
    m_refreshCostMs = double(cost.nsecsElapsed()) / 1e6 + m_plot->replotTime();
    m_sinceRefresh.start();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LossPlot::refreshNow()
{
    m_dirty = true;
    poll();
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
}

void LossPlot::resetView()
{
    m_autoRange = true;
    markDirty();
    poll();
}

QString LossPlot::curveName(int rank) const
{
    if (isComparing())
        return m_compared.value(rank).name;
    QString name = rank == PlotDataProvider::MeanCurve ? tr("Mean") : tr("Rank %1").arg(rank);
    // A rank whose x counts something else than the axis says says so (in step mode).
    const QString note =
        m_provider && m_xMode == PlotXMode::Step ? m_provider->curveNote(rank) : QString();
    if (!note.isEmpty())
        name += QStringLiteral(" (") + note + u')';
    return name;
}

QString LossPlot::stepAxisTitle() const
{
    // Compared runs share the axis: its title is theirs when they agree, and says so otherwise.
    QStringList titles;
    if (isComparing()) {
        for (const ComparedRun &run : m_compared) {
            const QString t = run.provider ? run.provider->stepAxisTitle() : QString();
            if (!titles.contains(t.isEmpty() ? tr("Step") : t))
                titles << (t.isEmpty() ? tr("Step") : t);
        }
    } else if (m_provider) {
        titles << m_provider->stepAxisTitle();
    }
    if (titles.size() > 1)
        return titles.join(QStringLiteral(" / ")) + tr(" (differs by run)");
    return titles.value(0).isEmpty() ? tr("Step") : titles.value(0);
}

LossPlot::Curves &LossPlot::curvesFor(int rank)
{
    Curves &c = m_curves[rank];
    if (!c.raw) {
        const QColor color = colorFor(rank);
        QColor faint = color;
        faint.setAlpha(60);
        c.raw = m_plot->addGraph();
        c.raw->setName(curveName(rank));
        c.raw->setPen(QPen(faint, 1));
        c.smooth = m_plot->addGraph();
        c.smooth->setName(curveName(rank));
        const bool dashedMean = rank == PlotDataProvider::MeanCurve && !isComparing();
        QPen pen(color, dashedMean ? 2.5 : 1.5);
        if (dashedMean)
            pen.setStyle(Qt::DashLine);
        c.smooth->setPen(pen);
    }
    return c;
}

void LossPlot::rebuildCompared()
{
    if (m_xMode == PlotXMode::Step)
        m_plot->xAxis->setLabel(stepAxisTitle());
    m_rebuilding = true;
    CompareView view;
    view.mode = m_xMode;
    view.weight = smoothing();
    view.ranks = m_compareRanks;
    if (!m_autoRange) {
        view.xMin = m_plot->xAxis->range().lower;
        view.xMax = m_plot->xAxis->range().upper;
    }
    // As for one run (see rebuild()): a min/max bucket per two pixel columns.
    view.buckets = qMax(64, m_plot->axisRect()->width() / 2);
    int visibleCurves = 0;
    for (int i = 0; i < m_compared.size(); ++i) {
        if (isRankVisible(i))
            visibleCurves += m_compareRanks == CompareRanks::EveryRank
                                 ? int(m_compared[i].provider->ranks().size())
                                 : 1;
    }
    view.crowded = visibleCurves > CrowdedCurves;
    if (view.crowded)
        m_plot->setNotAntialiasedElements(QCP::aePlottables);
    else
        m_plot->setAntialiasedElements(QCP::aePlottables);
    QList<int> order;
    for (int i = 0; i < int(m_runCurves.size()); ++i) {
        ensureLegendItem(i);
        ComparedRunCurves &run = *m_runCurves[size_t(i)];
        run.setVisible(isRankVisible(i));
        // Only runs whose data (or the view) changed fetch anything: a finished run, never.
        run.update(view);
        if (run.rankCount() > 0)
            order << i;
    }
    m_rankOrder = order;
    if (m_autoRange)
        autoRange();
    m_rebuilding = false;
}

void LossPlot::rebuild()
{
    if (isComparing()) {
        rebuildCompared();
        return;
    }
    if (!m_provider)
        return;
    m_rebuilding = true;
    const QList<int> ranks = m_provider->ranks();
    QList<int> curves = ranks;
    if (ranks.size() > 1)
        curves.prepend(PlotDataProvider::MeanCurve);
    m_rankOrder = ranks;

    const double weight = smoothing();
    double xMin = 0, xMax = 0;
    if (!m_autoRange) {
        xMin = m_plot->xAxis->range().lower;
        xMax = m_plot->xAxis->range().upper;
    }
    // A bucket gives its min and max, so one bucket per two pixel columns already puts a point
    // in every column: full fidelity at screen resolution, and spikes never vanish.
    const int buckets = qMax(64, m_plot->axisRect()->width() / 2);
    int visibleCurves = 0;
    for (int rank : std::as_const(curves))
        visibleCurves += isRankVisible(rank) ? 1 : 0;
    // With many ranks the faint raw curves are noise under noise, and antialiasing dominates the
    // replot time: both only while a handful of curves is shown.
    const bool crowded = visibleCurves > CrowdedCurves;
    if (crowded)
        m_plot->setNotAntialiasedElements(QCP::aePlottables);
    else
        m_plot->setAntialiasedElements(QCP::aePlottables);

    // What x counts may be known only now (a series' first point), or change as ranks join.
    if (m_xMode == PlotXMode::Step)
        m_plot->xAxis->setLabel(stepAxisTitle());
    for (int rank : std::as_const(curves)) {
        ensureLegendItem(rank);
        Curves &c = curvesFor(rank);
        const QString name = curveName(rank);
        if (c.smooth->name() != name) {
            c.raw->setName(name);
            c.smooth->setName(name);
            if (QListWidgetItem *item = m_legendItems.value(rank)) {
                const QSignalBlocker blocker(m_legend);
                item->setText(name);
            }
        }
        const bool visible = isRankVisible(rank);
        const bool showRaw = visible && (weight <= 0 || !crowded);
        c.raw->setVisible(showRaw);
        c.smooth->setVisible(visible && weight > 0);
        if (!visible)
            continue;
        if (showRaw) {
            const PlotCurve raw = m_provider->curve(rank, m_xMode, 0.0, xMin, xMax, buckets);
            c.raw->setData(raw.x, raw.y, true);
        } else {
            c.raw->data()->clear();
        }
        if (weight > 0) {
            // A crowd of ranks is a texture of thin lines, the mean the one to read: a rank's
            // curve then gets a bucket per 8 pixel columns (its min and max still keep a spike),
            // a quarter of the points to draw (at 512 ranks 256k points a replot, ~20 ms).
            const int rankBuckets =
                crowded && rank != PlotDataProvider::MeanCurve ? qMax(32, buckets / 4) : buckets;
            const PlotCurve smooth =
                m_provider->curve(rank, m_xMode, weight, xMin, xMax, rankBuckets);
            c.smooth->setData(smooth.x, smooth.y, true);
        } else {
            c.smooth->data()->clear();
        }
        // Without smoothing the raw curve is the curve: draw it at full strength.
        QPen rawPen = c.raw->pen();
        QColor color = colorFor(rank);
        color.setAlpha(weight > 0 ? 60 : 255);
        rawPen.setColor(color);
        // Cosmetic one-pixel pens take Qt's cosmetic stroker; anything wider is stroked into a
        // polygon and filled, which for min/max zig-zags of many curves costs whole seconds.
        rawPen.setCosmetic(true);
        c.raw->setPen(rawPen);
        QPen smoothPen = c.smooth->pen();
        const bool mean = rank == PlotDataProvider::MeanCurve;
        smoothPen.setWidthF(crowded && !mean ? 1.0 : (mean ? 2.5 : 1.5));
        smoothPen.setCosmetic(crowded && !mean);
        c.smooth->setPen(smoothPen);
    }
    // Curves whose rank disappeared (another run bound to the same plot) are dropped; a set,
    // for a list's contains() per curve made this O(ranks²).
    const QSet<int> kept(curves.cbegin(), curves.cend());
    m_curves.removeIf([&](QHash<int, Curves>::iterator it) {
        if (kept.contains(it.key()))
            return false;
        m_plot->removeGraph(it->raw);
        m_plot->removeGraph(it->smooth);
        delete m_legendItems.take(it.key());
        return true;
    });
    if (m_autoRange)
        autoRange();
    updateHistoryMark();
    m_rebuilding = false;
}

void LossPlot::applyAxisMode()
{
    QCPAxis *x = m_plot->xAxis;
    switch (m_xMode) {
    case PlotXMode::Step:
        x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        x->setLabel(stepAxisTitle());
        break;
    case PlotXMode::RelativeTime:
        x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        x->setLabel(tr("Seconds since start"));
        break;
    case PlotXMode::WallTime: {
        QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
        ticker->setDateTimeFormat(QStringLiteral("HH:mm:ss"));
        x->setTicker(ticker);
        x->setLabel(tr("Wall time"));
        break;
    }
    }
    QCPAxis *y = m_plot->yAxis;
    if (m_logScale) {
        y->setScaleType(QCPAxis::stLogarithmic);
        y->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
    } else {
        y->setScaleType(QCPAxis::stLinear);
        y->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
}

QList<const QCPGraph *> LossPlot::rangeGraphs() const
{
    QList<const QCPGraph *> out;
    if (isComparing()) {
        for (const auto &run : m_runCurves) {
            for (const QCPGraph *g : run->rangeGraphs())
                out << g;
            const QCPGraph *raw = run->rawMeanGraph();
            if (!m_ignoreOutliers && run->isVisible() && raw->visible())
                out << raw;
        }
        return out;
    }
    for (auto it = m_curves.cbegin(); it != m_curves.cend(); ++it) {
        if (!isRankVisible(it.key()))
            continue;
        const bool smooth = it->smooth->visible() && !it->smooth->data()->isEmpty();
        if (smooth)
            out << it->smooth;
        // Every point drawn is on screen, the faint raw spikes too; ignoring outliers scales to
        // the smoothed curves, the raw ones being context there.
        if (it->raw->visible() && (!smooth || !m_ignoreOutliers))
            out << it->raw;
    }
    return out;
}

void LossPlot::autoRange()
{
    double xLo = qInf(), xHi = -qInf();
    QVector<double> ys;
    for (const QCPGraph *g : rangeGraphs()) {
        for (const QCPGraphData &d : *g->data()) {
            if (std::isnan(d.value))
                continue;
            xLo = std::min(xLo, d.key);
            xHi = std::max(xHi, d.key);
        }
        for (const QCPGraphData &d : *g->data()) {
            if (!std::isfinite(d.value) || (m_logScale && d.value <= 0))
                continue;
            ys.append(d.value);
        }
    }
    if (!(xLo <= xHi) || ys.isEmpty()) {
        m_plot->xAxis->setRange(0, 1);
        m_plot->yAxis->setRange(m_logScale ? 0.1 : 0, 1);
        return;
    }
    if (xLo == xHi)
        xHi = xLo + 1;
    m_plot->xAxis->setRange(xLo, xHi);
    double yLo, yHi;
    if (m_ignoreOutliers && ys.size() >= 10) {
        const auto lo = ys.begin() + qsizetype(ys.size() * 0.02);
        const auto hi = ys.begin() + qsizetype(ys.size() * 0.98);
        std::nth_element(ys.begin(), lo, ys.end());
        yLo = *lo;
        std::nth_element(ys.begin(), hi, ys.end());
        yHi = *hi;
    } else {
        const auto [mn, mx] = std::minmax_element(ys.cbegin(), ys.cend());
        yLo = *mn;
        yHi = *mx;
    }
    if (m_logScale) {
        m_plot->yAxis->setRange(yLo / 1.2, yHi * 1.2);
    } else {
        const double pad =
            yHi > yLo ? (yHi - yLo) * 0.05 : std::max(1e-6, std::abs(yHi) * 0.05 + 1e-6);
        m_plot->yAxis->setRange(yLo - pad, yHi + pad);
    }
}

bool LossPlot::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_plot) {
        if (event->type() == QEvent::MouseMove)
            updateHover(static_cast<QMouseEvent *>(event)->position().toPoint());
        else if (event->type() == QEvent::Leave)
            hideHover();
    }
    return QWidget::eventFilter(watched, event);
}

bool LossPlot::renderToFile(const QString &fileName, int width, int height, bool pdf)
{
    // Sized as the picture, so that the buckets match its pixel columns.
    m_plot->setViewport(QRect(0, 0, width, height));
    // The axis rect takes the picture's size only when laid out, which a replot does: before
    // it, a plot never shown (the CLI's) would bucket for its default size, a few dozen columns.
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    m_dirty = true;
    poll();
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    // The legend is the app's own list beside the plot; a picture carries QCustomPlot's.
    QCPLegend *legend = m_plot->legend;
    legend->clearItems();
    int entries = 0;
    QList<int> order = m_rankOrder;
    if (m_curves.contains(PlotDataProvider::MeanCurve) && !isComparing())
        order.prepend(PlotDataProvider::MeanCurve);
    for (int key : std::as_const(order)) {
        QCPGraph *graph = nullptr;
        if (isComparing()) {
            const ComparedRunCurves *run = comparedRun(key);
            graph = run && run->isVisible() ? run->meanGraph() : nullptr;
        } else if (const auto it = m_curves.constFind(key); it != m_curves.cend()) {
            graph = isRankVisible(key) ? (it->smooth->visible() ? it->smooth : it->raw) : nullptr;
        }
        if (!graph || entries >= CrowdedCurves)
            continue;
        legend->addItem(new QCPPlottableLegendItem(legend, graph));
        ++entries;
    }
    legend->setVisible(entries > 0);
    legend->setBrush(QBrush(palette().color(QPalette::Base)));
    legend->setTextColor(palette().color(QPalette::Text));
    const bool ok = pdf ? m_plot->savePdf(fileName, width, height)
                        : m_plot->savePng(fileName, width, height, 1.0);
    legend->clearItems();
    legend->setVisible(false);
    return ok;
}

bool LossPlot::exportPng(const QString &fileName)
{
    return m_plot->savePng(fileName, 0, 0, 2.0);
}

bool LossPlot::exportPdf(const QString &fileName)
{
    return m_plot->savePdf(fileName);
}

bool LossPlot::exportCsv(const QString &fileName, QString *errorMessage)
{
    if (!m_provider) {
        if (errorMessage)
            *errorMessage = tr("There is no data to export.");
        return false;
    }
    QFile file(fileName);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (errorMessage)
            *errorMessage = tr("Cannot write %1: %2").arg(fileName, file.errorString());
        return false;
    }
    return m_provider->writeCsv(&file, errorMessage);
}

bool LossPlot::exportTensorBoard(const QString &directory, QString *errorMessage)
{
    if (!m_provider) {
        if (errorMessage)
            *errorMessage = tr("There is no data to export.");
        return false;
    }
    return m_provider->writeTensorBoard(directory, errorMessage);
}

void LossPlot::exportTensorBoardInteractive()
{
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Export TensorBoard event files into (one sub-directory per rank)"));
    if (dir.isEmpty())
        return;
    QString error;
    if (!exportTensorBoard(dir, &error))
        QMessageBox::warning(this, tr("Export failed"), error);
}

void LossPlot::exportInteractive()
{
    QString selectedFilter;
    const QString pngFilter = tr("PNG image (*.png)");
    const QString pdfFilter = tr("PDF document (*.pdf)");
    const QString csvFilter = tr("Full-resolution CSV (*.csv)");
    QString fileName = QFileDialog::getSaveFileName(
        this, tr("Export loss curves"), QString(),
        QStringList{pngFilter, pdfFilter, csvFilter}.join(QStringLiteral(";;")), &selectedFilter);
    if (fileName.isEmpty())
        return;
    bool ok = false;
    QString error;
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == QLatin1String("csv") || (suffix.isEmpty() && selectedFilter == csvFilter)) {
        if (suffix.isEmpty())
            fileName += QStringLiteral(".csv");
        ok = exportCsv(fileName, &error);
    } else if (suffix == QLatin1String("pdf") ||
               (suffix.isEmpty() && selectedFilter == pdfFilter)) {
        if (suffix.isEmpty())
            fileName += QStringLiteral(".pdf");
        ok = exportPdf(fileName);
    } else {
        if (suffix.isEmpty())
            fileName += QStringLiteral(".png");
        ok = exportPng(fileName);
    }
    if (!ok)
        QMessageBox::warning(this, tr("Export failed"),
                             error.isEmpty() ? tr("Could not write %1.").arg(fileName) : error);
}

} // namespace rankdeck
