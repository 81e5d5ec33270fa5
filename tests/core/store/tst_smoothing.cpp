// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/smoothing.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace rankdeck;

namespace {
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
constexpr double Inf = std::numeric_limits<double>::infinity();

bool same(double a, double b)
{
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b));
}
} // namespace

class TestSmoothing : public QObject
{
    Q_OBJECT
private slots:
    void byHand_data();
    void byHand();
    void incrementalEqualsBatch();
    void firstValueIsUnbiased();
    void sparseCurvesGetLess_data();
    void sparseCurvesGetLess();
};

// Expected values worked out by hand from TensorBoard's formula:
//   last = last*w + (1-w)*y; n += 1; smoothed = last / (1 - w^n)
void TestSmoothing::byHand_data()
{
    QTest::addColumn<double>("weight");
    QTest::addColumn<QList<double>>("input");
    QTest::addColumn<QList<double>>("expected");

    // w = 0.6: last = 0.4, 1.04, 1.824; 1 - w^n = 0.4, 0.64, 0.784.
    QTest::newRow("w=0.6 ramp") << 0.6 << QList<double>{1, 2, 3}
                                << QList<double>{0.4 / 0.4, 1.04 / 0.64, 1.824 / 0.784};
    // NaN passes through and does not advance n: the 3 is the second accumulated value.
    QTest::newRow("w=0.6 NaN skipped")
        << 0.6 << QList<double>{1, NaN, 3} << QList<double>{1.0, NaN, 1.44 / 0.64};
    QTest::newRow("w=0.6 Inf skipped")
        << 0.6 << QList<double>{1, Inf, 3, -Inf} << QList<double>{1.0, Inf, 1.44 / 0.64, -Inf};
    // w = 0.5: last = 2, 1; 1 - w^n = 0.5, 0.75.
    QTest::newRow("w=0.5 drop") << 0.5 << QList<double>{4, 0} << QList<double>{4.0, 1.0 / 0.75};
    // w = 0.9, a spike: last = 0.1*0, then 0.1*10 = 1; 1 - 0.81 = 0.19.
    QTest::newRow("w=0.9 spike") << 0.9 << QList<double>{0, 10} << QList<double>{0.0, 1.0 / 0.19};
    QTest::newRow("constant stays")
        << 0.99 << QList<double>{5, 5, 5, 5} << QList<double>{5, 5, 5, 5};
    QTest::newRow("weight 0 is identity")
        << 0.0 << QList<double>{3, -1, NaN, 7} << QList<double>{3, -1, NaN, 7};
    QTest::newRow("leading NaN") << 0.6 << QList<double>{NaN, 2} << QList<double>{NaN, 2.0};
    QTest::newRow("empty") << 0.6 << QList<double>{} << QList<double>{};
}

void TestSmoothing::byHand()
{
    QFETCH(double, weight);
    QFETCH(QList<double>, input);
    QFETCH(QList<double>, expected);
    const QList<double> got = Smoothing::smooth(input, weight);
    QCOMPARE(got.size(), expected.size());
    for (int i = 0; i < got.size(); ++i) {
        if (!same(got[i], expected[i]))
            QFAIL(qPrintable(QStringLiteral("index %1: got %2, expected %3")
                                 .arg(i)
                                 .arg(got[i], 0, 'g', 17)
                                 .arg(expected[i], 0, 'g', 17)));
    }
}

void TestSmoothing::incrementalEqualsBatch()
{
    QList<double> input;
    for (int i = 0; i < 1000; ++i)
        input.append(i % 97 == 0 ? NaN : std::sin(i * 0.1) + i * 0.001);
    const QList<double> batch = Smoothing::smooth(input, 0.8);
    Smoothing s(0.8);
    for (int i = 0; i < input.size(); ++i)
        QVERIFY(same(s.next(input[i]), batch[i]));
    s.reset();
    QVERIFY(same(s.next(input[1]), input[1]));
}

void TestSmoothing::firstValueIsUnbiased()
{
    // Without the debias term the first point would be (1-w)*y; TensorBoard shows y itself.
    for (double w : {0.1, 0.6, 0.95, 0.999})
        QVERIFY(same(Smoothing::smooth(QList<double>{7.5, 1.0}, w).first(), 7.5));
}

// The weight a curve of n points is smoothed with for a weight asked for: at most
// n / (n + 30), so that its lag (w / (1 - w) points) stays under 1/30 of its length.
void TestSmoothing::sparseCurvesGetLess_data()
{
    QTest::addColumn<double>("asked");
    QTest::addColumn<qint64>("points");
    QTest::addColumn<double>("used");
    QTest::newRow("0.6, 5 points") << 0.6 << qint64(5) << 5.0 / 35.0;
    QTest::newRow("0.6, 44 points") << 0.6 << qint64(44) << 44.0 / 74.0;
    QTest::newRow("0.6, 45 points: as asked") << 0.6 << qint64(45) << 0.6;
    QTest::newRow("0.6, a million") << 0.6 << qint64(1'000'000) << 0.6;
    QTest::newRow("0.9, 100 points") << 0.9 << qint64(100) << 100.0 / 130.0;
    QTest::newRow("0.9, 270 points") << 0.9 << qint64(270) << 0.9;
    QTest::newRow("0.99, 1000 points") << 0.99 << qint64(1000) << 1000.0 / 1030.0;
    QTest::newRow("0.1, 1 point") << 0.1 << qint64(1) << 1.0 / 31.0;
    QTest::newRow("0.01, 1 point") << 0.01 << qint64(1) << 0.01;
    QTest::newRow("off") << 0.0 << qint64(5) << 0.0;
    QTest::newRow("no points") << 0.6 << qint64(0) << 0.6;
}

void TestSmoothing::sparseCurvesGetLess()
{
    QFETCH(double, asked);
    QFETCH(qint64, points);
    QFETCH(double, used);
    QVERIFY(qFuzzyCompare(1.0 + Smoothing::effectiveWeight(asked, points), 1.0 + used));
    // The lag bound it keeps: w / (1 - w) <= n / 30 whenever less than asked was used.
    const double w = Smoothing::effectiveWeight(asked, points);
    if (w < asked)
        QVERIFY(w / (1 - w) <= double(points) / Smoothing::kSparsePoints + 1e-9);
}

QTEST_GUILESS_MAIN(TestSmoothing)
#include "tst_smoothing.moc"
