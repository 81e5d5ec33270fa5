// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runrecord.h"
#include "record/runstatefile.h"
#include "util/processidentity.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

using namespace rankdeck;

namespace {

constexpr qint64 kT0 = 1700000000000000;

// Every field set to something other than its default.
RunStateFile fullState()
{
    RunStateFile f;
    f.id = QStringLiteral("20261201-101500-linear-3fa2");
    f.name = QStringLiteral("linear");
    f.state = RunState::Running;
    f.attempt = 2;
    f.maxRestarts = 3;
    f.launcherPid = 4242;
    f.launcherStartTicks = 777;
    f.launcherHost = QStringLiteral("laptop");
    f.createdUs = kT0;
    f.startedUs = kT0 + 1;
    f.endedUs = kT0 + 2;
    f.masterAddress = QStringLiteral("10.0.0.1");
    f.masterPort = 29500;
    f.userStop = true;
    f.hung = true;
    f.straggler = 3;
    f.error = QStringLiteral("something odd");
    f.rootCauseSummary = QStringLiteral("rank 1 (node-b): exit code 3: bad batch");
    f.rootCauseRank = 1;
    for (int r = 0; r < 2; ++r) {
        RankStatus s;
        s.rank = r;
        s.nodeIndex = r;
        s.localRank = 0;
        s.host = QStringLiteral("node-%1").arg(QChar(u'a' + r));
        s.pid = 1000 + r;
        s.pidStartTicks = 5000 + r;
        s.state = r == 0 ? RankState::Running : RankState::Failed;
        s.device = QStringLiteral("cuda:0");
        s.backend = QStringLiteral("nccl");
        s.startTimeUs = kT0 + 10;
        s.endTimeUs = r == 0 ? 0 : kT0 + 20;
        s.exitCode = r == 0 ? 0 : 3;
        s.signal = 0;
        s.step = 41 + r;
        s.totalSteps = 100;
        s.loss = 0.25 * (r + 1);
        s.samplesPerSec = 1234.5;
        s.silent = r == 0;
        s.hung = r == 0;
        s.rootCause = r == 1;
        s.detail = r == 0 ? QStringLiteral("no heartbeat for 12 s") : QStringLiteral("exit code 3");
        f.ranks << s;
        StreamOffsets o;
        o.attempt = 3;
        o.received[0] = 100 + r;
        o.received[1] = 200 + r;
        f.streams << o;
    }
    QJsonObject earlier;
    earlier[QStringLiteral("attempt")] = 0;
    earlier[QStringLiteral("root_cause_summary")] = QStringLiteral("rank 0 (node-a): SIGSEGV");
    f.attempts << earlier;
    f.detach = true;
    f.detached = true;
    NodeClock same;
    same.sameClock = true;
    f.clocks.insert(0, same);
    NodeClock behind;
    behind.offsetUs = -5'001'234;
    behind.rttUs = 800;
    behind.measuredUs = kT0 + 5;
    f.clocks.insert(1, behind);
    return f;
}

} // namespace

class TestRunStateFile : public QObject
{
    Q_OBJECT
private slots:
    void roundTrip_data();
    void roundTrip();
    void fieldsSurvive();
    void missingKeysGiveDefaults();
    void keyNames();
    void streamsCarryCommittedBytes();
    void runRecordReadsIt();
    void launcherIsKnownByItsStart_data();
    void launcherIsKnownByItsStart();
};

void TestRunStateFile::roundTrip_data()
{
    QTest::addColumn<bool>("full");
    QTest::newRow("full") << true;
    QTest::newRow("default") << false;
}

void TestRunStateFile::roundTrip()
{
    QFETCH(bool, full);
    const RunStateFile f = full ? fullState() : RunStateFile();
    const QJsonObject once = f.toJson();
    // Through the bytes on disk, as reopen() and reattach() read it.
    const QJsonObject read = QJsonDocument::fromJson(QJsonDocument(once).toJson()).object();
    const QJsonObject twice = RunStateFile::fromJson(read).toJson();
    QCOMPARE(twice, once);
}

void TestRunStateFile::fieldsSurvive()
{
    const RunStateFile f = fullState();
    const RunStateFile g = RunStateFile::fromJson(f.toJson());
    QCOMPARE(g.id, f.id);
    QCOMPARE(g.name, f.name);
    QCOMPARE(g.state, f.state);
    QCOMPARE(g.attempt, f.attempt);
    QCOMPARE(g.maxRestarts, f.maxRestarts);
    QCOMPARE(g.launcherPid, f.launcherPid);
    QCOMPARE(g.launcherStartTicks, f.launcherStartTicks);
    QCOMPARE(g.ranks[1].pidStartTicks, qint64(5001));
    QCOMPARE(g.launcherHost, f.launcherHost);
    QCOMPARE(g.createdUs, f.createdUs);
    QCOMPARE(g.startedUs, f.startedUs);
    QCOMPARE(g.endedUs, f.endedUs);
    QCOMPARE(g.masterAddress, f.masterAddress);
    QCOMPARE(g.masterPort, f.masterPort);
    QCOMPARE(g.userStop, f.userStop);
    QCOMPARE(g.hung, f.hung);
    QCOMPARE(g.straggler, f.straggler);
    QCOMPARE(g.error, f.error);
    QCOMPARE(g.rootCauseSummary, f.rootCauseSummary);
    QCOMPARE(g.rootCauseRank, f.rootCauseRank);
    QCOMPARE(g.attempts, f.attempts);
    QCOMPARE(g.detach, f.detach);
    QCOMPARE(g.detached, f.detached);
    QCOMPARE(g.ranks.size(), 2);
    QCOMPARE(g.ranks[1].state, RankState::Failed);
    QCOMPARE(g.ranks[1].exitCode, 3);
    QCOMPARE(g.ranks[1].loss, 0.5);
    QCOMPARE(g.ranks[0].step, qint64(41));
    QVERIFY(g.ranks[0].silent);
    QVERIFY(g.ranks[1].rootCause);
    QCOMPARE(g.streams.size(), 2);
    QCOMPARE(g.streams[1].attempt, 3);
    QCOMPARE(g.streams[1].committed(StreamKind::Stdout), qint64(101));
    QCOMPARE(g.streams[1].committed(StreamKind::Stderr), qint64(201));
    QCOMPARE(g.clocks, f.clocks);
}

void TestRunStateFile::missingKeysGiveDefaults()
{
    const RunStateFile f = RunStateFile::fromJson(QJsonObject());
    QVERIFY(f.id.isEmpty());
    QCOMPARE(f.state, RunState::Preparing);
    QCOMPARE(f.attempt, 0);
    QCOMPARE(f.maxRestarts, 0);
    QCOMPARE(f.launcherPid, qint64(0));
    QCOMPARE(f.launcherStartTicks, qint64(0));
    // Unknown start times are left out: the file reads as an older RankDeck's did.
    QVERIFY(!f.toJson().contains(QStringLiteral("launcher_start")));
    QVERIFY(!RankStatus().toJson().contains(QStringLiteral("pid_start")));
    QCOMPARE(f.masterPort, 0);
    QCOMPARE(f.rootCauseRank, -1);
    QCOMPARE(f.straggler, -1);
    QVERIFY(!f.userStop);
    QVERIFY(!f.hung);
    QVERIFY(!f.detach);
    QVERIFY(!f.detached);
    QVERIFY(f.ranks.isEmpty());
    QVERIFY(f.attempts.isEmpty());
    QVERIFY(f.streams.isEmpty());

    // A state.json of an older launcher: no detach keys, no root cause rank, ranks without step.
    QJsonObject old;
    old[QStringLiteral("state")] = QStringLiteral("failed");
    QJsonObject rank;
    rank[QStringLiteral("rank")] = 0;
    rank[QStringLiteral("state")] = QStringLiteral("failed");
    old[QStringLiteral("ranks")] = QJsonArray{rank};
    const RunStateFile g = RunStateFile::fromJson(old);
    QCOMPARE(g.state, RunState::Failed);
    QCOMPARE(g.rootCauseRank, -1);
    QCOMPARE(g.ranks.size(), 1);
    QCOMPARE(g.ranks[0].step, qint64(-1));
    QCOMPARE(g.ranks[0].pidStartTicks, qint64(0));
    QVERIFY(qIsNaN(g.ranks[0].loss));
    QVERIFY(g.streams.isEmpty());
}

void TestRunStateFile::keyNames()
{
    const QJsonObject j = fullState().toJson();
    // What RunRecord::info(), the CLI's `show`/`stop` and reattach read.
    const QStringList keys{
        QStringLiteral("id"),
        QStringLiteral("name"),
        QStringLiteral("state"),
        QStringLiteral("attempt"),
        QStringLiteral("max_restarts"),
        QStringLiteral("world_size"),
        QStringLiteral("launcher_pid"),
        QStringLiteral("launcher_start"),
        QStringLiteral("launcher_host"),
        QStringLiteral("created_us"),
        QStringLiteral("started_us"),
        QStringLiteral("ended_us"),
        QStringLiteral("master_addr"),
        QStringLiteral("master_port"),
        QStringLiteral("user_stop"),
        QStringLiteral("hung"),
        QStringLiteral("straggler"),
        QStringLiteral("error"),
        QStringLiteral("root_cause_summary"),
        QStringLiteral("root_cause_rank"),
        QStringLiteral("ranks"),
        QStringLiteral("attempts"),
        QStringLiteral("detach"),
        QStringLiteral("detached"),
        QStringLiteral("streams"),
        QStringLiteral("clocks"),
    };
    for (const QString &k : keys)
        QVERIFY2(j.contains(k), qPrintable(k));
    QCOMPARE(j.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QCOMPARE(j.value(QStringLiteral("world_size")).toInt(), 2);
    QCOMPARE(j.value(QStringLiteral("launcher_pid")).toInteger(), qint64(4242));
    QCOMPARE(j.value(QStringLiteral("root_cause_rank")).toInt(), 1);
    QCOMPARE(j.value(QStringLiteral("detached")).toBool(), true);
    const QJsonObject rank0 = j.value(QStringLiteral("ranks")).toArray().at(0).toObject();
    QCOMPARE(rank0.value(QStringLiteral("pid")).toInteger(), qint64(1000));
    QCOMPARE(rank0.value(QStringLiteral("pid_start")).toInteger(), qint64(5000));
    QCOMPARE(rank0.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    const QJsonObject stream1 = j.value(QStringLiteral("streams")).toArray().at(1).toObject();
    QCOMPARE(stream1.value(QStringLiteral("rank")).toInt(), 1);
    QCOMPARE(stream1.value(QStringLiteral("attempt")).toInt(), 3);
    QCOMPARE(stream1.value(QStringLiteral("stdout_bytes")).toInteger(), qint64(101));
    QCOMPARE(stream1.value(QStringLiteral("stderr_bytes")).toInteger(), qint64(201));
    QCOMPARE(j.value(QStringLiteral("attempts"))
                 .toArray()
                 .at(0)
                 .toObject()
                 .value(QStringLiteral("root_cause_summary"))
                 .toString(),
             QStringLiteral("rank 0 (node-a): SIGSEGV"));
}

void TestRunStateFile::streamsCarryCommittedBytes()
{
    RunStateFile f = fullState();
    f.streams[0] = StreamOffsets();
    f.streams[0].attempt = 1;
    f.streams[0].add(StreamKind::Stdout, QByteArray("done\npartial"));
    const QJsonObject stream0 =
        f.toJson().value(QStringLiteral("streams")).toArray().at(0).toObject();
    // The unterminated "partial" is not in the log yet: a re-attach asks for it again.
    QCOMPARE(stream0.value(QStringLiteral("stdout_bytes")).toInteger(), qint64(5));
    QCOMPARE(stream0.value(QStringLiteral("stderr_bytes")).toInteger(), qint64(0));
}

void TestRunStateFile::runRecordReadsIt()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RunRecord record;
    QString error;
    QVERIFY2(record.create(dir.path(), QStringLiteral("20261201-101500-linear-3fa2"),
                           QStringLiteral("linear"), Profile::builtinLocal(2), TrainingConfig(),
                           &error),
             qPrintable(error));
    RunStateFile f = fullState();
    f.launcherPid = 0; // no launcher: gone
    QVERIFY(record.writeState(f.toJson()));
    const RunInfo info = record.info();
    QCOMPARE(info.state, RunState::Running);
    QCOMPARE(info.attempt, 2);
    QCOMPARE(info.worldSize, 2);
    QCOMPARE(info.endedUs, kT0 + 2);
    QCOMPARE(info.rootCause, f.rootCauseSummary);
    QVERIFY(info.detachable);
    QVERIFY(info.detached);
    QVERIFY(info.launcherGone);
    QCOMPARE(RunStateFile::fromJson(record.readState()).toJson(), f.toJson());
}

void TestRunStateFile::launcherIsKnownByItsStart_data()
{
    QTest::addColumn<int>("startShift");   // added to this process's start; 0: its own
    QTest::addColumn<bool>("recordStart"); // false: a state.json of an older RankDeck
    QTest::addColumn<bool>("gone");
    QTest::newRow("its own start") << 0 << true << false;
    // Pid reuse cannot be forced: a wrong start for this live process stands for a launcher that
    // ended and left its pid to another process, which is not the launcher.
    QTest::newRow("another start (a reused pid)") << 1 << true << true;
    QTest::newRow("older record without a start") << 0 << false << false;
}

// RunRecord::info()'s launcherGone, which the CLI's `stop` and the GUI act on.
void TestRunStateFile::launcherIsKnownByItsStart()
{
    QFETCH(int, startShift);
    QFETCH(bool, recordStart);
    QFETCH(bool, gone);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RunRecord record;
    QString error;
    QVERIFY2(record.create(dir.path(), QStringLiteral("20261201-101500-linear-3fa3"),
                           QStringLiteral("linear"), Profile::builtinLocal(2), TrainingConfig(),
                           &error),
             qPrintable(error));
    RunStateFile f = fullState();
    f.launcherPid = QCoreApplication::applicationPid();
    const qint64 start = ProcessIdentity::of(f.launcherPid).startTicks;
    QVERIFY(start > 0);
    f.launcherStartTicks = recordStart ? start + startShift : 0;
    QVERIFY(record.writeState(f.toJson()));
    QCOMPARE(record.info().launcherGone, gone);
}

QTEST_GUILESS_MAIN(TestRunStateFile)
#include "tst_runstatefile.moc"
