// SPDX-License-Identifier: GPL-3.0-or-later
//
// The parts of SshNodeDeployer that need no node: the ELF interpreter sent to the node's
// library check, and the unquoting of os-release's PRETTY_NAME.
#include "transport/ssh/sshnodedeployer.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

class TestSshNodeDeployer : public QObject
{
    Q_OBJECT

private slots:
    void elfInterpreterOfADynamicExecutable();
    void elfInterpreterOfOtherFiles();
    void unquoteOsRelease_data();
    void unquoteOsRelease();
};

void TestSshNodeDeployer::elfInterpreterOfADynamicExecutable()
{
    // This test links Qt dynamically, so it has an interpreter, and that file exists here.
    const QString interp = SshNodeDeployer::elfInterpreter(QCoreApplication::applicationFilePath());
    QVERIFY2(interp.startsWith(QLatin1Char('/')), qPrintable(interp));
    QVERIFY2(interp.contains(QStringLiteral("ld-")), qPrintable(interp));
    QVERIFY2(QFileInfo::exists(interp), qPrintable(interp));
}

void TestSshNodeDeployer::elfInterpreterOfOtherFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString script = dir.filePath(QStringLiteral("script"));
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\necho hi\n");
    f.close();
    QVERIFY(SshNodeDeployer::elfInterpreter(script).isEmpty());
    // An ELF header and nothing else: no program headers to read.
    const QString truncated = dir.filePath(QStringLiteral("truncated"));
    QFile t(truncated);
    QVERIFY(t.open(QIODevice::WriteOnly));
    t.write(QByteArray("\x7f"
                       "ELF\x02\x01\x01",
                       7) +
            QByteArray(57, '\0'));
    t.close();
    QVERIFY(SshNodeDeployer::elfInterpreter(truncated).isEmpty());
    QVERIFY(SshNodeDeployer::elfInterpreter(dir.filePath(QStringLiteral("missing"))).isEmpty());
}

void TestSshNodeDeployer::unquoteOsRelease_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("expected");
    QTest::newRow("double") << QStringLiteral("\"Debian GNU/Linux 12 (bookworm)\"")
                            << QStringLiteral("Debian GNU/Linux 12 (bookworm)");
    QTest::newRow("single") << QStringLiteral("'Ubuntu 22.04'") << QStringLiteral("Ubuntu 22.04");
    QTest::newRow("bare") << QStringLiteral("Alpine") << QStringLiteral("Alpine");
    QTest::newRow("escapes") << QStringLiteral("\"say \\\"hi\\\" \\\\o/\"")
                             << QStringLiteral("say \"hi\" \\o/");
    QTest::newRow("single keeps backslashes")
        << QStringLiteral("'a\\\"b'") << QStringLiteral("a\\\"b");
    QTest::newRow("unbalanced") << QStringLiteral("\"open") << QStringLiteral("\"open");
    QTest::newRow("lone quote") << QStringLiteral("\"") << QStringLiteral("\"");
}

void TestSshNodeDeployer::unquoteOsRelease()
{
    QFETCH(QString, value);
    QFETCH(QString, expected);
    QCOMPARE(SshNodeDeployer::unquoteOsRelease(value), expected);
}

QTEST_GUILESS_MAIN(TestSshNodeDeployer)
#include "tst_sshnodedeployer.moc"
