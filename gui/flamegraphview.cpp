// SPDX-License-Identifier: GPL-3.0-or-later
#include "flamegraphview.h"

#include "widgettext.h"

#include <QAccessible>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace rankdeck {

namespace {

// flamegraph.pl's "hot" palette: reds, oranges and yellows, from a hash of the name that does
// not depend on the process (QHash's seed does), so a frame keeps its colour between runs too.
QColor warmColor(const QString &frame)
{
    quint32 h = 2166136261u; // FNV-1a
    for (QChar c : frame) {
        h ^= c.unicode();
        h *= 16777619u;
    }
    const auto part = [h](int shift) { return double((h >> shift) & 0xffu) / 255.0; };
    return QColor(205 + int(50 * part(0)), int(230 * part(8)), int(55 * part(16)));
}

QColor mix(const QColor &a, const QColor &b, double t)
{
    return QColor(int(a.red() + (b.red() - a.red()) * t),
                  int(a.green() + (b.green() - a.green()) * t),
                  int(a.blue() + (b.blue() - a.blue()) * t));
}

// A difference of a few percentage points is the strongest colour only when nothing differs
// more: below this, noise between ranks would look like a finding.
constexpr double kMinDifferenceScale = 0.05;

} // namespace

FlameGraphView::FlameGraphView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("flameGraph"));
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_baselineName = tr("baseline");
    m_emptyText = tr("No profile");
    updateDescription();
}

QString FlameGraphView::percentText(double share)
{
    const double v = share * 100.0;
    QString number;
    if (v > 0.0 && v < 0.05)
        return tr("<0.1 %");
    if (v <= 0.0)
        number = QStringLiteral("0");
    else if (v < 0.95)
        number = QString::number(v, 'f', 1);
    else
        number = QString::number(std::llround(v));
    return tr("%1 %").arg(number);
}

int FlameGraphView::rowHeight() const
{
    return fontMetrics().height() + 6;
}

QSize FlameGraphView::sizeHint() const
{
    return QSize(600, std::max(160, minimumSizeHint().height()));
}

QSize FlameGraphView::minimumSizeHint() const
{
    // Every row has its height: deep stacks make the view taller, and the page scrolls it.
    const int rows = m_graph.isEmpty() ? 4 : m_graph.maxDepth() + 1;
    return QSize(200, rows * rowHeight());
}

void FlameGraphView::setFlameGraph(const FlameGraphLayout &graph)
{
    // The same frames zoomed as before, when the new profile still has them: a refresh should
    // not throw the reader back to the whole graph.
    const QStringList path = m_graph.pathOf(m_zoom);
    const int before = m_zoom;
    m_graph = graph;
    int zoom = 0;
    for (const QString &frame : path) {
        zoom = m_graph.childOf(zoom, frame);
        if (zoom < 0)
            break;
    }
    m_zoom = std::max(0, zoom);
    updateColors();
    updateDescription();
    updateGeometry();
    update();
    if (before > 0 && m_zoom == 0)
        emit zoomChanged(m_zoom);
}

void FlameGraphView::setEmptyText(const QString &text)
{
    if (text == m_emptyText)
        return;
    m_emptyText = text;
    updateDescription();
    if (m_graph.isEmpty())
        update();
}

void FlameGraphView::setBaselineName(const QString &name)
{
    if (name == m_baselineName)
        return;
    m_baselineName = name;
    updateDescription();
}

void FlameGraphView::zoomTo(int node)
{
    if (m_graph.isEmpty() || node < 0 || node >= m_graph.size() || node == m_zoom)
        return;
    m_zoom = node;
    updateDescription();
    update();
    emit zoomChanged(node);
}

bool FlameGraphView::isAncestorOfZoom(int node) const
{
    for (int a = m_zoom; a >= 0; a = m_graph.node(a).parent) {
        if (a == node)
            return true;
    }
    return false;
}

QRect FlameGraphView::nodeRect(int node) const
{
    if (m_graph.isEmpty() || node < 0 || node >= m_graph.size())
        return {};
    const FlameGraphLayout::Node &n = m_graph.node(node);
    const int rh = rowHeight();
    if (isAncestorOfZoom(node)) // the zoomed frame and its callers: the whole width
        return QRect(0, n.depth * rh, width(), rh - 1);
    if (node < m_zoom || node >= m_graph.subtreeEnd(m_zoom))
        return {};
    const FlameGraphLayout::Node &z = m_graph.node(m_zoom);
    const double scale = double(width()) / z.width;
    if (n.width * scale < 1.0)
        return {};
    const auto left = int(std::lround((n.x - z.x) * scale));
    const auto right = int(std::lround((n.x + n.width - z.x) * scale));
    return QRect(left, n.depth * rh, std::max(1, right - left), rh - 1);
}

int FlameGraphView::nodeAtPos(QPoint pos) const
{
    if (m_graph.isEmpty() || pos.x() < 0 || pos.x() >= width() || pos.y() < 0)
        return -1;
    const int depth = pos.y() / rowHeight();
    const FlameGraphLayout::Node &z = m_graph.node(m_zoom);
    if (depth <= z.depth) {
        int a = m_zoom;
        while (m_graph.node(a).depth > depth)
            a = m_graph.node(a).parent;
        return a;
    }
    const double x = z.x + (pos.x() + 0.5) / double(width()) * z.width;
    const int n = m_graph.nodeAt(x, depth);
    if (n <= m_zoom || n >= m_graph.subtreeEnd(m_zoom) || nodeRect(n).isEmpty())
        return -1;
    return n;
}

QString FlameGraphView::nodeText(int node) const
{
    if (m_graph.isEmpty() || node < 0 || node >= m_graph.size())
        return {};
    const FlameGraphLayout::Node &n = m_graph.node(node);
    const QString frame = node == 0 ? tr("all samples") : n.frame;
    const QString share = QString::number(n.share * 100.0, 'f', 1);
    if (!isDifferential())
        return tr("%1 — %2 % of samples").arg(frame, share);
    return tr("%1 — %2 % of samples (%3 %4 %)")
        .arg(frame, share, m_baselineName, QString::number(n.baselineShare * 100.0, 'f', 1));
}

QString FlameGraphView::summaryText() const
{
    if (m_graph.isEmpty())
        return m_emptyText;
    QStringList parts;
    const QList<FlameGraphLayout::HotFrame> hot = m_graph.hottest(kSummaryFrames);
    for (const FlameGraphLayout::HotFrame &f : hot) {
        if (isDifferential())
            parts << tr("%1 %2 (%3 %4)")
                         .arg(f.frame, percentText(f.selfShare), m_baselineName,
                              percentText(f.baselineSelfShare));
        else
            parts << tr("%1 %2").arg(f.frame, percentText(f.selfShare));
    }
    return parts.join(QStringLiteral("; "));
}

QColor FlameGraphView::colorFor(int node) const
{
    return node >= 0 && node < int(m_colors.size()) ? m_colors[node] : QColor();
}

void FlameGraphView::updateColors()
{
    m_colors.clear();
    m_colors.reserve(m_graph.size());
    if (!isDifferential()) {
        for (const FlameGraphLayout::Node &n : m_graph.nodes())
            m_colors.append(n.parent < 0 ? QColor(0xdd, 0xdd, 0xdd) : warmColor(n.frame));
        return;
    }
    double scale = kMinDifferenceScale;
    for (const FlameGraphLayout::Node &n : m_graph.nodes())
        scale = std::max(scale, std::abs(n.share - n.baselineShare));
    const QColor same(0xf5, 0xf2, 0xf0), more(0xd6, 0x27, 0x28), less(0x2c, 0x62, 0xd6);
    for (const FlameGraphLayout::Node &n : m_graph.nodes()) {
        const double d = n.share - n.baselineShare;
        m_colors.append(mix(same, d > 0 ? more : less, std::min(1.0, std::abs(d) / scale)));
    }
}

void FlameGraphView::updateDescription()
{
    QString text = summaryText();
    // What the keyboard zoomed into, which a screen reader user cannot see.
    if (!m_graph.isEmpty() && m_zoom > 0)
        text += QLatin1Char('\n') + tr("Zoomed into %1").arg(nodeText(m_zoom));
    if (text == accessibleDescription())
        return;
    setAccessibleDescription(text);
    QAccessibleEvent changed(this, QAccessible::DescriptionChanged);
    QAccessible::updateAccessibility(&changed);
}

bool FlameGraphView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip)
        return showTooltipText(this, event,
                               nodeText(nodeAtPos(static_cast<QHelpEvent *>(event)->pos())));
    return QWidget::event(event);
}

void FlameGraphView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        updateGeometry(); // the rows' height follows the font
        update();
    } else if (event->type() == QEvent::PaletteChange) {
        update();
    }
}

int FlameGraphView::widestChild(int node) const
{
    int widest = -1;
    for (int c = node + 1; c < m_graph.subtreeEnd(node); c = m_graph.subtreeEnd(c)) {
        if (widest < 0 || m_graph.node(c).count > m_graph.node(widest).count)
            widest = c;
    }
    return widest;
}

// The zoomed frame's previous (step -1) or next (step 1) sibling, or -1.
int FlameGraphView::neighbourOfZoom(int step) const
{
    const int parent = m_graph.node(m_zoom).parent;
    if (parent < 0)
        return -1;
    int previous = -1;
    for (int c = parent + 1; c < m_graph.subtreeEnd(parent); c = m_graph.subtreeEnd(c)) {
        if (step > 0 && previous == m_zoom)
            return c;
        if (step < 0 && c == m_zoom)
            return previous;
        previous = c;
    }
    return -1;
}

void FlameGraphView::keyPressEvent(QKeyEvent *event)
{
    if (m_graph.isEmpty()) {
        QWidget::keyPressEvent(event);
        return;
    }
    int to = -1;
    switch (event->key()) {
    case Qt::Key_Escape:
        to = m_zoom > 0 ? 0 : -1; // unzoomed, Escape is the window's
        break;
    case Qt::Key_Backspace:
    case Qt::Key_Up:
        to = m_graph.node(m_zoom).parent;
        break;
    case Qt::Key_Down:
        to = widestChild(m_zoom);
        break;
    case Qt::Key_Left:
        to = neighbourOfZoom(-1);
        break;
    case Qt::Key_Right:
        to = neighbourOfZoom(1);
        break;
    default:
        break;
    }
    if (to < 0) {
        QWidget::keyPressEvent(event);
        return;
    }
    zoomTo(to);
}

void FlameGraphView::focusInEvent(QFocusEvent *event)
{
    QWidget::focusInEvent(event);
    update(); // the zoomed frame's outline
}

void FlameGraphView::focusOutEvent(QFocusEvent *event)
{
    QWidget::focusOutEvent(event);
    update();
}

void FlameGraphView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton) {
        QWidget::mouseReleaseEvent(event);
        return;
    }
    const int node = nodeAtPos(event->position().toPoint());
    if (node >= 0)
        zoomTo(node);
}

void FlameGraphView::paintNode(QPainter &p, int node, const QRect &r) const
{
    const QColor color = m_colors[node];
    // A pixel between neighbours, where there is room for it: a row of equal colours would
    // read as one frame.
    p.fillRect(r.width() > 2 ? r.adjusted(0, 0, -1, 0) : r, color);
    const QFontMetrics fm = fontMetrics();
    if (r.width() < fm.averageCharWidth() * 4)
        return;
    const QString text = node == 0 ? tr("all samples") : m_graph.node(node).frame;
    const QString shown = fm.elidedText(text, Qt::ElideRight, r.width() - 6);
    if (shown.isEmpty() || shown == QStringLiteral("…"))
        return;
    p.setPen(qGray(color.rgb()) < 128 ? Qt::white : Qt::black);
    p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, shown);
}

void FlameGraphView::paintEvent(QPaintEvent *event)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_graph.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   m_emptyText);
        return;
    }
    const QRect exposed = event->rect();
    for (int a = m_zoom; a >= 0; a = m_graph.node(a).parent)
        paintNode(p, a, nodeRect(a));
    const int rh = rowHeight();
    const int end = m_graph.subtreeEnd(m_zoom);
    for (int i = m_zoom + 1; i < end;) {
        const int top = m_graph.node(i).depth * rh;
        const QRect r = top > exposed.bottom() ? QRect() : nodeRect(i);
        // Its subtree lies within its columns and below it: out of sight with it.
        if (r.isEmpty() || r.right() < exposed.left() || r.left() > exposed.right()) {
            i = m_graph.subtreeEnd(i);
            continue;
        }
        if (top + rh > exposed.top())
            paintNode(p, i, r);
        ++i;
    }
    if (hasFocus()) {
        // Where the keyboard's Backspace and Escape act: the zoomed frame, outlined.
        p.setPen(palette().color(QPalette::Highlight));
        p.setBrush(Qt::NoBrush);
        p.drawRect(nodeRect(m_zoom).adjusted(0, 0, -1, 0));
    }
}

} // namespace rankdeck
