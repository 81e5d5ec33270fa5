// SPDX-License-Identifier: GPL-3.0-or-later
//
// One rank's collapsed-stack profile (stack string → samples, root-first frames joined by ';',
// the format flamegraph.pl and speedscope read) laid out as a flame graph, so that the GUI only
// paints rectangles and a test can check the arithmetic without a widget.
//
// Stacks merge into a tree: frames of the same name under the same parent are one node whose
// count is the sum. Node 0 is the root (an empty frame, every sample); the list is in pre-order
// with each node's children sorted by frame name, as flamegraph.pl sorts them, so the picture
// does not reshuffle between two refreshes of a similar profile, and a node's subtree is the
// contiguous range [index, subtreeEnd(index)). x and width are fractions of the root: children
// tile their parent from its left edge, and what is left on the right is the parent's own time.
//
// With a baseline (another profile: in the GUI, the other ranks' average) every node also has
// the share of the same path in the baseline, for a differential graph.
//
// The tree is bounded (kMaxNodes): beyond it the smallest leaves go first (their samples stay
// in their parent's count, as its own time) and droppedNodes() says how many went.
#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

class FlameGraphLayout
{
public:
    static constexpr int kMaxNodes = 20000;

    struct Node
    {
        QString frame; // empty for the root
        int depth = 0; // the root 0, its children 1, …
        qint64 count = 0;
        double x = 0.0;              // left edge, a fraction of the root's width
        double width = 0.0;          // a fraction of the root's width
        double share = 0.0;          // count / total
        double baselineShare = -1.0; // the same path's share of the baseline; -1 without one
        int parent = -1;
    };
    // A frame's own time (samples where it was the innermost frame), over every path.
    struct HotFrame
    {
        QString frame;
        qint64 selfCount = 0;
        double selfShare = 0.0;
        double baselineSelfShare = -1.0; // -1 without a baseline
    };

    FlameGraphLayout() = default;
    // Empty stacks, empty frames and counts ≤ 0 are ignored; an empty or all-invalid baseline
    // is no baseline. maxNodes counts the root.
    explicit FlameGraphLayout(const QHash<QString, qint64> &profile,
                              const QHash<QString, qint64> &baseline = {},
                              int maxNodes = kMaxNodes);

    const QList<Node> &nodes() const { return m_nodes; }
    const Node &node(int index) const { return m_nodes.at(index); }
    int size() const { return int(m_nodes.size()); }
    bool isEmpty() const { return m_total <= 0; }
    bool hasBaseline() const { return m_baselineTotal > 0; }
    // Samples of every valid stack, and of the baseline's.
    qint64 total() const { return m_total; }
    qint64 baselineTotal() const { return m_baselineTotal; }
    // The deepest node's depth (0 when empty: the root alone, or nothing).
    int maxDepth() const { return m_maxDepth; }
    int droppedNodes() const { return m_dropped; }
    // One past the last node of index's subtree.
    int subtreeEnd(int index) const { return m_ends.at(index); }
    // The child of parent named frame, or -1.
    int childOf(int parent, const QString &frame) const;
    // The frames from the root's first child down to index (empty for the root).
    QStringList pathOf(int index) const;
    // The node at depth whose [x, x + width) holds x, or -1 (a parent's own time, or nothing).
    int nodeAt(double x, int depth) const;
    // The n frames with the largest own time, largest first (ties by name).
    QList<HotFrame> hottest(int n) const;

    // The average of profiles, each normalised by its own total so that each weighs the same,
    // as counts that sum to about `total`: the baseline one rank is compared with.
    static QHash<QString, qint64> averageProfile(const QList<QHash<QString, qint64>> &profiles,
                                                 qint64 total);

private:
    QList<Node> m_nodes;
    QList<int> m_ends;
    QList<QList<int>> m_byDepth; // each depth's nodes, left to right
    QList<HotFrame> m_hot;       // every frame with own time, hottest first
    qint64 m_total = 0;
    qint64 m_baselineTotal = 0;
    int m_maxDepth = 0;
    int m_dropped = 0;
};

} // namespace rankdeck
