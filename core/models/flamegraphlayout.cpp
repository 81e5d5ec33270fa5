// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/flamegraphlayout.h"

#include <QStringTokenizer>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

namespace rankdeck {

namespace {

// Counts come from outside (a file, another process): a sum that would overflow stays at the
// largest value rather than turning negative.
qint64 addCounts(qint64 a, qint64 b)
{
    return b > std::numeric_limits<qint64>::max() - a ? std::numeric_limits<qint64>::max() : a + b;
}

auto framesOf(const QString &stack)
{
    return qTokenize(stack, u';', Qt::SkipEmptyParts);
}

// The innermost frame of a stack; empty when it has none.
QStringView leafOf(const QString &stack)
{
    QStringView leaf;
    for (QStringView frame : framesOf(stack))
        leaf = frame;
    return leaf;
}

// A profile's own time by frame name and its total, valid stacks only.
qint64 selfByFrame(const QHash<QString, qint64> &profile, QHash<QString, qint64> *self)
{
    qint64 total = 0;
    for (auto it = profile.cbegin(); it != profile.cend(); ++it) {
        if (it.value() <= 0)
            continue;
        const QStringView leaf = leafOf(it.key());
        if (leaf.isEmpty())
            continue;
        total = addCounts(total, it.value());
        qint64 &own = (*self)[leaf.toString()];
        own = addCounts(own, it.value());
    }
    return total;
}

struct RawNode
{
    QString frame;
    int parent = -1;
    int depth = 0;
    qint64 count = 0;
    qint64 baseline = 0;
    std::vector<int> children;
};

// The merged tree of a profile, in the order the stacks came (QHash's: not stable).
class RawTree
{
public:
    RawTree() { m_nodes.push_back(RawNode{}); }

    void add(const QString &stack, qint64 count)
    {
        int at = 0;
        bool any = false;
        for (QStringView frame : framesOf(stack)) {
            if (!any) {
                m_nodes[0].count = addCounts(m_nodes[0].count, count);
                any = true;
            }
            const auto key = std::make_pair(at, frame.toString());
            int child = m_children.value(key, -1);
            if (child < 0) {
                child = int(m_nodes.size());
                m_nodes.push_back(RawNode{key.second, at, m_nodes[size_t(at)].depth + 1, 0, 0, {}});
                m_nodes[size_t(at)].children.push_back(child);
                m_children.insert(key, child);
            }
            m_nodes[size_t(child)].count = addCounts(m_nodes[size_t(child)].count, count);
            at = child;
        }
    }

    // Adds a baseline stack's count along the path it shares with the tree.
    void addBaseline(const QString &stack, qint64 count)
    {
        m_nodes[0].baseline = addCounts(m_nodes[0].baseline, count);
        int at = 0;
        for (QStringView frame : framesOf(stack)) {
            at = m_children.value(std::make_pair(at, frame.toString()), -1);
            if (at < 0)
                return;
            m_nodes[size_t(at)].baseline = addCounts(m_nodes[size_t(at)].baseline, count);
        }
    }

    // The nodes in pre-order, each node's children by frame name.
    std::vector<int> preOrder()
    {
        for (RawNode &n : m_nodes)
            std::sort(n.children.begin(), n.children.end(), [this](int a, int b) {
                return m_nodes[size_t(a)].frame < m_nodes[size_t(b)].frame;
            });
        std::vector<int> order;
        order.reserve(m_nodes.size());
        std::vector<int> stack{0};
        while (!stack.empty()) {
            const int n = stack.back();
            stack.pop_back();
            order.push_back(n);
            const std::vector<int> &children = m_nodes[size_t(n)].children;
            stack.insert(stack.end(), children.rbegin(), children.rend());
        }
        return order;
    }

    // Which nodes to leave out so that at most maxNodes remain: the smallest leaves first, a
    // parent whose children all went becoming a leaf in turn; ties go to the later node in
    // pre-order, so the same profile always loses the same nodes.
    std::vector<bool> dropped(const std::vector<int> &order, int maxNodes, int *count) const
    {
        std::vector<bool> gone(m_nodes.size(), false);
        const qint64 excess = qint64(m_nodes.size()) - std::max(1, maxNodes);
        *count = 0;
        if (excess <= 0)
            return gone;
        std::vector<int> rank(m_nodes.size());
        for (size_t i = 0; i < order.size(); ++i)
            rank[size_t(order[i])] = int(i);
        std::vector<size_t> left(m_nodes.size());
        using Entry = std::tuple<qint64, int, int>; // count, -pre-order rank, node
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> leaves;
        for (size_t i = 1; i < m_nodes.size(); ++i) {
            left[i] = m_nodes[i].children.size();
            if (left[i] == 0)
                leaves.emplace(m_nodes[i].count, -rank[i], int(i));
        }
        while (*count < excess && !leaves.empty()) {
            const int n = std::get<2>(leaves.top());
            leaves.pop();
            gone[size_t(n)] = true;
            ++*count;
            const int parent = m_nodes[size_t(n)].parent;
            if (parent > 0 && --left[size_t(parent)] == 0)
                leaves.emplace(m_nodes[size_t(parent)].count, -rank[size_t(parent)], parent);
        }
        return gone;
    }

    const RawNode &at(int i) const { return m_nodes[size_t(i)]; }

private:
    std::vector<RawNode> m_nodes;
    QHash<std::pair<int, QString>, int> m_children;
};

} // namespace

FlameGraphLayout::FlameGraphLayout(const QHash<QString, qint64> &profile,
                                   const QHash<QString, qint64> &baseline, int maxNodes)
{
    RawTree tree;
    for (auto it = profile.cbegin(); it != profile.cend(); ++it) {
        if (it.value() > 0)
            tree.add(it.key(), it.value());
    }
    m_total = tree.at(0).count;
    if (m_total <= 0)
        return;
    for (auto it = baseline.cbegin(); it != baseline.cend(); ++it) {
        if (it.value() > 0 && !leafOf(it.key()).isEmpty())
            tree.addBaseline(it.key(), it.value());
    }
    m_baselineTotal = tree.at(0).baseline;

    const std::vector<int> order = tree.preOrder();
    const std::vector<bool> gone = tree.dropped(order, maxNodes, &m_dropped);
    // Raw index → index in m_nodes; and each kept node's left edge in samples, and the samples
    // its children laid so far take, so that x is exact (no sum of rounded fractions).
    std::vector<int> index(gone.size(), -1);
    std::vector<qint64> left, used;
    m_nodes.reserve(qsizetype(order.size()) - m_dropped);
    for (int raw : order) {
        if (gone[size_t(raw)])
            continue;
        const RawNode &r = tree.at(raw);
        Node n;
        n.frame = r.frame;
        n.depth = r.depth;
        n.count = r.count;
        n.parent = r.parent < 0 ? -1 : index[size_t(r.parent)];
        qint64 edge = 0;
        if (n.parent >= 0) {
            edge = left[size_t(n.parent)] + used[size_t(n.parent)];
            used[size_t(n.parent)] += r.count;
        }
        n.x = double(edge) / double(m_total);
        n.width = double(r.count) / double(m_total);
        n.share = n.width;
        if (hasBaseline())
            n.baselineShare = double(r.baseline) / double(m_baselineTotal);
        index[size_t(raw)] = int(m_nodes.size());
        left.push_back(edge);
        used.push_back(0);
        m_maxDepth = std::max(m_maxDepth, n.depth);
        m_nodes.append(std::move(n));
    }
    m_ends.resize(m_nodes.size());
    for (int i = 0; i < int(m_nodes.size()); ++i)
        m_ends[i] = i + 1;
    for (int i = int(m_nodes.size()) - 1; i > 0; --i)
        m_ends[m_nodes[i].parent] = std::max(m_ends[m_nodes[i].parent], m_ends[i]);
    m_byDepth.resize(m_maxDepth + 1);
    for (int i = 0; i < int(m_nodes.size()); ++i)
        m_byDepth[m_nodes[i].depth].append(i);

    // Own time from the stacks themselves, not the tree: exact even where leaves were dropped.
    QHash<QString, qint64> self, baselineSelf;
    selfByFrame(profile, &self);
    if (hasBaseline())
        selfByFrame(baseline, &baselineSelf);
    for (auto it = self.cbegin(); it != self.cend(); ++it) {
        HotFrame hot;
        hot.frame = it.key();
        hot.selfCount = it.value();
        hot.selfShare = double(it.value()) / double(m_total);
        if (hasBaseline())
            hot.baselineSelfShare = double(baselineSelf.value(it.key())) / double(m_baselineTotal);
        m_hot.append(std::move(hot));
    }
    std::sort(m_hot.begin(), m_hot.end(), [](const HotFrame &a, const HotFrame &b) {
        return a.selfCount != b.selfCount ? a.selfCount > b.selfCount : a.frame < b.frame;
    });
}

int FlameGraphLayout::childOf(int parent, const QString &frame) const
{
    if (parent < 0 || parent >= size())
        return -1;
    for (int c = parent + 1; c < m_ends[parent]; c = m_ends[c]) {
        if (m_nodes[c].frame == frame)
            return c;
    }
    return -1;
}

QStringList FlameGraphLayout::pathOf(int index) const
{
    QStringList path;
    for (int n = index; n > 0 && n < size(); n = m_nodes[n].parent)
        path.prepend(m_nodes[n].frame);
    return path;
}

int FlameGraphLayout::nodeAt(double x, int depth) const
{
    if (depth < 0 || depth >= int(m_byDepth.size()) || !(x >= 0.0))
        return -1;
    const QList<int> &row = m_byDepth[depth];
    // The last node whose left edge is at x or before it.
    const auto it = std::upper_bound(row.cbegin(), row.cend(), x,
                                     [this](double v, int n) { return v < m_nodes[n].x; });
    if (it == row.cbegin())
        return -1;
    const int n = *std::prev(it);
    return x < m_nodes[n].x + m_nodes[n].width ? n : -1;
}

QList<FlameGraphLayout::HotFrame> FlameGraphLayout::hottest(int n) const
{
    return m_hot.mid(0, std::max(0, n));
}

QHash<QString, qint64>
FlameGraphLayout::averageProfile(const QList<QHash<QString, qint64>> &profiles, qint64 total)
{
    QHash<QString, double> sum;
    int weighed = 0;
    for (const QHash<QString, qint64> &profile : profiles) {
        qint64 own = 0;
        for (auto it = profile.cbegin(); it != profile.cend(); ++it) {
            if (it.value() > 0 && !leafOf(it.key()).isEmpty())
                own = addCounts(own, it.value());
        }
        if (own <= 0)
            continue;
        ++weighed;
        for (auto it = profile.cbegin(); it != profile.cend(); ++it) {
            if (it.value() > 0 && !leafOf(it.key()).isEmpty())
                sum[it.key()] += double(it.value()) / double(own);
        }
    }
    QHash<QString, qint64> average;
    if (weighed == 0 || total <= 0)
        return average;
    for (auto it = sum.cbegin(); it != sum.cend(); ++it) {
        const auto count = qint64(std::llround(it.value() / weighed * double(total)));
        if (count > 0)
            average.insert(it.key(), count);
    }
    return average;
}

} // namespace rankdeck
