// SPDX-License-Identifier: GPL-3.0-or-later
#include "stepheatmapview.h"

#include "widgettext.h"

#include <QAccessible>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QPen>
#include <QToolTip>

#include <bit>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace rankdeck {

namespace {
constexpr int LeftMargin = 64;
constexpr int BottomMargin = 20;
constexpr int LegendWidth = 90;

// A few stops of a perceptually ordered map (dark blue → teal → yellow), interpolated.
QColor ramp(double t)
{
    static const QColor stops[] = {QColor(0x1f, 0x1d, 0x5c), QColor(0x2a, 0x6f, 0x97),
                                   QColor(0x2f, 0xa8, 0x8e), QColor(0x9c, 0xd3, 0x4c),
                                   QColor(0xfd, 0xe7, 0x25)};
    constexpr int n = int(sizeof stops / sizeof stops[0]);
    t = std::clamp(t, 0.0, 1.0) * (n - 1);
    const int i = std::min(int(t), n - 2);
    const double f = t - i;
    const QColor &a = stops[i], &b = stops[i + 1];
    return QColor(int(a.red() + (b.red() - a.red()) * f),
                  int(a.green() + (b.green() - a.green()) * f),
                  int(a.blue() + (b.blue() - a.blue()) * f));
}
} // namespace

StepHeatmapView::StepHeatmapView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("stepHeatmap"));
    setAccessibleName(tr("Step heatmap"));
    setFocusPolicy(Qt::StrongFocus);
    setMinimumHeight(90);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    for (size_t i = 0; i < m_lut.size(); ++i)
        m_lut[i] = ramp(double(i) / double(m_lut.size() - 1)).rgb();
}

QSize StepHeatmapView::sizeHint() const
{
    return QSize(600, 160);
}

QRect StepHeatmapView::plotRect() const
{
    return rect().adjusted(LeftMargin, 4, -LegendWidth, -BottomMargin);
}

int StepHeatmapView::wantedColumns() const
{
    return int(std::bit_floor(unsigned(std::max(16, plotRect().width() / 2))));
}

QRgb StepHeatmapView::rgbFor(float value) const
{
    const double span = double(m_heatmap.high) - double(m_heatmap.low);
    const double t = span > 0 ? (double(value) - double(m_heatmap.low)) / span : 0.0;
    const auto last = double(m_lut.size() - 1);
    return m_lut[size_t(std::lround(std::clamp(t, 0.0, 1.0) * last))];
}

QColor StepHeatmapView::colorFor(float value) const
{
    return QColor(rgbFor(value));
}

void StepHeatmapView::setHeatmap(const StepHeatmap &heatmap, const QString &unit, int changedFrom)
{
    // The pixels drawn so far stay valid only for the same grid on the same scale.
    const bool sameGrid =
        !m_image.isNull() && heatmap.metric == m_heatmap.metric && unit == m_unit &&
        heatmap.ranks == m_heatmap.ranks && heatmap.capacity == m_heatmap.capacity &&
        heatmap.stepShift == m_heatmap.stepShift && heatmap.firstColumn == m_heatmap.firstColumn &&
        heatmap.low == m_heatmap.low && heatmap.high == m_heatmap.high;
    m_heatmap = heatmap; // the vectors keep their storage: no allocation in a live refresh
    m_unit = unit;
    m_redrawnCells = 0;
    if (m_heatmap.isEmpty())
        m_image = QImage();
    else if (sameGrid && changedFrom > 0 && m_image.height() == imageRows())
        redraw(std::min(changedFrom, m_heatmap.columns));
    else
        rebuildImage();
    update();
}

void StepHeatmapView::rebuildImage()
{
    if (m_heatmap.isEmpty())
        return;
    const QSize size(m_heatmap.capacity, imageRows());
    if (m_image.size() != size)
        m_image = QImage(size, QImage::Format_RGB32);
    m_image.fill(palette().color(QPalette::Base));
    redraw(0);
}

int StepHeatmapView::imageRows() const
{
    return std::clamp(plotRect().height(), 1, std::max(1, int(m_heatmap.ranks.size())));
}

void StepHeatmapView::redraw(int fromColumn)
{
    const int rows = int(m_heatmap.ranks.size());
    const int height = m_image.height();
    const int columns = m_heatmap.columns;
    const size_t stride = size_t(m_heatmap.capacity);
    const QRgb none = palette().color(QPalette::Base).rgb();
    m_redrawnCells = qint64(rows) * qint64(columns - fromColumn);
    if (height == rows) {
        for (int r = 0; r < rows; ++r) {
            auto *line = reinterpret_cast<QRgb *>(m_image.scanLine(r));
            const float *cells = m_heatmap.cells.data() + size_t(r) * stride;
            for (int c = fromColumn; c < columns; ++c)
                line[c] = std::isnan(cells[c]) ? none : rgbFor(cells[c]);
        }
        return;
    }
    // More ranks than pixel rows: each pixel row shows the rank of its group whose cell lies
    // farthest from the column's median over every rank. A straggler is bright in step time and
    // dark in communication wait; either way it is the one drawn, where plain scaling would drop
    // it with every other row.
    std::vector<float> values;
    values.reserve(size_t(rows));
    for (int c = fromColumn; c < columns; ++c) {
        const float median = columnMedian(c, values);
        for (int y = 0; y < height; ++y) {
            const int r = farthestInGroup(y, c, median);
            auto *line = reinterpret_cast<QRgb *>(m_image.scanLine(y));
            line[c] = r < 0 ? none : rgbFor(m_heatmap.cells[size_t(r) * stride + size_t(c)]);
        }
    }
}

float StepHeatmapView::columnMedian(int column, std::vector<float> &scratch) const
{
    scratch.clear();
    const int rows = int(m_heatmap.ranks.size());
    for (int r = 0; r < rows; ++r) {
        const float v = m_heatmap.at(r, column);
        if (!std::isnan(v))
            scratch.push_back(v);
    }
    if (scratch.empty())
        return std::numeric_limits<float>::quiet_NaN();
    const auto mid = scratch.begin() + qsizetype(scratch.size() / 2);
    std::nth_element(scratch.begin(), mid, scratch.end());
    return *mid;
}

// The ranks pixel row y of the image holds: [first, end).
std::pair<int, int> StepHeatmapView::groupOf(int y) const
{
    const int rows = int(m_heatmap.ranks.size());
    const int height = std::max(1, m_image.height());
    const int first = int(qint64(y) * rows / height);
    return {first, std::max(first + 1, int(qint64(y + 1) * rows / height))};
}

int StepHeatmapView::farthestInGroup(int y, int column, float median) const
{
    const auto [first, end] = groupOf(y);
    int best = -1;
    float distance = -1.0f;
    for (int r = first; r < end; ++r) {
        const float v = m_heatmap.at(r, column);
        if (std::isnan(v))
            continue;
        const float d = std::abs(v - median);
        if (d > distance) {
            distance = d;
            best = r;
        }
    }
    return best;
}

QRect StepHeatmapView::plotArea() const
{
    return plotRect();
}

bool StepHeatmapView::cellAt(QPoint pos, int *row, int *column) const
{
    const QRect area = plotRect();
    if (m_heatmap.isEmpty() || m_image.isNull() || !area.contains(pos))
        return false;
    const int c = std::clamp(int(qint64(pos.x() - area.left()) * m_heatmap.columns / area.width()),
                             0, m_heatmap.columns - 1);
    const int y = std::clamp(int(qint64(pos.y() - area.top()) * m_image.height() / area.height()),
                             0, m_image.height() - 1);
    int r = groupOf(y).first;
    if (m_image.height() != int(m_heatmap.ranks.size())) {
        std::vector<float> scratch;
        const int drawn = farthestInGroup(y, c, columnMedian(c, scratch));
        r = drawn >= 0 ? drawn : r;
    }
    *row = r;
    *column = c;
    return true;
}

QString StepHeatmapView::cellText(QPoint pos) const
{
    int row = 0, column = 0;
    if (!cellAt(pos, &row, &column))
        return {};
    const qint64 first = m_heatmap.columnFirstStep(column);
    const qint64 last = m_heatmap.columnLastStep(column);
    const int rank = m_heatmap.ranks[row];
    const QString where = first == last ? tr("rank %1, step %2").arg(rank).arg(first)
                                        : tr("rank %1, steps %2–%3").arg(rank).arg(first).arg(last);
    const quint32 n = m_heatmap.countAt(row, column);
    QString text;
    if (n == 0) {
        text = tr("%1: no value").arg(where);
    } else {
        const QString value =
            QStringLiteral("%1 %2").arg(double(m_heatmap.at(row, column)), 0, 'g', 4).arg(m_unit);
        text = n == 1 ? tr("%1: %2").arg(where, value)
                      : tr("%1: %2, the largest of its %3 values").arg(where, value).arg(n);
    }
    if (m_image.height() != int(m_heatmap.ranks.size())) {
        const auto [begin, end] = groupOf(
            int(qint64(pos.y() - plotRect().top()) * m_image.height() / plotRect().height()));
        text += QLatin1Char('\n') +
                tr("(this pixel row: ranks %1–%2, the one farthest from the column's median shown)")
                    .arg(m_heatmap.ranks[begin])
                    .arg(m_heatmap.ranks[end - 1]);
    }
    return text;
}

bool StepHeatmapView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip)
        return showTooltipText(this, event, cellText(static_cast<QHelpEvent *>(event)->pos()));
    return QWidget::event(event);
}

QRect StepHeatmapView::cursorRect() const
{
    const QRect area = plotRect();
    if (m_cursor.x() < 0 || m_image.isNull() || m_heatmap.columns <= 0)
        return {};
    // The grid may have shrunk since the key was pressed (a resize, a new run).
    const int rows = m_image.height();
    const int x = std::min(m_cursor.x(), m_heatmap.columns - 1),
              y = std::min(m_cursor.y(), rows - 1);
    const int left = area.left() + int(qint64(x) * area.width() / m_heatmap.columns);
    const int right = area.left() + int(qint64(x + 1) * area.width() / m_heatmap.columns);
    const int top = area.top() + int(qint64(y) * area.height() / rows);
    const int bottom = area.top() + int(qint64(y + 1) * area.height() / rows);
    return QRect(QPoint(left, top), QPoint(std::max(left, right - 1), std::max(top, bottom - 1)));
}

void StepHeatmapView::moveCursor(int row, int column)
{
    if (m_image.isNull() || m_heatmap.columns <= 0)
        return;
    m_cursor = QPoint(std::clamp(column, 0, m_heatmap.columns - 1),
                      std::clamp(row, 0, m_image.height() - 1));
    const QRect cell = cursorRect();
    const QString text = cellText(cell.center());
    setAccessibleDescription(text);
    QAccessibleEvent changed(this, QAccessible::DescriptionChanged);
    QAccessible::updateAccessibility(&changed);
    if (hasFocus())
        QToolTip::showText(mapToGlobal(cell.bottomRight()), text, this);
    update();
}

void StepHeatmapView::focusInEvent(QFocusEvent *event)
{
    QWidget::focusInEvent(event);
    // The newest column, first row: where a person looking for a slow step starts.
    if (m_cursor.x() < 0 && !m_image.isNull())
        moveCursor(0, m_heatmap.columns - 1);
}

void StepHeatmapView::keyPressEvent(QKeyEvent *event)
{
    if (m_image.isNull()) {
        QWidget::keyPressEvent(event);
        return;
    }
    const QPoint at = m_cursor.x() < 0 ? QPoint(m_heatmap.columns - 1, 0) : m_cursor;
    switch (event->key()) {
    case Qt::Key_Left:
        moveCursor(at.y(), at.x() - 1);
        break;
    case Qt::Key_Right:
        moveCursor(at.y(), at.x() + 1);
        break;
    case Qt::Key_Up:
        moveCursor(at.y() - 1, at.x());
        break;
    case Qt::Key_Down:
        moveCursor(at.y() + 1, at.x());
        break;
    case Qt::Key_PageUp:
        moveCursor(at.y() - 10, at.x());
        break;
    case Qt::Key_PageDown:
        moveCursor(at.y() + 10, at.x());
        break;
    case Qt::Key_Home:
        moveCursor(at.y(), 0);
        break;
    case Qt::Key_End:
        moveCursor(at.y(), m_heatmap.columns - 1);
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

void StepHeatmapView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (!m_image.isNull() && m_image.height() != imageRows())
        rebuildImage(); // rows grouped differently at this height
    const int wanted = wantedColumns();
    if (wanted != std::exchange(m_lastWanted, wanted))
        emit wantedColumnsChanged();
    update();
}

void StepHeatmapView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QRect area = plotRect();
    p.fillRect(area, palette().color(QPalette::Base));
    p.setPen(palette().color(QPalette::Text));
    if (m_image.isNull()) {
        p.drawText(area, Qt::AlignCenter, tr("No steps reported yet"));
        return;
    }
    const QList<int> &ranks = m_heatmap.ranks;
    const int rows = int(ranks.size());
    // Nearest-neighbour scaling: a rank's row stays one colour band, never blurred into the next.
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(area, m_image, QRect(0, 0, m_heatmap.columns, m_image.height()));
    const QFontMetrics fm = fontMetrics();
    // Rank labels: every row when they fit, else first and last and some in between.
    const int labelEvery =
        std::max(1, (fm.height() * rows + area.height() - 1) / std::max(1, area.height()));
    for (int r = 0; r < rows; r += labelEvery) {
        const int y = area.top() + int((r + 0.5) * area.height() / rows);
        p.drawText(QRect(0, y - fm.height() / 2, LeftMargin - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, tr("rank %1").arg(ranks[r]));
    }
    const QRect below(area.left(), area.bottom() + 2, area.width(), BottomMargin);
    p.drawText(below, Qt::AlignLeft | Qt::AlignTop, tr("step %1").arg(m_heatmap.firstStep));
    p.drawText(below, Qt::AlignRight | Qt::AlignTop, tr("step %1").arg(m_heatmap.lastStep));
    // What a cell is: the largest value of its steps, so one slow step stays visible.
    const qint64 per = m_heatmap.stepsPerColumn();
    p.drawText(below, Qt::AlignHCenter | Qt::AlignTop,
               per == 1 ? tr("one step a cell")
                        : tr("each cell: the largest of its %1 steps").arg(per));
    // Legend: the colour scale with its ends; "≥" / "≤" where cells lie beyond them.
    const QRect legend(area.right() + 12, area.top(), 12, area.height());
    for (int y = 0; y < legend.height(); ++y) {
        const double t = 1.0 - double(y) / std::max(1, legend.height() - 1);
        p.setPen(ramp(t));
        p.drawLine(legend.left(), legend.top() + y, legend.right(), legend.top() + y);
    }
    p.setPen(palette().color(QPalette::Text));
    const QRect text(legend.right() + 4, area.top(), LegendWidth - 30, area.height());
    const QString top =
        QStringLiteral("%1%2 %3")
            .arg(m_heatmap.maxCell > m_heatmap.high ? QStringLiteral("≥") : QString())
            .arg(double(m_heatmap.high), 0, 'g', 3)
            .arg(m_unit);
    const QString bottom =
        QStringLiteral("%1%2 %3")
            .arg(m_heatmap.minCell < m_heatmap.low ? QStringLiteral("≤") : QString())
            .arg(double(m_heatmap.low), 0, 'g', 3)
            .arg(m_unit);
    p.drawText(text, Qt::AlignTop | Qt::AlignLeft, top);
    p.drawText(text, Qt::AlignBottom | Qt::AlignLeft, bottom);
    if (hasFocus() && m_cursor.x() >= 0) {
        // The keyboard's cell, in the palette's highlight with a contrasting rim.
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(palette().color(QPalette::Base), 3));
        p.drawRect(cursorRect().adjusted(-2, -2, 2, 2));
        p.setPen(QPen(palette().color(QPalette::Highlight), 1));
        p.drawRect(cursorRect().adjusted(-2, -2, 2, 2));
    }
}

} // namespace rankdeck
