// SPDX-License-Identifier: GPL-3.0-or-later
//
// Links that fail as real ones do: both sshd nodes live in network namespaces of their own
// (tests/common/netnsfixture.h), reached over veth pairs, so a cut is a link taken down inside
// the namespace (`ip link set … down`: nothing is reset, both ends just stop hearing) and a thin
// link is tbf's. Through the CLI, 2 nodes × 1 rank of a shell program printing numbered lines:
//   - over the plain veth and over a 512 kbit/s tbf cap, every line arrives exactly once, in
//     order (the capped run has far more output than the link carries while it runs);
//   - a detachable run whose node loses its link for 30 s goes on there, and its follower
//     (`attach`) resumes the stream at the next byte once the link is back: no tick lost or
//     doubled, the ticks printed during the outage included;
//   - a run that is not detachable and whose node loses its link for 30 s (longer than the
//     orphan grace, 4 s) fails cleanly: the node is named lost, the ranks of the other node are
//     stopped, and the cut-off node ends its own ranks too, while the link is still down.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "netnsfixture.h"
#include "sshfixture.h"
#include "testprocesses.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace rankdeck;
using rankdeck::testing::fileLines;
using rankdeck::testing::processesOfRun;

namespace {

constexpr int kOutageMs = 30000;

const char kTicks[] = "i=0; while :; do echo \"tick $i\"; i=$((i+1)); sleep 0.02; done";

// Each "tick N" line once, in order; returns how many, or -1 (and a warning) at the first gap
// or repeat.
int ticksInOrder(const QString &path)
{
    int next = 0;
    for (const QByteArray &line : fileLines(path)) {
        if (!line.startsWith("tick "))
            continue;
        if (line != "tick " + QByteArray::number(next)) {
            qWarning("%s: \"%s\" where tick %d was due", qPrintable(path), line.constData(), next);
            return -1;
        }
        ++next;
    }
    return next;
}

} // namespace

class TestLinkFaults : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void thinLinkLosesNothing_data();
    void thinLinkLosesNothing();
    void detachableRunSurvivesALinkDown();
    void linkDownPastTheGraceFailsCleanly();

private:
    QString runDirectory(const QString &name) const;
    QString nodeRunDir(int node, const QString &runId) const
    {
        return rankdeck::testing::nodeRunDirectory(m_ssh, node, runId);
    }
    // The run's processes on one node: every rank and what it starts has RANKDECK_RUN_ID, and
    // sshd gives each node's sessions their own HOME.
    QStringList processesOnNode(const QString &runId, int node) const;
    QStringList launchArgs(const QString &name, bool detach, const QString &program) const;

    // Destroyed after the sshds that run in its namespaces.
    NetnsFixture m_net;
    SshFixture m_ssh;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_runsDir;
};

void TestLinkFaults::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    if (const QString why = NetnsFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-cli");
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(QStringLiteral("XDG_DATA_HOME/rankdeck/runs"));
    QVERIFY2(m_net.create(2), qPrintable(m_net.lastError()));
    for (int i = 0; i < 2; ++i)
        m_ssh.setNodeNetwork(i, m_net.nodeAddress(i), m_net.execPrefix(i));
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    QVERIFY(m_ssh.writeKnownHosts(m_tmp.filePath(QStringLiteral("HOME/.ssh/known_hosts"))));

    Profile p = rankdeck::testing::fixtureProfile(m_ssh, QStringLiteral("netns"), 2, 1);
    // A reconnect deadline of 3 × 20 s = 60 s, longer than the outage plus the 10 s of silence
    // before a detachable run's follower calls the link dead.
    p.connectTimeoutSec = 20;
    p.heartbeatTimeoutSec = 30;
    QCOMPARE(p.orphanGraceSec, 4);
    QString error;
    QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
}

void TestLinkFaults::cleanup()
{
    for (int i = 0; i < m_net.count(); ++i) {
        m_net.setLinkUp(i, true);
        m_net.setRate(i, QString());
    }
}

QString TestLinkFaults::runDirectory(const QString &name) const
{
    for (const QString &d : QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (d.contains(name))
            return m_runsDir + QLatin1Char('/') + d;
    }
    return {};
}

QStringList TestLinkFaults::processesOnNode(const QString &runId, int node) const
{
    QStringList found;
    const QByteArray home = "HOME=" + QFile::encodeName(m_ssh.home(node));
    for (const QString &p : processesOfRun(runId)) {
        QFile env(QStringLiteral("/proc/%1/environ").arg(p.section(QLatin1Char(' '), 0, 0)));
        if (env.open(QIODevice::ReadOnly) && env.readAll().split('\0').contains(home))
            found << p;
    }
    return found;
}

QStringList TestLinkFaults::launchArgs(const QString &name, bool detach,
                                       const QString &program) const
{
    QStringList args{QStringLiteral("launch"),
                     QStringLiteral("--profile"),
                     QStringLiteral("netns"),
                     QStringLiteral("--name"),
                     name,
                     QStringLiteral("--no-progress")};
    if (detach)
        args << QStringLiteral("--detach");
    args << QStringLiteral("--exec") << QStringLiteral("--") << QStringLiteral("/bin/sh")
         << QStringLiteral("-c") << program;
    return args;
}

void TestLinkFaults::thinLinkLosesNothing_data()
{
    QTest::addColumn<QString>("rate");
    QTest::addColumn<int>("lines");
    // The first row also deploys the supervisor (4 MB) to both nodes, over the plain link.
    QTest::newRow("veth") << QString() << 2000;
    QTest::newRow("512 kbit tbf") << QStringLiteral("512kbit") << 2000;
}

void TestLinkFaults::thinLinkLosesNothing()
{
    QFETCH(QString, rate);
    QFETCH(int, lines);
    for (int i = 0; i < 2; ++i)
        QVERIFY2(m_net.setRate(i, rate), qPrintable(m_net.lastError()));
    // 2000 lines of 200 bytes, printed in well under a second: 400 kB per node, some 6 s at
    // 512 kbit/s, so the node's file runs far ahead of the stream.
    // (No QString::arg here: it would take printf's %0190d for a placeholder.)
    const QString program = QStringLiteral("i=0; while [ $i -lt ") + QString::number(lines) +
                            QStringLiteral(" ]; do echo \"tick $i $(printf '%0190d' $i)\"; "
                                           "i=$((i+1)); done");
    const QString name = rate.isEmpty() ? QStringLiteral("thin-veth") : QStringLiteral("thin-tbf");
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    QElapsedTimer took;
    took.start();
    cli.start(m_cli, launchArgs(name, false, program));
    const bool ended = cli.waitForFinished(120000);
    if (!ended)
        ::kill(pid_t(cli.processId()), SIGINT);
    cli.waitForFinished(30000);
    // The launcher's own lines, not the ranks' 400 kB.
    QStringList notes;
    for (const QString &l : QString::fromUtf8(cli.readAll()).split(u'\n'))
        if (!l.startsWith(QLatin1String("[r")))
            notes << l.left(300);
    if (!(ended && cli.exitCode() == 0))
        qWarning("%s", qPrintable(notes.join(u'\n').right(6000)));
    QVERIFY(ended && cli.exitCode() == 0);
    const QString dir = runDirectory(name);
    QVERIFY(!dir.isEmpty());
    for (int rank = 0; rank < 2; ++rank) {
        const QString log = dir + QStringLiteral("/rank-%1.log").arg(rank);
        int n = 0;
        for (const QByteArray &l : fileLines(log)) {
            if (!l.startsWith("tick "))
                continue;
            QVERIFY2(l.startsWith("tick " + QByteArray::number(n) + ' '), l.left(40).constData());
            ++n;
        }
        QCOMPARE(n, lines);
    }
    qInfo("%s: launch to end %lld ms", QTest::currentDataTag(), qint64(took.elapsed()));
}

void TestLinkFaults::detachableRunSurvivesALinkDown()
{
    QProcess launcher;
    launcher.start(m_cli, launchArgs(QStringLiteral("outage"), true, QString::fromLatin1(kTicks)));
    QVERIFY(testing::ended(launcher, 120000));
    QVERIFY2(launcher.exitCode() == 0, launcher.readAllStandardError().constData());
    const QString runId =
        QString::fromUtf8(launcher.readAllStandardOutput()).trimmed().split(u'\n').last();
    const QString local = m_runsDir + QLatin1Char('/') + runId;
    QVERIFY2(QFileInfo(local).isDir(), qPrintable(runId));

    QProcess follower;
    follower.setProcessChannelMode(QProcess::MergedChannels);
    follower.start(m_cli, {QStringLiteral("attach"), runId, QStringLiteral("--no-progress")});
    QVERIFY(follower.waitForStarted());
    const QString localLog = local + QStringLiteral("/rank-0.log");
    const QString nodeOut = nodeRunDir(0, runId) + QStringLiteral("/rank0.a1.out");
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(localLog).size() > 2000, 60000);

    QVERIFY2(m_net.setLinkUp(0, false), qPrintable(m_net.lastError()));
    const qint64 nodeAtCut = QFileInfo(nodeOut).size();
    QTest::qWait(kOutageMs);
    // The rank went on printing on its node, and the follower did not give up.
    const qint64 nodeAtMend = QFileInfo(nodeOut).size();
    QVERIFY2(nodeAtMend > nodeAtCut + 5000, qPrintable(QString::number(nodeAtMend - nodeAtCut)));
    QCOMPARE(follower.state(), QProcess::Running);
    QVERIFY2(!processesOnNode(runId, 0).isEmpty(), "the detachable rank ended during the outage");
    QVERIFY2(m_net.setLinkUp(0, true), qPrintable(m_net.lastError()));
    QElapsedTimer back;
    back.start();
    // Caught up: the record holds what the node printed while it was cut off.
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(localLog).size() > nodeAtMend, 90000);
    qInfo("the stream of the cut node caught up %lld ms after the link came back",
          qint64(back.elapsed()));

    const QStringList stop{QStringLiteral("stop"), runId};
    QCOMPARE(QProcess::execute(m_cli, stop), 0);
    QVERIFY(testing::ended(follower, 60000));
    const QString said = QString::fromUtf8(follower.readAll());
    QTRY_VERIFY_WITH_TIMEOUT(processesOfRun(runId).isEmpty(), 20000);
    for (int rank = 0; rank < 2; ++rank) {
        const int ticks = ticksInOrder(local + QStringLiteral("/rank-%1.log").arg(rank));
        qInfo("rank %d: %d ticks, each once, across a 30 s outage of node 0's link", rank, ticks);
        QVERIFY2(ticks > 0, qPrintable(said.right(3000)));
    }
    // Node 0's record covers the outage: more ticks than were printed before the cut plus those
    // of the 30 s (a tick every 20 ms and then some: well over 1,000).
    QVERIFY(ticksInOrder(localLog) > 1000);
}

void TestLinkFaults::linkDownPastTheGraceFailsCleanly()
{
    const QString name = QStringLiteral("cutoff");
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.start(m_cli, launchArgs(name, false, QString::fromLatin1(kTicks)));
    QVERIFY(cli.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(
        !runDirectory(name).isEmpty() &&
            QFileInfo(runDirectory(name) + QStringLiteral("/rank-0.log")).size() > 2000,
        120000);
    const QString runId = QFileInfo(runDirectory(name)).fileName();
    QVERIFY(!processesOnNode(runId, 0).isEmpty());
    QVERIFY(!processesOnNode(runId, 1).isEmpty());

    QVERIFY2(m_net.setLinkUp(0, false), qPrintable(m_net.lastError()));
    QElapsedTimer cut;
    cut.start();
    QVERIFY(testing::ended(cli, kOutageMs));
    const qint64 failedAfter = cut.elapsed();
    const QString said = QString::fromUtf8(cli.readAll());
    qInfo("the run failed %lld ms after the cut", failedAfter);
    QVERIFY2(cli.exitStatus() == QProcess::NormalExit && cli.exitCode() != 0,
             qPrintable(said.right(3000)));
    QVERIFY2(said.contains(QStringLiteral("lost")) && said.contains(m_ssh.address(0)),
             qPrintable(said.right(3000)));
    // Nothing left on the node the launcher could still reach.
    QTRY_VERIFY_WITH_TIMEOUT(processesOnNode(runId, 1).isEmpty(), 15000);
    // Nor on the cut-off one, which ended its ranks by itself, the link still down.
    QTRY_VERIFY_WITH_TIMEOUT(processesOnNode(runId, 0).isEmpty(), 20000);
    const qint64 nodeEndedAfter = cut.elapsed();
    qInfo("the cut-off node's ranks were gone %lld ms after the cut", nodeEndedAfter);
    QVERIFY(nodeEndedAfter < kOutageMs);
    const QByteArray show = [&] {
        QProcess p;
        p.start(m_cli, {QStringLiteral("show"), runId});
        p.waitForFinished(30000);
        return p.readAllStandardOutput();
    }();
    QVERIFY2(show.contains("failed") && show.contains("lost"), show.constData());
    QTest::qWait(int(std::max<qint64>(0, kOutageMs - cut.elapsed())));
    QVERIFY(m_net.setLinkUp(0, true));
    QTest::qWait(2000);
    QVERIFY2(processesOfRun(runId).isEmpty(), qPrintable(processesOfRun(runId).join(u", ")));
}

QTEST_GUILESS_MAIN(TestLinkFaults)
#include "tst_linkfaults.moc"
