// SPDX-License-Identifier: GPL-3.0-or-later
//
// `launch --sync DIR` on the local profile: the ranks already see DIR, so nothing is copied, the
// program runs in DIR itself (the launcher says so), --workdir is below it, and an absolute path
// of a file inside DIR is made relative to where the program runs. The usage errors of --sync
// name the flag and the directory.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

class TestSyncLocal : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void runsInTheDirectoryItself_data();
    void runsInTheDirectoryItself();
    void usageErrors_data();
    void usageErrors();

private:
    struct Result
    {
        int code = -1;
        QString output;
    };
    Result cli(const QStringList &args);

    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_proj;
};

void TestSyncLocal::initTestCase()
{
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    for (const char *var : {"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}) {
        const QString dir = m_tmp.filePath(QString::fromLatin1(var));
        QVERIFY(QDir().mkpath(dir));
        qputenv(var, QFile::encodeName(dir));
    }
    m_proj = m_tmp.filePath(u"proj"_s);
    QVERIFY(QDir().mkpath(m_proj + u"/sub"_s));
    QFile script(m_proj + u"/where.py"_s);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write("import os\nprint('rank', os.environ['RANK'], 'cwd=' + os.getcwd())\n");
}

TestSyncLocal::Result TestSyncLocal::cli(const QStringList &args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.setWorkingDirectory(m_tmp.path()); // not the synced directory
    p.start(m_cli, args);
    Result r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
    }
    r.output = QString::fromUtf8(p.readAll());
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

void TestSyncLocal::runsInTheDirectoryItself_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("script");
    QTest::addColumn<QString>("cwd"); // relative to the synced directory
    QTest::newRow("relative script") << QStringList{} << u"where.py"_s << QString();
    QTest::newRow("absolute script inside") << QStringList{} << u"ABS"_s << QString();
    QTest::newRow("workdir below")
        << QStringList{u"--workdir"_s, u"sub"_s} << u"../where.py"_s << u"/sub"_s;
}

void TestSyncLocal::runsInTheDirectoryItself()
{
    QFETCH(QStringList, extra);
    QFETCH(QString, script);
    QFETCH(QString, cwd);
    if (script == u"ABS"_s)
        script = m_proj + u"/where.py"_s;
    const Result r = cli(QStringList{u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s,
                                     u"2"_s, u"--no-progress"_s, u"--exec"_s, u"--sync"_s, m_proj} +
                         extra + QStringList{u"--"_s, u"python3"_s, script});
    QVERIFY2(r.code == 0, qPrintable(r.output));
    QVERIFY2(r.output.contains(u"the program runs in %1 itself (no copy)"_s.arg(m_proj)),
             qPrintable(r.output));
    for (int rank = 0; rank < 2; ++rank)
        QVERIFY2(r.output.contains(u"[r%1] rank %1 cwd=%2%3\n"_s.arg(rank).arg(m_proj, cwd)),
                 qPrintable(r.output));
}

void TestSyncLocal::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QStringList launch{u"launch"_s, u"--profile"_s, u"local"_s, u"--no-progress"_s};
    QTest::newRow("sync without --exec")
        << launch + QStringList{u"--sync"_s, m_tmp.path(), u"--"_s, u"--task"_s, u"linear"_s}
        << u"--sync and --sync-limit need --exec"_s;
    QTest::newRow("limit without --sync")
        << launch + QStringList{u"--exec"_s, u"--sync-limit"_s, u"1G"_s, u"--"_s, u"true"_s}
        << u"--sync-limit needs --sync"_s;
    QTest::newRow("missing directory")
        << launch + QStringList{u"--exec"_s, u"--sync"_s, u"nope"_s, u"--"_s, u"true"_s}
        << u"--sync: \"nope\" does not exist"_s;
    QTest::newRow("bad limit") << launch + QStringList{u"--exec"_s,       u"--sync"_s, m_tmp.path(),
                                                       u"--sync-limit"_s, u"12Q"_s,    u"--"_s,
                                                       u"true"_s}
                               << u"--sync-limit: \"12Q\" is not a size such as 500M or 2G"_s;
}

void TestSyncLocal::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Result r = cli(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.output.contains(message), qPrintable(r.output));
}

QTEST_GUILESS_MAIN(TestSyncLocal)
#include "tst_synclocal.moc"
