// SPDX-License-Identifier: GPL-3.0-or-later
//
// NodeClock and ClockOffsetEstimator: the offset comes from the shortest round trip, is off by
// at most half of it, survives state.json, and reads right; parseNodeTimeUs takes what `date`
// prints on GNU and BusyBox nodes and nothing else.
#include "util/nodeclock.h"

#include <QtTest>

using namespace rankdeck;

class TestNodeClock : public QObject
{
    Q_OBJECT

private slots:
    void shortestRoundTripWins();
    void boundedByHalfTheRoundTrip();
    void unknownUntilMeasured();
    void jsonRoundTrip();
    void describe_data();
    void describe();
    void parseNodeTime_data();
    void parseNodeTime();
};

void TestNodeClock::shortestRoundTripWins()
{
    constexpr qint64 t = 1'700'000'000'000'000;
    ClockOffsetEstimator e;
    // The node is 5 s behind. A slow sample (answer held up on the way back) says −5.004 s;
    // the fast one says −5 s to within its 200 µs.
    e.addSample(t, t - 5'000'000 + 500, t + 9'000);
    e.addSample(t + 20'000, t + 20'000 - 5'000'000 + 100, t + 20'200);
    e.addSample(t + 40'000, t + 40'000 - 5'000'000 + 3'000, t + 46'000);
    QCOMPARE(e.sampleCount(), 3);
    const NodeClock c = e.estimate();
    QCOMPARE(c.rttUs, 200);
    QCOMPARE(c.offsetUs, -5'000'000);
    QCOMPARE(c.measuredUs, t + 20'200);
    QCOMPARE(c.toLauncherTime(t - 5'000'000), t);
    QCOMPARE(c.toLauncherTime(0), 0); // no time stays no time
    // A sample whose answer came before the question is a clock step mid-sample: ignored.
    e.addSample(t + 60'000, t, t + 50'000);
    QCOMPARE(e.sampleCount(), 3);
}

void TestNodeClock::boundedByHalfTheRoundTrip()
{
    // Wherever in the round trip the node read its clock, the error is at most rtt/2.
    constexpr qint64 t = 1'700'000'000'000'000;
    constexpr qint64 offset = 1'234'567;
    for (qint64 at = 0; at <= 10'000; at += 2'500) {
        ClockOffsetEstimator e;
        e.addSample(t, t + at + offset, t + 10'000);
        const NodeClock c = e.estimate();
        QVERIFY2(qAbs(c.offsetUs - offset) <= c.rttUs / 2, qPrintable(QString::number(at)));
    }
}

void TestNodeClock::unknownUntilMeasured()
{
    NodeClock c;
    QVERIFY(!c.isKnown());
    QCOMPARE(c.toLauncherTime(42), 42);
    c.offsetUs = 7; // an offset without a measurement is not applied
    QCOMPARE(c.toLauncherTime(42), 42);
    NodeClock same;
    same.sameClock = true;
    QVERIFY(same.isKnown());
    QCOMPARE(same.toLauncherTime(42), 42);
    QVERIFY(!ClockOffsetEstimator().estimate().isKnown());
}

void TestNodeClock::jsonRoundTrip()
{
    NodeClock c;
    c.offsetUs = -5'001'234;
    c.rttUs = 812;
    c.measuredUs = 1'700'000'000'000'000;
    c.error = QStringLiteral("no answer from date on the node within 10000 ms");
    QCOMPARE(NodeClock::fromJson(c.toJson()), c);
    NodeClock same;
    same.sameClock = true;
    QCOMPARE(NodeClock::fromJson(same.toJson()), same);
    QCOMPARE(NodeClock::fromJson({}), NodeClock());
}

void TestNodeClock::describe_data()
{
    QTest::addColumn<qint64>("offsetUs");
    QTest::addColumn<qint64>("rttUs");
    QTest::addColumn<bool>("same");
    QTest::addColumn<QString>("text");
    QTest::newRow("behind") << qint64(-5'001'234) << qint64(800) << false
                            << QStringLiteral("\u22125.001 s ±0.4 ms");
    QTest::newRow("ahead") << qint64(250'000) << qint64(100'000) << false
                           << QStringLiteral("+0.250 s ±50.0 ms");
    QTest::newRow("same") << qint64(0) << qint64(-1) << true
                          << QStringLiteral("+0.000 s (the launcher's clock)");
}

void TestNodeClock::describe()
{
    QFETCH(qint64, offsetUs);
    QFETCH(qint64, rttUs);
    QFETCH(bool, same);
    QFETCH(QString, text);
    NodeClock c;
    c.offsetUs = offsetUs;
    c.rttUs = rttUs;
    c.measuredUs = same ? 0 : 1;
    c.sameClock = same;
    QCOMPARE(c.describe(), text);
    NodeClock failed;
    failed.error = QStringLiteral("not connected");
    QCOMPARE(failed.describe(), QStringLiteral("not measured (not connected)"));
}

void TestNodeClock::parseNodeTime_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<qint64>("us");
    QTest::newRow("gnu") << QByteArray("1796129003732168123\n") << qint64(1796129003732168);
    QTest::newRow("busybox N") << QByteArray("1796129003N") << qint64(1796129003500000);
    QTest::newRow("busybox %N") << QByteArray("1796129003%N") << qint64(1796129003500000);
    QTest::newRow("seconds") << QByteArray("1796129003") << qint64(1796129003500000);
    QTest::newRow("empty") << QByteArray() << qint64(0);
    QTest::newRow("words") << QByteArray("date: invalid option") << qint64(0);
    QTest::newRow("trailing junk") << QByteArray("1796129003732168123x") << qint64(0);
    QTest::newRow("overflow") << QByteArray("99999999999999999999999") << qint64(0);
}

void TestNodeClock::parseNodeTime()
{
    QFETCH(QByteArray, answer);
    QFETCH(qint64, us);
    QCOMPARE(parseNodeTimeUs(answer), us);
}

QTEST_GUILESS_MAIN(TestNodeClock)
#include "tst_nodeclock.moc"
