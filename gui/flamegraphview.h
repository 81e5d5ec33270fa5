// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Profile page's picture of one rank's sampled stacks (a FlameGraphLayout) as an icicle
// graph: the root ("all samples") on top, each call one row further down, every frame a
// rectangle as wide as its share of the samples, so the wide bars at the bottom are where the
// time goes. Colours are warm hues hashed from the frame's name, so a function keeps its colour
// from one refresh to the next; with a baseline (the other ranks) they show the difference
// instead, as flamegraph.pl's differential graphs do: red where this rank spends a larger share
// than the baseline, blue where smaller, the stronger the larger the difference, near white
// where they agree.
//
// A click zooms into a frame (its subtree fills the width, its callers stay above it at full
// width); a click on a caller or the root, Backspace (one level) or Escape (all the way) zooms
// out. The keyboard walks the same way: Down zooms into the widest callee, Up to the caller,
// Left and Right to the neighbours. A screen reader reads the accessible description: the five
// frames with the largest own time and their shares, and while zoomed, the zoomed frame (the
// tooltip says the same of the frame under the mouse).
//
// It repaints only when the layout, the zoom or the focus changes, and skips frames narrower than a
// pixel (with their subtrees) and rows outside the exposed area, so that 20,000 frames paint in a
// few milliseconds.
#pragma once

#include "models/flamegraphlayout.h"

#include <QColor>
#include <QList>
#include <QWidget>

namespace rankdeck {

class FlameGraphView : public QWidget
{
    Q_OBJECT
public:
    // Frames in the accessible description.
    static constexpr int kSummaryFrames = 5;

    explicit FlameGraphView(QWidget *parent = nullptr);

    // A new profile; the zoom stays on the same path of frames when the new one has it.
    void setFlameGraph(const FlameGraphLayout &graph);
    const FlameGraphLayout &flameGraph() const { return m_graph; }
    // Drawn in the middle while there is no profile.
    void setEmptyText(const QString &text);
    QString emptyText() const { return m_emptyText; }
    // What the baseline is called in the tooltip and the description ("others", default
    // "baseline").
    void setBaselineName(const QString &name);
    QString baselineName() const { return m_baselineName; }
    bool isDifferential() const { return m_graph.hasBaseline(); }

    // The node whose subtree fills the width (0, the root, when not zoomed; -1 when empty).
    int zoomNode() const { return m_graph.isEmpty() ? -1 : m_zoom; }
    void zoomTo(int node);
    // Where a node is drawn, in widget coordinates; empty when it is not (outside the zoom,
    // narrower than a pixel, or beyond the graph).
    QRect nodeRect(int node) const;
    // The node drawn at a point of the widget, or -1.
    int nodeAtPos(QPoint pos) const;
    // "frame — 41.0 % of samples (baseline 4.0 %)".
    QString nodeText(int node) const;
    // The hottest frames by own time, "; "-separated (the accessible description, which adds
    // the zoomed frame while zoomed).
    QString summaryText() const;
    QColor colorFor(int node) const;
    int rowHeight() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    // A share as the texts write it: "71 %", "4 %", "0.4 %", "<0.1 %".
    static QString percentText(double share);

signals:
    void zoomChanged(int node);

protected:
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;
    void focusInEvent(QFocusEvent *event) override;
    void focusOutEvent(QFocusEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void paintEvent(QPaintEvent *event) override;

private:
    bool isAncestorOfZoom(int node) const;
    int neighbourOfZoom(int step) const;
    int widestChild(int node) const;
    void paintNode(QPainter &p, int node, const QRect &r) const;
    void updateColors();
    void updateDescription();

    FlameGraphLayout m_graph;
    QList<QColor> m_colors; // one per node, from the frame's name or the difference
    QString m_emptyText;
    QString m_baselineName;
    int m_zoom = 0;
};

} // namespace rankdeck
