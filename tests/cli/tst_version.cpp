// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which RankDeck this is (issue 30): `rankdeck --version` and `rankdeck-cli --version` print the
// project version and the git commit the binaries were built from; a launch keeps both in
// run.json; `show` says so when another version made the run (and stays quiet when this one
// did); a tree without .git still gets a commit ("unknown", or the one given at configure time).
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

static const QString kVersion = QStringLiteral(RANKDECK_PROJECT_VERSION);

class TestVersion : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void versionFlag_data();
    void versionFlag();
    void launchRecordsVersion();
    void showNamesAnotherVersion_data();
    void showNamesAnotherVersion();
    void commitWithoutGit_data();
    void commitWithoutGit();

private:
    struct Result
    {
        int code = -1;
        QString output;
    };
    // stdoutOnly: what a program prints on stdout alone (Qt may warn on stderr, e.g. about
    // XDG_RUNTIME_DIR).
    static Result run(const QString &program, const QStringList &args, bool stdoutOnly = false);
    Result cli(const QStringList &args) const { return run(m_cli, args); }
    // The commit git names for the source tree now (what the build asked git for).
    static QString gitHead();

    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_runDir;
    QJsonObject m_runJson;
};

TestVersion::Result TestVersion::run(const QString &program, const QStringList &args,
                                     bool stdoutOnly)
{
    QProcess p;
    p.setProcessChannelMode(stdoutOnly ? QProcess::SeparateChannels : QProcess::MergedChannels);
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
    }
    r.output = QString::fromUtf8(p.readAll());
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

QString TestVersion::gitHead()
{
    const QString source = qEnvironmentVariable("RANKDECK_SOURCE_DIR");
    if (!QFileInfo::exists(source + u"/.git"_s))
        return QString();
    const Result r = run(u"git"_s, {u"-C"_s, source, u"rev-parse"_s, u"--short=12"_s, u"HEAD"_s});
    return r.code == 0 ? r.output.trimmed() : QString();
}

void TestVersion::initTestCase()
{
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    for (const char *var : {"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}) {
        const QString dir = m_tmp.filePath(QString::fromLatin1(var));
        QVERIFY(QDir().mkpath(dir));
        qputenv(var, QFile::encodeName(dir));
    }
}

void TestVersion::versionFlag_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QString>("flag");
    QTest::newRow("cli --version") << u"rankdeck-cli"_s << u"--version"_s;
    QTest::newRow("cli -V") << u"rankdeck-cli"_s << u"-V"_s;
    QTest::newRow("gui --version") << u"rankdeck"_s << u"--version"_s;
}

void TestVersion::versionFlag()
{
    QFETCH(QString, program);
    QFETCH(QString, flag);
    const QString path = qEnvironmentVariable("RANKDECK_BIN_DIR") + u'/' + program;
    if (!QFileInfo(path).isExecutable())
        QSKIP(qPrintable(path + u" is not built"_s));
    const Result r = run(path, {flag}, true);
    QCOMPARE(r.code, 0);
    const QString head = gitHead();
    // Built from a git checkout: that commit, "-dirty" when tracked files had changed.
    const QString expected =
        head.isEmpty()
            ? u"^%1 %2( \\(git .+\\))?\\n$"_s.arg(program, QRegularExpression::escape(kVersion))
            : u"^%1 %2 \\(git %3(-dirty)?\\)\\n$"_s.arg(program,
                                                        QRegularExpression::escape(kVersion), head);
    QVERIFY2(QRegularExpression(expected).match(r.output).hasMatch(),
             qPrintable(r.output + u" does not match "_s + expected));
}

void TestVersion::launchRecordsVersion()
{
    // The shortest real launch: one rank of `true` under the supervisor.
    const Result r =
        cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"1"_s,
             u"--no-progress"_s, u"--name"_s, u"vers"_s, u"--exec"_s, u"--"_s, u"true"_s});
    QVERIFY2(r.code == 0, qPrintable(r.output));
    const QString runs = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    const QStringList ids = QDir(runs).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(ids.size(), 1);
    m_runDir = runs + u'/' + ids.first();
    QFile f(m_runDir + u"/run.json"_s);
    QVERIFY(f.open(QIODevice::ReadOnly));
    m_runJson = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(m_runJson.value(u"rankdeck"_s).toString(), kVersion);
    const QString version = cli({u"--version"_s}).output.trimmed();
    const QString commit = m_runJson.value(u"rankdeck_commit"_s).toString();
    QVERIFY(!commit.isEmpty());
    if (commit != u"unknown"_s)
        QCOMPARE(version, u"rankdeck-cli %1 (git %2)"_s.arg(kVersion, commit));
    // This version made it: show does not mention versions.
    const Result show = cli({u"show"_s, u"vers"_s});
    QVERIFY2(show.code == 0, qPrintable(show.output));
    QVERIFY2(!show.output.contains(u"Version:"_s), qPrintable(show.output));
    const Result json = cli({u"show"_s, u"vers"_s, u"--json"_s});
    QCOMPARE(QJsonDocument::fromJson(json.output.toUtf8()).object().value(u"rankdeck_commit"_s),
             commit);
}

void TestVersion::showNamesAnotherVersion_data()
{
    QTest::addColumn<QJsonValue>("version");
    QTest::addColumn<QJsonValue>("commit");
    QTest::addColumn<QString>("line"); // empty: no Version line
    QTest::newRow("older version")
        << QJsonValue(u"0.0.1"_s) << QJsonValue(u"0123456789ab"_s)
        << u"Version:   made by RankDeck 0.0.1 (git 0123456789ab); this is "_s;
    QTest::newRow("same version, other commit")
        << QJsonValue(kVersion) << QJsonValue(u"fedcba987654"_s)
        << u"Version:   made by RankDeck %1 (git fedcba987654); this is "_s.arg(kVersion);
    QTest::newRow("same version, commit unknown")
        << QJsonValue(kVersion) << QJsonValue(u"unknown"_s) << QString();
    QTest::newRow("record without a version")
        << QJsonValue(QJsonValue::Undefined) << QJsonValue(QJsonValue::Undefined)
        << u"Version:   made by RankDeck (unknown version); this is "_s;
    QTest::newRow("hostile version text") << QJsonValue(u"9\u001b[2J\u0007"_s) << QJsonValue(42)
                                          << u"Version:   made by RankDeck 9"_s;
}

void TestVersion::showNamesAnotherVersion()
{
    QFETCH(QJsonValue, version);
    QFETCH(QJsonValue, commit);
    QFETCH(QString, line);
    if (m_runDir.isEmpty())
        QSKIP("launchRecordsVersion made no run");
    QJsonObject o = m_runJson;
    o.remove(u"rankdeck"_s);
    o.remove(u"rankdeck_commit"_s);
    if (!version.isUndefined())
        o[u"rankdeck"_s] = version;
    if (!commit.isUndefined())
        o[u"rankdeck_commit"_s] = commit;
    QFile f(m_runDir + u"/run.json"_s);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QJsonDocument(o).toJson());
    f.close();
    const Result r = cli({u"show"_s, u"vers"_s});
    QVERIFY2(r.code == 0, qPrintable(r.output));
    if (line.isEmpty())
        QVERIFY2(!r.output.contains(u"Version:"_s), qPrintable(r.output));
    else
        QVERIFY2(r.output.contains(line), qPrintable(r.output));
    // Control characters from the record never reach the terminal.
    QVERIFY2(!r.output.contains(QChar(0x1b)) && !r.output.contains(QChar(0x07)),
             qPrintable(r.output));
}

void TestVersion::commitWithoutGit_data()
{
    QTest::addColumn<QString>("fallback");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no .git, no commit given") << QString() << u"unknown"_s;
    QTest::newRow("no .git, commit given at configure time") << u"abc123"_s << u"abc123"_s;
}

void TestVersion::commitWithoutGit()
{
    QFETCH(QString, fallback);
    QFETCH(QString, expected);
    // The very script the build runs, on a copy of the tree without .git (as a tarball is).
    QTemporaryDir tree;
    QVERIFY(tree.isValid());
    const QString out = tree.filePath(u"generated/rankdeckcommit.h"_s);
    const Result r = run(
        QStringLiteral(RANKDECK_CMAKE_COMMAND),
        {u"-DSOURCE_DIR="_s + tree.path(), u"-DOUT="_s + out, u"-DFALLBACK="_s + fallback, u"-P"_s,
         qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/cmake/RankDeckGitCommit.cmake"_s});
    QVERIFY2(r.code == 0, qPrintable(r.output));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY2(f.readAll().contains("#define RANKDECK_GIT_COMMIT \"" + expected.toUtf8() + '"'),
             qPrintable(out));
}

QTEST_GUILESS_MAIN(TestVersion)
#include "tst_version.moc"
