// SPDX-License-Identifier: GPL-3.0-or-later
//
// Keepalives on idle SSH connections, seen from the server: the node's sshd logs at DEBUG3 every
// SSH_MSG_IGNORE it receives. The interval comes from ~/.ssh/config's ServerAliveInterval for the
// host (libssh 0.10 parses and drops it), from the endpoint, or defaults to 60 s; 0 turns them off.
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"
#include "transport/ssh/sshsession.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

namespace {
const QByteArray kIgnoreLogged = "Received SSH2_MSG_IGNORE";
}

class TestSshKeepAlive : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void intervalComesFromTheConfig_data();
    void intervalComesFromTheConfig();
    void idleConnectionSendsKeepalives_data();
    void idleConnectionSendsKeepalives();

private:
    void writeConfig(const QString &text);

    SshFixture m_ssh;
    QTemporaryDir m_home;
};

void TestSshKeepAlive::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY(m_home.isValid());
    qputenv("HOME", QFile::encodeName(m_home.path()));
    qunsetenv("SSH_AUTH_SOCK");
    SshFixture::Options options;
    options.logLevel = QStringLiteral("DEBUG3");
    m_ssh.setOptions(options);
    QVERIFY2(m_ssh.start(1), qPrintable(m_ssh.lastError()));
    QVERIFY(m_ssh.writeKnownHosts(m_home.path() + QStringLiteral("/.ssh/known_hosts")));
}

void TestSshKeepAlive::writeConfig(const QString &text)
{
    QFile config(m_home.path() + QStringLiteral("/.ssh/config"));
    QVERIFY(config.open(QIODevice::WriteOnly | QIODevice::Truncate));
    config.write(text.toUtf8());
}

void TestSshKeepAlive::intervalComesFromTheConfig_data()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<int>("endpointSetting");
    QTest::addColumn<int>("interval");
    const QString host =
        QStringLiteral("Host trainer\n  HostName %1\n  Port %2\n  IdentityFile %3\n");
    QTest::newRow("not configured") << host << -1 << 60;
    QTest::newRow("in the host's block")
        << host + QStringLiteral("  ServerAliveInterval 15\n") << -1 << 15;
    QTest::newRow("key=value form")
        << host + QStringLiteral("  ServerAliveInterval=20\n") << -1 << 20;
    QTest::newRow("first value wins")
        << QStringLiteral("Host train*\n  ServerAliveInterval 7\n") + host +
               QStringLiteral("Host *\n  ServerAliveInterval 99\n")
        << -1 << 7;
    QTest::newRow("another host's block")
        << host + QStringLiteral("Host other\n  ServerAliveInterval 5\n") << -1 << 60;
    QTest::newRow("negated pattern")
        << QStringLiteral("Host * !trainer\n  ServerAliveInterval 5\n") + host << -1 << 60;
    QTest::newRow("turned off") << host + QStringLiteral("  ServerAliveInterval 0\n") << -1 << 0;
    QTest::newRow("endpoint overrides")
        << host + QStringLiteral("  ServerAliveInterval 15\n") << 3 << 3;
}

void TestSshKeepAlive::intervalComesFromTheConfig()
{
    QFETCH(QString, config);
    QFETCH(int, endpointSetting);
    QFETCH(int, interval);
    writeConfig(config.arg(m_ssh.address(0)).arg(m_ssh.port(0)).arg(m_ssh.clientKey()));
    SshEndpoint e;
    e.host = QStringLiteral("trainer");
    e.keepAliveIntervalSec = endpointSetting;
    SshSession session(e, nullptr, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error));
    QCOMPARE(session.keepAliveIntervalSec(), interval);
}

void TestSshKeepAlive::idleConnectionSendsKeepalives_data()
{
    QTest::addColumn<int>("interval");
    QTest::newRow("every second") << 1;
    QTest::newRow("off") << 0;
}

void TestSshKeepAlive::idleConnectionSendsKeepalives()
{
    QFETCH(int, interval);
    writeConfig(
        QStringLiteral(
            "Host trainer\n  HostName %1\n  Port %2\n  IdentityFile %3\n  ServerAliveInterval %4\n")
            .arg(m_ssh.address(0))
            .arg(m_ssh.port(0))
            .arg(m_ssh.clientKey())
            .arg(interval));
    SshEndpoint e;
    e.host = QStringLiteral("trainer");
    SshSession session(e, nullptr, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error));
    const int before = int(m_ssh.log(0).count(kIgnoreLogged));
    // The node connection's poll loop, on an otherwise silent connection.
    const auto poll = [&](int ms) {
        for (int waited = 0; waited < ms; waited += 50) {
            QVERIFY(session.keepAlive());
            QTest::qWait(50);
        }
    };
    if (interval > 0) {
        // Two arrive at the server, and the connection still works.
        for (int round = 0; round < 100 && m_ssh.log(0).count(kIgnoreLogged) < before + 2; ++round)
            poll(100);
        QVERIFY2(m_ssh.log(0).count(kIgnoreLogged) >= before + 2,
                 qPrintable(QString::fromLocal8Bit(m_ssh.log(0).right(3000))));
        QVERIFY(session.keepAlivesSent() >= 2);
    } else {
        // Polled for more than a second: nothing sent.
        poll(1500);
        QCOMPARE(session.keepAlivesSent(), 0);
        QCOMPARE(int(m_ssh.log(0).count(kIgnoreLogged)), before);
    }
    const SshExecResult r = session.exec("echo alive");
    QVERIFY2(r.ok(), qPrintable(r.describeFailure()));
    QCOMPARE(r.out, QByteArray("alive\n"));
}

QTEST_GUILESS_MAIN(TestSshKeepAlive)
#include "tst_sshkeepalive.moc"
