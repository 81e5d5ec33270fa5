// SPDX-License-Identifier: GPL-3.0-or-later
//
// Bad networks: each sshd node of the fixture is reached through a TcpProxy (tests/common/), so
// the launcher's SSH connections cross a link that delays, stalls or throttles. Through the CLI
// (`launch --exec`, 2 nodes × 1 rank of a shell program printing numbered lines):
//   - with 100 ms each way (a 200 ms round trip), with a 3 s stall of both directions in the
//     middle of the output, and with a 64 kB/s cap, the run finishes and every rank's record
//     holds each of its lines exactly once, in order;
//   - a run stopped (SIGINT to the CLI) over the delayed link ends cleanly and leaves nothing
//     running on the nodes;
//   - every connection cut at once mid-output (TcpProxy::cutAll(): both ends see a reset) is
//     re-established within the orphan grace, the run ends well and each line is there once.
// Nodes in network namespaces, with tbf and links taken down, are tst_linkfaults'.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"
#include "tcpproxy.h"
#include "testprocesses.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <memory>

using namespace rankdeck;
using rankdeck::testing::fileLines;
using rankdeck::testing::processesMatching;

namespace {

constexpr int kLines = 300;

} // namespace

class TestBadNetwork : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void noLineLostOrDoubled_data();
    void noLineLostOrDoubled();
    void stopOverADelayedLink();
    void cutConnectionsAreReestablished();

private:
    QString runDirectory(const QString &name) const;
    // Each rank's record holds its kLines numbered lines, each once, in order.
    void verifyEachLineOnce(const QString &name);
    QString script(bool endless);
    // `launch` of script(endless) on the badnet profile, as run `name`.
    QStringList launchArgs(const QString &name, bool endless);

    SshFixture m_ssh;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_runsDir;
    std::unique_ptr<TcpProxy> m_proxies[2];
};

void TestBadNetwork::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    m_cli = bin + QStringLiteral("/rankdeck-cli");
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(QStringLiteral("XDG_DATA_HOME/rankdeck/runs"));
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));

    Profile p = rankdeck::testing::fixtureProfile(m_ssh, QStringLiteral("badnet"), 2, 1);
    QFile knownHosts(m_tmp.filePath(QStringLiteral("HOME/.ssh/known_hosts")));
    QVERIFY(QDir().mkpath(QFileInfo(knownHosts).path()));
    QVERIFY(knownHosts.open(QIODevice::WriteOnly));
    for (int i = 0; i < 2; ++i) {
        m_proxies[i] = std::make_unique<TcpProxy>(m_ssh.address(i), m_ssh.port(i));
        QString error;
        QVERIFY2(m_proxies[i]->start(&error), qPrintable(error));
        p.nodes[i].host = QStringLiteral("127.0.0.1");
        p.nodes[i].port = m_proxies[i]->port();
        // The node's key, under the address the launcher now reaches it by.
        const QString line = m_ssh.knownHostsLine(i);
        knownHosts.write(QStringLiteral("[127.0.0.1]:%1 %2\n")
                             .arg(m_proxies[i]->port())
                             .arg(line.section(QLatin1Char(' '), 1))
                             .toUtf8());
    }
    knownHosts.close();
    p.connectTimeoutSec = 10;
    p.heartbeatTimeoutSec = 30;
    QString error;
    QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
}

void TestBadNetwork::init()
{
    for (auto &proxy : m_proxies) {
        if (!proxy)
            continue;
        proxy->setDelayMs(0);
        proxy->setStalled(false);
        proxy->setBytesPerSec(0);
    }
}

QString TestBadNetwork::runDirectory(const QString &name) const
{
    for (const QString &d : QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (d.contains(name))
            return m_runsDir + QLatin1Char('/') + d;
    }
    return {};
}

QString TestBadNetwork::script(bool endless)
{
    const QString path =
        m_tmp.filePath(endless ? QStringLiteral("forever.sh") : QStringLiteral("lines.sh"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    // Numbered lines, a little apart, long enough that a stall falls in the middle of them.
    f.write(QStringLiteral("i=0\n"
                           "while [ %1 ]; do\n"
                           "  echo \"rank $RANK line $i $(printf '%%060d' $i)\"\n"
                           "  i=$((i + 1)); sleep 0.01\n"
                           "done\n")
                .arg(endless ? QStringLiteral("1") : QStringLiteral("$i -lt %1").arg(kLines))
                .toUtf8());
    return path;
}

QStringList TestBadNetwork::launchArgs(const QString &name, bool endless)
{
    return {QStringLiteral("launch"),
            QStringLiteral("--profile"),
            QStringLiteral("badnet"),
            QStringLiteral("--name"),
            name,
            QStringLiteral("--no-progress"),
            QStringLiteral("--exec"),
            QStringLiteral("--"),
            QStringLiteral("sh"),
            script(endless)};
}

void TestBadNetwork::noLineLostOrDoubled_data()
{
    QTest::addColumn<int>("delayMs");
    QTest::addColumn<int>("stallMs");
    QTest::addColumn<qint64>("bytesPerSec");
    QTest::newRow("200 ms round trip") << 100 << 0 << qint64(0);
    QTest::newRow("3 s stall mid-run") << 20 << 3000 << qint64(0);
    QTest::newRow("64 kB/s") << 5 << 0 << qint64(64 * 1024);
}

void TestBadNetwork::noLineLostOrDoubled()
{
    QFETCH(int, delayMs);
    QFETCH(int, stallMs);
    QFETCH(qint64, bytesPerSec);
    for (auto &proxy : m_proxies) {
        proxy->setDelayMs(delayMs);
        proxy->setBytesPerSec(bytesPerSec);
    }
    const QString name = QStringLiteral("badnet-%1")
                             .arg(QLatin1StringView(QTest::currentDataTag()))
                             .replace(QLatin1Char(' '), QLatin1Char('-'))
                             .remove(QLatin1Char('/'))
                             .toLower();
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    QElapsedTimer took;
    took.start();
    cli.start(m_cli, launchArgs(name, false));
    QVERIFY(cli.waitForStarted());
    if (stallMs > 0) {
        // Once both ranks print, freeze the links in both directions for stallMs.
        QTRY_VERIFY_WITH_TIMEOUT(
            !runDirectory(name).isEmpty() &&
                QFileInfo(runDirectory(name) + QStringLiteral("/rank-1.log")).size() > 2000,
            120000);
        for (auto &proxy : m_proxies)
            proxy->setStalled(true);
        QTest::qWait(stallMs);
        for (auto &proxy : m_proxies)
            proxy->setStalled(false);
    }
    QVERIFY(cli.waitForFinished(240000));
    const QString said = QString::fromUtf8(cli.readAll());
    qInfo("%s: %lld ms, %lld bytes through the proxies", QTest::currentDataTag(),
          qint64(took.elapsed()), m_proxies[0]->bytesForwarded() + m_proxies[1]->bytesForwarded());
    QVERIFY2(cli.exitCode() == 0, qPrintable(said.right(3000)));
    verifyEachLineOnce(name);
}

void TestBadNetwork::verifyEachLineOnce(const QString &name)
{
    const QString dir = runDirectory(name);
    QVERIFY2(!dir.isEmpty(), qPrintable(name));
    for (int rank = 0; rank < 2; ++rank) {
        const QList<QByteArray> lines = fileLines(dir + QStringLiteral("/rank-%1.log").arg(rank));
        QList<QByteArray> numbered;
        for (const QByteArray &l : lines) {
            if (l.startsWith(QStringLiteral("rank %1 line ").arg(rank).toUtf8()))
                numbered << l;
        }
        QCOMPARE(numbered.size(), kLines);
        for (int i = 0; i < kLines; ++i)
            QVERIFY2(numbered[i].startsWith(
                         QStringLiteral("rank %1 line %2 ").arg(rank).arg(i).toUtf8()),
                     numbered[i].constData());
    }
}

void TestBadNetwork::stopOverADelayedLink()
{
    for (auto &proxy : m_proxies)
        proxy->setDelayMs(100);
    const QString name = QStringLiteral("badnet-stop");
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.start(m_cli, launchArgs(name, true));
    QVERIFY(cli.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(
        !runDirectory(name).isEmpty() &&
            QFileInfo(runDirectory(name) + QStringLiteral("/rank-1.log")).size() > 2000,
        120000);
    const QString runId = QFileInfo(runDirectory(name)).fileName();
    ::kill(pid_t(cli.processId()), SIGINT);
    QVERIFY(cli.waitForFinished(60000));
    const QString said = QString::fromUtf8(cli.readAll());
    QVERIFY2(cli.exitStatus() == QProcess::NormalExit, qPrintable(said.right(2000)));
    QVERIFY2(said.contains(QStringLiteral("stopped")), qPrintable(said.right(2000)));
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(runId).isEmpty(), 20000);
    // What was printed before the stop is in the record, each line once.
    for (int rank = 0; rank < 2; ++rank) {
        int expected = 0;
        for (const QByteArray &l :
             fileLines(runDirectory(name) + QStringLiteral("/rank-%1.log").arg(rank))) {
            if (!l.startsWith(QStringLiteral("rank %1 line ").arg(rank).toUtf8()))
                continue;
            QVERIFY2(
                l.startsWith(QStringLiteral("rank %1 line %2 ").arg(rank).arg(expected).toUtf8()),
                l.constData());
            ++expected;
        }
        QVERIFY(expected > 0);
    }
}

void TestBadNetwork::cutConnectionsAreReestablished()
{
    for (auto &proxy : m_proxies)
        proxy->setDelayMs(20);
    const QString name = QStringLiteral("badnet-cut");
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.start(m_cli, launchArgs(name, false));
    QVERIFY(cli.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(
        !runDirectory(name).isEmpty() &&
            QFileInfo(runDirectory(name) + QStringLiteral("/rank-1.log")).size() > 2000,
        120000);
    for (auto &proxy : m_proxies) {
        proxy->cutAll();
        QCOMPARE(proxy->connectionCount(), 0);
    }
    // The launcher is back on both nodes (new connections through the proxies)…
    for (auto &proxy : m_proxies)
        QTRY_VERIFY_WITH_TIMEOUT(proxy->connectionCount() > 0, 10000);
    QVERIFY(cli.waitForFinished(120000));
    const QString said = QString::fromUtf8(cli.readAll());
    // …in time: the ranks were still there to re-attach to and ended well.
    QVERIFY2(cli.exitCode() == 0, qPrintable(said.right(3000)));
    verifyEachLineOnce(name);
}

QTEST_GUILESS_MAIN(TestBadNetwork)
#include "tst_badnetwork.moc"
