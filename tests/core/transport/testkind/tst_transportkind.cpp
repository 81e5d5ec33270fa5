// SPDX-License-Identifier: GPL-3.0-or-later
//
// A kind of the tests' own ("echo", echokind.h) plugs in through TransportKindRegistry alone:
// its [echo] table is read, checked and written by the profile store (errors name the field),
// its `profiles add` flags fill the table, and the factory makes its transport, which runs a rank
// as a local process.
#include "echokind.h"

#include "config/profile.h"
#include "config/profilestore.h"
#include "transport/factory/transportfactory.h"
#include "transport/localtransport.h"
#include "transport/transportkind.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace rankdeck;

class TestTransportKind : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void registered();
    void roundTrip();
    void errorsNameTheField_data();
    void errorsNameTheField();
    void profilesAddFlags();
    void factoryRunsARank();

private:
    static Profile echoProfile();
};

void TestTransportKind::initTestCase()
{
    QVERIFY(TransportKindRegistry::add(std::make_unique<testkind::EchoKind>()));
}

Profile TestTransportKind::echoProfile()
{
    Profile p;
    p.name = QStringLiteral("echoes");
    p.transport = QStringLiteral("echo");
    ProfileNode n;
    n.host = QStringLiteral("localhost");
    n.ranksPerNode = 2;
    p.nodes.append(n);
    QJsonObject section;
    section[QStringLiteral("greeting")] = QStringLiteral("hello");
    section[QStringLiteral("repeat")] = 3;
    section[QStringLiteral("tags")] = QJsonArray{QStringLiteral("a"), QStringLiteral("b c")};
    p.section = TransportKindRegistry::find(p.transport)->completeSection(section);
    return p;
}

void TestTransportKind::registered()
{
    // Once only, after the built-in kinds.
    QVERIFY(!TransportKindRegistry::add(std::make_unique<testkind::EchoKind>()));
    QCOMPARE(TransportKindRegistry::names(),
             QStringList({QStringLiteral("local"), QStringLiteral("ssh"), QStringLiteral("slurm"),
                          QStringLiteral("echo")}));
    QVERIFY(TransportKindRegistry::find(QStringLiteral("echo")));
    QCOMPARE(ProfileKinds::list(true), QStringLiteral("\"local\", \"ssh\", \"slurm\" or \"echo\""));
}

void TestTransportKind::roundTrip()
{
    const Profile p = echoProfile();
    QVERIFY(ProfileStore::validate(p).isEmpty());
    const QString text = ProfileStore::serialize(p);
    QVERIFY2(
        text.contains(QStringLiteral("[echo]")) && text.contains(QStringLiteral("greeting = ")) &&
            text.contains(QStringLiteral("hello")) && text.contains(QStringLiteral("repeat = 3")) &&
            text.contains(QStringLiteral("[[nodes]]")),
        qPrintable(text));
    Profile parsed;
    QList<ProfileError> errors;
    QVERIFY2(ProfileStore::parse(text, QStringLiteral("echoes.toml"), &parsed, &errors),
             qPrintable(errors.value(0).toString()));
    QCOMPARE(parsed, p);
    // Through the files of a store, and through JSON (a run record's profile.json).
    QTemporaryDir dir;
    ProfileStore store(dir.path());
    QString error;
    QVERIFY2(store.save(p, false, &error), qPrintable(error));
    Profile loaded;
    QVERIFY(store.load(p.name, &loaded, &errors));
    QCOMPARE(loaded, p);
    QCOMPARE(Profile::fromJson(p.toJson()), p);
    // A default is left out of the file, and comes back as the default.
    Profile plain = p;
    plain.section[QStringLiteral("repeat")] = 1;
    plain.section[QStringLiteral("tags")] = QJsonArray();
    const QString plainText = ProfileStore::serialize(plain);
    QVERIFY2(!plainText.contains(QStringLiteral("repeat")) &&
                 !plainText.contains(QStringLiteral("tags")),
             qPrintable(plainText));
    QVERIFY(ProfileStore::parse(plainText, QStringLiteral("echoes.toml"), &parsed, &errors));
    QCOMPARE(parsed, plain);
}

void TestTransportKind::errorsNameTheField_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("field");
    const QString head = QStringLiteral(
        "schema_version = 1\ntransport = \"echo\"\n[[nodes]]\nhost = \"localhost\"\n");
    QTest::newRow("out of range") << head +
                                         QStringLiteral("[echo]\ngreeting = \"hi\"\nrepeat = 0\n")
                                  << 7 << QStringLiteral("echo.repeat");
    QTest::newRow("unknown field") << head + QStringLiteral("[echo]\ngreeting = \"hi\"\nloud = 1\n")
                                   << 7 << QStringLiteral("echo.loud");
    QTest::newRow("wrong type") << head + QStringLiteral("[echo]\ngreeting = 5\n") << 6
                                << QStringLiteral("echo.greeting");
    QTest::newRow("not a list") << head +
                                       QStringLiteral("[echo]\ngreeting = \"hi\"\ntags = \"x\"\n")
                                << 7 << QStringLiteral("echo.tags");
    QTest::newRow("not a table") << QStringLiteral("schema_version = 1\ntransport = \"echo\"\n"
                                                   "echo = 3\n[[nodes]]\nhost = \"localhost\"\n")
                                 << 3 << QStringLiteral("echo");
}

void TestTransportKind::errorsNameTheField()
{
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(QString, field);
    Profile p;
    QList<ProfileError> errors;
    QVERIFY(!ProfileStore::parse(text, QStringLiteral("bad.toml"), &p, &errors));
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors.first().field, field);
    QCOMPARE(errors.first().line, line);
}

void TestTransportKind::profilesAddFlags()
{
    // What `profiles add` does with a kind's flags (cli/profilecommands.cpp): its options join
    // the parser, its selecting flag picks it, applyOptions() fills the table.
    const ProfileKind *kind = TransportKindRegistry::find(QStringLiteral("echo"));
    QCommandLineParser parser;
    QVERIFY(parser.addOptions(kind->addOptions()));
    QVERIFY(parser.parse({QStringLiteral("rankdeck-cli"), QStringLiteral("--echo"),
                          QStringLiteral("--greeting"), QStringLiteral("hello"),
                          QStringLiteral("--repeat"), QStringLiteral("3")}));
    QVERIFY(parser.isSet(kind->selectingOption()));
    Profile p = echoProfile();
    p.section = QJsonObject();
    QString error;
    QVERIFY2(kind->applyOptions(parser, &p, &error), qPrintable(error));
    QCOMPARE(p.section.value(QStringLiteral("greeting")).toString(), QStringLiteral("hello"));
    QCOMPARE(p.section.value(QStringLiteral("repeat")).toInt(), 3);
    QVERIFY(ProfileStore::validate(p).isEmpty());

    // Without a greeting: the kind's own check names the field.
    QCommandLineParser silent;
    silent.addOptions(kind->addOptions());
    QVERIFY(silent.parse({QStringLiteral("rankdeck-cli"), QStringLiteral("--echo")}));
    QVERIFY(kind->applyOptions(silent, &p, &error));
    const QList<ProfileError> problems = ProfileStore::validate(p);
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems.first().field, QStringLiteral("echo.greeting"));

    QCommandLineParser bad;
    bad.addOptions(kind->addOptions());
    QVERIFY(bad.parse(
        {QStringLiteral("rankdeck-cli"), QStringLiteral("--repeat"), QStringLiteral("eleven")}));
    QVERIFY(!kind->applyOptions(bad, &p, &error));
    QVERIFY2(error.startsWith(QStringLiteral("--repeat")), qPrintable(error));
}

void TestTransportKind::factoryRunsARank()
{
    QObject owner;
    QString error;
    Transport *t = TransportFactory::create(echoProfile(), QStringLiteral("run-echo"), nullptr,
                                            &owner, &error);
    QVERIFY2(qobject_cast<LocalTransport *>(t), qPrintable(error));
    QCOMPARE(t->parent(), &owner);
    QByteArray out;
    connect(t, &Transport::rankOutput, this,
            [&](int, StreamKind, const QByteArray &chunk) { out += chunk; });
    QSignalSpy exited(t, &Transport::rankExited);
    RankLaunchSpec spec;
    spec.program = QStringLiteral("/bin/echo");
    spec.arguments = {QStringLiteral("hello")};
    t->startRank(spec);
    QVERIFY(exited.wait(10000));
    QCOMPARE(out, QByteArray("hello\n"));
}

QTEST_GUILESS_MAIN(TestTransportKind)
#include "tst_transportkind.moc"
