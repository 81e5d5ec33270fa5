// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for one class, case by case.
#include "run/failurepolicy.h"

#include "diagnosis/failureverdict.h"
#include "diagnosis/pythonfailure.h"
#include "runparts.h"
#include "stream/pythontraceback.h"
#include "util/signalname.h"

#include <QtTest>

#include <csignal>

using namespace rankdeck;
using rankdeck::testing::wireEvent;
namespace wire = rankdeck::wire;
using Action = FailurePolicy::ExitVerdict::Action;

Q_DECLARE_METATYPE(rankdeck::FailurePolicy::ExitVerdict::Action)

namespace {

constexpr qint64 kT0 = 1700000000000000;

QList<RankStatus> ranks(int n)
{
    QList<RankStatus> out;
    for (int r = 0; r < n; ++r) {
        RankStatus s;
        s.rank = r;
        s.localRank = r % 2;
        s.host = QStringLiteral("node-%1").arg(QChar(u'a' + r / 2));
        s.state = RankState::Running;
        out << s;
    }
    return out;
}

RankFailure failure(int rank, qint64 timeUs, const QString &kind, const QString &message = {},
                    int exitCode = 0)
{
    RankFailure f;
    f.rank = rank;
    f.host = QStringLiteral("node-%1").arg(rank);
    f.timeUs = timeUs;
    f.kind = kind;
    f.message = message;
    f.exitCode = exitCode;
    return f;
}

const RankFailure *entryOf(const FailureReport &report, int rank)
{
    for (const RankFailure &f : report.failures) {
        if (f.rank == rank)
            return &f;
    }
    return nullptr;
}

} // namespace

class TestFailurePolicy : public QObject
{
    Q_OBJECT
private slots:
    void classifyExit_data();
    void classifyExit();
    void consequenceCarriesHungStacks();
    void failureFromErrorEvent();
    void failureFromCrashEvent();
    void failureFromEventWithoutTime();
    void looksLikePeerFailure_data();
    void looksLikePeerFailure();
    void pythonEchoesAreConsequences_data();
    void pythonEchoesAreConsequences();
    void laterTracebackJoinsTheRanksEntry();
    void rootCauseIsEarliestNotLowestRank();
    void skewedClocksAreCorrected_data();
    void skewedClocksAreCorrected();
    void peerEchoesBecomeConsequences_data();
    void peerEchoesBecomeConsequences();
    void crashEventMergedWithLaterExit();
    void recordStartsPolicyOnce();
    void consequenceNeverStartsPolicy();
    void summaryText_data();
    void summaryText();
    void hungRankGetsItsStacks();
    void resetForgetsEverything();
    void restoreTakesEarlierReport();
};

void TestFailurePolicy::classifyExit_data()
{
    QTest::addColumn<bool>("crashed");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<int>("signal");
    QTest::addColumn<QString>("detail");
    QTest::addColumn<bool>("launcherStopped");
    QTest::addColumn<bool>("consequence");
    QTest::addColumn<bool>("ownFailure");
    QTest::addColumn<bool>("bySignalWeSent");
    QTest::addColumn<Action>("action");
    QTest::addColumn<RankState>("state");
    QTest::addColumn<QString>("how");
    QTest::addColumn<QString>("kind");

    const QString none;
    QTest::newRow("clean exit") << false << 0 << 0 << none << false << false << false << false
                                << Action::None << RankState::Finished << "exit code 0" << none;
    QTest::newRow("unnamed signal, not ours")
        << true << 0 << 0 << none << false << false << false << false << Action::NewFailure
        << RankState::Failed << "killed by a signal"
        << "signal";
    QTest::newRow("unnamed signal while we stopped it")
        << true << 0 << 0 << none << true << false << false << true << Action::None
        << RankState::Stopped << "killed by a signal" << none;
    QTest::newRow("exit code 3") << false << 3 << 0 << none << false << false << false << false
                                 << Action::NewFailure << RankState::Failed << "exit code 3"
                                 << "exit";
    QTest::newRow("own SIGSEGV") << true << 0 << SIGSEGV << none << false << false << false << false
                                 << Action::NewFailure << RankState::Failed << "killed by SIGSEGV"
                                 << "signal";
    QTest::newRow("our SIGTERM, stopped by user")
        << true << 0 << SIGTERM << none << true << false << false << true << Action::None
        << RankState::Stopped << "killed by SIGTERM" << none;
    QTest::newRow("our SIGKILL, consequence")
        << true << 0 << SIGKILL << none << true << true << false << true << Action::Consequence
        << RankState::Stopped << "killed by SIGKILL"
        << "consequence";
    QTest::newRow("our SIGTERM as 128+15, consequence")
        << false << 128 + SIGTERM << 0 << none << true << true << false << true
        << Action::Consequence << RankState::Stopped << "exit code 143"
        << "consequence";
    QTest::newRow("our SIGKILL as 128+9, user stop")
        << false << 128 + SIGKILL << 0 << none << true << false << false << true << Action::None
        << RankState::Stopped << "exit code 137" << none;
    QTest::newRow("stopping, clean exit")
        << false << 0 << 0 << none << true << true << false << false << Action::Consequence
        << RankState::Stopped << "exit code 0"
        << "consequence";
    QTest::newRow("stopping, but its own SIGSEGV")
        << true << 0 << SIGSEGV << none << true << true << false << false << Action::NewFailure
        << RankState::Failed << "killed by SIGSEGV"
        << "signal";
    QTest::newRow("stopping, but its own exit code")
        << false << 2 << 0 << none << true << true << false << false << Action::NewFailure
        << RankState::Failed << "exit code 2"
        << "exit";
    QTest::newRow("lost connection")
        << false << -1 << 0 << "connection to node-b lost" << false << false << false << false
        << Action::NewFailure << RankState::Lost << "connection to node-b lost"
        << "lost";
    QTest::newRow("failed to start")
        << false << -1 << 0 << "failed to start: connection lost before exec" << false << false
        << false << false << Action::NewFailure << RankState::Failed
        << "failed to start: connection lost before exec"
        << "exit";
    QTest::newRow("lost, while we stopped it")
        << false << -1 << 0 << "connection lost" << true << true << false << false
        << Action::NewFailure << RankState::Lost << "connection lost"
        << "lost";
    QTest::newRow("own report, then exit code")
        << false << 1 << 0 << none << false << false << true << false << Action::CompleteOwnReport
        << RankState::Failed << "exit code 1" << none;
    QTest::newRow("own report, then SIGABRT")
        << true << 0 << SIGABRT << none << false << false << true << false
        << Action::CompleteOwnReport << RankState::Failed << "killed by SIGABRT" << none;
    QTest::newRow("own report, killed by us")
        << true << 0 << SIGKILL << none << true << false << true << true
        << Action::CompleteOwnReport << RankState::Failed << "killed by SIGKILL" << none;
}

void TestFailurePolicy::classifyExit()
{
    QFETCH(bool, crashed);
    QFETCH(int, exitCode);
    QFETCH(int, signal);
    QFETCH(QString, detail);
    QFETCH(bool, launcherStopped);
    QFETCH(bool, consequence);
    QFETCH(bool, ownFailure);
    QFETCH(bool, bySignalWeSent);
    QFETCH(Action, action);
    QFETCH(RankState, state);
    QFETCH(QString, how);
    QFETCH(QString, kind);

    RankExit exit;
    exit.crashed = crashed;
    exit.exitCode = exitCode;
    exit.signal = signal;
    exit.detail = detail;
    exit.timeUs = kT0 + 5;
    RankStatus s = ranks(3)[2];
    s.endTimeUs = exit.timeUs;
    s.exitCode = crashed ? 0 : exitCode;
    s.signal = crashed ? signal : 0;
    RankRuntime rt;
    rt.started = rt.exited = true;
    rt.launcherStopped = launcherStopped;
    rt.consequence = consequence;
    rt.ownFailure = ownFailure;

    const FailurePolicy::ExitVerdict v =
        FailurePolicy::classifyExit(exit, s, rt, bySignalWeSent, QString());
    QCOMPARE(v.action, action);
    QCOMPARE(v.state, state);
    QCOMPARE(v.how, how);
    if (action == Action::None)
        return;
    QCOMPARE(v.failure.rank, 2);
    if (action == Action::CompleteOwnReport) {
        // Only what the exit adds to the rank's own report.
        QCOMPARE(v.failure.exitCode, crashed ? 0 : exitCode);
        QCOMPARE(v.failure.signal, crashed ? signal : 0);
        QCOMPARE(v.failure.signalName, crashed ? signalName(signal) : QString());
        return;
    }
    QCOMPARE(v.failure.kind, kind);
    QCOMPARE(v.failure.host, s.host);
    QCOMPARE(v.failure.localRank, s.localRank);
    QCOMPARE(v.failure.timeUs, exit.timeUs);
    if (kind == QLatin1String("signal") || kind == QLatin1String("consequence")) {
        QCOMPARE(v.failure.signal, crashed ? signal : 0);
        QCOMPARE(v.failure.signalName, crashed ? signalName(signal) : QString());
    }
    if (kind == QLatin1String("exit") || kind == QLatin1String("consequence"))
        QCOMPARE(v.failure.exitCode, crashed ? 0 : exitCode);
    if (kind == QLatin1String("lost") || (kind == QLatin1String("exit") && exitCode < 0))
        QCOMPARE(v.failure.message, detail);
    if (kind == QLatin1String("consequence")) {
        QVERIFY(v.failure.reason.isEmpty()); // build() names the root cause
        QVERIFY(v.failure.stack.isEmpty());
    }
}

void TestFailurePolicy::consequenceCarriesHungStacks()
{
    RankExit exit;
    exit.crashed = true;
    exit.signal = SIGKILL;
    RankStatus s = ranks(2)[1];
    s.hung = true;
    s.signal = SIGKILL;
    RankRuntime rt;
    rt.launcherStopped = rt.consequence = true;
    const QString stacks =
        QStringLiteral("thread 1 (main):\n#0 0x1 in c10d::ProcessGroupGloo::AsyncWork::wait()");
    const FailurePolicy::ExitVerdict v = FailurePolicy::classifyExit(exit, s, rt, true, stacks);
    QCOMPARE(v.action, Action::Consequence);
    QCOMPARE(v.failure.reason,
             QStringLiteral("hung, then stopped by the launcher (killed by SIGKILL)"));
    QCOMPARE(v.failure.stack, stacks.split(QLatin1Char('\n')));

    // Not hung: no stacks even when some were collected.
    s.hung = false;
    const FailurePolicy::ExitVerdict plain = FailurePolicy::classifyExit(exit, s, rt, true, stacks);
    QVERIFY(plain.failure.stack.isEmpty());
    QVERIFY(plain.failure.reason.isEmpty());
}

void TestFailurePolicy::failureFromErrorEvent()
{
    wire::WireEventWriter w(wire::event::Error, 1, kT0 + 42);
    w.addString(wire::field::Message, "bad batch").addInt(wire::field::ExitCode, 3);
    const WorkerEvent e = wireEvent(w);
    QVERIFY(e.isValid());
    const RankStatus s = ranks(2)[1];
    const RankFailure f = FailurePolicy::failureFromEvent(e, s, kT0 + 99);
    QCOMPARE(f.kind, QStringLiteral("error"));
    QCOMPARE(f.rank, 1);
    QCOMPARE(f.host, s.host);
    QCOMPARE(f.localRank, s.localRank);
    QCOMPARE(f.exitCode, 3);
    QCOMPARE(f.message, QStringLiteral("bad batch"));
    QCOMPARE(f.timeUs, kT0 + 42); // the rank's own clock
}

void TestFailurePolicy::failureFromCrashEvent()
{
    wire::WireEventWriter w(wire::event::Crash, 0, kT0 + 7);
    w.addString(wire::field::Kind, "signal").addInt(wire::field::Signal, SIGSEGV);
    w.addString(wire::field::SignalName, "SIGSEGV").addString(wire::field::Host, "crash-host");
    w.addString(wire::field::Stack,
                "#0 0x1 in f() [rankdeck-worker]\n#1 0x2 in main [rankdeck-worker]");
    const WorkerEvent e = wireEvent(w);
    QVERIFY(e.isValid());
    const RankFailure f = FailurePolicy::failureFromEvent(e, ranks(1)[0], kT0 + 99);
    QCOMPARE(f.kind, QStringLiteral("crash"));
    QCOMPARE(f.signal, SIGSEGV);
    QCOMPARE(f.signalName, QStringLiteral("SIGSEGV"));
    QCOMPARE(f.host, QStringLiteral("crash-host")); // the event's host wins over the status'
    QCOMPARE(f.stack.size(), 2);
    QCOMPARE(f.timeUs, kT0 + 7);
}

void TestFailurePolicy::failureFromEventWithoutTime()
{
    // A crash event whose ts is 0 (a clock that is not set): the launcher's time is used.
    wire::WireEventWriter w(wire::event::Crash, 0, 0);
    w.addString(wire::field::Kind, "exception").addString(wire::field::ExceptionType, "c10::Error");
    const WorkerEvent e = wireEvent(w);
    QVERIFY(e.isValid());
    const RankFailure f = FailurePolicy::failureFromEvent(e, ranks(1)[0], kT0 + 99);
    QCOMPARE(f.kind, QStringLiteral("exception"));
    QCOMPARE(f.exceptionType, QStringLiteral("c10::Error"));
    QCOMPARE(f.timeUs, kT0 + 99);
    QCOMPARE(f.host, QStringLiteral("node-a"));
}

void TestFailurePolicy::looksLikePeerFailure_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("peer");
    QTest::newRow("closed by peer") << "Connection closed by peer" << true;
    QTest::newRow("reset by peer") << "recv: Connection reset by peer" << true;
    QTest::newRow("broken pipe") << "write failed: Broken pipe" << true;
    QTest::newRow("ECONNRESET") << "gloo: ECONNRESET" << true;
    QTest::newRow("collective timeout") << "Timed out waiting 300000ms for recv operation" << true;
    QTest::newRow("NCCL watchdog") << "Watchdog caught collective operation timeout" << true;
    QTest::newRow("store closed") << "TCPStore: store connection closed" << true;
    QTest::newRow("remote process exited")
        << "remote process exited or there was a network error" << true;
    // What torch raises in a survivor, as printed (tests/core/stream/data, torch 2.14.1).
    QTest::newRow("gloo pair: closed by peer (real)")
        << "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] Connection "
           "closed by peer [127.0.0.1]:16582. This is typically caused by a remote worker "
           "crashing. Check the logs of the remote worker before reporting an error. GLHF!"
        << true;
    QTest::newRow("gloo pair: read error")
        << "[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Read error [10.1.0.4]:41512: "
           "No route to host"
        << true;
    QTest::newRow("gloo pair: write")
        << "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] write failed" << true;
    QTest::newRow("DistBackendError")
        << "torch.distributed.DistBackendError: NCCL error in: "
           "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled system error"
        << true;
    QTest::newRow("DistNetworkError (real)")
        << "torch.distributed.DistNetworkError: Broken pipe" << true;
    QTest::newRow("NCCL watchdog (real text)")
        << "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
           "OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600012 "
           "milliseconds before timing out."
        << true;
    QTest::newRow("NCCL communicator aborted (real text)")
        << "Process group watchdog thread terminated with exception: NCCL communicator was "
           "aborted on rank 2. Original reason for failure was: NCCL error"
        << true;
    QTest::newRow("ProcessGroupNCCL abort")
        << "[PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL is aborting its communicators"
        << true;
    QTest::newRow("TCPStore sendBytes (real)")
        << "[c10d] sendBytes failed on SocketImpl(fd=3, addr=[::ffff:127.0.0.1]:45028, "
           "remote=[::ffff:127.0.0.1]:29544): Broken pipe"
        << true;
    QTest::newRow("TCPStore recv reset")
        << "[c10d] recvValue failed on SocketImpl(fd=5): Connection reset by peer" << true;
    QTest::newRow("own error") << "CUDA out of memory" << false;
    QTest::newRow("own OOM (Python)")
        << "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
           "total capacity of 79.10 GiB of which 1.06 GiB is free."
        << false;
    QTest::newRow("own ValueError (real)")
        << "ValueError: invalid literal for int() with base 10: 'bad batch'" << false;
    QTest::newRow("own shape error")
        << "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x64 and 128x10)" << false;
    QTest::newRow("own NCCL usage error")
        << "torch.distributed.DistError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN)"
        << false;
    QTest::newRow("own KeyError") << "KeyError: 'lr'" << false;
    QTest::newRow("bad batch") << "bad batch" << false;
    QTest::newRow("empty") << "" << false;
}

void TestFailurePolicy::looksLikePeerFailure()
{
    QFETCH(QString, text);
    QFETCH(bool, peer);
    QCOMPARE(FailureVerdict::looksLikePeerFailure(text), peer);
}

void TestFailurePolicy::rootCauseIsEarliestNotLowestRank()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(4);
    // The launcher notices rank 0 first, but rank 3 failed 2 ms earlier by its own clock.
    QVERIFY(p.record(failure(0, kT0 + 2000, QStringLiteral("exit"), {}, 1), rs, {}));
    QCOMPARE(p.rootCauseRank(), 0);
    QVERIFY(!p.record(failure(3, kT0, QStringLiteral("error"), QStringLiteral("bad batch"), 3), rs,
                      {}));
    QCOMPARE(p.rootCauseRank(), 3);
    QCOMPARE(p.firstFailedRank(), 0); // the first one seen started the policy
    QVERIFY(rs[3].rootCause);
    QVERIFY(!rs[0].rootCause);
    QCOMPARE(p.report().failures.size(), 2);
    QCOMPARE(p.report().failures.first().rank, 3);
    QVERIFY(p.report().failures.first().rootCause);
    QVERIFY(!p.report().failures.last().rootCause);
}

// Rank 1's node clock is 5 s behind: by its own stamp it failed 4 s before rank 0, on the
// launcher's clock 1 s after. Events of both kinds (error's ts, crash's time of the signal) are
// corrected by the node's offset; an unmeasured node is taken as it says.
void TestFailurePolicy::skewedClocksAreCorrected_data()
{
    QTest::addColumn<bool>("crash");
    QTest::addColumn<bool>("measured");
    QTest::addColumn<int>("rootCause");
    QTest::newRow("error, measured") << false << true << 0;
    QTest::newRow("crash, measured") << true << true << 0;
    QTest::newRow("error, not measured") << false << false << 1;
}

void TestFailurePolicy::skewedClocksAreCorrected()
{
    QFETCH(bool, crash);
    QFETCH(bool, measured);
    QFETCH(int, rootCause);
    const QList<RankStatus> statuses = ranks(2);
    NodeClock same;
    same.sameClock = true;
    NodeClock behind;
    if (measured) {
        behind.offsetUs = -5'000'000;
        behind.rttUs = 400;
        behind.measuredUs = kT0;
    }
    auto eventOf = [&](int rank, qint64 ts) {
        wire::WireEventWriter w(crash ? wire::event::Crash : wire::event::Error, rank, ts);
        if (crash)
            w.addString(wire::field::Kind, "signal").addInt(wire::field::Signal, SIGSEGV);
        else
            w.addString(wire::field::Message, "bad batch").addInt(wire::field::ExitCode, 3);
        return wireEvent(w);
    };
    const RankFailure first =
        FailurePolicy::failureFromEvent(eventOf(0, kT0), statuses[0], kT0 + 99, same);
    const RankFailure second = FailurePolicy::failureFromEvent(
        eventOf(1, kT0 + 1'000'000 - 5'000'000), statuses[1], kT0 + 99, behind);
    QCOMPARE(first.timeUs, kT0);
    QCOMPARE(first.clockOffsetUs, 0);
    QCOMPARE(second.timeUs, measured ? kT0 + 1'000'000 : kT0 - 4'000'000);
    QCOMPARE(second.clockOffsetUs, measured ? -5'000'000 : 0);

    // The launcher hears rank 1 first (its link was faster).
    FailurePolicy p;
    QList<RankStatus> rs = statuses;
    QVERIFY(p.record(second, rs, {}));
    QVERIFY(!p.record(first, rs, {}));
    QCOMPARE(p.rootCauseRank(), rootCause);
    // The report keeps the correction and says so.
    const FailureReport back = FailureReport::fromJson(p.report().toJson());
    QCOMPARE(entryOf(back, 1)->clockOffsetUs, second.clockOffsetUs);
    // Alone, rank 1 is the root cause, and its time says it was corrected, by how much.
    FailurePolicy alone;
    QList<RankStatus> rs2 = statuses;
    QVERIFY(alone.record(second, rs2, {}));
    QCOMPARE(alone.report().toText().contains(QStringLiteral("the node's clock is 5.000 s behind")),
             measured);
}

void TestFailurePolicy::peerEchoesBecomeConsequences_data()
{
    QTest::addColumn<QString>("otherMessage");
    QTest::addColumn<bool>("echoIsConsequence");
    QTest::addColumn<int>("root");
    // Rank 0's error reads like a peer's death and comes first; rank 2 fails later.
    QTest::newRow("other failed on its own") << "CUDA out of memory" << true << 2;
    QTest::newRow("other is an echo too") << "Connection reset by peer" << false << 0;
}

void TestFailurePolicy::peerEchoesBecomeConsequences()
{
    QFETCH(QString, otherMessage);
    QFETCH(bool, echoIsConsequence);
    QFETCH(int, root);
    FailurePolicy p;
    QList<RankStatus> rs = ranks(3);
    QVERIFY(p.record(failure(0, kT0, QStringLiteral("error"),
                             QStringLiteral("gloo: Connection closed by peer"), 1),
                     rs, {}));
    // Alone, the echo is all there is: it stays a failure of its own, and the root cause.
    QCOMPARE(p.rootCauseRank(), 0);
    QCOMPARE(entryOf(p.report(), 0)->kind, QStringLiteral("error"));
    p.record(failure(2, kT0 + 500, QStringLiteral("error"), otherMessage, 1), rs, {});
    QCOMPARE(p.rootCauseRank(), root);
    const RankFailure *echo = entryOf(p.report(), 0);
    QVERIFY(echo);
    QCOMPARE(echo->kind == QLatin1String("consequence"), echoIsConsequence);
    if (echoIsConsequence)
        QCOMPARE(echo->reason,
                 QStringLiteral("a peer failed first (this rank's own error followed)"));
    QVERIFY(p.anyOwnFailure());
}

void TestFailurePolicy::crashEventMergedWithLaterExit()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(2);
    RankFailure crash = failure(1, kT0 + 10, QStringLiteral("exception"), QStringLiteral("boom"));
    crash.exceptionType = QStringLiteral("c10::Error");
    crash.stack = QStringList{QStringLiteral("#0 0x1 in f() [rankdeck-worker]")};
    QVERIFY(p.record(crash, rs, {}));

    // Its exit, classified after its own report, adds the signal.
    RankExit exit;
    exit.crashed = true;
    exit.signal = SIGABRT;
    RankRuntime rt;
    rt.ownFailure = true;
    RankStatus s = rs[1];
    s.signal = SIGABRT;
    const FailurePolicy::ExitVerdict v = FailurePolicy::classifyExit(exit, s, rt, false, {});
    QCOMPARE(v.action, Action::CompleteOwnReport);
    QVERIFY(!p.record(v.failure, rs, {}));

    QCOMPARE(p.report().failures.size(), 1);
    const RankFailure &f = p.report().failures.first();
    QCOMPARE(f.kind, QStringLiteral("exception"));
    QCOMPARE(f.exceptionType, QStringLiteral("c10::Error"));
    QCOMPARE(f.message, QStringLiteral("boom"));
    QCOMPARE(f.signal, SIGABRT);
    QCOMPARE(f.signalName, QStringLiteral("SIGABRT"));
    QCOMPARE(f.timeUs, kT0 + 10);
    QCOMPARE(f.stack.size(), 1);

    // An exit code after an error that had none fills it in; a second one does not overwrite.
    FailurePolicy q;
    QVERIFY(q.record(failure(0, kT0, QStringLiteral("error"), QStringLiteral("x"), 0), rs, {}));
    RankFailure code = failure(0, 0, QString(), {}, 7);
    QVERIFY(!q.record(code, rs, {}));
    code.exitCode = 9;
    QVERIFY(!q.record(code, rs, {}));
    QCOMPARE(q.report().failures.size(), 1);
    QCOMPARE(q.report().failures.first().exitCode, 7);
}

void TestFailurePolicy::recordStartsPolicyOnce()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(3);
    QVERIFY(!p.failureSeen());
    QCOMPARE(p.firstFailedRank(), -1);
    QVERIFY(p.record(failure(1, kT0, QStringLiteral("exit"), {}, 1), rs, {}));
    QVERIFY(p.failureSeen());
    QCOMPARE(p.firstFailedRank(), 1);
    QVERIFY(
        !p.record(failure(1, kT0 + 1, QStringLiteral("exit"), {}, 1), rs, {})); // same rank again
    QVERIFY(!p.record(failure(2, kT0 + 2, QStringLiteral("signal")), rs, {}));  // another rank
    QCOMPARE(p.firstFailedRank(), 1);
    QCOMPARE(p.report().failures.size(), 2);

    // markFailed (a node could not be prepared) counts as the first failure.
    FailurePolicy q;
    q.markFailed();
    QVERIFY(q.failureSeen());
    QVERIFY(!q.record(failure(0, kT0, QStringLiteral("exit"), {}, 1), rs, {}));
}

void TestFailurePolicy::consequenceNeverStartsPolicy()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(3);
    QVERIFY(!p.record(failure(0, kT0, QStringLiteral("consequence")), rs, {}));
    QVERIFY(!p.failureSeen());
    QVERIFY(!p.anyOwnFailure());
    p.addConsequence(failure(1, kT0 + 1, QStringLiteral("consequence")), rs, {});
    QVERIFY(!p.failureSeen());
    QVERIFY(!p.anyOwnFailure());
    // All are consequences: the earliest is named anyway.
    QCOMPARE(p.rootCauseRank(), 0);
    // Then a failure of its own comes: it starts the policy and is the root cause, though later.
    QVERIFY(p.record(failure(2, kT0 + 5, QStringLiteral("exit"), {}, 2), rs, {}));
    QCOMPARE(p.firstFailedRank(), 2);
    QCOMPARE(p.rootCauseRank(), 2);
    QVERIFY(p.anyOwnFailure());
}

void TestFailurePolicy::summaryText_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<int>("signal");
    QTest::addColumn<QString>("signalName");
    QTest::addColumn<QString>("exceptionType");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("summary");
    QTest::newRow("exit") << "exit" << 3 << 0 << ""
                          << ""
                          << "bad batch\nsecond line"
                          << "rank 1 (node-1): exit code 3: bad batch";
    QTest::newRow("error") << "error" << 4 << 0 << ""
                           << ""
                           << ""
                           << "rank 1 (node-1): exit code 4";
    QTest::newRow("crash") << "crash" << 0 << SIGSEGV << "SIGSEGV"
                           << ""
                           << ""
                           << "rank 1 (node-1): SIGSEGV";
    QTest::newRow("crash, unnamed signal") << "crash" << 0 << 11 << ""
                                           << ""
                                           << ""
                                           << "rank 1 (node-1): signal 11";
    QTest::newRow("signal") << "signal" << 0 << SIGKILL << "SIGKILL"
                            << ""
                            << ""
                            << "rank 1 (node-1): SIGKILL";
    QTest::newRow("exception") << "exception" << 0 << 0 << ""
                               << "c10::Error"
                               << "CUDA error"
                               << "rank 1 (node-1): c10::Error: CUDA error";
    QTest::newRow("exception, no type") << "exception" << 0 << 0 << ""
                                        << ""
                                        << ""
                                        << "rank 1 (node-1): exception";
    QTest::newRow("lost") << "lost" << 0 << 0 << ""
                          << ""
                          << "connection lost"
                          << "rank 1 (node-1): lost: connection lost";
}

void TestFailurePolicy::summaryText()
{
    QFETCH(QString, kind);
    QFETCH(int, exitCode);
    QFETCH(int, signal);
    QFETCH(QString, signalName);
    QFETCH(QString, exceptionType);
    QFETCH(QString, message);
    QFETCH(QString, summary);
    FailurePolicy p;
    QList<RankStatus> rs = ranks(2);
    QVERIFY(p.rootCauseSummary().isEmpty());
    RankFailure f = failure(1, kT0, kind, message, exitCode);
    f.signal = signal;
    f.signalName = signalName;
    f.exceptionType = exceptionType;
    p.record(f, rs, {});
    QCOMPARE(p.rootCauseSummary(), summary);
}

void TestFailurePolicy::hungRankGetsItsStacks()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(2);
    rs[1].hung = true;
    const QHash<int, QString> stacks{{0, QStringLiteral("#0 a\n#1 b")},
                                     {1, QStringLiteral("#0 wait\n#1 main")}};
    p.record(failure(0, kT0, QStringLiteral("exit"), {}, 1), rs, stacks);
    p.addConsequence(failure(1, kT0 + 1, QStringLiteral("consequence")), rs, stacks);
    QCOMPARE(entryOf(p.report(), 1)->stack,
             (QStringList{QStringLiteral("#0 wait"), QStringLiteral("#1 main")}));
    QVERIFY(entryOf(p.report(), 0)->stack.isEmpty()); // not hung: its stacks are no failure's
    QCOMPARE(entryOf(p.report(), 1)->reason,
             QStringLiteral("stopped by the launcher after rank 0 failed"));
}

void TestFailurePolicy::resetForgetsEverything()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(2);
    QVERIFY(p.record(failure(1, kT0, QStringLiteral("exit"), {}, 1), rs, {}));
    QVERIFY(!p.rootCauseSummary().isEmpty());
    p.reset();
    QVERIFY(!p.failureSeen());
    QCOMPARE(p.firstFailedRank(), -1);
    QVERIFY(p.report().isEmpty());
    QVERIFY(p.rootCauseSummary().isEmpty());
    QCOMPARE(p.rootCauseRank(), -1);
    QVERIFY(!p.anyOwnFailure());
    // A new attempt's first failure starts the policy again.
    QVERIFY(p.record(failure(0, kT0 + 100, QStringLiteral("exit"), {}, 1), rs, {}));
    QCOMPARE(p.report().failures.size(), 1);
}

void TestFailurePolicy::restoreTakesEarlierReport()
{
    QList<RankStatus> rs = ranks(3);
    FailurePolicy before;
    before.record(failure(2, kT0, QStringLiteral("error"), QStringLiteral("bad batch"), 3), rs, {});
    before.addConsequence(failure(0, kT0 + 5, QStringLiteral("consequence")), rs, {});
    const FailureReport saved = FailureReport::fromJson(before.report().toJson());

    FailurePolicy p;
    p.restore(saved);
    QVERIFY(p.failureSeen());
    QCOMPARE(p.rootCauseRank(), 2);
    QVERIFY(p.anyOwnFailure());
    QCOMPARE(p.report().failures.size(), 2);
    QCOMPARE(p.rootCauseSummary(), before.rootCauseSummary());
    // A failure after the re-attach does not start the policy a second time.
    QVERIFY(!p.record(failure(1, kT0 + 10, QStringLiteral("exit"), {}, 1), rs, {}));
    QCOMPARE(p.report().failures.size(), 3);
    QCOMPARE(p.rootCauseRank(), 2);

    FailurePolicy empty;
    empty.restore(FailureReport());
    QVERIFY(!empty.failureSeen());
}

// A Python rank whose exception is an echo of a peer's death (by its type or its message) is a
// consequence of the rank that failed on its own, even when it failed first by its clock.
void TestFailurePolicy::pythonEchoesAreConsequences_data()
{
    QTest::addColumn<QString>("echo"); // rank 0's last exception line
    QTest::addColumn<bool>("consequence");
    QTest::newRow("gloo closed by peer")
        << "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] "
           "Connection closed by peer [127.0.0.1]:16582."
        << true;
    QTest::newRow("DistBackendError by its type alone")
        << "torch.distributed.DistBackendError: NCCL error in: NCCLUtils.hpp:268, unhandled "
           "system error"
        << true;
    QTest::newRow("DistNetworkError") << "torch.distributed.DistNetworkError: Broken pipe" << true;
    QTest::newRow("own failure") << "KeyError: 'lr'" << false;
}

void TestFailurePolicy::pythonEchoesAreConsequences()
{
    QFETCH(QString, echo);
    QFETCH(bool, consequence);
    FailurePolicy p;
    QList<RankStatus> rs = ranks(3);
    RankFailure first = failure(0, kT0, QStringLiteral("exit"), {}, 1);
    mergePython(&first,
                parsePythonTraceback(QStringLiteral("Traceback (most recent call last):\n  File "
                                                    "\"/job/train.py\", line 30, in step\n") +
                                     echo + QLatin1Char('\n')));
    QCOMPARE(first.kind, QStringLiteral("exception"));
    RankFailure own = failure(2, kT0 + 700, QStringLiteral("exit"), {}, 1);
    mergePython(&own, parsePythonTraceback(QStringLiteral(
                          "Traceback (most recent call last):\n  File \"/job/data.py\", line 9, "
                          "in load\nValueError: bad batch\n")));
    QVERIFY(p.record(first, rs, {}));
    p.record(own, rs, {});
    QCOMPARE(p.rootCauseRank(), consequence ? 2 : 0);
    QCOMPARE(entryOf(p.report(), 0)->kind,
             consequence ? QStringLiteral("consequence") : QStringLiteral("exception"));
    if (consequence) {
        QCOMPARE(entryOf(p.report(), 0)->reason,
                 QStringLiteral("a peer failed first (this rank's own exception followed)"));
        QCOMPARE(p.rootCauseSummary(), QStringLiteral("rank 2 (node-2): ValueError: bad batch"));
    }
}

// The rank's exit is recorded first; its traceback (from its stderr) comes with a later report.
void TestFailurePolicy::laterTracebackJoinsTheRanksEntry()
{
    FailurePolicy p;
    QList<RankStatus> rs = ranks(2);
    QVERIFY(p.record(failure(1, kT0, QStringLiteral("exit"), {}, 1), rs, {}));
    RankFailure again = failure(1, kT0 + 5, QStringLiteral("exit"), {}, 1);
    mergePython(&again, parsePythonTraceback(QStringLiteral(
                            "Traceback (most recent call last):\n  File \"/job/t.py\", line 3, "
                            "in f\nValueError: bad batch\n")));
    QVERIFY(!p.record(again, rs, {}));
    QCOMPARE(p.report().failures.size(), 1);
    const RankFailure &f = p.report().failures.first();
    QCOMPARE(f.kind, QStringLiteral("exception"));
    QCOMPARE(f.python.size(), 1);
    QCOMPARE(f.summary(), QStringLiteral("ValueError: bad batch"));
    QCOMPARE(p.rootCauseSummary(), QStringLiteral("rank 1 (node-1): ValueError: bad batch"));
}

QTEST_GUILESS_MAIN(TestFailurePolicy)
#include "tst_failurepolicy.moc"
