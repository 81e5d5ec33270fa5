// SPDX-License-Identifier: GPL-3.0-or-later
//
// HistoryFold: what a bounded series keeps of its past. Every spike, dip and non-finite value
// survives, groups never cross a restart, folding twice equals folding once at the larger span,
// and the result fits the budget.
#include "store/historyfold.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

using namespace rankdeck;

namespace {

struct Points
{
    std::vector<qint64> steps;
    std::vector<double> values;
    std::vector<size_t> segmentStarts{0};

    HistoryFold::Series view() const
    {
        return {[this](size_t i) { return steps[i]; },
                {[this](size_t i) { return values[i]; }},
                segmentStarts};
    }
};

// n steps from `first`, noisy values around 1 with one spike and one dip.
Points noisy(qint64 first, size_t n, quint32 seed)
{
    Points p;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(0.9, 1.1);
    for (size_t i = 0; i < n; ++i) {
        p.steps.push_back(first + qint64(i));
        p.values.push_back(noise(rng));
    }
    return p;
}

} // namespace

class TestHistoryFold : public QObject
{
    Q_OBJECT
private slots:
    void keepsExtremesAndFits_data();
    void keepsExtremesAndFits();
    void foldingTwiceEqualsOnce();
    void groupsStayInTheirSegment();
    void nonFiniteValuesSurvive();
    void moreSegmentsThanTheBudget();
};

void TestHistoryFold::keepsExtremesAndFits_data()
{
    QTest::addColumn<int>("points");
    QTest::addColumn<int>("maxKept");
    QTest::addColumn<int>("spikeAt");
    QTest::addRow("100k into 1024") << 100'000 << 1024 << 71'234;
    QTest::addRow("spike at the first point") << 5'000 << 256 << 0;
    QTest::addRow("spike at the last point") << 5'000 << 256 << 4'999;
    QTest::addRow("already within budget") << 500 << 1024 << 250;
}

void TestHistoryFold::keepsExtremesAndFits()
{
    QFETCH(int, points);
    QFETCH(int, maxKept);
    QFETCH(int, spikeAt);
    Points p = noisy(0, size_t(points), 7);
    p.values[size_t(spikeAt)] = 50.0;                       // a loss spike
    p.values[size_t((spikeAt + points / 2) % points)] = -3; // and a dip
    qint64 span = 1;
    const std::vector<size_t> kept = HistoryFold::fold(p.view(), p.steps.size(), &span, maxKept);
    QVERIFY2(kept.size() <= size_t(maxKept), qPrintable(QString::number(kept.size())));
    QVERIFY(std::is_sorted(kept.begin(), kept.end()));
    QVERIFY(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
    QVERIFY(std::find(kept.begin(), kept.end(), size_t(spikeAt)) != kept.end());
    QVERIFY(std::find(kept.begin(), kept.end(), size_t((spikeAt + points / 2) % points)) !=
            kept.end());
    if (points <= maxKept) {
        QCOMPARE(span, qint64(1));
        QCOMPARE(kept.size(), size_t(points)); // nothing to fold
    } else {
        // Two points a group (its lowest and highest), and no more groups than it takes.
        QVERIFY(span > 1);
        QVERIFY(kept.size() > size_t(maxKept) / 4);
    }
    // Every group of `span` steps is still there: the folded history covers the whole range.
    std::vector<qint64> groups;
    for (size_t i : kept)
        groups.push_back(p.steps[i] / span);
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    QCOMPARE(qint64(groups.size()), (qint64(points) + span - 1) / span);
}

void TestHistoryFold::foldingTwiceEqualsOnce()
{
    const Points p = noisy(3, 20'000, 11);
    std::vector<size_t> all(p.steps.size());
    std::iota(all.begin(), all.end(), size_t(0));
    for (qint64 span : {2, 8, 64}) {
        const std::vector<size_t> once = HistoryFold::foldOnce(p.view(), all, span * 2);
        const std::vector<size_t> half = HistoryFold::foldOnce(p.view(), all, span);
        const std::vector<size_t> twice = HistoryFold::foldOnce(p.view(), half, span * 2);
        QCOMPARE(twice, once);
    }
}

void TestHistoryFold::groupsStayInTheirSegment()
{
    // A restart from step 100 back to step 40: the two segments' groups never merge, however
    // large the span gets, and each keeps its own extremes.
    Points p = noisy(0, 100, 3);
    const Points second = noisy(40, 200, 4);
    p.segmentStarts.push_back(p.steps.size());
    p.steps.insert(p.steps.end(), second.steps.begin(), second.steps.end());
    p.values.insert(p.values.end(), second.values.begin(), second.values.end());
    qint64 span = 1;
    const std::vector<size_t> kept = HistoryFold::fold(p.view(), p.steps.size(), &span, 4);
    // At a span that holds each segment whole: two points a segment.
    QCOMPARE(kept.size(), size_t(4));
    QVERIFY(kept[1] < 100 && kept[2] >= 100);
    const auto extremes = [&](size_t from, size_t to) {
        const auto [lo, hi] = std::minmax_element(p.values.begin() + qsizetype(from),
                                                  p.values.begin() + qsizetype(to));
        return std::vector<size_t>{size_t(std::min(lo, hi) - p.values.begin()),
                                   size_t(std::max(lo, hi) - p.values.begin())};
    };
    std::vector<size_t> expected = extremes(0, 100);
    const std::vector<size_t> secondExtremes = extremes(100, p.values.size());
    expected.insert(expected.end(), secondExtremes.begin(), secondExtremes.end());
    QCOMPARE(kept, expected);
}

void TestHistoryFold::nonFiniteValuesSurvive()
{
    Points p = noisy(0, 4'096, 5);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    p.values[1000] = nan; // a diverged loss is marked on the plot, so it must not fold away
    p.values[1001] = nan;
    p.values[3000] = inf;
    p.values[3500] = -inf;
    qint64 span = 1;
    const std::vector<size_t> kept = HistoryFold::fold(p.view(), p.steps.size(), &span, 64);
    QVERIFY(kept.size() <= 64);
    for (size_t i : {size_t(1000), size_t(3000), size_t(3500)})
        QVERIFY2(std::find(kept.begin(), kept.end(), i) != kept.end(),
                 qPrintable(QString::number(i)));
    // The first NaN of its group stands for both.
    QVERIFY(std::find(kept.begin(), kept.end(), size_t(1001)) == kept.end());
}

void TestHistoryFold::moreSegmentsThanTheBudget()
{
    // A program restarted 50 times keeps a point per segment at least: the loop stops when
    // doubling merges nothing more instead of running forever.
    Points p;
    p.segmentStarts.clear();
    for (int s = 0; s < 50; ++s) {
        p.segmentStarts.push_back(p.steps.size());
        for (int i = 0; i < 10; ++i) {
            p.steps.push_back(i);
            p.values.push_back(double(s * 10 + i));
        }
    }
    qint64 span = 1;
    const std::vector<size_t> kept = HistoryFold::fold(p.view(), p.steps.size(), &span, 8);
    QCOMPARE(kept.size(), size_t(100)); // the first and last point of each segment
}

QTEST_GUILESS_MAIN(TestHistoryFold)
#include "tst_historyfold.moc"
