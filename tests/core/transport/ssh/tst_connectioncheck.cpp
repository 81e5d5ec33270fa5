// SPDX-License-Identifier: GPL-3.0-or-later
//
// ConnectionCheck, what `profiles check` and the GUI's "Test connection" both ask, against real
// sshds: a node that answers is reported with what it is, a node that does not is named with
// why, and the check deploys the worker only when given one.
#include "transport/factory/connectioncheck.h"

#include "fixtureprofile.h"
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"

#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestConnectionCheck : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void reportsEveryNode_data();
    void reportsEveryNode();
    void unknownKindIsRefused();

private:
    SshFixture m_ssh;
    QTemporaryDir m_home;
    PolicySshInteraction m_refuse{SshInteraction::HostKeyDecision::Reject};
};

void TestConnectionCheck::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY(m_home.isValid());
    QVERIFY(testing::isolateUserDirectories(m_home.path()));
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    QVERIFY(m_ssh.writeKnownHosts(m_home.path() + u"/HOME/.ssh/known_hosts"_s));
}

void TestConnectionCheck::reportsEveryNode_data()
{
    QTest::addColumn<bool>("secondNodeDown");
    QTest::addColumn<bool>("withWorker");
    QTest::newRow("both nodes, connect only") << false << false;
    QTest::newRow("both nodes, with the worker") << false << true;
    QTest::newRow("second node down") << true << false;
}

void TestConnectionCheck::reportsEveryNode()
{
    QFETCH(bool, secondNodeDown);
    QFETCH(bool, withWorker);
    Profile p = testing::fixtureProfile(m_ssh, u"pair"_s, 2, 1);
    p.connectTimeoutSec = 5;
    QTcpServer closed; // a port nobody answers on: listen, note it, stop listening
    if (secondNodeDown) {
        QVERIFY(closed.listen(QHostAddress(p.nodes[1].host)));
        p.nodes[1].port = closed.serverPort();
        closed.close();
    }
    const QString worker =
        withWorker ? qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-supervisor"_s
                   : QString();

    ConnectionCheck check(p, &m_refuse);
    QSignalSpy finished(&check, &ConnectionCheck::finished);
    QSignalSpy progress(&check, &ConnectionCheck::progress);
    QString error;
    QVERIFY2(check.start(worker, &error), qPrintable(error));
    QCOMPARE(check.nodeLines().size(), 2); // "waiting" from the start, one a node
    QVERIFY(finished.wait(60000));
    QVERIFY(!progress.isEmpty());
    const QStringList lines = check.lines();
    const QString shown = lines.join(u'\n');
    QVERIFY2(lines.first().startsWith(p.nodes[0].host + u": OK — "_s), qPrintable(shown));
    QVERIFY2(lines.first().contains(u" CPUs, "_s), qPrintable(shown));
    if (secondNodeDown) {
        QVERIFY(!check.succeeded());
        QVERIFY2(lines.value(1).startsWith(p.nodes[1].host + u": FAILED — "_s), qPrintable(shown));
        QVERIFY2(lines.last().startsWith(u"FAILED — "_s), qPrintable(shown));
        QVERIFY(check.summary().isEmpty());
        return;
    }
    QVERIFY2(check.succeeded(), qPrintable(shown));
    QVERIFY2(lines.value(1).startsWith(p.nodes[1].host + u": OK — "_s), qPrintable(shown));
    QCOMPARE(lines.size(), 2);
    QCOMPARE(check.summary(), withWorker ? u"every node reachable, worker ready (ssh %1, %2)"_s.arg(
                                               p.nodes[0].host, p.nodes[1].host)
                                         : u"every node reachable"_s);
    // Only the check with a worker deployed one.
    bool uploaded = false;
    for (const QVariantList &call : std::as_const(progress))
        uploaded = uploaded || call.value(2).toString().contains(u"worker"_s);
    QCOMPARE(uploaded, withWorker);
}

void TestConnectionCheck::unknownKindIsRefused()
{
    Profile p = testing::fixtureProfile(m_ssh, u"odd"_s, 1, 1);
    p.transport = u"carrier-pigeon"_s;
    ConnectionCheck check(p, &m_refuse);
    QString error;
    QVERIFY(!check.start(QString(), &error));
    QVERIFY2(error.contains(u"carrier-pigeon"_s), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestConnectionCheck)
#include "tst_connectioncheck.moc"
