// SPDX-License-Identifier: GPL-3.0-or-later
// LossPlot (lossplot.h) continued: what it tells about its curves besides drawing them, the
// legend with its filter and "only this rank", the colours that follow the palette, and the
// hover read-out; apart so that lossplot.cpp stays about drawing and fetching.
#include "lossplot.h"

#include <qcustomplot.h>

#include <QDateTime>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QToolTip>

#include <algorithm>
#include <climits>
#include <cmath>

namespace rankdeck {

namespace {
// Rank rows in the hover read-out (the mean's comes on top): the ranks furthest from the mean
// fill them, so that one outlier among hundreds is read.
constexpr int MaxHoverRows = 12;

QIcon swatch(const QColor &color)
{
    QPixmap pixmap(12, 12);
    pixmap.fill(color);
    return QIcon(pixmap);
}

} // namespace

bool LossPlot::isRankVisible(int rank) const
{
    return !m_hiddenRanks.contains(rank) && passesFilter(rank);
}

void LossPlot::setRankVisible(int rank, bool visible)
{
    if (visible != m_hiddenRanks.contains(rank))
        return; // ticked already, or unticked
    if (visible)
        m_hiddenRanks.remove(rank);
    else
        m_hiddenRanks.insert(rank);
    if (QListWidgetItem *item = m_legendItems.value(rank)) {
        const QSignalBlocker blocker(m_legend);
        item->setCheckState(visible ? Qt::Checked : Qt::Unchecked);
    }
    markDirty();
}

QString LossPlot::rankFilter() const
{
    return m_filterEdit->text();
}

void LossPlot::setRankFilter(const QString &text)
{
    if (m_filterEdit->text() != text) {
        const QSignalBlocker blocker(m_filterEdit);
        m_filterEdit->setText(text);
    }
    m_filter = RankFilter(text);
    applyFilterToLegend();
    markDirty();
}

bool LossPlot::passesFilter(int key) const
{
    if (m_filter.isEmpty())
        return true;
    if (isComparing())
        return m_filter.matchesName(m_compared.value(key).name);
    // The mean stays with rank numbers: it is what a rank is told apart from.
    if (m_filter.isRankList())
        return key == PlotDataProvider::MeanCurve || m_filter.matches(key, QString());
    return m_filter.matchesName(curveName(key));
}

void LossPlot::applyFilterToLegend()
{
    for (auto it = m_legendItems.cbegin(); it != m_legendItems.cend(); ++it)
        it.value()->setHidden(!passesFilter(it.key()));
}

void LossPlot::showOnlyRank(int rank)
{
    if (isComparing() || rank == PlotDataProvider::MeanCurve) {
        // Run names overlap ("lr 0.1", "lr 0.01") and the mean has no number: ticks pick the
        // one curve where a filter may not.
        if (!isComparing())
            setRankFilter(QString());
        for (auto it = m_legendItems.cbegin(); it != m_legendItems.cend(); ++it)
            setRankVisible(it.key(), it.key() == rank);
        return;
    }
    // A rank filter, which says in the box why the others are gone and keeps ranks that join
    // later out too; the way back is clearing it.
    setRankVisible(rank, true);
    setRankFilter(QString::number(rank));
}

void LossPlot::showAllRanks()
{
    setRankFilter(QString());
    const QSet<int> hidden = m_hiddenRanks; // setRankVisible() takes from it
    for (int key : hidden)
        setRankVisible(key, true);
}

void LossPlot::showLegendMenu(const QPoint &pos)
{
    QListWidgetItem *item = m_legend->itemAt(pos);
    auto *menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("legendMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->setToolTipsVisible(true);
    if (item) {
        const int key = item->data(Qt::UserRole).toInt();
        QAction *only = menu->addAction(tr("Show only %1").arg(curveName(key)), this,
                                        [this, key] { showOnlyRank(key); });
        only->setObjectName(QStringLiteral("onlyThisRankAction"));
        only->setToolTip(isComparing() || key == PlotDataProvider::MeanCurve
                             ? tr("Hide every other curve")
                             : tr("Hide every other rank (the mean stays)"));
    }
    QAction *all = menu->addAction(isComparing() ? tr("Show all runs") : tr("Show all ranks"), this,
                                   &LossPlot::showAllRanks);
    all->setObjectName(QStringLiteral("showAllRanksAction"));
    all->setToolTip(tr("Clear the filter and tick every curve"));
    menu->popup(m_legend->viewport()->mapToGlobal(pos));
}

QColor LossPlot::runColor(int index) const
{
    const ComparedRunCurves *run = comparedRun(index);
    return run ? run->color() : RunColors::color(index);
}

QColor LossPlot::colorFor(int rank) const
{
    if (isComparing())
        return runColor(rank);
    if (rank == PlotDataProvider::MeanCurve)
        return palette().color(QPalette::Text);
    return RunColors::color(rank, RunColors::isDark(palette().color(QPalette::Base)));
}

void LossPlot::changeEvent(QEvent *event)
{
    // A light/dark switch while running reaches a widget as a palette (or style) change.
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        applyTheme();
    QWidget::changeEvent(event);
}

void LossPlot::applyTheme()
{
    if (!m_plot || !m_legend)
        return; // a change during construction; the constructor applies the theme
    const QPalette pal = palette();
    m_plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxis *axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setBasePen(QPen(pal.color(QPalette::Text)));
        axis->setTickPen(QPen(pal.color(QPalette::Text)));
        axis->setSubTickPen(QPen(pal.color(QPalette::Text)));
        axis->setTickLabelColor(pal.color(QPalette::Text));
        axis->setLabelColor(pal.color(QPalette::Text));
        axis->grid()->setPen(QPen(pal.color(QPalette::Midlight), 0, Qt::DotLine));
    }
    m_hoverLine->setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
    const bool dark = RunColors::isDark(pal.color(QPalette::Base));
    if (dark != m_darkTheme && isComparing()) {
        // A compared run's graphs take its colour when made: remade, they refetch on the next
        // poll (markDirty()).
        createRunCurves();
        markDirty();
    }
    m_darkTheme = dark;
    recolorCurves();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LossPlot::recolorCurves()
{
    for (auto it = m_curves.begin(); it != m_curves.end(); ++it) {
        const QColor color = colorFor(it.key());
        for (QCPGraph *graph : {it->raw, it->smooth}) {
            QPen pen = graph->pen();
            QColor c = color;
            c.setAlpha(pen.color().alpha()); // the raw curve stays faint
            pen.setColor(c);
            graph->setPen(pen);
        }
    }
    const QSignalBlocker blocker(m_legend);
    for (auto it = m_legendItems.cbegin(); it != m_legendItems.cend(); ++it)
        it.value()->setIcon(swatch(colorFor(it.key())));
}

void LossPlot::ensureLegendItem(int rank)
{
    if (m_legendItems.contains(rank))
        return;
    auto *item = new QListWidgetItem(swatch(colorFor(rank)), curveName(rank));
    item->setData(Qt::UserRole, rank);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    item->setCheckState(isRankVisible(rank) ? Qt::Checked : Qt::Unchecked);
    const QSignalBlocker blocker(m_legend);
    if (rank == PlotDataProvider::MeanCurve && !isComparing())
        m_legend->insertItem(0, item);
    else
        m_legend->addItem(item);
    item->setHidden(!passesFilter(rank));
    m_legendItems.insert(rank, item);
}

QString LossPlot::hoverText(double x, double *shownKeyOut) const
{
    double shownKey = qQNaN();
    QStringList rows;
    int hiddenRows = 0;
    for (const auto &run : m_runCurves) {
        double key = 0;
        const QString text = run->isVisible() ? run->hoverText(x, &key) : QString();
        if (text.isEmpty())
            continue;
        if (std::isnan(shownKey))
            shownKey = key;
        if (rows.size() >= MaxHoverRows)
            ++hiddenRows;
        else
            rows << text;
    }
    struct RankValue
    {
        int rank;
        double value;
    };
    QList<RankValue> values;
    double sum = 0;
    const auto valueOf = [&](int rank) -> const QCPGraphData * {
        const auto c = m_curves.constFind(rank);
        if (c == m_curves.cend() || !isRankVisible(rank))
            return nullptr;
        const QCPGraphData *point = nearestPoint(c->smooth->visible() ? c->smooth : c->raw, x);
        if (point && std::isnan(shownKey))
            shownKey = point->key;
        return point;
    };
    QString meanRow;
    if (!isComparing()) {
        if (const QCPGraphData *mean = valueOf(PlotDataProvider::MeanCurve))
            meanRow = tr("%1: %2").arg(curveName(PlotDataProvider::MeanCurve),
                                       QString::number(mean->value, 'g', 5));
        for (int rank : m_rankOrder) {
            if (const QCPGraphData *point = valueOf(rank)) {
                values.append({rank, point->value});
                sum += point->value;
            }
        }
    }
    if (!values.isEmpty()) {
        // Furthest from the ranks' mean first: the straggler or the diverging rank is the row
        // to read, wherever its number falls. Measured on the curves drawn (smoothed or raw).
        const double mean = sum / double(values.size());
        std::stable_sort(values.begin(), values.end(), [mean](const auto &a, const auto &b) {
            return std::abs(a.value - mean) > std::abs(b.value - mean);
        });
        if (!meanRow.isEmpty())
            rows << meanRow;
        for (qsizetype i = 0; i < values.size() && i < MaxHoverRows; ++i)
            rows << tr("%1: %2").arg(curveName(values[i].rank),
                                     QString::number(values[i].value, 'g', 5));
        if (values.size() > MaxHoverRows)
            rows << tr("… %n more ranks", nullptr, int(values.size()) - MaxHoverRows);
    } else if (!meanRow.isEmpty()) {
        rows << meanRow;
    }
    if (hiddenRows > 0)
        rows << tr("… %n more runs", nullptr, hiddenRows);
    if (rows.isEmpty())
        return {};
    QString header;
    switch (m_xMode) {
    case PlotXMode::Step:
        header = tr("Step %1").arg(qint64(std::llround(shownKey)));
        break;
    case PlotXMode::RelativeTime:
        header = tr("%1 s since start").arg(shownKey, 0, 'f', 1);
        break;
    case PlotXMode::WallTime:
        header = QDateTime::fromMSecsSinceEpoch(qint64(shownKey * 1000)).toString(Qt::ISODate);
        break;
    }
    if (shownKeyOut)
        *shownKeyOut = shownKey;
    return header + QLatin1Char('\n') + rows.join(QLatin1Char('\n'));
}

void LossPlot::updateHover(const QPoint &pos)
{
    if ((m_curves.isEmpty() && m_runCurves.empty()) || !m_plot->axisRect()->rect().contains(pos)) {
        hideHover();
        return;
    }
    double shownKey = 0;
    const QString text = hoverText(m_plot->xAxis->pixelToCoord(pos.x()), &shownKey);
    if (text.isEmpty()) {
        hideHover();
        return;
    }
    m_hoverLine->point1->setCoords(shownKey, 0);
    m_hoverLine->point2->setCoords(shownKey, 1);
    m_hoverLine->setVisible(true);
    m_plot->layer(QString::fromLatin1(HoverLayer))->replot();
    QToolTip::showText(m_plot->mapToGlobal(pos + QPoint(16, 16)), text, m_plot);
}

void LossPlot::updateHistoryMark()
{
    double x = 0;
    qint64 span = 1;
    const QCPRange shown = m_plot->xAxis->range();
    const bool folded = !isComparing() && m_provider &&
                        m_provider->foldedBefore(m_xMode, &x, &span) && x > shown.lower;
    const int steps = int(qMin<qint64>(span, INT_MAX));
    m_historyNote = folded ? tr("Left of the dotted line, each group of %n steps is drawn as its "
                                "lowest and highest value; Export has every point",
                                nullptr, steps)
                           : QString();
    m_historyLine->setVisible(folded);
    m_historyText->setVisible(folded);
    m_plot->setAccessibleDescription(m_historyNote);
    if (!folded)
        return;
    const QColor ink = palette().color(QPalette::PlaceholderText);
    m_historyLine->setPen(QPen(ink, 0, Qt::DotLine));
    m_historyLine->point1->setCoords(x, 0);
    m_historyLine->point2->setCoords(x, 1);
    m_historyText->setColor(ink);
    // Inside the folded part, or right of the line when that part is only a sliver of the view.
    const bool sliver = (x - shown.lower) < shown.size() * 0.3;
    m_historyText->setPositionAlignment((sliver ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignTop);
    m_historyText->setText(
        sliver ? tr("◂ folded: lowest and highest of every %n steps", nullptr, steps)
               : tr("folded: lowest and highest of every %n steps", nullptr, steps));
    m_historyText->position->setCoords(x, 0.01);
}

void LossPlot::hideHover()
{
    if (m_hoverLine->visible()) {
        m_hoverLine->setVisible(false);
        m_plot->layer(QString::fromLatin1(HoverLayer))->replot();
    }
    QToolTip::hideText();
}

} // namespace rankdeck
