// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankstepsview.h"

#include "statestyle.h"
#include "widgettext.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

namespace rankdeck {

namespace {
constexpr int LeftMargin = 72;
constexpr int RightMargin = 12;
constexpr int BottomMargin = 20;

QString formatTime(qint64 us)
{
    const double seconds = double(us) / 1e6;
    if (us == 0)
        return QStringLiteral("0 s");
    if (seconds < 10)
        return QStringLiteral("%1 s").arg(seconds, 0, 'f', 1);
    const qint64 s = std::llround(seconds);
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    return clockDuration(seconds);
}
} // namespace

RankStepsView::RankStepsView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("rankStepsView"));
    setMinimumHeight(110);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    setAccessibleName(tr("Step reached by each rank over time"));
    updateTexts();
}

QSize RankStepsView::sizeHint() const
{
    return QSize(600, 180);
}

QRect RankStepsView::plotRect() const
{
    // The legend's line above the plot.
    return rect().adjusted(LeftMargin, fontMetrics().height() + 8, -RightMargin, -BottomMargin);
}

int RankStepsView::wantedColumns() const
{
    return int(std::bit_floor(unsigned(std::max(64, plotRect().width()))));
}

bool RankStepsView::refresh(const MetricsStore &store, qint64 budget)
{
    if (m_tracks.update(store, wantedColumns(), budget)) {
        updateTexts();
        update();
    }
    return m_tracks.hasMore();
}

void RankStepsView::clear()
{
    m_tracks.clear();
    updateTexts();
    update();
}

int RankStepsView::namedRank() const
{
    return m_tracks.slowestBehind() ? m_tracks.slowestRank() : -1;
}

void RankStepsView::updateTexts()
{
    const RankStepTracks &t = m_tracks;
    const int ranks = t.rowCount();
    QString detail;
    if (t.isEmpty()) {
        m_summary.clear();
        detail = tr("no steps reported yet");
    } else if (ranks == 1) {
        m_summary =
            tr("Only rank %1 reports steps: step %2").arg(t.slowestRank()).arg(t.slowestStep());
        detail = m_summary;
    } else if (t.slowestBehind()) {
        // Spelled out rather than "%n step(s)": the source text is what a reader without a
        // translation sees.
        const QString lag = t.lag() == 1 ? tr("1 step") : tr("%1 steps").arg(t.lag());
        // With two ranks the median is the other one: naming it reads better.
        m_summary = ranks == 2 ? tr("rank %1 is %2 behind rank %3 (step %4 against %5)")
                                     .arg(t.slowestRank())
                                     .arg(lag)
                                     .arg(t.fastestRank())
                                     .arg(t.slowestStep())
                                     .arg(t.fastestStep())
                               : tr("rank %1 is %2 behind the median (step %3 against %4, over "
                                    "%5 ranks)")
                                     .arg(t.slowestRank())
                                     .arg(lag)
                                     .arg(t.slowestStep())
                                     .arg(t.medianStep())
                                     .arg(ranks);
        detail = ranks == 2 ? tr("rank %1 is furthest behind, %2 behind rank %3")
                                  .arg(t.slowestRank())
                                  .arg(lag)
                                  .arg(t.fastestRank())
                            : tr("rank %1 is furthest behind, %2 behind the median")
                                  .arg(t.slowestRank())
                                  .arg(lag);
    } else {
        m_summary = t.slowestStep() == t.fastestStep()
                        ? tr("All %1 ranks at step %2").arg(ranks).arg(t.slowestStep())
                        : tr("All %1 ranks at steps %2–%3: none falls behind")
                              .arg(ranks)
                              .arg(t.slowestStep())
                              .arg(t.fastestStep());
        detail = m_summary;
    }
    setAccessibleDescription(tr("Step reached by each rank over time; %1").arg(detail));
}

int RankStepsView::columnAt(int x) const
{
    const QRect area = plotRect();
    const int columns = m_tracks.columns();
    return std::clamp(int(qint64(x - area.left()) * columns / std::max(1, area.width())), 0,
                      columns - 1);
}

QString RankStepsView::textAt(QPoint pos) const
{
    const QRect area = plotRect();
    if (m_tracks.isEmpty() || !area.contains(pos))
        return {};
    const int c = columnAt(pos.x());
    const qint64 at = std::min(m_tracks.spanUs(), (c + 1) * m_tracks.bucketUs());
    if (m_tracks.medianAt(c) < 0)
        return tr("%1: no step reported yet").arg(formatTime(at));
    QString text = m_tracks.lowAt(c) == m_tracks.highAt(c)
                       ? tr("%1: every rank at step %2").arg(formatTime(at)).arg(m_tracks.highAt(c))
                       : tr("%1: steps %2–%3, median %4")
                             .arg(formatTime(at))
                             .arg(m_tracks.lowAt(c))
                             .arg(m_tracks.highAt(c))
                             .arg(m_tracks.medianAt(c));
    const int row = m_tracks.rowOf(m_tracks.slowestRank());
    if (m_tracks.rowCount() > 1 && row >= 0 && m_tracks.reachedAt(row, c) >= 0)
        text += QLatin1Char('\n') + tr("rank %1 (slowest at the end): step %2")
                                        .arg(m_tracks.slowestRank())
                                        .arg(m_tracks.reachedAt(row, c));
    return text;
}

bool RankStepsView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip)
        return showTooltipText(this, event, textAt(static_cast<QHelpEvent *>(event)->pos()));
    return QWidget::event(event);
}

void RankStepsView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    const int wanted = wantedColumns();
    if (wanted != std::exchange(m_lastWanted, wanted))
        emit wantedColumnsChanged();
}

void RankStepsView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        update();
}

void RankStepsView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QRect area = plotRect();
    const QPalette &pal = palette();
    p.fillRect(area, pal.color(QPalette::Base));
    p.setPen(pal.color(QPalette::Text));
    const RankStepTracks &t = m_tracks;
    if (t.isEmpty()) {
        p.drawText(area, Qt::AlignCenter, tr("No steps reported yet"));
        return;
    }
    const int columns = t.columns();
    const qint64 low = std::max<qint64>(0, t.lowestStep());
    const qint64 high = std::max(low + 1, t.highestStep());
    // A column's step is the one reached by its end: its point is at its right edge.
    auto xAt = [&](int c) { return area.left() + (c + 1.0) * area.width() / columns; };
    auto yAt = [&](qint64 step) {
        return area.bottom() - double(step - low) * (area.height() - 1) / double(high - low);
    };
    auto line = [&](auto &&stepAt) {
        QPolygonF points;
        for (int c = 0; c < columns; ++c) {
            const qint64 s = stepAt(c);
            if (s >= 0)
                points << QPointF(xAt(c), yAt(s));
        }
        // A line that starts in the last column is one point: drawn as a short tick.
        if (points.size() == 1)
            points.prepend(points.front() - QPointF(3, 0));
        return points;
    };
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setClipRect(area.adjusted(-2, -2, 2, 2));
    const int rows = t.rowCount();
    QColor muted = pal.color(QPalette::Text);
    if (rows <= kLinesUpTo) {
        muted.setAlpha(70);
        p.setPen(QPen(muted, 1.0));
        for (int r = 0; r < rows; ++r)
            p.drawPolyline(line([&](int c) { return t.reachedAt(r, c); }));
    } else {
        // The band of every rank: 512 lines would be one smear.
        QPolygonF band = line([&](int c) { return t.highAt(c); });
        QPolygonF lower = line([&](int c) { return t.lowAt(c); });
        std::reverse(lower.begin(), lower.end()); // back along the lower edge
        band += lower;
        muted.setAlpha(45);
        p.setPen(Qt::NoPen);
        p.setBrush(muted);
        p.drawPolygon(band);
        p.setBrush(Qt::NoBrush);
    }
    const int fastest = t.rowOf(t.fastestRank());
    const int slowest = t.rowOf(t.slowestRank());
    if (rows > 1 && fastest >= 0 && fastest != slowest) {
        p.setPen(QPen(toneColor(StateTone::Done, pal), 1.5));
        p.drawPolyline(line([&](int c) { return t.reachedAt(fastest, c); }));
    }
    // Over the fastest rank, which most ranks keep up with in a run with one laggard.
    if (rows > 2) {
        p.setPen(QPen(pal.color(QPalette::Text), 1.5, Qt::DashLine));
        p.drawPolyline(line([&](int c) { return t.medianAt(c); }));
    }
    if (slowest >= 0) {
        p.setPen(
            QPen(rows > 1 ? toneColor(StateTone::Warning, pal) : pal.color(QPalette::Text), 2.5));
        p.drawPolyline(line([&](int c) { return t.reachedAt(slowest, c); }));
    }
    p.setClipping(false);
    p.setRenderHint(QPainter::Antialiasing, false);

    p.setPen(pal.color(QPalette::Text));
    const QRect left(0, area.top(), LeftMargin - 6, area.height());
    p.drawText(left, Qt::AlignRight | Qt::AlignTop, tr("step %1").arg(high));
    p.drawText(left, Qt::AlignRight | Qt::AlignBottom, tr("step %1").arg(low));
    const QRect below(area.left(), area.bottom() + 2, area.width(), BottomMargin);
    p.drawText(below, Qt::AlignLeft | Qt::AlignTop, formatTime(0));
    p.drawText(below, Qt::AlignRight | Qt::AlignTop, formatTime(t.spanUs()));
    p.drawText(below, Qt::AlignHCenter | Qt::AlignTop, tr("time since the first step"));
    paintLegend(p, area);
}

// One line above the plot: what each line is, the slowest and fastest ranks by number.
void RankStepsView::paintLegend(QPainter &p, const QRect &area)
{
    const RankStepTracks &t = m_tracks;
    const QPalette &pal = palette();
    const QFontMetrics fm = fontMetrics();
    const int rows = t.rowCount();
    struct Item
    {
        QPen pen;
        QString text;
    };
    QList<Item> items;
    if (rows > 1)
        items.append({QPen(toneColor(StateTone::Warning, pal), 2.5),
                      tr("rank %1, slowest").arg(t.slowestRank())});
    else
        items.append({QPen(pal.color(QPalette::Text), 2.5), tr("rank %1").arg(t.slowestRank())});
    if (rows > 1 && t.fastestRank() != t.slowestRank())
        items.append({QPen(toneColor(StateTone::Done, pal), 1.5),
                      tr("rank %1, fastest").arg(t.fastestRank())});
    if (rows > 2)
        items.append({QPen(pal.color(QPalette::Text), 1.5, Qt::DashLine), tr("median")});
    if (rows > 1) {
        QColor muted = pal.color(QPalette::Text);
        muted.setAlpha(rows <= kLinesUpTo ? 70 : 45);
        items.append({QPen(muted, rows <= kLinesUpTo ? 1.0 : 6.0),
                      rows <= kLinesUpTo ? tr("each rank") : tr("all %1 ranks").arg(rows)});
    }
    int x = area.left();
    const int y = area.top() - 4 - fm.height() / 2;
    for (const Item &item : items) {
        p.setPen(item.pen);
        p.drawLine(x, y, x + 18, y);
        x += 22;
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QPoint(x, y + fm.ascent() / 2 - 1), item.text);
        x += fm.horizontalAdvance(item.text) + 14;
    }
}

} // namespace rankdeck
