// SPDX-License-Identifier: GPL-3.0-or-later
//
// TransportFactory turns a profile's "transport" field into a transport, and refuses, naming
// the profile and the kind, what it does not know.
#include "transport/factory/transportfactory.h"

#include "transport/localtransport.h"
#include "transport/slurm/slurmsettings.h"
#include "transport/slurm/slurmtransport.h"
#include "transport/ssh/sshtransport.h"

#include <QTest>

#include <memory>

using namespace rankdeck;

class TestTransportFactory : public QObject
{
    Q_OBJECT
private slots:
    void localProfile();
    void sshProfile();
    void slurmProfile();
    void unknownKind_data();
    void unknownKind();
};

void TestTransportFactory::localProfile()
{
    QObject owner;
    QString error = QStringLiteral("untouched");
    Transport *t = TransportFactory::create(Profile::builtinLocal(2), QStringLiteral("run-1"),
                                            nullptr, &owner, &error);
    QVERIFY2(t, qPrintable(error));
    QVERIFY(qobject_cast<LocalTransport *>(t));
    QCOMPARE(t->parent(), &owner);
    QCOMPARE(t->capabilities(), Transport::Capabilities());
    QCOMPARE(t->describe(), QStringLiteral("local"));

    // A hand-made profile that says "local", without a parent: the caller owns it.
    Profile p;
    p.name = QStringLiteral("hand-made");
    p.transport = QStringLiteral("local");
    std::unique_ptr<Transport> orphan(
        TransportFactory::create(p, QString(), nullptr, nullptr, &error));
    QVERIFY(qobject_cast<LocalTransport *>(orphan.get()));
    QCOMPARE(orphan->parent(), nullptr);
}

void TestTransportFactory::sshProfile()
{
    QVERIFY(TransportFactory::sshAvailable());
    Profile p;
    p.name = QStringLiteral("cluster");
    p.transport = QStringLiteral("ssh");
    for (const char *host : {"gpu-a", "gpu-b"}) {
        ProfileNode n;
        n.host = QString::fromLatin1(host);
        p.nodes.append(n);
    }
    QObject owner;
    QString error;
    // Creating it connects to nothing: these hosts do not exist.
    Transport *t = TransportFactory::create(p, QStringLiteral("run-2"), nullptr, &owner, &error);
    QVERIFY2(t, qPrintable(error));
    QVERIFY(qobject_cast<SshTransport *>(t));
    QVERIFY(!qobject_cast<LocalTransport *>(t));
    QCOMPARE(t->parent(), &owner);
    QCOMPARE(t->capabilities(), Transport::Capability::Detach | Transport::Capability::Reattach |
                                    Transport::Capability::Sync);
    QVERIFY(t->can(Transport::Capability::Detach));
    QVERIFY(t->can(Transport::Capability::Sync));
    QVERIFY(t->can(Transport::Capability::Reattach));
    QCOMPARE(t->describe(), QStringLiteral("ssh gpu-a, gpu-b"));
}

void TestTransportFactory::slurmProfile()
{
    Profile p;
    p.name = QStringLiteral("hpc");
    p.transport = QStringLiteral("slurm");
    SlurmSettings slurm;
    slurm.login = QStringLiteral("login.example");
    slurm.partition = QStringLiteral("gpu");
    slurm.nodes = 2;
    slurm.applyTo(&p);
    QObject owner;
    QString error;
    // Creating it runs no Slurm command and reaches no login node.
    Transport *t = TransportFactory::create(p, QStringLiteral("run-4"), nullptr, &owner, &error);
    QVERIFY2(qobject_cast<SlurmTransport *>(t), qPrintable(error));
    QCOMPARE(t->parent(), &owner);
    // A job is detached by nature; its ranks see the shared file system, not this machine's.
    QCOMPARE(t->capabilities(), Transport::Capability::Detach | Transport::Capability::Reattach);
    QCOMPARE(t->describe(), QStringLiteral("slurm login.example partition gpu"));
}

void TestTransportFactory::unknownKind_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("capitalised Slurm") << QStringLiteral("Slurm");
    QTest::newRow("empty") << QString();
    QTest::newRow("upper case SSH") << QStringLiteral("SSH");
    QTest::newRow("capitalised Local") << QStringLiteral("Local");
    QTest::newRow("trailing space") << QStringLiteral("ssh ");
    QTest::newRow("quotes and newline") << QStringLiteral("x\"y\nz");
}

void TestTransportFactory::unknownKind()
{
    QFETCH(QString, kind);
    Profile p = Profile::builtinLocal(1);
    p.name = QStringLiteral("my profile");
    p.transport = kind;
    QObject owner;
    QString error;
    Transport *t = TransportFactory::create(p, QStringLiteral("run-3"), nullptr, &owner, &error);
    QVERIFY(!t);
    QVERIFY(owner.children().isEmpty());
    QVERIFY2(error.contains(QStringLiteral("\"my profile\"")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("unknown transport \"%1\"").arg(kind)),
             qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("\"local\"")) &&
                 error.contains(QStringLiteral("\"ssh\"")) &&
                 error.contains(QStringLiteral("\"slurm\"")),
             qPrintable(error));
}

QTEST_GUILESS_MAIN(TestTransportFactory)
#include "tst_transportfactory.moc"
