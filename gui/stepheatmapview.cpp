// SPDX-License-Identifier: GPL-3.0-or-later
#include "stepheatmapview.h"

#include <QPainter>

#include <cmath>

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
    setMinimumHeight(90);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
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
    return std::max(16, plotRect().width() / 2);
}

QColor StepHeatmapView::colorFor(float value) const
{
    const double span = double(m_heatmap.high) - double(m_heatmap.low);
    return ramp(span > 0 ? (double(value) - double(m_heatmap.low)) / span : 0.0);
}

void StepHeatmapView::setHeatmap(StepHeatmap heatmap, const QString &unit)
{
    m_heatmap = std::move(heatmap);
    m_unit = unit;
    m_image = QImage();
    if (!m_heatmap.isEmpty()) {
        const int rows = int(m_heatmap.ranks.size());
        m_image = QImage(m_heatmap.columns, rows, QImage::Format_RGB32);
        const QRgb none = palette().color(QPalette::Base).rgb();
        for (int r = 0; r < rows; ++r) {
            auto *line = reinterpret_cast<QRgb *>(m_image.scanLine(r));
            for (int c = 0; c < m_heatmap.columns; ++c) {
                const float v = m_heatmap.at(r, c);
                line[c] = std::isnan(v) ? none : colorFor(v).rgb();
            }
        }
    }
    update();
}

void StepHeatmapView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    update();
}

void StepHeatmapView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QRect area = plotRect();
    p.fillRect(area, palette().color(QPalette::Base));
    p.setPen(palette().color(QPalette::Text));
    if (m_image.isNull()) {
        p.drawText(area, Qt::AlignCenter, tr("No step times yet"));
        return;
    }
    // Nearest-neighbour scaling: a rank's row stays one colour band, never blurred into the next.
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(area, m_image);
    const QList<int> &ranks = m_heatmap.ranks;
    const QFontMetrics fm = fontMetrics();
    const int rows = int(ranks.size());
    // Rank labels: every row when they fit, else first and last and some in between.
    const int labelEvery =
        std::max(1, (fm.height() * rows + area.height() - 1) / std::max(1, area.height()));
    for (int r = 0; r < rows; r += labelEvery) {
        const int y = area.top() + int((r + 0.5) * area.height() / rows);
        p.drawText(QRect(0, y - fm.height() / 2, LeftMargin - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, tr("rank %1").arg(ranks[r]));
    }
    p.drawText(QRect(area.left(), area.bottom() + 2, area.width(), BottomMargin),
               Qt::AlignLeft | Qt::AlignTop, tr("step %1").arg(m_heatmap.firstStep));
    p.drawText(QRect(area.left(), area.bottom() + 2, area.width(), BottomMargin),
               Qt::AlignRight | Qt::AlignTop, tr("step %1").arg(m_heatmap.lastStep));
    // Legend: the colour scale with its ends.
    const QRect legend(area.right() + 12, area.top(), 12, area.height());
    for (int y = 0; y < legend.height(); ++y) {
        const double t = 1.0 - double(y) / std::max(1, legend.height() - 1);
        p.setPen(ramp(t));
        p.drawLine(legend.left(), legend.top() + y, legend.right(), legend.top() + y);
    }
    p.setPen(palette().color(QPalette::Text));
    const QRect text(legend.right() + 4, area.top(), LegendWidth - 30, area.height());
    p.drawText(text, Qt::AlignTop | Qt::AlignLeft,
               QStringLiteral("%1 %2").arg(double(m_heatmap.high), 0, 'g', 3).arg(m_unit));
    p.drawText(text, Qt::AlignBottom | Qt::AlignLeft,
               QStringLiteral("%1 %2").arg(double(m_heatmap.low), 0, 'g', 3).arg(m_unit));
}

} // namespace rankdeck
