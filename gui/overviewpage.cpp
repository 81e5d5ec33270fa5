// SPDX-License-Identifier: GPL-3.0-or-later
#include "overviewpage.h"

#include "statestyle.h"

#include "rankstepsview.h"
#include "steadylabel.h"
#include "stepheatmapview.h"
#include "store/metricsstore.h"
#include "widgettext.h"

#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace rankdeck {

namespace {

constexpr int PercentRole = Qt::UserRole + 1; // int: 0..100, -1 busy without a percentage

// Paints the node's progress bar in its cell: 64 nodes cost 64 painted cells, not 64 widgets.
class NodeProgressDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override
    {
        const QVariant percent = index.data(PercentRole);
        if (!percent.isValid()) {
            QStyledItemDelegate::paint(painter, option, index);
            return;
        }
        QStyleOptionProgressBar bar;
        bar.initFrom(option.widget);
        bar.rect = option.rect.adjusted(2, 2, -2, -2);
        bar.state = option.state | QStyle::State_Horizontal;
        bar.minimum = 0;
        const int value = percent.toInt();
        // A stage without a percentage shows as a full bar with the stage's text only.
        bar.maximum = 100;
        bar.progress = value < 0 ? 100 : value;
        bar.textVisible = true;
        bar.text = value < 0 ? QString() : QStringLiteral("%1%").arg(value);
        bar.textAlignment = Qt::AlignCenter;
        QStyle *style = option.widget ? option.widget->style() : QApplication::style();
        style->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
    }
};

} // namespace

OverviewPage::OverviewPage(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("overviewPage"));
    m_title = new QLabel(this);
    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.3);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_state = new QLabel(this);
    m_state->setObjectName(QStringLiteral("runStateLabel"));
    m_stateIcon = new QLabel(this);
    m_stateIcon->setObjectName(QStringLiteral("runStateIcon"));

    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("runProgressBar"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    auto *eta = new QLabel;
    eta->setObjectName(QStringLiteral("etaLabel"));
    m_eta = new SteadyLabel(eta, this);

    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("rootCauseBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setMargin(8);
    m_banner->setAutoFillBackground(true);
    m_banner->setCursor(Qt::PointingHandCursor);
    m_banner->setToolTip(tr("Click to open the failure report"));
    m_banner->installEventFilter(this);
    m_banner->hide();

    m_clocks = new QLabel(this);
    m_clocks->setObjectName(QStringLiteral("nodeClocksLabel"));
    m_clocks->setTextFormat(Qt::PlainText);
    m_clocks->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_clocks->setToolTip(tr("How far each node's clock is from this computer's, measured over "
                            "its connection; the ranks' own timestamps are corrected by it "
                            "before the first failure is chosen"));
    m_clocks->hide();

    m_nodes = new QTableWidget(0, 3, this);
    m_nodes->setObjectName(QStringLiteral("nodeProgressTable"));
    m_nodes->setHorizontalHeaderLabels({tr("Node"), tr("Stage"), tr("Progress")});
    m_nodes->horizontalHeader()->setStretchLastSection(true);
    m_nodes->verticalHeader()->setVisible(false);
    m_nodes->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_nodes->setMaximumHeight(140);
    m_nodes->setItemDelegateForColumn(2, new NodeProgressDelegate(m_nodes));
    m_nodes->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_nodes->hide();

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("rankTable"));
    m_table->setAccessibleName(tr("Ranks"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setSortingEnabled(false);
    m_table->verticalHeader()->setVisible(false);
    // Fixed row heights: the view never measures 512 rows' contents.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);

    m_rankSummary = new QLabel(this);
    m_rankSummary->setObjectName(QStringLiteral("rankSummaryLabel"));
    m_rankSummary->setWordWrap(true);
    m_rankSummary->setTextFormat(Qt::PlainText);
    m_rankSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_rankSummary->hide();
    m_differenceModel = new RankDifferenceModel(this);
    m_differences = new QTableView(this);
    m_differences->setObjectName(QStringLiteral("rankDifferencesTable"));
    m_differences->setModel(m_differenceModel);
    m_differences->setToolTip(tr("Ranks that differ from the majority: their state, their step "
                                 "(further from the median than 2 steps and than 3 times the "
                                 "ranks' median distance from it) or their last line"));
    m_differences->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_differences->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_differences->verticalHeader()->setVisible(false);
    m_differences->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_differences->verticalHeader()->setDefaultSectionSize(m_differences->fontMetrics().height() +
                                                           6);
    // How a rank differs is what the table is for: its column as wide as its words, the last
    // line the rest.
    for (int column : {RankDifferenceModel::RankColumn, RankDifferenceModel::HostColumn,
                       RankDifferenceModel::HowColumn})
        m_differences->horizontalHeader()->setSectionResizeMode(column,
                                                                QHeaderView::ResizeToContents);
    m_differences->horizontalHeader()->setStretchLastSection(true);
    m_differences->setMaximumHeight(140);
    m_differences->hide();

    m_stop = new QPushButton(tr("&Stop"), this);
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->setToolTip(tr("Ask every rank to finish its step and exit (Ctrl+.)"));
    m_kill = new QPushButton(tr("&Kill…"), this);
    m_kill->setObjectName(QStringLiteral("killButton"));
    m_kill->setToolTip(tr("Kill every rank's process group now"));
    m_dump = new QPushButton(tr("&Dump stacks"), this);
    m_dump->setObjectName(QStringLiteral("dumpStacksButton"));
    m_dump->setToolTip(tr("Ask every rank for the stacks of all its threads (shown in Failures)"));
    connect(m_stop, &QPushButton::clicked, this, &OverviewPage::stopRequested);
    connect(m_kill, &QPushButton::clicked, this, &OverviewPage::killRequested);
    connect(m_dump, &QPushButton::clicked, this, &OverviewPage::dumpStacksRequested);
    m_reattach = new QPushButton(tr("Re-a&ttach"), this);
    m_reattach->setObjectName(QStringLiteral("reattachButton"));
    m_reattach->setToolTip(tr("This run goes on without a launcher; it is followed from its "
                              "record. Re-attach to take it over (stop it, dump its stacks)"));
    m_reattach->hide();
    connect(m_reattach, &QPushButton::clicked, this, &OverviewPage::reattachRequested);

    auto *straggler = new QLabel;
    straggler->setObjectName(QStringLiteral("stragglerLabel"));
    straggler->setWordWrap(true);
    straggler->setTextFormat(Qt::PlainText);
    straggler->setTextInteractionFlags(Qt::TextSelectableByMouse);
    straggler->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_straggler = new SteadyLabel(straggler, this);
    m_heatmapMetric = new QComboBox(this);
    m_heatmapMetric->setObjectName(QStringLiteral("heatmapMetricCombo"));
    m_heatmapMetric->addItem(tr("Compute time"), metric::ComputeMs);
    m_heatmapMetric->addItem(tr("Step time"), metric::StepTimeMs);
    m_heatmapMetric->addItem(tr("Communication wait"), metric::CommWaitMs);
    m_heatmapMetric->setToolTip(
        tr("Synchronous steps last as long as the slowest rank's on every rank. Compute time "
           "(step time less communication wait) shows the straggler bright; step time shows when "
           "steps slow down; communication wait shows who waits (bright) and for whom (the "
           "straggler's row stays dark). A program that reports no communication wait is shown "
           "by its step time"));
    connect(m_heatmapMetric, &QComboBox::currentIndexChanged, this,
            &OverviewPage::heatmapMetricChanged);
    m_heatmap = new StepHeatmapView(this);
    m_rankSteps = new RankStepsView(this);

    auto *header = new QHBoxLayout;
    header->addWidget(m_title);
    header->addWidget(m_stateIcon);
    header->addWidget(m_state);
    header->addStretch();
    header->addWidget(m_reattach);
    header->addWidget(m_dump);
    header->addWidget(m_kill);
    header->addWidget(m_stop);

    auto *progress = new QHBoxLayout;
    progress->addWidget(m_progress, 1);
    progress->addWidget(m_eta);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(m_banner);
    layout->addLayout(progress);
    layout->addWidget(m_nodes);
    auto *steps = new QHBoxLayout;
    steps->addWidget(m_straggler, 1);
    steps->addWidget(m_heatmapMetric, 0, Qt::AlignTop);
    layout->addLayout(steps);
    layout->addWidget(m_heatmap);
    layout->addWidget(m_rankSteps);
    layout->addWidget(m_clocks);
    layout->addWidget(m_rankSummary);
    layout->addWidget(m_differences);
    layout->addWidget(m_table, 1);
    m_script = new QPlainTextEdit(this);
    m_script->setObjectName(QStringLiteral("batchScriptView"));
    m_script->setReadOnly(true);
    m_script->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_script->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_script->setMaximumHeight(160);
    m_script->setToolTip(tr("The batch script this run submitted to Slurm, as sbatch got it"));
    m_script->hide();
    layout->addWidget(m_script);
    setRunActive(false);
    setStepsShown(StepsShown::Nothing);
    applyColours();
}

void OverviewPage::setRankModel(QAbstractItemModel *model)
{
    if (QAbstractItemModel *old = m_table->model())
        disconnect(old, nullptr, this, nullptr);
    m_table->setModel(model);
    if (!model)
        return;
    // Columns follow their contents (steps and losses grow), but measuring is bounded to a
    // few dozen rows so that a 512-rank table stays cheap to update.
    QHeaderView *header = m_table->horizontalHeader();
    header->setResizeContentsPrecision(64);
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setStretchLastSection(true);
}

void OverviewPage::setTitle(const QString &title, const QString &stateText, ShownState state)
{
    m_title->setText(title);
    m_state->setText(stateText);
    if (state != m_shownState) {
        m_shownState = state;
        applyColours();
    }
}

void OverviewPage::applyColours()
{
    const QPalette base = palette();
    QPalette statePalette = m_state->palette();
    statePalette.setColor(QPalette::WindowText, toneColor(shownStateTone(m_shownState), base));
    m_state->setPalette(statePalette);
    const int side = m_state->fontMetrics().height();
    m_stateIcon->setPixmap(m_title->text().isEmpty()
                               ? QPixmap()
                               : stateIcon(m_shownState, style()).pixmap(side, side));
    // Banners: the error or warning hue as background, the text white or black by its
    // lightness, so they read on a light and a dark theme alike.
    auto paintBanner = [&](QWidget *banner, StateTone tone) {
        const QColor light = toneColor(tone, QPalette(Qt::white));
        QPalette p = banner->palette();
        p.setColor(QPalette::Window, light);
        p.setColor(QPalette::WindowText, light.lightness() < 140 ? Qt::white : Qt::black);
        banner->setPalette(p);
    };
    paintBanner(m_banner, StateTone::Error);
    QLabel *straggler = m_straggler->label();
    straggler->setAutoFillBackground(m_stragglerNamed);
    if (m_stragglerNamed)
        paintBanner(straggler, StateTone::Warning);
    else
        straggler->setPalette(QPalette());
}

void OverviewPage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        applyColours();
}

void OverviewPage::setProgress(qint64 done, qint64 total, double etaSeconds,
                               const QString &withoutTotal, int slowestRank)
{
    const int value = total > 0 ? int(std::clamp<qint64>(done * 1000 / total, 0, 1000)) : 0;
    m_progress->setValue(value);
    QString text = total > 0                ? tr("step %1 / %2").arg(done).arg(total)
                   : withoutTotal.isEmpty() ? tr("waiting for steps")
                                            : withoutTotal;
    if (total > 0 && slowestRank >= 0)
        text += tr(", slowest rank %1").arg(slowestRank);
    m_progress->setFormat(text);
    // A screen reader reads a progress bar's value, not its format: the text is its name.
    m_progress->setAccessibleName(text);
    m_eta->setText(etaSeconds >= 0 ? tr("ETA %1").arg(clockDuration(etaSeconds)) : QString());
}

QString OverviewPage::progressText() const
{
    return m_progress->format();
}

void OverviewPage::setRootCause(const QString &text)
{
    m_banner->setText(text);
    m_banner->setVisible(!text.isEmpty());
}

void OverviewPage::setNodeClocks(const QStringList &lines)
{
    m_clocks->setText(
        lines.isEmpty() ? QString() : tr("Node clocks: %1").arg(lines.join(QStringLiteral(" · "))));
    m_clocks->setVisible(!lines.isEmpty());
}

QString OverviewPage::nodeClocksText() const
{
    return m_clocks->text();
}

QString OverviewPage::rootCauseText() const
{
    return m_banner->text();
}

bool OverviewPage::isBannerVisible() const
{
    return !m_banner->isHidden();
}

void OverviewPage::setNodeProgress(int nodeIndex, const QString &node, const QString &stage,
                                   int percent)
{
    if (nodeIndex < 0 || nodeIndex > 4096)
        return;
    if (m_nodes->rowCount() <= nodeIndex)
        m_nodes->setRowCount(nodeIndex + 1);
    auto setText = [this, nodeIndex](int column, const QString &text) {
        QTableWidgetItem *item = m_nodes->item(nodeIndex, column);
        if (!item) {
            item = new QTableWidgetItem;
            m_nodes->setItem(nodeIndex, column, item);
        }
        item->setText(text);
    };
    setText(0, node.isEmpty() ? tr("node %1").arg(nodeIndex) : node);
    setText(1, stage);
    setText(2, QString());
    m_nodes->item(nodeIndex, 2)->setData(PercentRole, qBound(-1, percent, 100));
    m_nodes->show();
}

void OverviewPage::clearNodeProgress()
{
    m_nodes->setRowCount(0);
    m_nodes->hide();
}

void OverviewPage::setBatchScript(const QString &text)
{
    if (m_script->toPlainText() != text)
        m_script->setPlainText(text);
    m_script->setVisible(!text.isEmpty());
}

void OverviewPage::setRunActive(bool active)
{
    const bool changed = active != isRunActive();
    m_stop->setEnabled(active);
    m_kill->setEnabled(active);
    m_dump->setEnabled(active);
    if (changed)
        emit runActiveChanged(active);
}

bool OverviewPage::isRunActive() const
{
    return m_stop->isEnabled();
}

void OverviewPage::setReattachable(bool reattachable)
{
    m_reattach->setVisible(reattachable);
}

void OverviewPage::setRankSummary(const QString &text)
{
    if (text == m_rankSummary->text())
        return;
    m_rankSummary->setText(text);
    m_rankSummary->setVisible(!text.isEmpty());
}

QString OverviewPage::rankSummary() const
{
    return m_rankSummary->text();
}

void OverviewPage::setRankDifferences(const QList<RankDifference> &differences)
{
    m_differenceModel->setDifferences(differences);
    m_differences->setVisible(!differences.isEmpty());
}

void OverviewPage::setStragglerText(const QString &text, int rank)
{
    m_straggler->setText(rank >= 0 ? tr("Straggler: %1").arg(text) : text);
    if ((rank >= 0) != m_stragglerNamed) {
        m_stragglerNamed = rank >= 0;
        applyColours();
    }
}

QString OverviewPage::stragglerText() const
{
    return m_straggler->label()->text();
}

QString OverviewPage::heatmapMetric() const
{
    return m_heatmapMetric->currentData().toString();
}

void OverviewPage::setStepsShown(StepsShown shown)
{
    if (shown == m_stepsShown)
        return;
    m_stepsShown = shown;
    m_heatmap->setVisible(shown != StepsShown::RankSteps);
    m_heatmapMetric->setVisible(shown == StepsShown::Heatmap);
    m_rankSteps->setVisible(shown == StepsShown::RankSteps);
}

bool OverviewPage::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_banner && event->type() == QEvent::MouseButtonRelease)
        emit rootCauseActivated();
    return QWidget::eventFilter(watched, event);
}

} // namespace rankdeck
