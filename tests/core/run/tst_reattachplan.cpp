// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/reattachplan.h"

#include "runparts.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace rankdeck;
using rankdeck::testing::RecordingTransport;

namespace {

constexpr qint64 kT0 = 1700000000000000;
const QString kRunId = QStringLiteral("20261201-101500-detached-3fa2");

// Two nodes of two ranks each, reached over SSH (the nodes need not exist: nothing connects).
Profile sshProfile()
{
    Profile p;
    p.name = QStringLiteral("cluster");
    p.transport = QStringLiteral("ssh");
    for (const char *host : {"node-a", "node-b"}) {
        ProfileNode n;
        n.host = QString::fromLatin1(host);
        n.user = QStringLiteral("trainer");
        n.ranksPerNode = 2;
        p.nodes << n;
    }
    return p;
}

// A detached run in its second attempt, every rank running and its streams recorded.
RunStateFile detachedState(int worldSize = 4)
{
    RunStateFile f;
    f.id = kRunId;
    f.name = QStringLiteral("detached");
    f.state = RunState::Running;
    f.attempt = 1;
    f.maxRestarts = 3;
    f.launcherPid = qint64(::getpid()); // the launcher left, its process may live on
    f.launcherHost = QStringLiteral("laptop");
    f.masterAddress = QStringLiteral("node-a");
    f.masterPort = 29512;
    f.detach = true;
    f.detached = true;
    for (int r = 0; r < worldSize; ++r) {
        RankStatus s;
        s.rank = r;
        s.nodeIndex = r / 2;
        s.localRank = r % 2;
        s.state = RankState::Running;
        s.pid = 5000 + r;
        f.ranks << s;
        StreamOffsets o;
        o.attempt = 2;
        o.received[0] = 1000 * (r + 1);
        o.received[1] = 10 * (r + 1);
        f.streams << o;
    }
    return f;
}

struct RunDir
{
    QTemporaryDir root;
    RunRecord record;
    QString directory;

    bool create(const Profile &profile, int maxRestarts = 3)
    {
        TrainingConfig config;
        config.maxRestarts = maxRestarts;
        config.workerArguments = {QStringLiteral("--steps"), QStringLiteral("100")};
        QString error;
        if (!root.isValid() || !record.create(root.path(), kRunId, QStringLiteral("detached"),
                                              profile, config, &error)) {
            qWarning("%s", qPrintable(error));
            return false;
        }
        directory = record.directory();
        return true;
    }
    bool write(const RunStateFile &state) { return record.writeState(state.toJson()); }
};

} // namespace

class TestReattachPlan : public QObject
{
    Q_OBJECT
private slots:
    void refuses_data();
    void refuses();
    void refusesNonRun();
    void acceptsDetached();
    void acceptsWhenLauncherGone();
    void maxRestarts_data();
    void maxRestarts();
    void readsFailureReport();
    void runtimes();
    void attachResumesRunningRanks();
};

void TestReattachPlan::refuses_data()
{
    QTest::addColumn<QString>("why");
    QTest::addColumn<QString>("message");
    QTest::newRow("local profile") << "local"
                                   << "ran on the local profile";
    QTest::newRow("finished") << "finished"
                              << "is not running (finished)";
    QTest::newRow("failed") << "failed"
                            << "is not running (failed)";
    QTest::newRow("no state") << "no state"
                              << "is not running (no state)";
    QTest::newRow("live launcher") << "live launcher"
                                   << "is still followed by its launcher (pid";
    QTest::newRow("no stream offsets") << "no streams"
                                       << "has no stream offsets for its ranks";
    QTest::newRow("offsets for some ranks") << "short streams"
                                            << "has no stream offsets for its ranks";
    QTest::newRow("no ranks") << "no ranks"
                              << "has no stream offsets for its ranks";
    QTest::newRow("profile gives other ranks")
        << "world size"
        << "its profile snapshot gives 4 ranks, state.json records 3";
}

void TestReattachPlan::refuses()
{
    QFETCH(QString, why);
    QFETCH(QString, message);
    RunDir run;
    QVERIFY(run.create(why == QLatin1String("local") ? Profile::builtinLocal(4) : sshProfile()));
    RunStateFile state = detachedState();
    if (why == QLatin1String("finished"))
        state.state = RunState::Finished;
    else if (why == QLatin1String("failed"))
        state.state = RunState::Failed;
    else if (why == QLatin1String("live launcher"))
        state.detached = false; // this test process is its launcher, and it is alive
    else if (why == QLatin1String("no streams"))
        state.streams.clear();
    else if (why == QLatin1String("short streams"))
        state.streams.removeLast();
    else if (why == QLatin1String("no ranks"))
        state.ranks.clear(), state.streams.clear();
    else if (why == QLatin1String("world size"))
        state = detachedState(3);
    if (why != QLatin1String("no state"))
        QVERIFY(run.write(state));

    ReattachPlan plan;
    QString error;
    QVERIFY(!plan.load(run.directory, &error));
    QVERIFY2(error.contains(message), qPrintable(error));
    QVERIFY2(error.contains(kRunId), qPrintable(error)); // says which run
    if (why == QLatin1String("live launcher"))
        QVERIFY2(error.contains(QStringLiteral("pid %1 on laptop").arg(::getpid())),
                 qPrintable(error));
}

void TestReattachPlan::refusesNonRun()
{
    QTemporaryDir dir;
    ReattachPlan plan;
    QString error;
    QVERIFY(!plan.load(dir.path(), &error));
    QVERIFY2(error.contains(QStringLiteral("not a run record")), qPrintable(error));
}

void TestReattachPlan::acceptsDetached()
{
    RunDir run;
    QVERIFY(run.create(sshProfile()));
    const RunStateFile written = detachedState();
    QVERIFY(run.write(written));
    ReattachPlan plan;
    QString error;
    QVERIFY2(plan.load(run.directory, &error), qPrintable(error));
    QCOMPARE(plan.record().id(), kRunId);
    QCOMPARE(plan.record().profile(), sshProfile());
    QCOMPARE(plan.state().toJson(), written.toJson());
    QVERIFY(plan.launchPlan().isValid());
    QCOMPARE(plan.launchPlan().worldSize(), 4);
    QCOMPARE(plan.launchPlan().runId(), kRunId);
    QCOMPARE(plan.maxRestarts(), 3);
    QVERIFY(plan.failureReport().isEmpty());
}

void TestReattachPlan::acceptsWhenLauncherGone()
{
    // Not detached on purpose: its launcher died (no such process).
    RunDir run;
    QVERIFY(run.create(sshProfile()));
    RunStateFile state = detachedState();
    state.detached = false;
    state.launcherPid = 0;
    QVERIFY(run.write(state));
    ReattachPlan plan;
    QString error;
    QVERIFY2(plan.load(run.directory, &error), qPrintable(error));
}

void TestReattachPlan::maxRestarts_data()
{
    QTest::addColumn<int>("configured");
    QTest::addColumn<int>("attempt");
    QTest::addColumn<RankState>("rank2");
    QTest::addColumn<int>("expected");
    QTest::newRow("all running") << 3 << 1 << RankState::Running << 3;
    QTest::newRow("one finished") << 3 << 1 << RankState::Finished << 1;
    QTest::newRow("one failed, first attempt") << 3 << 0 << RankState::Failed << 0;
    QTest::newRow("one lost") << 5 << 2 << RankState::Lost << 2;
    QTest::newRow("none configured") << 0 << 2 << RankState::Stopped << 0;
    QTest::newRow("still starting") << 3 << 1 << RankState::Starting << 3;
}

void TestReattachPlan::maxRestarts()
{
    QFETCH(int, configured);
    QFETCH(int, attempt);
    QFETCH(RankState, rank2);
    QFETCH(int, expected);
    RunDir run;
    QVERIFY(run.create(sshProfile(), configured));
    RunStateFile state = detachedState();
    state.attempt = attempt;
    state.ranks[2].state = rank2;
    QVERIFY(run.write(state));
    ReattachPlan plan;
    QString error;
    QVERIFY2(plan.load(run.directory, &error), qPrintable(error));
    QCOMPARE(plan.maxRestarts(), expected);
}

void TestReattachPlan::readsFailureReport()
{
    RunDir run;
    QVERIFY(run.create(sshProfile()));
    QVERIFY(run.write(detachedState()));
    RankFailure f;
    f.rank = 1;
    f.kind = QStringLiteral("exit");
    f.exitCode = 3;
    f.timeUs = kT0;
    const FailureReport report = FailureReport::build({f});
    QVERIFY(run.record.writeFailureReport(report.toJson(), report.toText()));
    ReattachPlan plan;
    QString error;
    QVERIFY2(plan.load(run.directory, &error), qPrintable(error));
    QCOMPARE(plan.failureReport().failures.size(), 1);
    QCOMPARE(plan.failureReport().rootCause()->rank, 1);
    QCOMPARE(plan.failureReport().rootCause()->exitCode, 3);
}

void TestReattachPlan::runtimes()
{
    RunDir run;
    QVERIFY(run.create(sshProfile()));
    RunStateFile state = detachedState();
    state.ranks[1].state = RankState::Finished; // seen ending
    state.ranks[3].state = RankState::Starting; // never got a process
    state.streams[3] = StreamOffsets();
    QVERIFY(run.write(state));
    ReattachPlan plan;
    QString error;
    QVERIFY2(plan.load(run.directory, &error), qPrintable(error));

    const QList<RankRuntime> rts = plan.runtimes(kT0 + 77);
    QCOMPARE(rts.size(), 4);
    for (const RankRuntime &rt : rts) {
        QCOMPARE(rt.lastStepChangeUs, kT0 + 77); // the hang clock starts now
        QVERIFY(!rt.launcherStopped);
        QVERIFY(!rt.ownFailure);
    }
    QVERIFY(rts[0].started);
    QVERIFY(!rts[0].exited);
    QVERIFY(!rts[0].pidKnown); // rankStarted comes again when attached
    QVERIFY(rts[1].started);
    QVERIFY(rts[1].exited);
    QVERIFY(rts[1].pidKnown);
    QVERIFY(rts[2].started);
    QVERIFY(!rts[2].exited);
    QVERIFY(!rts[3].started);
    QVERIFY(!rts[3].exited);
}

void TestReattachPlan::attachResumesRunningRanks()
{
    RunDir run;
    QVERIFY(run.create(sshProfile()));
    RunStateFile state = detachedState();
    state.ranks[1].state = RankState::Failed;
    state.ranks[3].state = RankState::Starting;
    state.streams[3] = StreamOffsets();
    QVERIFY(run.write(state));
    ReattachPlan plan;
    QString error;
    QVERIFY2(plan.load(run.directory, &error), qPrintable(error));
    const QList<RankRuntime> rts = plan.runtimes(kT0);

    // Bytes still in a splitter are not on disk: the stream resumes at the committed offset.
    QList<StreamOffsets> offsets = plan.state().streams;
    offsets[2].add(StreamKind::Stdout, QByteArray("partial line"));

    RecordingTransport transport;
    const QList<int> neverStarted =
        ReattachPlan::attach(transport, plan.launchPlan(), rts, offsets, 29512);
    QCOMPARE(neverStarted, QList<int>{3});
    QCOMPARE(transport.attaches.size(), 2);
    QVERIFY(transport.sentSignals.isEmpty());
    QVERIFY(transport.stdinWrites.isEmpty());

    // Ranks 0 (node 0) and 2 (node 1), in rank order, at their committed bytes.
    const int attached[] = {0, 2};
    for (int i = 0; i < 2; ++i) {
        const int r = attached[i];
        const RecordingTransport::Attach &a = transport.attaches[i];
        QCOMPARE(a.spec.rank, r);
        QCOMPARE(a.spec.nodeIndex, r / 2);
        QCOMPARE(a.attempt, 2);
        QCOMPARE(a.stdoutBytes, qint64(1000 * (r + 1)));
        QCOMPARE(a.stderrBytes, qint64(10 * (r + 1)));
        QVERIFY(a.spec.program.isEmpty()); // the process is there already
        QCOMPARE(a.spec.environment.value(QStringLiteral("MASTER_PORT")), QStringLiteral("29512"));
        QCOMPARE(a.spec.environment.value(QStringLiteral("RANKDECK_RUN_ID")), kRunId);
        QVERIFY(!a.spec.arguments.contains(QStringLiteral("--resume")));
    }
}

QTEST_GUILESS_MAIN(TestReattachPlan)
#include "tst_reattachplan.moc"
