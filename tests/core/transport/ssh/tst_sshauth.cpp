// SPDX-License-Identifier: GPL-3.0-or-later
//
// Password, keyboard-interactive and ProxyJump against real OpenSSH servers.
//
// Passwords: a throw-away local account (SshFixture::addPasswordUser, useradd with an
// `openssl passwd -6` hash, removed at the end) logs in to one sshd that offers only
// "password" and one that offers only "keyboard-interactive" (through PAM, so pam_unix asks the
// password in its conversation). The answer comes through the real SshInteraction callback
// (PolicySshInteraction). A right password connects, a wrong or cancelled one fails naming the
// host, the account and the method, and a whole launch authenticated by password leaves the
// password in no file of the run (local record, node run directory) and in no message.
//
// ProxyJump: nodes reached through one and two jump hosts defined only in the test's
// ~/.ssh/config (HOME points elsewhere than the passwd entry's home); each jump host's sshd log
// (DEBUG1) must show the direct-tcpip forward to the next hop, in order.
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "fixtureprofile.h"
#include "run/runcontroller.h"
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"
#include "transport/ssh/sshsession.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace rankdeck;
using Decision = SshInteraction::HostKeyDecision;

namespace {

QMutex g_messagesLock;
QStringList g_messages;
QtMessageHandler g_previousHandler = nullptr;

void captureMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    {
        QMutexLocker lock(&g_messagesLock);
        g_messages.append(message);
    }
    if (g_previousHandler)
        g_previousHandler(type, context, message);
}

// Regular files only: a node's run directory holds FIFOs, which a read would block on.
QStringList filesContaining(const QString &directory, const QByteArray &needle, int *scanned)
{
    QStringList hits;
    QDirIterator it(directory, QDir::Files | QDir::Hidden | QDir::System,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        struct stat st
        {
        };
        if (::lstat(QFile::encodeName(path).constData(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        ++*scanned;
        if (f.readAll().contains(needle))
            hits.append(path);
    }
    return hits;
}

int countOf(const QByteArray &haystack, const QByteArray &needle)
{
    int n = 0;
    for (qsizetype at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1))
        ++n;
    return n;
}

} // namespace

class TestSshAuth : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void rightPasswordConnects_data();
    void rightPasswordConnects();
    void wrongPasswordIsRefusedClearly_data();
    void wrongPasswordIsRefusedClearly();
    void passwordLaunchLeavesNoSecretBehind();
    void proxyJumpGoesThroughTheJumpHosts_data();
    void proxyJumpGoesThroughTheJumpHosts();
    void proxyJumpFailuresNameTheJumpHost_data();
    void proxyJumpFailuresNameTheJumpHost();
    void launchThroughAJumpHost();

private:
    SshFixture &fixtureFor(const QString &method)
    {
        return method == QLatin1String("password") ? m_password : m_kbd;
    }
    SshEndpoint passwordEndpoint(const QString &method);
    void writeJumpConfig();

    QTemporaryDir m_home;
    QByteArray m_secret;
    QString m_passwordSkip;
    SshFixture m_password; // offers password only
    SshFixture m_kbd;      // offers keyboard-interactive only
    SshFixture m_keys;     // 3 key-only nodes for ProxyJump, DEBUG1 logs
};

void TestSshAuth::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY(m_home.isValid());
    // ~/.ssh comes from the test's own home; no agent may log in for the test.
    qputenv("HOME", QFile::encodeName(m_home.path()));
    qunsetenv("SSH_AUTH_SOCK");
    QVERIFY(QDir().mkpath(m_home.path() + QStringLiteral("/.ssh")));
    g_previousHandler = qInstallMessageHandler(captureMessage);

    // A fresh secret each run, so that no older file can hold it by chance.
    m_secret = "rdk-pw-" + QByteArray::number(QRandomGenerator::global()->generate64(), 36);
    m_passwordSkip = SshFixture::passwordUserUnavailableReason();
    if (m_passwordSkip.isEmpty()) {
        SshFixture::Options password;
        password.passwordAuthentication = true;
        m_password.setOptions(password);
        QVERIFY2(m_password.addPasswordUser(m_secret), qPrintable(m_password.lastError()));
        QVERIFY2(m_password.start(1), qPrintable(m_password.lastError()));
        SshFixture::Options kbd;
        kbd.kbdInteractiveAuthentication = true;
        m_kbd.setOptions(kbd);
        QVERIFY2(m_kbd.addPasswordUser(m_secret), qPrintable(m_kbd.lastError()));
        QVERIFY2(m_kbd.start(1), qPrintable(m_kbd.lastError()));
    }
    SshFixture::Options keys;
    keys.logLevel = QStringLiteral("DEBUG1");
    m_keys.setOptions(keys);
    QVERIFY2(m_keys.start(3), qPrintable(m_keys.lastError()));
}

void TestSshAuth::cleanupTestCase()
{
    qInstallMessageHandler(g_previousHandler);
}

SshEndpoint TestSshAuth::passwordEndpoint(const QString &method)
{
    SshFixture &f = fixtureFor(method);
    SshEndpoint e;
    e.host = f.address(0);
    e.port = f.port(0);
    e.user = f.passwordUser();
    e.connectTimeoutSec = 10;
    e.knownHostsFile = m_home.filePath(QStringLiteral("known_hosts.") + method);
    f.writeKnownHosts(e.knownHostsFile);
    return e;
}

void TestSshAuth::rightPasswordConnects_data()
{
    QTest::addColumn<QString>("method");
    QTest::newRow("password") << QStringLiteral("password");
    QTest::newRow("keyboard-interactive") << QStringLiteral("keyboard-interactive");
}

void TestSshAuth::rightPasswordConnects()
{
    if (!m_passwordSkip.isEmpty())
        QSKIP(qPrintable(m_passwordSkip));
    QFETCH(QString, method);
    SshFixture &f = fixtureFor(method);
    PolicySshInteraction ask(Decision::Reject);
    ask.setSecret(m_secret);
    const SshEndpoint e = passwordEndpoint(method);
    SshSession session(e, &ask, nullptr);
    QString error;
    QVERIFY2(session.connect(&error), qPrintable(error + QStringLiteral("\nsshd log:\n") +
                                                 QString::fromLocal8Bit(f.log(0))));
    const SshExecResult r = session.exec("id -un; printf %s \"$HOME\"");
    QVERIFY2(r.ok(), qPrintable(r.describeFailure()));
    QCOMPARE(QString::fromUtf8(r.out),
             f.passwordUser() + QLatin1Char('\n') + f.passwordUserHome(0));

    // Asked once, through the callback, for this host and account; the prompt is RankDeck's own
    // for "password" and the server's (PAM's) for keyboard-interactive.
    const QList<PolicySshInteraction::SecretQuestion> asked = ask.secretQuestions();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.first().host, f.address(0));
    QCOMPARE(asked.first().user, f.passwordUser());
    QVERIFY(!asked.first().echo);
    if (method == QLatin1String("password"))
        QVERIFY2(asked.first().prompt.startsWith(
                     QStringLiteral("Password for %1@").arg(f.passwordUser())),
                 qPrintable(asked.first().prompt));
    else
        QVERIFY2(asked.first().prompt.contains(QStringLiteral("assword")),
                 qPrintable(asked.first().prompt));
    // The server says which method let the account in.
    const QByteArray accepted =
        method == QLatin1String("password")
            ? "Accepted password for " + f.passwordUser().toUtf8()
            : "Accepted keyboard-interactive/pam for " + f.passwordUser().toUtf8();
    QTRY_VERIFY2(f.log(0).contains(accepted), qPrintable(QString::fromLocal8Bit(f.log(0))));
}

void TestSshAuth::wrongPasswordIsRefusedClearly_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<bool>("cancel");
    QTest::newRow("password, wrong") << QStringLiteral("password") << false;
    QTest::newRow("keyboard-interactive, wrong") << QStringLiteral("keyboard-interactive") << false;
    QTest::newRow("password, cancelled") << QStringLiteral("password") << true;
    QTest::newRow("keyboard-interactive, cancelled")
        << QStringLiteral("keyboard-interactive") << true;
}

void TestSshAuth::wrongPasswordIsRefusedClearly()
{
    if (!m_passwordSkip.isEmpty())
        QSKIP(qPrintable(m_passwordSkip));
    QFETCH(QString, method);
    QFETCH(bool, cancel);
    SshFixture &f = fixtureFor(method);
    PolicySshInteraction ask(Decision::Reject);
    const QByteArray wrong = m_secret + "-not";
    if (!cancel)
        ask.setSecret(wrong);
    const SshEndpoint e = passwordEndpoint(method);
    SshSession session(e, &ask, nullptr);
    QString error;
    QElapsedTimer clock;
    clock.start();
    QVERIFY(!session.connect(&error));
    qInfo("refused after %lld ms: %s", clock.elapsed(), qPrintable(error));
    QCOMPARE(ask.secretQuestionCount(), 1);
    // Names the host, the account and the method; it is a refusal, not a connect timeout.
    QVERIFY2(error.startsWith(f.address(0) + QLatin1Char(':')), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("permission denied")), qPrintable(error));
    QVERIFY2(error.contains(f.passwordUser()), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("the server accepts publickey, ") + method),
             qPrintable(error));
    QVERIFY2(error.contains(method + (cancel ? QStringLiteral(" (not answered)")
                                             : QStringLiteral(" (refused)"))),
             qPrintable(error));
    QVERIFY2(!error.contains(QStringLiteral("imeout")) &&
                 !error.contains(QStringLiteral("timed out")),
             qPrintable(error));
    QVERIFY(!error.toUtf8().contains(wrong));
    if (!cancel) {
        const QByteArray failed =
            method == QLatin1String("password")
                ? "Failed password for " + f.passwordUser().toUtf8()
                : "Failed keyboard-interactive/pam for " + f.passwordUser().toUtf8();
        QTRY_VERIFY2(f.log(0).contains(failed), qPrintable(QString::fromLocal8Bit(f.log(0))));
    }
}

void TestSshAuth::passwordLaunchLeavesNoSecretBehind()
{
    if (!m_passwordSkip.isEmpty())
        QSKIP(qPrintable(m_passwordSkip));
    const QString loadgen =
        qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-loadgen");
    QVERIFY2(QFileInfo(loadgen).isExecutable(),
             qPrintable(loadgen + QStringLiteral(" is not built")));
    // The account cannot read the torch of this machine (/root is private), so the ranks are
    // synthetic (rankdeck-loadgen, deployed like the worker); authentication is the point here.
    QVERIFY(m_kbd.writeKnownHosts(m_home.path() + QStringLiteral("/.ssh/known_hosts")));
    Profile p;
    p.name = QStringLiteral("by-password");
    p.transport = QStringLiteral("ssh");
    p.connectTimeoutSec = 10;
    ProfileNode n;
    n.host = m_kbd.address(0);
    n.port = m_kbd.port(0);
    n.user = m_kbd.passwordUser();
    n.ranksPerNode = 2;
    p.nodes.append(n);
    TrainingConfig config;
    config.name = QStringLiteral("password-launch");
    config.workerArguments = {QStringLiteral("--total-lines"),   QStringLiteral("40"),
                              QStringLiteral("--lines-per-sec"), QStringLiteral("200"),
                              QStringLiteral("--steps-per-sec"), QStringLiteral("20")};
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    PolicySshInteraction ask(Decision::Reject);
    ask.setSecret(m_secret);
    RunController::Options options;
    options.workerPath = loadgen;
    options.runsDirectory = runs.path();
    options.sshInteraction = &ask;
    options.hangTimeoutSec = 3600;
    {
        QMutexLocker lock(&g_messagesLock);
        g_messages.clear();
    }
    RunController run(p, config, options);
    QStringList launcherMessages;
    connect(&run, &RunController::launcherMessage, this,
            [&](const QString &m) { launcherMessages << m; });
    QString error;
    QVERIFY2(run.start(&error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(isTerminal(run.state()), 60000);
    QVERIFY2(run.state() == RunState::Finished,
             qPrintable(run.errorMessage() + QLatin1Char(' ') + run.rootCauseSummary() +
                        QLatin1Char('\n') + launcherMessages.join(QLatin1Char('\n'))));
    QVERIFY(ask.secretQuestionCount() >= 1);
    QVERIFY2(QString::fromLocal8Bit(m_kbd.log(0))
                 .contains(QStringLiteral("Accepted keyboard-interactive/pam for ") +
                           m_kbd.passwordUser()),
             "the launch did not log in with the password");

    // Everything the launch wrote, here and on the node, and everything it said.
    int scanned = 0;
    QStringList leaks = filesContaining(run.runDirectory(), m_secret, &scanned);
    const QString nodeFiles = m_kbd.passwordUserHome(0);
    leaks += filesContaining(nodeFiles, m_secret, &scanned);
    leaks += filesContaining(QFileInfo(m_kbd.logFile(0)).absolutePath(), m_secret, &scanned);
    QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(QLatin1Char('\n'))));
    // The run record, the node's run directory (logs, pid, exit files) and the sshd log at least.
    QVERIFY2(scanned >= 8, qPrintable(QString::number(scanned)));
    QVERIFY(QDir(nodeFiles + QStringLiteral("/.cache/rankdeck/runs/") + run.runId()).exists());
    QStringList said = launcherMessages;
    said << run.errorMessage() << run.rootCauseSummary();
    {
        QMutexLocker lock(&g_messagesLock);
        said += g_messages;
    }
    for (const QString &m : std::as_const(said))
        QVERIFY2(!m.toUtf8().contains(m_secret), qPrintable(m));
    qInfo("%d files and %lld messages hold no trace of the password", scanned,
          qlonglong(said.size()));
}

void TestSshAuth::writeJumpConfig()
{
    // Aliases only this file knows: the jump's OpenSSH client must read this config, not the
    // passwd entry's ~/.ssh/config.
    QString text;
    const char *names[] = {"jump-a", "jump-b", "node-c"};
    for (int i = 0; i < 3; ++i)
        text += QStringLiteral("Host %1\n  HostName %2\n  Port %3\n  User %4\n  IdentityFile %5\n")
                    .arg(QString::fromLatin1(names[i]), m_keys.address(i))
                    .arg(m_keys.port(i))
                    .arg(m_keys.user(), m_keys.clientKey());
    text += QStringLiteral("Host via-one\n  HostName %1\n  Port %2\n  User %3\n  IdentityFile %4\n "
                           " ProxyJump jump-a\n")
                .arg(m_keys.address(1))
                .arg(m_keys.port(1))
                .arg(m_keys.user(), m_keys.clientKey());
    text += QStringLiteral("Host via-two\n  HostName %1\n  Port %2\n  User %3\n  IdentityFile %4\n "
                           " ProxyJump jump-a,jump-b\n")
                .arg(m_keys.address(2))
                .arg(m_keys.port(2))
                .arg(m_keys.user(), m_keys.clientKey());
    // A jump host whose port is closed.
    text += QStringLiteral(
                "Host via-dead\n  HostName %1\n  Port %2\n  IdentityFile %3\n  ProxyJump %4@%5:1\n")
                .arg(m_keys.address(1))
                .arg(m_keys.port(1))
                .arg(m_keys.clientKey(), m_keys.user(), m_keys.address(0));
    QFile config(m_home.path() + QStringLiteral("/.ssh/config"));
    QVERIFY(config.open(QIODevice::WriteOnly | QIODevice::Truncate));
    config.write(text.toUtf8());
    config.close();
    QVERIFY(m_keys.writeKnownHosts(m_home.path() + QStringLiteral("/.ssh/known_hosts")));
}

void TestSshAuth::proxyJumpGoesThroughTheJumpHosts_data()
{
    QTest::addColumn<QString>("alias");
    QTest::addColumn<QList<int>>("path"); // jump nodes, then the target node
    QTest::addColumn<QString>("proxyJump");
    QTest::newRow("direct") << QStringLiteral("jump-b") << QList<int>{1} << QString();
    QTest::newRow("one jump host")
        << QStringLiteral("via-one") << QList<int>{0, 1} << QStringLiteral("jump-a");
    QTest::newRow("two jump hosts")
        << QStringLiteral("via-two") << QList<int>{0, 1, 2} << QStringLiteral("jump-a,jump-b");
}

void TestSshAuth::proxyJumpGoesThroughTheJumpHosts()
{
    QFETCH(QString, alias);
    QFETCH(QList<int>, path);
    QFETCH(QString, proxyJump);
    writeJumpConfig();
    // What each hop's sshd logs (DEBUG1) when it forwards a connection to the next one.
    const auto forwardTo = [this](int node) {
        return QStringLiteral("target %1 port %2")
            .arg(m_keys.address(node))
            .arg(m_keys.port(node))
            .toUtf8();
    };
    QList<int> before;
    for (int i = 0; i + 1 < path.size(); ++i)
        before.append(countOf(m_keys.log(path[i]), forwardTo(path[i + 1])));

    SshEndpoint e;
    e.host = alias;
    e.connectTimeoutSec = 10;
    PolicySshInteraction ask(Decision::Reject);
    SshSession session(e, &ask, nullptr);
    QString error;
    QElapsedTimer clock;
    clock.start();
    QVERIFY2(session.connect(&error), qPrintable(error));
    qInfo("connected in %lld ms", clock.elapsed()); // for the record, not asserted
    const int target = path.last();
    QCOMPARE(session.label(), QStringLiteral("%1@%2:%3")
                                  .arg(m_keys.user(), m_keys.address(target))
                                  .arg(m_keys.port(target)));
    QCOMPARE(session.proxyJump(), proxyJump);
    const SshExecResult r = session.exec("printf %s \"$HOME\"");
    QVERIFY2(r.ok(), qPrintable(r.describeFailure()));
    QCOMPARE(QString::fromUtf8(r.out), m_keys.home(target));
    // Hop by hop, in the order of the ProxyJump line: A forwarded to the next hop (B, or C via B).
    for (int i = 0; i + 1 < path.size(); ++i) {
        QTRY_VERIFY2(countOf(m_keys.log(path[i]), forwardTo(path[i + 1])) == before[i] + 1,
                     qPrintable(QStringLiteral("node %1's sshd did not forward to node %2:\n%3")
                                    .arg(path[i])
                                    .arg(path[i + 1])
                                    .arg(QString::fromLocal8Bit(m_keys.log(path[i])))));
    }
}

void TestSshAuth::proxyJumpFailuresNameTheJumpHost_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("jump host down") << QStringLiteral("down");
    QTest::newRow("no ssh program") << QStringLiteral("no-ssh");
}

void TestSshAuth::proxyJumpFailuresNameTheJumpHost()
{
    QFETCH(QString, kind);
    writeJumpConfig();
    SshEndpoint e;
    e.connectTimeoutSec = 5;
    QTemporaryDir emptyPath;
    const QByteArray savedPath = qgetenv("PATH");
    if (kind == QLatin1String("no-ssh")) {
        e.host = QStringLiteral("via-one");
        qputenv("PATH", QFile::encodeName(emptyPath.path()));
    } else {
        e.host = QStringLiteral("via-dead");
    }
    PolicySshInteraction ask(Decision::Reject);
    SshSession session(e, &ask, nullptr);
    QString error;
    const bool connected = session.connect(&error);
    qputenv("PATH", savedPath);
    QVERIFY(!connected);
    qInfo("%s", qPrintable(error));
    QVERIFY2(error.startsWith(e.host + QLatin1Char(':')), qPrintable(error));
    if (kind == QLatin1String("no-ssh")) {
        QVERIFY2(error.contains(QStringLiteral("jump-a")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("openssh-client")), qPrintable(error));
    } else {
        QVERIFY2(error.contains(QStringLiteral("%1@%2:1").arg(m_keys.user(), m_keys.address(0))),
                 qPrintable(error));
        // What the jump's ssh said, not only libssh's "connection closed".
        QVERIFY2(error.contains(QStringLiteral("Connection refused")), qPrintable(error));
    }
}

// The whole transport (probe, SFTP deployment, one exec channel per rank, streams) through the
// jump host: a profile that names only the alias.
void TestSshAuth::launchThroughAJumpHost()
{
    const QString loadgen =
        qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-loadgen");
    QVERIFY2(QFileInfo(loadgen).isExecutable(),
             qPrintable(loadgen + QStringLiteral(" is not built")));
    writeJumpConfig();
    const QByteArray forward =
        QStringLiteral("target %1 port %2").arg(m_keys.address(1)).arg(m_keys.port(1)).toUtf8();
    const int before = countOf(m_keys.log(0), forward);
    Profile p;
    p.name = QStringLiteral("jumped");
    p.transport = QStringLiteral("ssh");
    p.connectTimeoutSec = 10;
    ProfileNode n;
    n.host = QStringLiteral("via-one"); // port 22, no user, no key: ~/.ssh/config decides
    n.ranksPerNode = 2;
    p.nodes.append(n);
    TrainingConfig config;
    config.name = QStringLiteral("jumped");
    config.workerArguments = {QStringLiteral("--total-lines"),   QStringLiteral("30"),
                              QStringLiteral("--lines-per-sec"), QStringLiteral("200"),
                              QStringLiteral("--steps-per-sec"), QStringLiteral("20")};
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    PolicySshInteraction ask(Decision::Reject);
    RunController::Options options;
    options.workerPath = loadgen;
    options.runsDirectory = runs.path();
    options.sshInteraction = &ask;
    options.hangTimeoutSec = 3600;
    RunController run(p, config, options);
    QString error;
    QVERIFY2(run.start(&error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(isTerminal(run.state()), 60000);
    QVERIFY2(run.state() == RunState::Finished,
             qPrintable(run.errorMessage() + QLatin1Char(' ') + run.rootCauseSummary()));
    // The ranks ran on node B (its home holds the run), reached through A.
    QVERIFY(QDir(rankdeck::testing::nodeRunDirectory(m_keys, 1, run.runId())).exists());
    QVERIFY(!QDir(rankdeck::testing::nodeRunDirectory(m_keys, 0, run.runId())).exists());
    QVERIFY2(countOf(m_keys.log(0), forward) > before, "node A's sshd forwarded nothing to node B");
    QVERIFY(ask.hostKeyQuestions().isEmpty());
}

QTEST_GUILESS_MAIN(TestSshAuth)
#include "tst_sshauth.moc"
