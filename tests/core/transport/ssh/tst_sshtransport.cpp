// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for one transport against real sshd.
//
// SshTransport against two real sshd nodes: deploy once per content, node check, ranks on exec
// channels with separate streams, exit codes and signals, the stdin control channel, process
// group signals, shell injection through every field, a connection cut mid-run (resume without
// loss or duplicate), a node lost past the deadline, the prepare failures a user meets, and a
// worker another user planted under the worker's name.
// The "worker" here is a small sh script, so that these tests do not depend on libtorch; the
// real worker runs through SSH in tst_sshlaunch.
#include "config/profile.h"
#include "fixtureprofile.h"
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"
#include "transport/ssh/sshtransport.h"

#include "testprocesses.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>

using namespace rankdeck;
using namespace Qt::StringLiterals;
// Every fixture node is this machine, so pgrep here sees the nodes' processes.
using rankdeck::testing::processesMatching;

namespace {

// A stand-in for rankdeck-worker: modes that exercise each part of the transport.
const char kFakeRank[] = R"SH(#!/bin/sh
mode=$1; shift
case $mode in
count)
  n=$1; delay=$2; code=$3; i=1
  while [ "$i" -le "$n" ]; do
    echo "out $i"; echo "err $i" >&2
    [ "$delay" = 0 ] || sleep "$delay"
    i=$((i+1))
  done
  exit "$code" ;;
echo)
  while IFS= read -r line; do
    if [ "$line" = stop ]; then echo stopping; exit 0; fi
    echo "got $line"
  done
  echo eof; exit 3 ;;
env)
  printf 'A=[%s]\n' "$RANKDECK_TEST_A"
  printf 'B=[%s]\n' "$RANKDECK_TEST_B"
  for a; do printf 'arg=[%s]\n' "$a"; done
  printf 'pwd=[%s]\n' "$(pwd)"
  exit 0 ;;
crash)
  kill -SEGV $$ ;;
hold)
  sleep 1000 &
  echo "holding"
  cat >/dev/null
  kill $!
  exit 4 ;;
esac
exit 99
)SH";

struct Collector
{
    QHash<int, QByteArray> out;
    QHash<int, QByteArray> err;
    QHash<int, qint64> pids;
    QHash<int, RankExit> exits;
    QStringList progress;

    explicit Collector(SshTransport *t)
    {
        QObject::connect(t, &Transport::rankOutput, t,
                         [this](int rank, StreamKind s, const QByteArray &chunk) {
                             (s == StreamKind::Stdout ? out : err)[rank] += chunk;
                         });
        QObject::connect(t, &Transport::rankStarted, t,
                         [this](int rank, qint64 pid) { pids[rank] = pid; });
        QObject::connect(t, &Transport::rankExited, t,
                         [this](int rank, const RankExit &e) { exits[rank] = e; });
        QObject::connect(t, &Transport::nodeProgress, t,
                         [this](int node, const QString &stage, int) {
                             progress << QStringLiteral("%1:%2").arg(node).arg(stage);
                         });
    }
};

QByteArray countOutput(const char *stream, int n)
{
    QByteArray b;
    for (int i = 1; i <= n; ++i)
        b += QByteArray(stream) + ' ' + QByteArray::number(i) + '\n';
    return b;
}

} // namespace

class TestSshTransport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void prepareDeploysOnceAndChecksNodes();
    void twoNodesTwoRanksStreamEverything();
    void exitCodesAndSignals_data();
    void exitCodesAndSignals();
    void stdinIsTheControlChannel_data();
    void stdinIsTheControlChannel();
    void signalReachesTheWholeProcessGroup();
    void fieldsCannotInjectCommands();
    void connectionCutMidRunResumesWithoutLossOrDuplicate();
    void nodeLostPastTheDeadlineFailsCleanly();
    void detachedRankIsReattachedByANewLauncher();
    void destroyingTheTransportEndsItsRanks();
    void idleConnectionDroppedBeforeStartIsReopened();
    void prepareFailures_data();
    void prepareFailures();
    void plantedWorkerIsNeverRun_data();
    void plantedWorkerIsNeverRun();
    void libraryCheckRunsOncePerWorkerAndLibtorchPath();
    void uploadOverSftpHandlesBinaryAndLargeFiles();

private:
    Profile profile() const;
    RankLaunchSpec spec(int rank, int node, const QStringList &args) const;
    std::unique_ptr<SshTransport> prepared(PolicySshInteraction *ask = nullptr);
    QString runDir(int node) const
    {
        return rankdeck::testing::nodeRunDirectory(m_ssh, node, m_runId);
    }

    SshFixture m_ssh;
    QTemporaryDir m_home;
    QTemporaryDir m_local;
    QString m_fakeWorker;
    QString m_runId;
    PolicySshInteraction m_refuse{SshInteraction::HostKeyDecision::Reject};
};

void TestSshTransport::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY(m_home.isValid() && m_local.isValid());
    qputenv("HOME", QFile::encodeName(m_home.path()));
    qunsetenv("SSH_AUTH_SOCK");
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    m_fakeWorker = m_local.filePath(QStringLiteral("fake-worker"));
    QFile f(m_fakeWorker);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(kFakeRank);
    f.close();
    QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));
}

void TestSshTransport::init()
{
    QVERIFY(m_ssh.writeKnownHosts(m_home.path() + QStringLiteral("/.ssh/known_hosts")));
    m_runId = QStringLiteral("tst-%1").arg(QRandomGenerator::global()->generate(), 8, 16,
                                           QLatin1Char('0'));
}

Profile TestSshTransport::profile() const
{
    Profile p =
        rankdeck::testing::fixtureProfile(m_ssh, QStringLiteral("fixture"), m_ssh.nodeCount(), 2);
    p.connectTimeoutSec = 5;
    return p;
}

RankLaunchSpec TestSshTransport::spec(int rank, int node, const QStringList &args) const
{
    RankLaunchSpec s;
    s.rank = rank;
    s.nodeIndex = node;
    s.arguments = args;
    s.environment.insert(QStringLiteral("RANK"), QString::number(rank));
    s.environment.insert(QStringLiteral("RANKDECK_RUN_ID"), m_runId);
    return s;
}

std::unique_ptr<SshTransport> TestSshTransport::prepared(PolicySshInteraction *ask)
{
    auto t = std::make_unique<SshTransport>(profile(), m_runId, ask ? ask : &m_refuse);
    QSignalSpy ok(t.get(), &Transport::prepared);
    QSignalSpy failed(t.get(), &Transport::prepareFailed);
    t->prepare(m_fakeWorker);
    if (!QTest::qWaitFor([&] { return !ok.isEmpty() || !failed.isEmpty(); }, 60000) ||
        !failed.isEmpty()) {
        qWarning("prepare failed: %s",
                 failed.isEmpty() ? "timeout" : qPrintable(failed.first().first().toString()));
        return {};
    }
    return t;
}

void TestSshTransport::prepareDeploysOnceAndChecksNodes()
{
    // A fresh worker content, so that this test sees the first upload whatever ran before.
    QFile f(m_fakeWorker);
    QVERIFY(f.open(QIODevice::Append));
    f.write(QByteArray("# ") + m_runId.toUtf8() + '\n');
    f.close();

    auto first = prepared();
    QVERIFY(first);
    QList<QDateTime> mtimes;
    for (int i = 0; i < 2; ++i) {
        const SshNodeInfo info = first->nodeInfo(i);
        QVERIFY2(info.error.isEmpty(), qPrintable(info.error));
        QCOMPARE(info.home, m_ssh.home(i));
        QVERIFY(info.cpus > 0);
        QVERIFY(!info.os.isEmpty());
        QVERIFY(info.workerUploaded);
        QVERIFY(first->workerPath(i).startsWith(
            m_ssh.home(i) + QStringLiteral("/.cache/rankdeck/worker/rankdeck-worker-")));
        QFile remote(first->workerPath(i));
        QVERIFY(remote.open(QIODevice::ReadOnly));
        QFile local(m_fakeWorker);
        QVERIFY(local.open(QIODevice::ReadOnly));
        QCOMPARE(remote.readAll(), local.readAll());
        mtimes << QFileInfo(first->workerPath(i)).lastModified();
        // No temporary file left behind: the worker and the record of its library check only.
        const QFileInfo deployed(first->workerPath(i));
        const QString sha16 = deployed.fileName().mid(int(qstrlen("rankdeck-worker-")), 16);
        QCOMPARE(QDir(deployed.absolutePath())
                     .entryList({QLatin1Char('*') + sha16 + QLatin1Char('*')},
                                QDir::Files | QDir::Hidden, QDir::Name),
                 (QStringList{QLatin1Char('.') + deployed.fileName() + QStringLiteral(".libs"),
                              deployed.fileName()}));
        // The run directory is there before the first rank starts.
        QVERIFY(QFileInfo(runDir(i)).isDir());
    }
    first.reset();

    auto second = prepared();
    QVERIFY(second);
    for (int i = 0; i < 2; ++i) {
        QVERIFY(!second->nodeInfo(i).workerUploaded);
        QCOMPARE(QFileInfo(second->workerPath(i)).lastModified(), mtimes.at(i));
    }

    // "Test connection": no worker, just the check.
    SshTransport check(profile(), m_runId, &m_refuse);
    QSignalSpy ok(&check, &Transport::prepared);
    check.prepare(QString());
    QVERIFY(ok.wait(30000));
    QVERIFY(check.nodeInfo(1).workerPath.isEmpty());
    QCOMPARE(check.nodeInfo(1).home, m_ssh.home(1));
}

void TestSshTransport::twoNodesTwoRanksStreamEverything()
{
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    const int lines = 300;
    for (int rank = 0; rank < 4; ++rank) {
        RankLaunchSpec s = spec(rank, rank / 2,
                                {QStringLiteral("count"), QString::number(lines),
                                 QStringLiteral("0"), QStringLiteral("0")});
        s.program = t->workerPath(rank / 2);
        t->startRank(s);
    }
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 4, 60000);
    for (int rank = 0; rank < 4; ++rank) {
        QVERIFY2(c.exits[rank].detail.isEmpty(), qPrintable(c.exits[rank].detail));
        QCOMPARE(c.exits[rank].crashed, false);
        QCOMPARE(c.exits[rank].exitCode, 0);
        QVERIFY(c.pids.value(rank) > 0);
        QCOMPARE(c.out[rank], countOutput("out", lines));
        QCOMPARE(c.err[rank], countOutput("err", lines));
        // The node keeps the complete output too.
        QFile kept(runDir(rank / 2) + QStringLiteral("/rank%1.a1.out").arg(rank));
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), countOutput("out", lines));
    }
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 10000);
}

void TestSshTransport::exitCodesAndSignals_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("crashed");
    QTest::addColumn<int>("code");
    QTest::newRow("exit 0") << QStringList{u"count"_s, u"1"_s, u"0"_s, u"0"_s} << false << 0;
    QTest::newRow("exit 7") << QStringList{u"count"_s, u"1"_s, u"0"_s, u"7"_s} << false << 7;
    QTest::newRow("SIGSEGV") << QStringList{u"crash"_s} << true << int(SIGSEGV);
}

void TestSshTransport::exitCodesAndSignals()
{
    QFETCH(QStringList, args);
    QFETCH(bool, crashed);
    QFETCH(int, code);
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    RankLaunchSpec s = spec(0, 1, args);
    s.program = t->workerPath(1);
    t->startRank(s);
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 1, 30000);
    const RankExit e = c.exits.value(0);
    QCOMPARE(e.crashed, crashed);
    QCOMPARE(crashed ? e.signal : e.exitCode, code);
    QVERIFY(e.timeUs > 0);

    // A program that is not there is a start failure that says so.
    RankLaunchSpec missing = spec(1, 0, {});
    missing.program = QStringLiteral("/nonexistent/rankdeck-worker");
    t->startRank(missing);
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 2, 30000);
    QVERIFY(!c.pids.contains(1));
    QVERIFY2(c.exits[1].detail.contains(QStringLiteral("/nonexistent/rankdeck-worker")),
             qPrintable(c.exits[1].detail));
    QVERIFY2(c.exits[1].detail.contains(m_ssh.address(0)), qPrintable(c.exits[1].detail));
}

void TestSshTransport::stdinIsTheControlChannel_data()
{
    QTest::addColumn<bool>("closeInstead");
    QTest::newRow("stop command") << false;
    QTest::newRow("end of stdin") << true;
}

void TestSshTransport::stdinIsTheControlChannel()
{
    QFETCH(bool, closeInstead);
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    RankLaunchSpec s = spec(2, 1, {QStringLiteral("echo")});
    s.program = t->workerPath(1);
    t->startRank(s);
    QTRY_VERIFY_WITH_TIMEOUT(c.pids.contains(2), 30000);
    t->writeStdin(2, "hello\n");
    QTRY_COMPARE_WITH_TIMEOUT(c.out.value(2), QByteArray("got hello\n"), 30000);
    if (closeInstead)
        t->closeStdin(2);
    else
        t->writeStdin(2, "stop\n");
    // Without a re-attach grace period in the way: the rank sees the end right away.
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 1, 10000);
    QCOMPARE(c.out.value(2),
             closeInstead ? QByteArray("got hello\neof\n") : QByteArray("got hello\nstopping\n"));
    QCOMPARE(c.exits[2].exitCode, closeInstead ? 3 : 0);
}

void TestSshTransport::signalReachesTheWholeProcessGroup()
{
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    for (int rank = 0; rank < 2; ++rank) {
        RankLaunchSpec s =
            spec(rank, rank, {QStringLiteral("hold"), QStringLiteral("--run-id"), m_runId});
        s.program = t->workerPath(rank);
        t->startRank(s);
    }
    QTRY_VERIFY_WITH_TIMEOUT(c.out.value(0) == "holding\n" && c.out.value(1) == "holding\n", 30000);
    QVERIFY(!processesMatching(m_runId).isEmpty());
    t->signalRank(0, SIGTERM);
    t->signalRank(1, SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 2, 30000);
    QCOMPARE(c.exits[0].crashed, true);
    QCOMPARE(c.exits[0].signal, int(SIGTERM));
    QCOMPARE(c.exits[1].signal, int(SIGKILL));
    // The rank's child (sleep) was in its group; the wrapper and its helpers end with the rank.
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 10000);
    QProcess pgrep;
    pgrep.start(QStringLiteral("pgrep"),
                {QStringLiteral("-x"), QStringLiteral("-f"), QStringLiteral("sleep 1000")});
    pgrep.waitForFinished();
    QVERIFY2(pgrep.readAllStandardOutput().isEmpty(), "the rank's child survived the group signal");
}

void TestSshTransport::fieldsCannotInjectCommands()
{
    const QString marker = m_local.filePath(QStringLiteral("injected"));
    const QStringList nasty = {
        QStringLiteral("it's"),
        QStringLiteral("\"double\" \\ back"),
        QStringLiteral("$(touch %1)").arg(marker),
        QStringLiteral("`touch %1`").arg(marker),
        QStringLiteral("; touch %1;").arg(marker),
        QStringLiteral("line1\nline2; touch %1\n").arg(marker),
        QStringLiteral("' ; touch %1 ; '").arg(marker),
        QStringLiteral("$HOME *"),
    };
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    RankLaunchSpec s = spec(0, 0, QStringList{QStringLiteral("env")} + nasty);
    s.program = t->workerPath(0);
    s.environment.insert(QStringLiteral("RANKDECK_TEST_A"), nasty.join(QString()));
    s.environment.insert(QStringLiteral("RANKDECK_TEST_B"),
                         QStringLiteral("x'$(touch %1)'\n`touch %1`").arg(marker));
    // The run and working directories are fields too.
    const QString weirdDir =
        m_ssh.home(0) + QStringLiteral("/runs/it's $(touch %1) `x`;\nd").arg(marker);
    s.nodeRunDirectory = weirdDir;
    s.workingDirectory = weirdDir;
    t->startRank(s);

    // An invalid variable name is refused, not pasted.
    RankLaunchSpec bad = spec(1, 0, {QStringLiteral("env")});
    bad.program = t->workerPath(0);
    bad.environment.insert(QStringLiteral("X;touch %1").arg(marker), QStringLiteral("1"));
    t->startRank(bad);

    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 2, 30000);
    QVERIFY2(c.exits[0].detail.isEmpty(), qPrintable(c.exits[0].detail));
    QByteArray expected = "A=[" + nasty.join(QString()).toUtf8() + "]\n";
    expected += "B=[" + QStringLiteral("x'$(touch %1)'\n`touch %1`").arg(marker).toUtf8() + "]\n";
    for (const QString &a : nasty)
        expected += "arg=[" + a.toUtf8() + "]\n";
    expected += "pwd=[" + weirdDir.toUtf8() + "]\n";
    QCOMPARE(c.out.value(0), expected);
    QVERIFY2(c.exits[1].detail.contains(QStringLiteral("X;touch")), qPrintable(c.exits[1].detail));
    QVERIFY(!QFileInfo::exists(marker));
    QVERIFY(QFileInfo::exists(weirdDir + QStringLiteral("/rank0.a1.out")));
}

void TestSshTransport::connectionCutMidRunResumesWithoutLossOrDuplicate()
{
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    const int lines = 400;
    RankLaunchSpec counting = spec(0, 1,
                                   {QStringLiteral("count"), QString::number(lines),
                                    QStringLiteral("0.01"), QStringLiteral("0")});
    counting.program = t->workerPath(1);
    t->startRank(counting);
    RankLaunchSpec echoing = spec(1, 1, {QStringLiteral("echo")});
    echoing.program = t->workerPath(1);
    t->startRank(echoing);
    QTRY_VERIFY_WITH_TIMEOUT(c.out.value(0).count('\n') >= 40 && c.pids.contains(1), 30000);
    t->writeStdin(1, "before\n");
    QTRY_COMPARE_WITH_TIMEOUT(c.out.value(1), QByteArray("got before\n"), 30000);

    QVERIFY(m_ssh.killSessions(1) > 0);
    // Written while the connection is down or being re-established: must still arrive once.
    t->writeStdin(1, "during\n");
    QTRY_VERIFY_WITH_TIMEOUT(c.progress.contains(QStringLiteral("1:reconnected")), 30000);
    QVERIFY(c.progress.contains(QStringLiteral("1:connection lost, reconnecting")));
    QVERIFY2(c.out.value(0).count('\n') < lines, "the cut came too late to test a resume");
    t->writeStdin(1, "stop\n");

    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 2, 60000);
    QCOMPARE(c.exits[0].exitCode, 0);
    QCOMPARE(c.out.value(0), countOutput("out", lines));
    QCOMPARE(c.err.value(0), countOutput("err", lines));
    QCOMPARE(c.out.value(1), QByteArray("got before\ngot during\nstopping\n"));
    QCOMPARE(c.exits[1].exitCode, 0);
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 10000);
}

void TestSshTransport::nodeLostPastTheDeadlineFailsCleanly()
{
    auto t = std::make_unique<SshTransport>(profile(), m_runId, &m_refuse);
    t->setReconnectDeadlineSec(2);
    QSignalSpy ok(t.get(), &Transport::prepared);
    t->prepare(m_fakeWorker);
    QVERIFY(ok.wait(30000));
    Collector c(t.get());
    RankLaunchSpec s = spec(0, 0, {QStringLiteral("hold")});
    s.program = t->workerPath(0);
    t->startRank(s);
    QTRY_COMPARE_WITH_TIMEOUT(c.out.value(0), QByteArray("holding\n"), 30000);

    QVERIFY(m_ssh.stopNode(0));
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 1, 30000);
    QCOMPARE(c.exits[0].exitCode, -1);
    QVERIFY2(c.exits[0].detail.contains(QStringLiteral("lost")), qPrintable(c.exits[0].detail));
    QVERIFY2(c.exits[0].detail.contains(m_ssh.address(0)), qPrintable(c.exits[0].detail));
    QVERIFY(m_ssh.startNode(0));
    // Nobody re-attached: once the grace period is over the rank sees the end of its stdin and
    // stops, leaving nothing behind.
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 40000);
}

void TestSshTransport::detachedRankIsReattachedByANewLauncher()
{
    const int lines = 300;
    RankLaunchSpec s = spec(0, 1,
                            {QStringLiteral("count"), QString::number(lines),
                             QStringLiteral("0.01"), QStringLiteral("5")});
    QByteArray out;
    QByteArray err;
    {
        auto first = std::make_unique<SshTransport>(profile(), m_runId, &m_refuse);
        first->setDetached(true);
        QSignalSpy ok(first.get(), &Transport::prepared);
        first->prepare(m_fakeWorker);
        QVERIFY(ok.wait(30000));
        Collector c(first.get());
        s.program = first->workerPath(1);
        first->startRank(s);
        QTRY_VERIFY_WITH_TIMEOUT(c.out.value(0).count('\n') >= 30, 30000);
        first.reset(); // the launcher goes away; the detached rank keeps running
        out = c.out.value(0);
        err = c.err.value(0);
        QVERIFY(c.exits.isEmpty());
    }
    QVERIFY(!processesMatching(m_runId).isEmpty());

    SshTransport second(profile(), m_runId, &m_refuse);
    QSignalSpy ok(&second, &Transport::prepared);
    second.prepare(QString());
    QVERIFY(ok.wait(30000));
    Collector c(&second);
    second.attachRank(s, 1, out.size(), err.size());
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 1, 60000);
    QVERIFY(c.pids.value(0) > 0);
    QCOMPARE(c.exits[0].exitCode, 5);
    QCOMPARE(out + c.out.value(0), countOutput("out", lines));
    QCOMPARE(err + c.err.value(0), countOutput("err", lines));
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 10000);
}

void TestSshTransport::destroyingTheTransportEndsItsRanks()
{
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    for (int rank = 0; rank < 4; ++rank) {
        RankLaunchSpec s = spec(rank, rank % 2, {QStringLiteral("hold")});
        s.program = t->workerPath(rank % 2);
        t->startRank(s);
    }
    QTRY_VERIFY_WITH_TIMEOUT(c.out.size() == 4, 30000);
    QVERIFY(!processesMatching(m_runId).isEmpty());
    t.reset(); // e.g. the launcher quits without stopping the run first
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 15000);
}

void TestSshTransport::idleConnectionDroppedBeforeStartIsReopened()
{
    auto t = prepared();
    QVERIFY(t);
    Collector c(t.get());
    QVERIFY(m_ssh.killSessions(0) > 0);
    RankLaunchSpec s = spec(
        0, 0,
        {QStringLiteral("count"), QStringLiteral("3"), QStringLiteral("0"), QStringLiteral("0")});
    s.program = t->workerPath(0);
    t->startRank(s);
    QTRY_COMPARE_WITH_TIMEOUT(c.exits.size(), 1, 30000);
    QVERIFY2(c.exits[0].detail.isEmpty(), qPrintable(c.exits[0].detail));
    QCOMPARE(c.out.value(0), countOutput("out", 3));
}

void TestSshTransport::prepareFailures_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown host") << QStringLiteral("unknown") << QStringLiteral("is unknown");
    QTest::newRow("changed host key") << QStringLiteral("changed") << QStringLiteral("CHANGED");
    QTest::newRow("wrong key") << QStringLiteral("wrongkey") << QStringLiteral("permission denied");
    QTest::newRow("port closed") << QStringLiteral("closed") << QStringLiteral("cannot connect");
    QTest::newRow("unreachable") << QStringLiteral("unreachable")
                                 << QStringLiteral("cannot connect");
    QTest::newRow("libtorch missing") << QStringLiteral("libs") << QStringLiteral("libtorch");
}

void TestSshTransport::prepareFailures()
{
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    Profile p = profile();
    QString worker = m_fakeWorker;
    if (kind == QLatin1String("unknown")) {
        QVERIFY(
            m_ssh.writeKnownHosts(m_home.path() + QStringLiteral("/.ssh/known_hosts"), true, {0}));
    } else if (kind == QLatin1String("changed")) {
        QVERIFY2(m_ssh.changeHostKey(1), qPrintable(m_ssh.lastError()));
    } else if (kind == QLatin1String("wrongkey")) {
        p.nodes[1].identityFile = m_ssh.createKey(QStringLiteral("stranger"), {}, false);
    } else if (kind == QLatin1String("closed")) {
        QVERIFY(m_ssh.stopNode(1));
    } else if (kind == QLatin1String("unreachable")) {
        // TEST-NET-1: routed nowhere; the connect timeout (or the network stack) ends the attempt.
        p.nodes[1].host = QStringLiteral("192.0.2.1");
        p.connectTimeoutSec = 2;
    } else if (kind == QLatin1String("libs")) {
        // A real dynamically linked program whose libtorch cannot be found on the node.
        const QString dir = m_local.filePath(QStringLiteral("libs"));
        QDir().mkpath(dir);
        worker = dir + QStringLiteral("/needs-libtorch");
        QProcess cc;
        cc.setWorkingDirectory(dir);
        cc.start(QStringLiteral("sh"),
                 {QStringLiteral("-c"),
                  QStringLiteral(
                      "echo 'void f(void){}' > l.c && echo 'int main(void){return 0;}' > m.c && "
                      "cc -shared -fPIC -o libtorch_cpu.so l.c && "
                      "cc -o needs-libtorch m.c -Wl,--no-as-needed -L. -ltorch_cpu")});
        cc.waitForFinished(60000);
        if (cc.exitCode() != 0)
            QSKIP("no C compiler to build a program that needs libtorch");
    }
    SshTransport t(p, m_runId, &m_refuse);
    QSignalSpy ok(&t, &Transport::prepared);
    QSignalSpy failed(&t, &Transport::prepareFailed);
    t.prepare(worker);
    QTRY_VERIFY_WITH_TIMEOUT(!ok.isEmpty() || !failed.isEmpty(), 30000);
    QVERIFY(ok.isEmpty());
    const QString message = failed.first().first().toString();
    qInfo("%s", qPrintable(message));
    QVERIFY2(message.contains(expected), qPrintable(message));
    if (kind != QLatin1String("libs"))
        QVERIFY2(message.startsWith(p.nodes[1].host), qPrintable(message));
    QVERIFY(!t.nodeInfo(1).error.isEmpty());
    if (kind != QLatin1String("libs"))
        QVERIFY(t.nodeInfo(0).error.isEmpty());
    QVERIFY(processesMatching(m_runId).isEmpty());

    if (kind == QLatin1String("changed") || kind == QLatin1String("closed")) {
        // Later tests get a healthy node back.
        QVERIFY(m_ssh.startNode(1));
    }
}

void TestSshTransport::plantedWorkerIsNeverRun_data()
{
    QTest::addColumn<QString>("kind");
    // Under the worker's public name, as large as the worker, with the record of a library
    // check beside it: what another user of a shared directory can leave (issue 29, problem 2).
    QTest::newRow("same name, size and .libs") << QStringLiteral("planted");
    QTest::newRow("worker directory others may write to") << QStringLiteral("shared");
}

void TestSshTransport::plantedWorkerIsNeverRun()
{
    QFETCH(QString, kind);
    QFile f(m_fakeWorker);
    QVERIFY(f.open(QIODevice::Append));
    f.write(QByteArray("# ") + m_runId.toUtf8() + '\n');
    f.close();
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray real = f.readAll();
    f.close();
    const QString sha =
        QString::fromLatin1(QCryptographicHash::hash(real, QCryptographicHash::Sha256).toHex());
    Profile p = profile();
    const QString shared = QStringLiteral("shared-workers-") + m_runId;
    if (kind == QLatin1String("shared"))
        p.workerDirectory = QStringLiteral("~/") + shared;
    for (int i = 0; i < 2; ++i) {
        const QString dir = kind == QLatin1String("shared")
                                ? m_ssh.home(i) + QLatin1Char('/') + shared
                                : m_ssh.home(i) + QStringLiteral("/.cache/rankdeck/worker");
        QVERIFY(QDir().mkpath(dir));
        if (kind == QLatin1String("shared"))
            QVERIFY(QFile::setPermissions(dir, QFileDevice::Permissions(0x7777)));
        QByteArray planted = "#!/bin/sh\necho planted-worker-ran\nexit 0\n";
        planted += QByteArray(real.size() - planted.size(), '#');
        QCOMPARE(planted.size(), real.size());
        QVERIFY(rankdeck::testing::writeFile(dir + QStringLiteral("/rankdeck-worker-") + sha,
                                             planted, true));
        QVERIFY(rankdeck::testing::writeFile(
            dir + QStringLiteral("/.rankdeck-worker-") + sha + QStringLiteral(".libs"), "\n\n"));
    }
    SshTransport t(p, m_runId, &m_refuse);
    QSignalSpy ok(&t, &Transport::prepared);
    QSignalSpy failed(&t, &Transport::prepareFailed);
    t.prepare(m_fakeWorker);
    QTRY_VERIFY_WITH_TIMEOUT(!ok.isEmpty() || !failed.isEmpty(), 30000);
    if (kind == QLatin1String("shared")) {
        QVERIFY(ok.isEmpty());
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(QStringLiteral("refusing the worker directory")) &&
                     message.contains(shared),
                 qPrintable(message));
        return;
    }
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    for (int i = 0; i < 2; ++i) {
        // The node found the planted file's content wrong and put the real worker in its place.
        QVERIFY(t.nodeInfo(i).workerUploaded);
        QFile remote(t.workerPath(i));
        QVERIFY(remote.open(QIODevice::ReadOnly));
        QCOMPARE(remote.readAll(), real);
    }
}

void TestSshTransport::libraryCheckRunsOncePerWorkerAndLibtorchPath()
{
    auto first = prepared();
    QVERIFY(first);
    const QFileInfo deployed(first->workerPath(0));
    const QString marker = deployed.absolutePath() + QStringLiteral("/.") + deployed.fileName() +
                           QStringLiteral(".libs");
    first.reset();
    QVERIFY(QFileInfo::exists(marker));

    // A later launch takes the recorded result instead of running ldd again: a directory
    // written into the record by hand comes back as the node's library directory.
    const QString recorded = m_local.filePath(QStringLiteral("recorded-libs"));
    QVERIFY(QDir().mkpath(recorded));
    auto writeMarker = [&](const QByteArray &content) {
        QFile f(marker);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(content);
    };
    writeMarker("\n" + QFile::encodeName(recorded) + '\n');
    auto second = prepared();
    QVERIFY(second);
    QCOMPARE(second->nodeInfo(0).libtorchDirectory, recorded);
    second.reset();

    // A record of a library directory that is gone is not trusted: the check runs again.
    writeMarker("\n" + QFile::encodeName(recorded) + "-gone\n");
    auto third = prepared();
    QVERIFY(third);
    QCOMPARE(third->nodeInfo(0).libtorchDirectory, QString());
    third.reset();

    // Nor is one made for another libtorchPath.
    writeMarker("\n" + QFile::encodeName(recorded) + '\n');
    Profile p = profile();
    p.libtorchPath = m_ssh.home(0);
    SshTransport t(p, m_runId, &m_refuse);
    QSignalSpy ok(&t, &Transport::prepared);
    t.prepare(m_fakeWorker);
    QVERIFY(ok.wait(30000));
    QCOMPARE(t.nodeInfo(0).libtorchDirectory, m_ssh.home(0));
    QFile f(marker);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(),
             QFile::encodeName(m_ssh.home(0)) + '\n' + QFile::encodeName(m_ssh.home(0)) + '\n');
}

void TestSshTransport::uploadOverSftpHandlesBinaryAndLargeFiles()
{
    // Every byte value, a few MB (many channel windows), and a size no chunk boundary divides.
    QByteArray content = "#!/bin/sh\necho big\nexit 0\n";
    QByteArray noise(3 * 1024 * 1024 + 12345, Qt::Uninitialized);
    for (qsizetype i = 0; i < noise.size(); ++i)
        noise[i] = char(QRandomGenerator::global()->bounded(256));
    content += noise;
    const QString big = m_local.filePath(QStringLiteral("big-worker-") + m_runId);
    QFile f(big);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
    f.close();
    QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));

    SshTransport t(profile(), m_runId, &m_refuse);
    QList<int> percents;
    connect(&t, &Transport::nodeProgress, this, [&](int node, const QString &stage, int percent) {
        if (node == 0 && stage == QLatin1String("uploading the worker"))
            percents << percent;
    });
    QSignalSpy ok(&t, &Transport::prepared);
    QSignalSpy failed(&t, &Transport::prepareFailed);
    t.prepare(big);
    QVERIFY(QTest::qWaitFor([&] { return !ok.isEmpty() || !failed.isEmpty(); }, 60000));
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    for (int i = 0; i < 2; ++i) {
        QVERIFY(t.nodeInfo(i).workerUploaded);
        QFile remote(t.workerPath(i));
        QVERIFY(remote.open(QIODevice::ReadOnly));
        QVERIFY(remote.readAll() == content);
        QVERIFY(QFileInfo(t.workerPath(i)).isExecutable());
    }
    QVERIFY(percents.size() > 2);
    QCOMPARE(percents.last(), 100);
    QVERIFY(std::is_sorted(percents.begin(), percents.end()));
    // The copy went over SFTP (the issue's contract), to a temporary name that was renamed.
    QVERIFY2(m_ssh.log(0).contains("subsystem 'sftp'"), m_ssh.log(0).right(2000).constData());
    const QDir dir = QFileInfo(t.workerPath(0)).dir();
    QVERIFY2(dir.entryList({QStringLiteral("*.part")}, QDir::Files | QDir::Hidden).isEmpty(),
             qPrintable(dir.entryList(QDir::Files | QDir::Hidden).join(QLatin1Char(' '))));
}

QTEST_GUILESS_MAIN(TestSshTransport)
#include "tst_sshtransport.moc"
