// SPDX-License-Identifier: GPL-3.0-or-later
//
// SshSession against real OpenSSH servers: host key checking (plain and hashed known_hosts,
// unknown, changed), authentication (right key, wrong key, passphrase), ~/.ssh/config, commands
// and SFTP, and the errors a user sees when a node cannot be reached.
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"
#include "transport/ssh/sshsession.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using Decision = SshInteraction::HostKeyDecision;

class TestSshSession : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void knownHostsAccepted_data();
    void knownHostsAccepted();
    void unknownHostKey_data();
    void unknownHostKey();
    void changedHostKeyIsRefusedWithBothFingerprints();
    void wrongKeyIsRefused();
    void passphraseIsAskedThroughTheInteraction_data();
    void passphraseIsAskedThroughTheInteraction();
    void sshConfigAliasIsUsed();
    void unreachableEndpointsFailClearly_data();
    void unreachableEndpointsFailClearly();
    void execSeparatesStreamsAndExitStatus();
    void uploadWritesTheFile();

private:
    SshEndpoint endpoint(int node) const;
    QString knownHostsPath() const { return m_home.path() + QStringLiteral("/.ssh/known_hosts"); }

    SshFixture m_ssh;
    QTemporaryDir m_home;
};

void TestSshSession::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY(m_home.isValid());
    // Everything the session reads by default (~/.ssh/…) must come from the test's own home.
    qputenv("HOME", QFile::encodeName(m_home.path()));
    qunsetenv("SSH_AUTH_SOCK");
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
}

void TestSshSession::init()
{
    QDir(m_home.path() + QStringLiteral("/.ssh")).removeRecursively();
    QVERIFY(QDir().mkpath(m_home.path() + QStringLiteral("/.ssh")));
    if (m_ssh.serverPid(0) == 0)
        QVERIFY2(m_ssh.startNode(0), qPrintable(m_ssh.lastError()));
}

SshEndpoint TestSshSession::endpoint(int node) const
{
    SshEndpoint e;
    e.host = m_ssh.address(node);
    e.port = m_ssh.port(node);
    e.identityFile = m_ssh.clientKey();
    e.connectTimeoutSec = 5;
    return e;
}

void TestSshSession::knownHostsAccepted_data()
{
    QTest::addColumn<bool>("hashed");
    QTest::addColumn<int>("node");
    QTest::newRow("plain node 0") << false << 0;
    QTest::newRow("hashed node 1") << true << 1;
}

void TestSshSession::knownHostsAccepted()
{
    QFETCH(bool, hashed);
    QFETCH(int, node);
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath(), hashed));
    if (hashed) {
        QFile f(knownHostsPath());
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().startsWith("|1|"));
    }
    PolicySshInteraction ask(Decision::Reject);
    SshSession session(endpoint(node), &ask, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error));
    QVERIFY(ask.hostKeyQuestions().isEmpty());
    QCOMPARE(session.serverFingerprint(), m_ssh.hostFingerprint(node));
    const SshExecResult r = session.exec("printf %s \"$HOME\"");
    QVERIFY2(r.ok(), qPrintable(r.describeFailure()));
    QCOMPARE(QString::fromUtf8(r.out), m_ssh.home(node));
}

void TestSshSession::unknownHostKey_data()
{
    QTest::addColumn<Decision>("decision");
    QTest::newRow("reject") << Decision::Reject;
    QTest::newRow("accept once") << Decision::AcceptOnce;
    QTest::newRow("accept and remember") << Decision::AcceptAndRemember;
}

void TestSshSession::unknownHostKey()
{
    QFETCH(Decision, decision);
    PolicySshInteraction ask(decision);
    SshSession session(endpoint(0), &ask, nullptr);
    QString error;
    const bool connected = session.connect(&error);
    QCOMPARE(connected, decision != Decision::Reject);
    QCOMPARE(ask.hostKeyQuestions().size(), 1);
    const SshInteraction::HostKeyQuestion q = ask.hostKeyQuestions().first();
    QCOMPARE(q.fingerprint, m_ssh.hostFingerprint(0));
    QCOMPARE(q.port, m_ssh.port(0));
    QCOMPARE(q.keyType, QStringLiteral("ssh-ed25519"));
    QCOMPARE(q.knownHostsFile, knownHostsPath());
    if (!connected) {
        QVERIFY2(error.contains(m_ssh.hostFingerprint(0)), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("unknown")), qPrintable(error));
        qInfo("%s", qPrintable(error));
    }
    QCOMPARE(QFileInfo::exists(knownHostsPath()), decision == Decision::AcceptAndRemember);

    if (decision == Decision::AcceptAndRemember) {
        // OpenSSH itself must find what was written.
        QProcess keygen;
        keygen.start(QStringLiteral("ssh-keygen"),
                     {QStringLiteral("-F"),
                      QStringLiteral("[%1]:%2").arg(m_ssh.address(0)).arg(m_ssh.port(0)),
                      QStringLiteral("-f"), knownHostsPath()});
        QVERIFY(keygen.waitForFinished(10000));
        QCOMPARE(keygen.exitCode(), 0);
        // And the next session trusts it without asking.
        PolicySshInteraction refuse(Decision::Reject);
        SshSession again(endpoint(0), &refuse, nullptr);
        QVERIFY2(again.connect(&error), qPrintable(error));
        QVERIFY(refuse.hostKeyQuestions().isEmpty());
    }
    if (decision == Decision::AcceptOnce) {
        // Reconnecting (a dropped connection) does not ask again for the same key.
        QVERIFY2(session.connect(&error), qPrintable(error));
        QCOMPARE(ask.hostKeyQuestions().size(), 1);
    }
}

void TestSshSession::changedHostKeyIsRefusedWithBothFingerprints()
{
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath(), true));
    const QString before = m_ssh.hostFingerprint(0);
    QVERIFY2(m_ssh.changeHostKey(0), qPrintable(m_ssh.lastError()));
    const QString after = m_ssh.hostFingerprint(0);
    QVERIFY(before != after);

    PolicySshInteraction ask(Decision::AcceptAndRemember);
    SshSession session(endpoint(0), &ask, nullptr);
    QString error;
    QVERIFY(!session.connect(&error));
    QVERIFY2(error.contains(before) && error.contains(after), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("CHANGED")), qPrintable(error));
    qInfo("%s", qPrintable(error));
    // A changed key is never offered for acceptance.
    QVERIFY(ask.hostKeyQuestions().isEmpty());
}

void TestSshSession::wrongKeyIsRefused()
{
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath()));
    const QString stranger = m_ssh.createKey(QStringLiteral("stranger"), {}, false);
    QVERIFY2(!stranger.isEmpty(), qPrintable(m_ssh.lastError()));
    SshEndpoint e = endpoint(0);
    e.identityFile = stranger;
    PolicySshInteraction ask(Decision::Reject);
    SshSession session(e, &ask, nullptr);
    QString error;
    QVERIFY(!session.connect(&error));
    QVERIFY2(error.contains(QStringLiteral("permission denied")), qPrintable(error));
    QVERIFY2(error.contains(stranger), qPrintable(error));
    QVERIFY2(error.contains(m_ssh.address(0)), qPrintable(error));
    qInfo("%s", qPrintable(error));
}

void TestSshSession::passphraseIsAskedThroughTheInteraction_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<bool>("connects");
    QTest::newRow("right passphrase") << QByteArray("correct horse") << true;
    QTest::newRow("wrong passphrase") << QByteArray("battery staple") << false;
}

void TestSshSession::passphraseIsAskedThroughTheInteraction()
{
    QFETCH(QByteArray, answer);
    QFETCH(bool, connects);
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath()));
    const QString key = m_ssh.createKey(QStringLiteral("locked"), "correct horse", true);
    QVERIFY2(!key.isEmpty(), qPrintable(m_ssh.lastError()));
    SshEndpoint e = endpoint(0);
    e.identityFile = key;
    PolicySshInteraction ask(Decision::Reject);
    ask.setSecret(answer);
    SshSession session(e, &ask, nullptr);
    QString error;
    QCOMPARE(session.connect(&error), connects);
    QVERIFY(ask.secretQuestionCount() >= 1);
    if (!connects)
        QVERIFY2(error.contains(key), qPrintable(error));
}

void TestSshSession::sshConfigAliasIsUsed()
{
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath()));
    QFile config(m_home.path() + QStringLiteral("/.ssh/config"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(
        QStringLiteral("Host trainer-one\n  HostName %1\n  Port %2\n  User %3\n  IdentityFile %4\n")
            .arg(m_ssh.address(1))
            .arg(m_ssh.port(1))
            .arg(m_ssh.user(), m_ssh.clientKey())
            .toUtf8());
    config.close();
    SshEndpoint e;
    e.host = QStringLiteral("trainer-one");
    PolicySshInteraction ask(Decision::Reject);
    SshSession session(e, &ask, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error));
    QCOMPARE(session.label(),
             QStringLiteral("%1@%2:%3").arg(m_ssh.user(), m_ssh.address(1)).arg(m_ssh.port(1)));
    const SshExecResult r = session.exec("printf %s \"$HOME\"");
    QCOMPARE(QString::fromUtf8(r.out), m_ssh.home(1));
}

void TestSshSession::unreachableEndpointsFailClearly_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("port closed") << QStringLiteral("closed");
    QTest::newRow("server never answers") << QStringLiteral("silent");
    QTest::newRow("no such host") << QStringLiteral("nohost");
}

void TestSshSession::unreachableEndpointsFailClearly()
{
    QFETCH(QString, kind);
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath()));
    SshEndpoint e = endpoint(0);
    e.connectTimeoutSec = 2;
    QTcpServer silent;
    if (kind == QLatin1String("closed")) {
        QVERIFY(m_ssh.stopNode(0));
    } else if (kind == QLatin1String("silent")) {
        // Accepts the TCP connection and never says a word: only the timeout can end this.
        QVERIFY(silent.listen(QHostAddress(QStringLiteral("127.0.0.1")), 0));
        e.host = QStringLiteral("127.0.0.1");
        e.port = silent.serverPort();
    } else {
        e.host = QStringLiteral("no-such-node.invalid");
    }
    PolicySshInteraction ask(Decision::AcceptOnce);
    SshSession session(e, &ask, nullptr);
    QString error;
    QVERIFY(!session.connect(&error));
    QVERIFY2(error.startsWith(e.host + QLatin1Char(':')), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("cannot connect")), qPrintable(error));
    qInfo("%s", qPrintable(error));
    QVERIFY(ask.hostKeyQuestions().isEmpty());
}

void TestSshSession::execSeparatesStreamsAndExitStatus()
{
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath()));
    SshSession session(endpoint(0), nullptr, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error));
    const SshExecResult r = session.exec("cat; echo to-err >&2; exit 7", 10000, "from-stdin");
    QVERIFY(r.error.isEmpty());
    QCOMPARE(r.out, QByteArray("from-stdin"));
    QCOMPARE(r.err, QByteArray("to-err\n"));
    QCOMPARE(r.exitStatus, 7);
}

void TestSshSession::uploadWritesTheFile()
{
    QVERIFY(m_ssh.writeKnownHosts(knownHostsPath()));
    SshSession session(endpoint(1), nullptr, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error));
    QTemporaryDir local;
    QFile src(local.filePath(QStringLiteral("payload")));
    QVERIFY(src.open(QIODevice::WriteOnly));
    QByteArray data;
    for (int i = 0; i < 1000000; ++i) // several SFTP requests, so progress is reported in steps
        data += char(i * 7 + i / 256);
    src.write(data);
    src.close();
    const QString remote = m_ssh.home(1) + QStringLiteral("/uploaded");
    qint64 lastSent = -1;
    qint64 lastTotal = -1;
    int calls = 0;
    QVERIFY2(session.upload(
                 src.fileName(), remote, 0750,
                 [&](qint64 sent, qint64 total) {
                     QVERIFY(sent > lastSent);
                     lastSent = sent;
                     lastTotal = total;
                     ++calls;
                 },
                 &error),
             qPrintable(error));
    QVERIFY(calls > 1);
    QCOMPARE(lastSent, qint64(data.size()));
    QCOMPARE(lastTotal, qint64(data.size()));
    QFile dst(remote);
    QVERIFY(dst.open(QIODevice::ReadOnly));
    QCOMPARE(dst.readAll(), data);
    QVERIFY(QFileInfo(remote).permissions() & QFileDevice::ExeOwner);
}

QTEST_GUILESS_MAIN(TestSshSession)
#include "tst_sshsession.moc"
