// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/hangwatchdog.h"

#include "runparts.h"

#include <QtTest>

using namespace rankdeck;

namespace {

constexpr qint64 kSec = 1'000'000;
constexpr qint64 kT0 = 1000 * kSec;

HangWatchdog::Limits limits(qint64 heartbeatSec = 10, qint64 hangSec = 60, bool autoDump = true)
{
    HangWatchdog::Limits l;
    l.heartbeatUs = heartbeatSec * kSec;
    l.hangUs = hangSec * kSec;
    l.autoDumpStacks = autoDump;
    return l;
}

// n running ranks, all heard from and stepping at kT0.
struct Ranks
{
    explicit Ranks(int n)
    {
        for (int r = 0; r < n; ++r) {
            RankStatus s;
            s.rank = r;
            s.state = RankState::Running;
            s.step = 5;
            s.lastHeartbeatUs = kT0;
            s.lastStepUs = kT0;
            statuses << s;
            RankRuntime rt;
            rt.started = rt.pidKnown = true;
            rt.lastStepChangeUs = kT0;
            runtimes << rt;
        }
    }
    HangWatchdog::Findings check(qint64 now, const HangWatchdog::Limits &l = limits())
    {
        return HangWatchdog::check(now, l, statuses, runtimes);
    }
    QList<RankStatus> statuses;
    QList<RankRuntime> runtimes;
};

} // namespace

class TestHangWatchdog : public QObject
{
    Q_OBJECT
private slots:
    void healthyRanksPass();
    void silentAfterHeartbeatTimeout();
    void silentInRendezvous();
    void hungWhenStepsStall();
    void hungLimit_data();
    void hungLimit();
    void programOutputIsProgress_data();
    void programOutputIsProgress();
    void programLimitAdapts_data();
    void programLimitAdapts();
    void ignoredRanks_data();
    void ignoredRanks();
    void noDoubleReporting();
    void hungThenSilent();
    void noDumpTwiceOrWhenOff();
    void anyHung();
    void rendezvousOverdue_data();
    void rendezvousOverdue();
};

void TestHangWatchdog::healthyRanksPass()
{
    Ranks rs(3);
    const HangWatchdog::Findings f = rs.check(kT0 + 9 * kSec);
    QVERIFY(f.silent.isEmpty());
    QVERIFY(f.hung.isEmpty());
    QVERIFY(f.changed.isEmpty());
    QVERIFY(f.dumpBySignal.isEmpty());
    QVERIFY(f.dumpByCommand.isEmpty());
    QVERIFY(!f.anyHung);
    for (const RankStatus &s : rs.statuses) {
        QVERIFY(!s.silent);
        QVERIFY(!s.hung);
        QVERIFY(s.detail.isEmpty());
    }
}

void TestHangWatchdog::silentAfterHeartbeatTimeout()
{
    Ranks rs(3);
    rs.statuses[1].lastHeartbeatUs = kT0 - 3 * kSec;
    // Exactly at the timeout: not yet.
    QVERIFY(rs.check(kT0 + 7 * kSec).silent.isEmpty());
    const HangWatchdog::Findings f = rs.check(kT0 + 9 * kSec);
    QCOMPARE(f.silent, QList<int>{1});
    QCOMPARE(f.hung, QList<int>{1});
    QCOMPARE(f.changed, QList<int>{1});
    // Its control channel may be stuck too: ask by signal.
    QCOMPARE(f.dumpBySignal, QList<int>{1});
    QVERIFY(f.dumpByCommand.isEmpty());
    QVERIFY(f.anyHung);
    QVERIFY(rs.statuses[1].silent);
    QVERIFY(rs.statuses[1].hung);
    QCOMPARE(rs.statuses[1].detail, QStringLiteral("no heartbeat for 12 s"));
    QVERIFY(rs.runtimes[1].dumpRequested);
    QVERIFY(!rs.statuses[0].silent);
    QVERIFY(!rs.statuses[2].silent);
}

void TestHangWatchdog::silentInRendezvous()
{
    Ranks rs(2);
    rs.statuses[0].state = RankState::Rendezvous;
    rs.runtimes[0].lastStepChangeUs = 0; // no step clock yet: it is not judged on steps
    const HangWatchdog::Findings quiet = rs.check(kT0 + 5 * kSec, limits(10, 1));
    QCOMPARE(quiet.hung, QList<int>{1}); // the running rank stalls, the one in rendezvous does not
    QVERIFY(!rs.statuses[0].hung);
    // Silence counts in rendezvous too.
    const HangWatchdog::Findings f = rs.check(kT0 + 11 * kSec, limits(10, 600));
    QCOMPARE(f.silent, (QList<int>{0, 1}));
    QCOMPARE(f.hung, QList<int>{0}); // rank 1 was hung already
    QCOMPARE(f.dumpBySignal, QList<int>{0});
    QVERIFY(rs.statuses[0].silent);
}

void TestHangWatchdog::hungWhenStepsStall()
{
    Ranks rs(2);
    // Rank 0 keeps its heartbeats but its step does not move.
    rs.statuses[0].lastHeartbeatUs = kT0 + 60 * kSec;
    rs.statuses[1].lastHeartbeatUs = kT0 + 60 * kSec;
    rs.runtimes[1].lastStepChangeUs = kT0 + 30 * kSec;
    QVERIFY(rs.check(kT0 + 60 * kSec).hung.isEmpty()); // exactly the limit: not yet
    const HangWatchdog::Findings f = rs.check(kT0 + 61 * kSec);
    QCOMPARE(f.hung, QList<int>{0});
    QCOMPARE(f.changed, QList<int>{0});
    QVERIFY(f.silent.isEmpty());
    // Its control channel works (heartbeats come): ask on it.
    QCOMPARE(f.dumpByCommand, QList<int>{0});
    QVERIFY(f.dumpBySignal.isEmpty());
    QVERIFY(f.anyHung);
    QVERIFY(rs.statuses[0].hung);
    QVERIFY(!rs.statuses[0].silent);
    QCOMPARE(rs.statuses[0].detail, QStringLiteral("no step for 61 s while heartbeats go on"));
    QVERIFY(rs.runtimes[0].dumpRequested);
    QVERIFY(!rs.statuses[1].hung);
}

void TestHangWatchdog::hungLimit_data()
{
    QTest::addColumn<qint64>("hangSec");
    QTest::addColumn<qint64>("slowestStepSec");
    QTest::addColumn<qint64>("stalledSec");
    QTest::addColumn<bool>("hung");
    QTest::newRow("hang timeout, no slow steps") << qint64(60) << qint64(0) << qint64(61) << true;
    QTest::newRow("under the hang timeout") << qint64(60) << qint64(0) << qint64(59) << false;
    QTest::newRow("3x slowest step is longer: under it")
        << qint64(60) << qint64(30) << qint64(89) << false;
    QTest::newRow("3x slowest step is longer: past it")
        << qint64(60) << qint64(30) << qint64(91) << true;
    QTest::newRow("hang timeout is longer than 3x")
        << qint64(60) << qint64(10) << qint64(45) << false;
    QTest::newRow("hang timeout is longer, past it")
        << qint64(60) << qint64(10) << qint64(61) << true;
}

void TestHangWatchdog::hungLimit()
{
    QFETCH(qint64, hangSec);
    QFETCH(qint64, slowestStepSec);
    QFETCH(qint64, stalledSec);
    QFETCH(bool, hung);
    Ranks rs(1);
    rs.runtimes[0].maxStepIntervalUs = slowestStepSec * kSec;
    const qint64 now = kT0 + stalledSec * kSec;
    rs.statuses[0].lastHeartbeatUs = now; // heartbeats go on
    const HangWatchdog::Findings f = rs.check(now, limits(10, hangSec));
    QCOMPARE(f.hung.contains(0), hung);
    QCOMPARE(rs.statuses[0].hung, hung);
    QCOMPARE(f.anyHung, hung);
}

void TestHangWatchdog::programOutputIsProgress_data()
{
    QTest::addColumn<qint64>("lastOutputSec"); // after kT0; the step last moved at kT0
    QTest::addColumn<qint64>("nowSec");
    QTest::addColumn<bool>("hung");
    // Hang timeout 60 s: a program that printed 30 s ago is alive though its step is 61 s old.
    QTest::newRow("printed recently") << qint64(30) << qint64(61) << false;
    QTest::newRow("quiet for exactly the limit") << qint64(30) << qint64(90) << false;
    QTest::newRow("quiet past the limit") << qint64(30) << qint64(91) << true;
    QTest::newRow("never printed, step stalled") << qint64(-1) << qint64(61) << true;
}

void TestHangWatchdog::programOutputIsProgress()
{
    QFETCH(qint64, lastOutputSec);
    QFETCH(qint64, nowSec);
    QFETCH(bool, hung);
    Ranks rs(1);
    rs.statuses[0].step = -1; // a program that reports no steps
    rs.statuses[0].lastHeartbeatUs = kT0 + nowSec * kSec;
    if (lastOutputSec >= 0)
        rs.runtimes[0].lastActivityUs = kT0 + lastOutputSec * kSec;
    HangWatchdog::Limits l = limits();
    l.outputIsProgress = true;
    const HangWatchdog::Findings f = rs.check(kT0 + nowSec * kSec, l);
    QCOMPARE(f.hung.contains(0), hung);
    QCOMPARE(rs.statuses[0].hung, hung);
    if (hung) {
        QVERIFY2(rs.statuses[0].detail.startsWith(QStringLiteral("no output and no new metric")),
                 qPrintable(rs.statuses[0].detail));
        QCOMPARE(f.dumpByCommand, QList<int>{0});
    }
    // The built-in worker is judged by its steps alone: its output is no progress.
    Ranks worker(1);
    worker.statuses[0].lastHeartbeatUs = kT0 + nowSec * kSec;
    worker.runtimes[0].lastActivityUs = kT0 + nowSec * kSec;
    QCOMPARE(worker.check(kT0 + nowSec * kSec).hung.contains(0), nowSec > 60);
}

void TestHangWatchdog::programLimitAdapts_data()
{
    // Hang timeout 10 s. The step never moved (kT0); times in s after kT0.
    QTest::addColumn<qint64>("startupSec");    // Limits::startupUs
    QTest::addColumn<qint64>("longestGapSec"); // longest quiet gap between two lines so far
    QTest::addColumn<qint64>("lastOutputSec"); // -1: nothing printed yet
    QTest::addColumn<qint64>("nowSec");
    QTest::addColumn<bool>("hung");
    QTest::newRow("starting up, inside the grace")
        << qint64(120) << qint64(0) << qint64(-1) << qint64(100) << false;
    QTest::newRow("starting up, past the grace")
        << qint64(120) << qint64(0) << qint64(-1) << qint64(121) << true;
    QTest::newRow("no grace (the user's --hang-timeout)")
        << qint64(0) << qint64(0) << qint64(-1) << qint64(11) << true;
    QTest::newRow("grace ends with the first line")
        << qint64(120) << qint64(0) << qint64(50) << qint64(61) << true;
    QTest::newRow("one line per 20 s epoch: quiet 50 s is no hang")
        << qint64(120) << qint64(20) << qint64(50) << qint64(100) << false;
    QTest::newRow("one line per 20 s epoch: quiet past 60 s is")
        << qint64(120) << qint64(20) << qint64(50) << qint64(111) << true;
    QTest::newRow("short gaps: the hang timeout holds")
        << qint64(120) << qint64(2) << qint64(50) << qint64(61) << true;
}

void TestHangWatchdog::programLimitAdapts()
{
    QFETCH(qint64, startupSec);
    QFETCH(qint64, longestGapSec);
    QFETCH(qint64, lastOutputSec);
    QFETCH(qint64, nowSec);
    QFETCH(bool, hung);
    Ranks rs(1);
    rs.statuses[0].step = -1;
    rs.statuses[0].lastHeartbeatUs = kT0 + nowSec * kSec;
    if (lastOutputSec >= 0)
        rs.runtimes[0].lastActivityUs = kT0 + lastOutputSec * kSec;
    rs.runtimes[0].maxActivityIntervalUs = longestGapSec * kSec;
    HangWatchdog::Limits l = limits(10, 10);
    l.outputIsProgress = true;
    l.startupUs = startupSec * kSec;
    const HangWatchdog::Findings f = rs.check(kT0 + nowSec * kSec, l);
    QCOMPARE(f.hung.contains(0), hung);
    // The built-in worker gets neither: it reports steps from its first one on.
    Ranks worker(1);
    worker.statuses[0].lastHeartbeatUs = kT0 + nowSec * kSec;
    worker.runtimes[0].maxActivityIntervalUs = longestGapSec * kSec;
    HangWatchdog::Limits w = limits(10, 10);
    w.startupUs = startupSec * kSec;
    QCOMPARE(worker.check(kT0 + nowSec * kSec, w).hung.contains(0), nowSec > 10);
}

void TestHangWatchdog::ignoredRanks_data()
{
    QTest::addColumn<RankState>("state");
    QTest::addColumn<bool>("started");
    QTest::addColumn<bool>("exited");
    QTest::addColumn<bool>("launcherStopped");
    QTest::newRow("stopped by the launcher") << RankState::Running << true << false << true;
    QTest::newRow("exited") << RankState::Running << true << true << false;
    QTest::newRow("not started") << RankState::Running << false << false << false;
    QTest::newRow("still starting") << RankState::Starting << true << false << false;
    QTest::newRow("pending") << RankState::Pending << false << false << false;
    QTest::newRow("finished") << RankState::Finished << true << false << false;
    QTest::newRow("failed") << RankState::Failed << true << false << false;
    QTest::newRow("lost") << RankState::Lost << true << false << false;
}

void TestHangWatchdog::ignoredRanks()
{
    QFETCH(RankState, state);
    QFETCH(bool, started);
    QFETCH(bool, exited);
    QFETCH(bool, launcherStopped);
    Ranks rs(2);
    rs.statuses[1].state = state;
    rs.runtimes[1].started = started;
    rs.runtimes[1].exited = exited;
    rs.runtimes[1].launcherStopped = launcherStopped;
    // Both ranks silent and stalled for long.
    const HangWatchdog::Findings f = rs.check(kT0 + 3600 * kSec);
    QCOMPARE(f.silent, QList<int>{0}); // the control rank shows the check did run
    QVERIFY(!f.hung.contains(1));
    QVERIFY(!f.changed.contains(1));
    QVERIFY(!f.dumpBySignal.contains(1));
    QVERIFY(!f.dumpByCommand.contains(1));
    QVERIFY(!rs.statuses[1].silent);
    QVERIFY(!rs.statuses[1].hung);
    QVERIFY(rs.statuses[1].detail.isEmpty());
    QVERIFY(!rs.runtimes[1].dumpRequested);
}

void TestHangWatchdog::noDoubleReporting()
{
    Ranks rs(2);
    rs.statuses[1].lastHeartbeatUs = kT0 + 100 * kSec;
    const HangWatchdog::Findings first = rs.check(kT0 + 100 * kSec);
    QCOMPARE(first.silent, QList<int>{0});
    QCOMPARE(first.hung, (QList<int>{0, 1}));
    QCOMPARE(first.changed, (QList<int>{0, 1}));
    const QString detail0 = rs.statuses[0].detail;
    const QString detail1 = rs.statuses[1].detail;

    rs.statuses[1].lastHeartbeatUs = kT0 + 200 * kSec;
    const HangWatchdog::Findings again = rs.check(kT0 + 200 * kSec);
    QVERIFY(again.silent.isEmpty());
    QVERIFY(again.hung.isEmpty());
    QVERIFY(again.changed.isEmpty());
    QVERIFY(again.dumpBySignal.isEmpty());
    QVERIFY(again.dumpByCommand.isEmpty());
    QVERIFY(again.anyHung); // still hung, only not news
    QCOMPARE(rs.statuses[0].detail, detail0);
    QCOMPARE(rs.statuses[1].detail, detail1);
}

void TestHangWatchdog::hungThenSilent()
{
    Ranks rs(1);
    rs.statuses[0].lastHeartbeatUs = kT0 + 61 * kSec;
    QCOMPARE(rs.check(kT0 + 61 * kSec).hung, QList<int>{0});
    QVERIFY(rs.runtimes[0].dumpRequested);
    // Then its heartbeats stop too: silent is news, the hang is not, nor a second dump.
    const HangWatchdog::Findings f = rs.check(kT0 + 72 * kSec);
    QCOMPARE(f.silent, QList<int>{0});
    QCOMPARE(f.changed, QList<int>{0});
    QVERIFY(f.hung.isEmpty());
    QVERIFY(f.dumpBySignal.isEmpty());
    QCOMPARE(rs.statuses[0].detail, QStringLiteral("no heartbeat for 11 s"));
}

void TestHangWatchdog::noDumpTwiceOrWhenOff()
{
    Ranks rs(2);
    rs.runtimes[0].dumpRequested = true; // asked already (a user's request, an earlier hang)
    rs.statuses[1].lastHeartbeatUs = kT0 + 61 * kSec;
    rs.statuses[0].lastHeartbeatUs = kT0 + 61 * kSec;
    const HangWatchdog::Findings f = rs.check(kT0 + 61 * kSec);
    QCOMPARE(f.hung, (QList<int>{0, 1}));
    QCOMPARE(f.dumpByCommand, QList<int>{1});

    Ranks off(2);
    off.statuses[1].lastHeartbeatUs = kT0 + 61 * kSec;
    const HangWatchdog::Findings g = off.check(kT0 + 61 * kSec, limits(10, 60, false));
    QCOMPARE(g.hung, (QList<int>{0, 1}));
    QVERIFY(g.dumpBySignal.isEmpty());
    QVERIFY(g.dumpByCommand.isEmpty());
    QVERIFY(!off.runtimes[0].dumpRequested);
    QVERIFY(!off.runtimes[1].dumpRequested);
}

void TestHangWatchdog::anyHung()
{
    Ranks rs(3);
    QVERIFY(!rs.check(kT0).anyHung);
    // A hung rank that has ended does not keep the run hung.
    rs.statuses[2].hung = true;
    rs.statuses[2].state = RankState::Failed;
    QVERIFY(!rs.check(kT0).anyHung);
    // One still running does, even when the watchdog does not judge it any more.
    rs.statuses[1].hung = true;
    rs.runtimes[1].launcherStopped = true;
    QVERIFY(rs.check(kT0).anyHung);
}

void TestHangWatchdog::rendezvousOverdue_data()
{
    QTest::addColumn<qint64>("elapsedUs");
    QTest::addColumn<int>("timeoutSec");
    QTest::addColumn<bool>("overdue");
    QTest::newRow("early") << qint64(5 * kSec) << 60 << false;
    QTest::newRow("at the timeout") << qint64(60 * kSec) << 60 << false;
    QTest::newRow("just past") << qint64(60 * kSec + 1) << 60 << true;
    QTest::newRow("long past") << qint64(600 * kSec) << 60 << true;
    QTest::newRow("large timeout, no overflow") << qint64(3000 * kSec) << 3'000'000 << false;
}

void TestHangWatchdog::rendezvousOverdue()
{
    QFETCH(qint64, elapsedUs);
    QFETCH(int, timeoutSec);
    QFETCH(bool, overdue);
    QCOMPARE(HangWatchdog::rendezvousOverdue(kT0 + elapsedUs, kT0, timeoutSec), overdue);
}

QTEST_GUILESS_MAIN(TestHangWatchdog)
#include "tst_hangwatchdog.moc"
