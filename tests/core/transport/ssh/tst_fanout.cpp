// SPDX-License-Identifier: GPL-3.0-or-later
//
// The launcher at cluster width: 64 sshd nodes of the fixture, one synthetic rank
// (rankdeck-loadgen, deployed like the worker) on each, and one node whose sshd is frozen
// (SIGSTOP: its port accepts, nothing answers, as a hung machine does). Every healthy node must
// connect, deploy and start its rank while the frozen one is still connecting, and the frozen
// node must fail on its own connect timeout with a message naming it, and only it.
#include "config/profile.h"
#include "fixtureprofile.h"
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"
#include "transport/ssh/sshtransport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <csignal>
#include <sys/types.h>

using namespace rankdeck;

namespace {

constexpr int kNodes = 64;
// Long enough that 63 healthy nodes are running well before it runs out on a loaded 2-core
// machine (they took 2.5 s there, beside two other builds), short enough to keep the test
// around half a minute.
constexpr int kConnectTimeoutSec = 15;

// Lets a frozen sshd run again whatever way the test ends, so the fixture can stop it.
struct Thaw
{
    qint64 pid = 0;
    ~Thaw()
    {
        if (pid > 0)
            ::kill(pid_t(pid), SIGCONT);
    }
};

} // namespace

class TestFanout : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void frozenNodeDoesNotHoldUpTheOthers();

private:
    SshFixture m_ssh;
    QTemporaryDir m_home;
    QString m_loadgen;
    PolicySshInteraction m_refuse{SshInteraction::HostKeyDecision::Reject};
};

void TestFanout::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    m_loadgen = qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-loadgen");
    QVERIFY2(QFileInfo(m_loadgen).isExecutable(),
             qPrintable(m_loadgen + QStringLiteral(" is not built")));
    QVERIFY(m_home.isValid());
    qputenv("HOME", QFile::encodeName(m_home.path()));
    qunsetenv("SSH_AUTH_SOCK");
    QElapsedTimer clock;
    clock.start();
    QVERIFY2(m_ssh.start(kNodes), qPrintable(m_ssh.lastError()));
    qInfo("%d sshd nodes up in %lld ms", kNodes, clock.elapsed());
    QVERIFY(m_ssh.writeKnownHosts(m_home.path() + QStringLiteral("/.ssh/known_hosts")));
}

void TestFanout::frozenNodeDoesNotHoldUpTheOthers()
{
    // A node in the middle, so that neither the first nor the last thread is the stuck one.
    const int frozen = kNodes / 2;
    Thaw thaw;
    thaw.pid = m_ssh.serverPid(frozen);
    QVERIFY(thaw.pid > 0);
    QCOMPARE(::kill(pid_t(thaw.pid), SIGSTOP), 0);

    Profile p = rankdeck::testing::fixtureProfile(m_ssh, QStringLiteral("fanout"), kNodes, 1);
    p.connectTimeoutSec = kConnectTimeoutSec;
    const QString runId = QStringLiteral("fanout-%1")
                              .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    SshTransport t(p, runId, &m_refuse);

    QHash<int, QStringList> stages;
    QHash<int, qint64> pids;
    QHash<int, RankExit> exits;
    QHash<int, QByteArray> err;
    connect(&t, &Transport::nodeProgress, this,
            [&](int node, const QString &stage, int) { stages[node] << stage; });
    connect(&t, &Transport::rankStarted, this, [&](int rank, qint64 pid) { pids[rank] = pid; });
    connect(&t, &Transport::rankExited, this,
            [&](int rank, const RankExit &e) { exits[rank] = e; });
    connect(&t, &Transport::rankOutput, this, [&](int rank, StreamKind s, const QByteArray &chunk) {
        if (s == StreamKind::Stderr)
            err[rank] += chunk;
    });
    QSignalSpy prepared(&t, &Transport::prepared);
    QSignalSpy failed(&t, &Transport::prepareFailed);

    // Each node's rank starts as soon as that node is ready, not when all of them are: rank i
    // on node i.
    QSet<int> launched;
    QTimer poll;
    connect(&poll, &QTimer::timeout, this, [&] {
        for (int node = 0; node < kNodes; ++node) {
            if (launched.contains(node) || t.workerPath(node).isEmpty())
                continue;
            launched.insert(node);
            RankLaunchSpec s;
            s.rank = node;
            s.nodeIndex = node;
            s.program = t.workerPath(node);
            s.arguments = {QStringLiteral("--duration"), QStringLiteral("0"),
                           QStringLiteral("--lines-per-sec"), QStringLiteral("0")};
            s.environment.insert(QStringLiteral("RANK"), QString::number(node));
            s.environment.insert(QStringLiteral("WORLD_SIZE"), QString::number(kNodes));
            s.environment.insert(QStringLiteral("RANKDECK_RUN_ID"), runId);
            t.startRank(s);
        }
    });
    poll.start(20);
    QElapsedTimer clock;
    clock.start();
    t.prepare(m_loadgen);

    const bool othersStarted =
        QTest::qWaitFor([&] { return pids.size() == kNodes - 1 || !failed.isEmpty(); },
                        (kConnectTimeoutSec + 60) * 1000);
    QVERIFY2(othersStarted,
             qPrintable(QStringLiteral("%1 of %2 ranks started").arg(pids.size()).arg(kNodes - 1)));
    QVERIFY2(failed.isEmpty(),
             qPrintable(QStringLiteral(
                            "the frozen node failed before the others were running (%1 of %2 ranks "
                            "started): %3")
                            .arg(pids.size())
                            .arg(kNodes - 1)
                            .arg(failed.value(0).value(0).toString())));
    qInfo("%d ranks running after %lld ms, the frozen node still connecting", kNodes - 1,
          clock.elapsed());
    QVERIFY(!pids.contains(frozen));
    // Nodes beyond the transport's parallel-connect limit first wait for a slot; the frozen
    // node holds one slot and nothing else.
    const auto working = [&](int node) {
        QStringList l = stages.value(node);
        l.removeAll(QStringLiteral("waiting for a connection slot"));
        return l;
    };
    QCOMPARE(working(frozen), QStringList{QStringLiteral("connecting")});
    bool someoneWaited = false;
    for (int node = 0; node < kNodes; ++node) {
        someoneWaited = someoneWaited || stages.value(node).value(0) != QLatin1String("connecting");
        if (node == frozen)
            continue;
        // Per-node progress, from the first stage to the last.
        QCOMPARE(working(node).value(0), QStringLiteral("connecting"));
        QVERIFY2(
            stages.value(node).contains(QStringLiteral("ready")),
            qPrintable(QStringLiteral("node %1: %2").arg(node).arg(stages.value(node).join(u','))));
        QVERIFY(pids.value(node) > 0);
    }

    // 64 nodes never connect all at once.
    QVERIFY(someoneWaited);

    // The frozen node gives up on its own timeout and the failure names it alone.
    QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, (kConnectTimeoutSec + 30) * 1000));
    qInfo("the frozen node failed after %lld ms", clock.elapsed());
    QCOMPARE(prepared.size(), 0);
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(m_ssh.address(frozen) + QLatin1Char(':')), qPrintable(message));
    QVERIFY2(!message.contains(u'\n'), qPrintable(message));
    for (int node = 0; node < kNodes; ++node) {
        const QString error = t.nodeInfo(node).error;
        if (node == frozen)
            QVERIFY2(error.startsWith(m_ssh.address(frozen) + QLatin1Char(':')), qPrintable(error));
        else
            QVERIFY2(error.isEmpty(),
                     qPrintable(QStringLiteral("node %1: %2").arg(node).arg(error)));
    }

    // Every healthy rank ran the loadgen that was deployed to its node, as its own rank, to a
    // clean end.
    QTRY_COMPARE_WITH_TIMEOUT(exits.size(), kNodes - 1, 60000);
    for (int node = 0; node < kNodes; ++node) {
        if (node == frozen)
            continue;
        const RankExit e = exits.value(node);
        QVERIFY2(
            !e.crashed && e.exitCode == 0 && e.detail.isEmpty(),
            qPrintable(
                QStringLiteral("rank %1: exit %2 %3").arg(node).arg(e.exitCode).arg(e.detail)));
        QVERIFY2(err.value(node).contains("loadgen rank " + QByteArray::number(node) + " wrote"),
                 err.value(node).constData());
    }
}

QTEST_GUILESS_MAIN(TestFanout)
#include "tst_fanout.moc"
