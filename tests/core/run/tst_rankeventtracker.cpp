// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankeventtracker.h"

#include "runparts.h"

#include <QtTest>

using namespace rankdeck;
using rankdeck::testing::wireEvent;
namespace wire = rankdeck::wire;

namespace {

constexpr qint64 kTs = 1700000000000000;

WorkerEvent hello(const std::string &host = "node-a", qint64 pid = 4242, qint64 totalSteps = 100)
{
    wire::WireEventWriter w(wire::event::Hello, 0, kTs);
    w.addString(wire::field::Host, host).addInt(wire::field::Pid, pid);
    w.addString(wire::field::Device, "cuda:0").addString(wire::field::Backend, "nccl");
    w.addInt(wire::field::TotalSteps, totalSteps);
    return wireEvent(w);
}

WorkerEvent rendezvous(const std::string &backend = "gloo")
{
    wire::WireEventWriter w(wire::event::Rendezvous, 0, kTs);
    if (!backend.empty())
        w.addString(wire::field::Backend, backend);
    return wireEvent(w);
}

WorkerEvent step(qint64 n, double loss = 0.5, double samplesPerSec = 120.0)
{
    wire::WireEventWriter w(wire::event::Step, 0, kTs);
    w.addInt(wire::field::Step, n)
        .addDouble(wire::field::Loss, loss)
        .addDouble(wire::field::SamplesPerSec, samplesPerSec);
    return wireEvent(w);
}

WorkerEvent heartbeat(qint64 n)
{
    wire::WireEventWriter w(wire::event::Heartbeat, 0, kTs);
    if (n >= 0)
        w.addInt(wire::field::Step, n);
    return wireEvent(w);
}

WorkerEvent finished(qint64 n, double loss)
{
    wire::WireEventWriter w(wire::event::Finished, 0, kTs);
    if (n >= 0)
        w.addInt(wire::field::Step, n);
    if (!qIsNaN(loss))
        w.addDouble(wire::field::Loss, loss);
    return wireEvent(w);
}

WorkerEvent checkpoint()
{
    wire::WireEventWriter w(wire::event::Checkpoint, 0, kTs);
    w.addInt(wire::field::Step, 99).addString(wire::field::Path, "/tmp/ckpt");
    return wireEvent(w);
}

// The events the data rows name by number: 0 hello, 1 rendezvous, 2 step, 3 heartbeat, 4 finished,
// 5 checkpoint.
WorkerEvent sample(int which)
{
    const WorkerEvent events[] = {hello(),      rendezvous(),     step(1),
                                  heartbeat(1), finished(1, 0.1), checkpoint()};
    return events[which];
}

} // namespace

class TestRankEventTracker : public QObject
{
    Q_OBJECT
private slots:
    void stateTransitions_data();
    void stateTransitions();
    void helloFillsStatus();
    void helloKeepsKnownPidAndHost();
    void rendezvousStartsStepClock();
    void stepUpdatesProgress();
    void maxStepInterval();
    void repeatedStepKeepsClock();
    void silentRankSpeaksAgain_data();
    void silentRankSpeaksAgain();
    void hungRankMakesAStep();
    void heartbeatStepOnlyForward_data();
    void heartbeatStepOnlyForward();
    void finishedTakesFinalStepAndLoss_data();
    void finishedTakesFinalStepAndLoss();
    void otherEventsOnlyShowLife();
};

void TestRankEventTracker::stateTransitions_data()
{
    QTest::addColumn<int>("event"); // sample()
    QTest::addColumn<RankState>("from");
    QTest::addColumn<bool>("moves");
    QTest::addColumn<RankState>("to");

    QTest::newRow("hello: starting -> rendezvous")
        << 0 << RankState::Starting << true << RankState::Rendezvous;
    QTest::newRow("hello: running stays") << 0 << RankState::Running << false << RankState::Running;
    QTest::newRow("hello: rendezvous stays")
        << 0 << RankState::Rendezvous << false << RankState::Rendezvous;
    QTest::newRow("rendezvous: starting -> running")
        << 1 << RankState::Starting << true << RankState::Running;
    QTest::newRow("rendezvous: rendezvous -> running")
        << 1 << RankState::Rendezvous << true << RankState::Running;
    QTest::newRow("rendezvous: running stays")
        << 1 << RankState::Running << false << RankState::Running;
    QTest::newRow("rendezvous: stopped stays")
        << 1 << RankState::Stopped << false << RankState::Stopped;
    QTest::newRow("step: starting -> running")
        << 2 << RankState::Starting << true << RankState::Running;
    QTest::newRow("step: rendezvous -> running")
        << 2 << RankState::Rendezvous << true << RankState::Running;
    QTest::newRow("step: running stays") << 2 << RankState::Running << false << RankState::Running;
    QTest::newRow("step: failed stays") << 2 << RankState::Failed << false << RankState::Failed;
    QTest::newRow("heartbeat: starting stays")
        << 3 << RankState::Starting << false << RankState::Starting;
    QTest::newRow("finished: running stays")
        << 4 << RankState::Running << false << RankState::Running;
}

void TestRankEventTracker::stateTransitions()
{
    QFETCH(int, event);
    QFETCH(RankState, from);
    QFETCH(bool, moves);
    QFETCH(RankState, to);

    const WorkerEvent e = sample(event);
    QVERIFY(e.isValid());
    RankStatus s;
    s.state = from;
    RankRuntime rt;
    const RankEventTracker::Result r = RankEventTracker::apply(e, 1000, s, rt);
    QCOMPARE(r.newState.has_value(), moves);
    if (moves)
        QCOMPARE(*r.newState, to);
    // The tracker says where the rank moves; applying it is the controller's.
    QCOMPARE(s.state, from);
    QCOMPARE(r.stepChanged, event == 2);
}

void TestRankEventTracker::helloFillsStatus()
{
    RankStatus s;
    s.state = RankState::Starting;
    s.host = QStringLiteral("profile-node");
    RankRuntime rt;
    RankEventTracker::apply(hello("gpu-7", 777, 250), 5000, s, rt);
    QCOMPARE(s.host, QStringLiteral("gpu-7"));
    QCOMPARE(s.pid, qint64(777));
    QCOMPARE(s.device, QStringLiteral("cuda:0"));
    QCOMPARE(s.backend, QStringLiteral("nccl"));
    QCOMPARE(s.totalSteps, qint64(250));
    QCOMPARE(s.lastHeartbeatUs, qint64(5000));
}

void TestRankEventTracker::helloKeepsKnownPidAndHost()
{
    RankStatus s;
    s.host = QStringLiteral("profile-node");
    s.pid = 11; // the transport's rankStarted came first
    s.totalSteps = 40;
    RankRuntime rt;
    RankEventTracker::apply(hello("", 777, 0), 5000, s, rt);
    QCOMPARE(s.host, QStringLiteral("profile-node"));
    QCOMPARE(s.pid, qint64(11));
    QCOMPARE(s.totalSteps, qint64(40));
}

void TestRankEventTracker::rendezvousStartsStepClock()
{
    RankStatus s;
    s.state = RankState::Rendezvous;
    s.backend = QStringLiteral("nccl");
    RankRuntime rt;
    RankEventTracker::apply(rendezvous(""), 7000, s, rt);
    QCOMPARE(s.backend, QStringLiteral("nccl")); // an empty backend does not erase it
    QCOMPARE(rt.lastStepChangeUs, qint64(7000));
    RankEventTracker::apply(rendezvous("gloo"), 8000, s, rt);
    QCOMPARE(s.backend, QStringLiteral("gloo"));
    QCOMPARE(rt.lastStepChangeUs, qint64(8000));
}

void TestRankEventTracker::stepUpdatesProgress()
{
    RankStatus s;
    s.state = RankState::Running;
    RankRuntime rt;
    const RankEventTracker::Result r = RankEventTracker::apply(step(3, 0.125, 512.5), 9000, s, rt);
    QVERIFY(r.stepChanged);
    QVERIFY(!r.progressResumed);
    QVERIFY(!r.heartbeatsResumed);
    QCOMPARE(s.step, qint64(3));
    QCOMPARE(s.loss, 0.125);
    QCOMPARE(s.samplesPerSec, 512.5);
    QCOMPARE(s.lastStepUs, qint64(9000));
    QCOMPARE(s.lastHeartbeatUs, qint64(9000));
    QCOMPARE(rt.lastStepChangeUs, qint64(9000));
    // The first step only starts the clock: the time before it was rendezvous, not a step.
    QCOMPARE(rt.maxStepIntervalUs, qint64(0));
}

void TestRankEventTracker::maxStepInterval()
{
    RankStatus s;
    s.state = RankState::Running;
    RankRuntime rt;
    RankEventTracker::apply(rendezvous(), 0, s, rt);
    RankEventTracker::apply(step(1), 10'000'000, s, rt); // first step: not counted
    QCOMPARE(rt.maxStepIntervalUs, qint64(0));
    RankEventTracker::apply(step(2), 10'300'000, s, rt);
    QCOMPARE(rt.maxStepIntervalUs, qint64(300'000));
    RankEventTracker::apply(step(3), 11'300'000, s, rt);
    QCOMPARE(rt.maxStepIntervalUs, qint64(1'000'000));
    RankEventTracker::apply(step(4), 11'400'000, s, rt); // faster: the slowest stays
    QCOMPARE(rt.maxStepIntervalUs, qint64(1'000'000));
    QCOMPARE(rt.lastStepChangeUs, qint64(11'400'000));
}

void TestRankEventTracker::repeatedStepKeepsClock()
{
    RankStatus s;
    s.state = RankState::Running;
    RankRuntime rt;
    RankEventTracker::apply(step(5), 1'000, s, rt);
    RankEventTracker::apply(step(5, 0.25), 9'000'000, s, rt);
    // The same step again is no progress: the watchdog's clock must not restart.
    QCOMPARE(rt.lastStepChangeUs, qint64(1'000));
    QCOMPARE(rt.maxStepIntervalUs, qint64(0));
    QCOMPARE(s.lastStepUs, qint64(9'000'000));
    QCOMPARE(s.loss, 0.25);
}

void TestRankEventTracker::silentRankSpeaksAgain_data()
{
    QTest::addColumn<int>("event"); // sample(): any event ends silence
    QTest::newRow("heartbeat") << 3;
    QTest::newRow("step") << 2;
    QTest::newRow("hello") << 0;
    QTest::newRow("checkpoint") << 5;
}

void TestRankEventTracker::silentRankSpeaksAgain()
{
    QFETCH(int, event);
    const WorkerEvent e = sample(event);
    RankStatus s;
    s.state = RankState::Running;
    s.silent = true;
    s.lastHeartbeatUs = 10;
    RankRuntime rt;
    RankEventTracker::Result r = RankEventTracker::apply(e, 500, s, rt);
    QVERIFY(r.heartbeatsResumed);
    QVERIFY(!s.silent);
    QCOMPARE(s.lastHeartbeatUs, qint64(500));
    // Only once.
    r = RankEventTracker::apply(e, 600, s, rt);
    QVERIFY(!r.heartbeatsResumed);
}

void TestRankEventTracker::hungRankMakesAStep()
{
    RankStatus s;
    s.state = RankState::Running;
    s.step = 7;
    s.hung = true;
    s.detail = QStringLiteral("no step for 60 s while heartbeats go on");
    RankRuntime rt;
    rt.dumpRequested = true;
    rt.lastStepChangeUs = 1'000'000;

    // Heartbeats alone are no progress.
    RankEventTracker::Result r = RankEventTracker::apply(heartbeat(7), 2'000'000, s, rt);
    QVERIFY(!r.progressResumed);
    QVERIFY(s.hung);

    r = RankEventTracker::apply(step(8), 61'000'000, s, rt);
    QVERIFY(r.progressResumed);
    QVERIFY(!s.hung);
    QVERIFY(s.detail.isEmpty());
    QVERIFY(!rt.dumpRequested); // a later hang asks for stacks again
    QCOMPARE(rt.maxStepIntervalUs, qint64(60'000'000));

    r = RankEventTracker::apply(step(9), 62'000'000, s, rt);
    QVERIFY(!r.progressResumed);
}

void TestRankEventTracker::heartbeatStepOnlyForward_data()
{
    QTest::addColumn<qint64>("before");
    QTest::addColumn<qint64>("heartbeatStep");
    QTest::addColumn<qint64>("after");
    QTest::newRow("forward") << qint64(4) << qint64(6) << qint64(6);
    QTest::newRow("backward") << qint64(6) << qint64(4) << qint64(6);
    QTest::newRow("same") << qint64(6) << qint64(6) << qint64(6);
    QTest::newRow("no step field") << qint64(6) << qint64(-1) << qint64(6);
    QTest::newRow("first report") << qint64(-1) << qint64(0) << qint64(0);
}

void TestRankEventTracker::heartbeatStepOnlyForward()
{
    QFETCH(qint64, before);
    QFETCH(qint64, heartbeatStep);
    QFETCH(qint64, after);
    RankStatus s;
    s.state = RankState::Running;
    s.step = before;
    RankRuntime rt;
    rt.lastStepChangeUs = 123;
    const RankEventTracker::Result r =
        RankEventTracker::apply(heartbeat(heartbeatStep), 1000, s, rt);
    QCOMPARE(s.step, after);
    QVERIFY(!r.stepChanged);
    QVERIFY(!r.newState);
    // A heartbeat is not a step event: the hang clock is the step event's.
    QCOMPARE(rt.lastStepChangeUs, qint64(123));
    QCOMPARE(s.lastHeartbeatUs, qint64(1000));
}

void TestRankEventTracker::finishedTakesFinalStepAndLoss_data()
{
    QTest::addColumn<qint64>("finalStep");
    QTest::addColumn<double>("finalLoss");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<double>("loss");
    QTest::newRow("both") << qint64(100) << 0.01 << qint64(100) << 0.01;
    QTest::newRow("no loss") << qint64(100) << qQNaN() << qint64(100) << 0.5;
    QTest::newRow("no step") << qint64(-1) << 0.02 << qint64(42) << 0.02;
}

void TestRankEventTracker::finishedTakesFinalStepAndLoss()
{
    QFETCH(qint64, finalStep);
    QFETCH(double, finalLoss);
    QFETCH(qint64, step);
    QFETCH(double, loss);
    RankStatus s;
    s.state = RankState::Running;
    s.step = 42;
    s.loss = 0.5;
    RankRuntime rt;
    const RankEventTracker::Result r =
        RankEventTracker::apply(finished(finalStep, finalLoss), 1000, s, rt);
    QCOMPARE(s.step, step);
    QCOMPARE(s.loss, loss);
    QVERIFY(!r.newState); // Finished comes with the exit, not the event
    QVERIFY(!r.stepChanged);
}

void TestRankEventTracker::otherEventsOnlyShowLife()
{
    RankStatus s;
    s.state = RankState::Running;
    s.step = 3;
    s.loss = 0.75;
    RankRuntime rt;
    const RankStatus before = s;
    const RankEventTracker::Result r = RankEventTracker::apply(checkpoint(), 4242, s, rt);
    QVERIFY(!r.newState);
    QVERIFY(!r.stepChanged);
    QCOMPARE(s.lastHeartbeatUs, qint64(4242));
    QCOMPARE(s.step, before.step);
    QCOMPARE(s.loss, before.loss);
    QCOMPARE(rt.lastStepChangeUs, qint64(0));
}

QTEST_GUILESS_MAIN(TestRankEventTracker)
#include "tst_rankeventtracker.moc"
