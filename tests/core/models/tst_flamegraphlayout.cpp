// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Profile tab's flame graph as numbers (FlameGraphLayout): stacks sharing a prefix merge
// into one node, children tile their parent in name order, own time is counted per frame over
// every path, the baseline's share follows the same path, invalid input is ignored, and the tree
// stays within its cap by dropping the smallest leaves.
#include "models/flamegraphlayout.h"

#include <QTest>

#include <cmath>

using namespace rankdeck;

using Profile = QHash<QString, qint64>;

namespace {

// The tree in pre-order as "depth:frame=count", space-separated (the root's frame is "*").
QString treeText(const FlameGraphLayout &g)
{
    QStringList parts;
    for (const FlameGraphLayout::Node &n : g.nodes())
        parts << QStringLiteral("%1:%2=%3")
                     .arg(n.depth)
                     .arg(n.parent < 0 ? QStringLiteral("*") : n.frame)
                     .arg(n.count);
    return parts.join(QLatin1Char(' '));
}

// A profile of many stacks over a few names, the same every run.
Profile generated(int stacks, int depth)
{
    static const QStringList names = {QStringLiteral("main (train.py:1)"),
                                      QStringLiteral("train_step (train.py:41)"),
                                      QStringLiteral("forward (model.py:10)"),
                                      QStringLiteral("backward"),
                                      QStringLiteral("fetch (torch/utils/data/_utils/fetch.py:52)"),
                                      QStringLiteral("Dataset.__getitem__ (data.py:41)"),
                                      QStringLiteral("all_reduce")};
    Profile p;
    quint32 seed = 12345;
    const auto next = [&seed] {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) & 0x7fffu;
    };
    for (int s = 0; s < stacks; ++s) {
        QStringList frames;
        const int d = 1 + int(next() % quint32(depth));
        for (int i = 0; i < d; ++i)
            frames << names[int(next() % quint32(names.size()))];
        p[frames.join(QLatin1Char(';'))] += 1 + qint64(next() % 50);
    }
    return p;
}

} // namespace

class TestFlameGraphLayout : public QObject
{
    Q_OBJECT

private slots:
    void merges_data()
    {
        QTest::addColumn<Profile>("profile");
        QTest::addColumn<QString>("tree");
        QTest::newRow("shared prefix")
            << Profile{{QStringLiteral("a;b"), 3}, {QStringLiteral("a;c"), 2}}
            << QStringLiteral("0:*=5 1:a=5 2:b=3 2:c=2");
        QTest::newRow("children sorted by name, not by count or arrival")
            << Profile{{QStringLiteral("m;zeta"), 9},
                       {QStringLiteral("m;alpha"), 1},
                       {QStringLiteral("m;Beta"), 4}}
            << QStringLiteral("0:*=14 1:m=14 2:Beta=4 2:alpha=1 2:zeta=9");
        QTest::newRow("a stack that ends in another's middle")
            << Profile{{QStringLiteral("a;b;c"), 4}, {QStringLiteral("a;b"), 6}}
            << QStringLiteral("0:*=10 1:a=10 2:b=10 3:c=4");
        QTest::newRow("same name under different parents stays apart")
            << Profile{{QStringLiteral("a;x"), 1}, {QStringLiteral("b;x"), 2}}
            << QStringLiteral("0:*=3 1:a=1 2:x=1 1:b=2 2:x=2");
        QTest::newRow("recursion")
            << Profile{{QStringLiteral("f;f;f"), 2}, {QStringLiteral("f"), 1}}
            << QStringLiteral("0:*=3 1:f=3 2:f=2 3:f=2");
        QTest::newRow("empty frames skipped, so the stacks merge")
            << Profile{{QStringLiteral("a;;b"), 1}, {QStringLiteral(";a;b;"), 2}}
            << QStringLiteral("0:*=3 1:a=3 2:b=3");
        QTest::newRow("frames with spaces and parentheses")
            << Profile{{QStringLiteral("train_step (train.py:41);fetch (fetch.py:52)"), 7}}
            << QStringLiteral("0:*=7 1:train_step (train.py:41)=7 2:fetch (fetch.py:52)=7");
        QTest::newRow("invalid entries ignored, valid ones kept")
            << Profile{{QStringLiteral("a"), 2},
                       {QString(), 5},
                       {QStringLiteral(";;"), 5},
                       {QStringLiteral("b"), 0},
                       {QStringLiteral("c"), -7}}
            << QStringLiteral("0:*=2 1:a=2");
    }
    void merges()
    {
        QFETCH(Profile, profile);
        QFETCH(QString, tree);
        const FlameGraphLayout g(profile);
        QCOMPARE(treeText(g), tree);
        QCOMPARE(g.total(), g.node(0).count);
        QCOMPARE(g.droppedNodes(), 0);
        QVERIFY(!g.hasBaseline());
        for (const FlameGraphLayout::Node &n : g.nodes())
            QCOMPARE(n.baselineShare, -1.0);
    }

    void emptyOrInvalid_data()
    {
        QTest::addColumn<Profile>("profile");
        QTest::newRow("nothing") << Profile{};
        QTest::newRow("empty stack") << Profile{{QString(), 4}};
        QTest::newRow("separators only") << Profile{{QStringLiteral(";;;"), 4}};
        QTest::newRow("zero and negative counts")
            << Profile{{QStringLiteral("a;b"), 0}, {QStringLiteral("c"), -1}};
    }
    void emptyOrInvalid()
    {
        QFETCH(Profile, profile);
        const FlameGraphLayout g(profile, profile);
        QVERIFY(g.isEmpty());
        QCOMPARE(g.total(), 0);
        QCOMPARE(g.size(), 0);
        QCOMPARE(g.maxDepth(), 0);
        QCOMPARE(g.nodeAt(0.5, 0), -1);
        QVERIFY(g.hottest(5).isEmpty());
        QVERIFY(!g.hasBaseline());
        QCOMPARE(g.childOf(0, QStringLiteral("a")), -1);
        QVERIFY(FlameGraphLayout().isEmpty());
    }

    // Each node as wide as its share; its children side by side from its left edge in name
    // order, within it; a point in a node finds it, a point in a parent's own time finds none.
    void childrenTileTheirParent_data()
    {
        QTest::addColumn<int>("stacks");
        QTest::addColumn<int>("depth");
        QTest::newRow("few, shallow") << 20 << 3;
        QTest::newRow("many, deep") << 3000 << 12;
    }
    void childrenTileTheirParent()
    {
        QFETCH(int, stacks);
        QFETCH(int, depth);
        const FlameGraphLayout g(generated(stacks, depth));
        QVERIFY(!g.isEmpty());
        QCOMPARE(g.node(0).x, 0.0);
        QCOMPARE(g.node(0).width, 1.0);
        QCOMPARE(g.node(0).share, 1.0);
        int deepest = 0;
        for (int i = 0; i < g.size(); ++i) {
            const FlameGraphLayout::Node &n = g.node(i);
            deepest = std::max(deepest, n.depth);
            QCOMPARE(n.width, double(n.count) / double(g.total()));
            QCOMPARE(n.share, n.width);
            QVERIFY(n.parent < i); // parents first
            QVERIFY(g.subtreeEnd(i) > i && g.subtreeEnd(i) <= g.size());
            // The children, in order: contiguous ranges of the subtree.
            double edge = n.x;
            qint64 childCounts = 0;
            QString previous;
            for (int c = i + 1; c < g.subtreeEnd(i); c = g.subtreeEnd(c)) {
                const FlameGraphLayout::Node &child = g.node(c);
                QCOMPARE(child.parent, i);
                QCOMPARE(child.depth, n.depth + 1);
                QVERIFY2(previous.isEmpty() || previous < child.frame,
                         qPrintable(previous + QStringLiteral(" before ") + child.frame));
                previous = child.frame;
                QVERIFY(std::abs(child.x - edge) < 1e-12);
                edge = child.x + child.width;
                childCounts += child.count;
                QCOMPARE(g.childOf(i, child.frame), c);
                QCOMPARE(g.nodeAt(child.x + child.width / 2, child.depth), c);
            }
            QVERIFY(childCounts <= n.count);
            QVERIFY(edge <= n.x + n.width + 1e-12);
            // The parent's own time: right of its last child, nothing one row down.
            if (childCounts < n.count && n.depth < g.maxDepth())
                QCOMPARE(g.nodeAt((edge + n.x + n.width) / 2, n.depth + 1), -1);
            const QStringList path = g.pathOf(i);
            QCOMPARE(path.size(), n.depth);
            if (i > 0)
                QCOMPARE(path.last(), n.frame);
        }
        QCOMPARE(g.maxDepth(), deepest);
        QCOMPARE(g.nodeAt(1.0, 0), -1);
        QCOMPARE(g.nodeAt(-0.1, 1), -1);
        QCOMPARE(g.nodeAt(0.5, g.maxDepth() + 1), -1);
    }

    // Own time: the samples where the frame was innermost, summed over every path it is on.
    void hottestIsOwnTime()
    {
        const Profile p = {{QStringLiteral("main;step;forward"), 6},
                           {QStringLiteral("main;step"), 2},
                           {QStringLiteral("main;load;forward"), 1},
                           {QStringLiteral("main;load;decode"), 1}};
        const FlameGraphLayout g(p);
        const QList<FlameGraphLayout::HotFrame> hot = g.hottest(10);
        QCOMPARE(hot.size(), 3); // main and load have no own time
        QCOMPARE(hot[0].frame, QStringLiteral("forward"));
        QCOMPARE(hot[0].selfCount, 7);
        QCOMPARE(hot[0].selfShare, 0.7);
        QCOMPARE(hot[1].frame, QStringLiteral("step"));
        QCOMPARE(hot[1].selfShare, 0.2);
        QCOMPARE(hot[2].frame, QStringLiteral("decode"));
        QCOMPARE(hot[2].baselineSelfShare, -1.0);
        QCOMPARE(g.hottest(1).size(), 1);
        QVERIFY(g.hottest(0).isEmpty());
        QVERIFY(g.hottest(-3).isEmpty());
        // Equal own time: by name, so the summary does not flicker between refreshes.
        const FlameGraphLayout tie(
            {{QStringLiteral("b"), 1}, {QStringLiteral("c"), 1}, {QStringLiteral("a"), 1}});
        const QList<FlameGraphLayout::HotFrame> ties = tie.hottest(3);
        QCOMPARE(ties[0].frame, QStringLiteral("a"));
        QCOMPARE(ties[2].frame, QStringLiteral("c"));
    }

    // The baseline's share of the same path (0 where the baseline never went), over the
    // baseline's own total, paths only it has included.
    void differentialBaselineShare()
    {
        const Profile own = {{QStringLiteral("a;b"), 3}, {QStringLiteral("a;c"), 1}};
        const Profile base = {{QStringLiteral("a;b"), 1},
                              {QStringLiteral("a;c;deeper"), 1},
                              {QStringLiteral("d"), 2},
                              {QStringLiteral("ignored"), 0}};
        const FlameGraphLayout g(own, base);
        QVERIFY(g.hasBaseline());
        QCOMPARE(g.baselineTotal(), 4);
        const int a = g.childOf(0, QStringLiteral("a"));
        const int b = g.childOf(a, QStringLiteral("b"));
        const int c = g.childOf(a, QStringLiteral("c"));
        QCOMPARE(g.node(0).baselineShare, 1.0);
        QCOMPARE(g.node(a).baselineShare, 0.5);
        QCOMPARE(g.node(b).baselineShare, 0.25);
        QCOMPARE(g.node(c).baselineShare, 0.25);
        QCOMPARE(g.node(b).share, 0.75);
        QCOMPARE(g.size(), 4); // the baseline adds no node
        const QList<FlameGraphLayout::HotFrame> hot = g.hottest(2);
        QCOMPARE(hot[0].frame, QStringLiteral("b"));
        QCOMPARE(hot[0].baselineSelfShare, 0.25);
        QCOMPARE(hot[1].frame, QStringLiteral("c"));
        QCOMPARE(hot[1].baselineSelfShare, 0.0); // the baseline's c always called deeper
        // A baseline with nothing valid is none.
        const FlameGraphLayout none(own, {{QString(), 3}});
        QVERIFY(!none.hasBaseline());
        QCOMPARE(none.node(1).baselineShare, -1.0);
    }

    // Each profile weighs the same whatever its total.
    void averageProfileNormalises()
    {
        const QList<Profile> profiles = {
            {{QStringLiteral("a"), 1}, {QStringLiteral("b"), 1}},
            {{QStringLiteral("a"), 1000}, {QString(), 50}, {QStringLiteral("c"), -4}},
            {}};
        const Profile avg = FlameGraphLayout::averageProfile(profiles, 1000);
        QCOMPARE(avg.size(), 2);
        QCOMPARE(avg.value(QStringLiteral("a")), 750);
        QCOMPARE(avg.value(QStringLiteral("b")), 250);
        QVERIFY(FlameGraphLayout::averageProfile({}, 1000).isEmpty());
        QVERIFY(FlameGraphLayout::averageProfile(profiles, 0).isEmpty());
    }

    // Beyond the cap the smallest leaves go (a parent whose children all went may follow);
    // their samples stay in their parent's count.
    void capDropsSmallestLeaves_data()
    {
        QTest::addColumn<Profile>("profile");
        QTest::addColumn<int>("maxNodes");
        QTest::addColumn<QString>("tree");
        QTest::addColumn<int>("dropped");
        Profile wide;
        for (int i = 1; i <= 30; ++i)
            wide[QStringLiteral("m;f%1").arg(i, 2, 10, QLatin1Char('0'))] = i;
        QTest::newRow("wide: the 27 smallest of 30 leaves go")
            << wide << 5 << QStringLiteral("0:*=465 1:m=465 2:f28=28 2:f29=29 2:f30=30") << 27;
        QTest::newRow("a chain goes leaf by leaf")
            << Profile{{QStringLiteral("a;b;c"), 1}, {QStringLiteral("d"), 5}} << 2
            << QStringLiteral("0:*=6 1:d=5") << 3;
        QTest::newRow("equal counts: the later in pre-order goes first")
            << Profile{{QStringLiteral("x"), 1}, {QStringLiteral("y"), 1}, {QStringLiteral("z"), 1}}
            << 3 << QStringLiteral("0:*=3 1:x=1 1:y=1") << 1;
        QTest::newRow("under the cap: nothing goes")
            << Profile{{QStringLiteral("a;b"), 1}} << 3 << QStringLiteral("0:*=1 1:a=1 2:b=1") << 0;
        QTest::newRow("a cap below one keeps the root")
            << Profile{{QStringLiteral("a"), 1}} << 0 << QStringLiteral("0:*=1") << 1;
    }
    void capDropsSmallestLeaves()
    {
        QFETCH(Profile, profile);
        QFETCH(int, maxNodes);
        QFETCH(QString, tree);
        QFETCH(int, dropped);
        const FlameGraphLayout g(profile, {}, maxNodes);
        QCOMPARE(treeText(g), tree);
        QCOMPARE(g.droppedNodes(), dropped);
        // Own time is the profile's, dropped leaves or not.
        QCOMPARE(g.hottest(1).constFirst().selfCount,
                 FlameGraphLayout(profile).hottest(1).constFirst().selfCount);
    }

    void defaultCap()
    {
        Profile p;
        for (int i = 0; i < 25'000; ++i)
            p[QStringLiteral("main;leaf%1").arg(i)] = 1 + i % 7;
        const FlameGraphLayout g(p);
        QCOMPARE(g.size(), FlameGraphLayout::kMaxNodes);
        QCOMPARE(g.droppedNodes(), 25'002 - FlameGraphLayout::kMaxNodes);
        QCOMPARE(g.node(1).count, g.total()); // "main" keeps every sample
        for (int i = 2; i < g.size(); ++i)
            QVERIFY(g.node(i).count >= 2); // the 1-sample leaves went first
    }
};

QTEST_GUILESS_MAIN(TestFlameGraphLayout)
#include "tst_flamegraphlayout.moc"
