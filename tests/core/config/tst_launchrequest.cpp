// SPDX-License-Identifier: GPL-3.0-or-later
//
// The launch rules, once for the CLI and the launch dialog: each bad request gets one problem
// naming its field, with the message both front ends show after their own name for the field;
// a good one becomes the TrainingConfig both launched before.
#include "config/launchrequest.h"

#include "config/profile.h"
#include "util/shellquote.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;
using Field = LaunchRequest::Field;

Q_DECLARE_METATYPE(LaunchRequest)
Q_DECLARE_METATYPE(LaunchRequest::Field)

class TestLaunchRequest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void oneProblemNamesItsField_data();
    void oneProblemNamesItsField();
    void becomesTheRunItAsks();
    void textNamesTheFieldOnce();
    void launchedAgainFromItsRecord();

private:
    LaunchRequest program() const
    {
        LaunchRequest r;
        r.runsProgram = true;
        r.command = {u"python3"_s, u"train.py"_s};
        return r;
    }
    QTemporaryDir m_tmp;
};

void TestLaunchRequest::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    QVERIFY(QDir(m_tmp.path()).mkpath(u"proj"_s));
    QFile file(m_tmp.filePath(u"proj/train.py"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
}

void TestLaunchRequest::oneProblemNamesItsField_data()
{
    QTest::addColumn<LaunchRequest>("request");
    QTest::addColumn<LaunchRequest::Field>("field");
    QTest::addColumn<QString>("message");

    LaunchRequest r = program();
    r.command.clear();
    QTest::newRow("no program") << r << Field::Program
                                << u"no program to run on every rank, e.g. python3 train.py"_s;
    r = program();
    r.environment = {u"A=1"_s, u"NOEQUALS"_s};
    QTest::newRow("environment word")
        << r << Field::Environment << u"\"NOEQUALS\" is not NAME=VALUE"_s;
    r = program();
    r.metricPatterns = {u"loss"_s};
    QTest::newRow("metric pattern")
        << r << Field::Metric << u"metric pattern \"loss\": expected NAME=REGEX"_s;
    r = program();
    r.syncFolder = m_tmp.filePath(u"nope"_s);
    QTest::newRow("sync folder missing")
        << r << Field::SyncFolder << u"\"%1\" does not exist"_s.arg(r.syncFolder);
    r.syncFolder = m_tmp.filePath(u"proj/train.py"_s);
    QTest::newRow("sync folder a file")
        << r << Field::SyncFolder << u"\"%1\" is not a directory"_s.arg(r.syncFolder);
    r.syncFolder = m_tmp.filePath(u"proj"_s);
    r.syncLimit = u"12Q"_s;
    QTest::newRow("sync limit") << r << Field::SyncLimit
                                << u"\"12Q\" is not a size such as 500M or 2G"_s;
    r.syncLimit.clear();
    r.workingDirectory = u"/srv/work"_s;
    QTest::newRow("absolute directory with a sync folder")
        << r << Field::WorkingDirectory
        << u"with a sync folder, \"/srv/work\" must be a folder inside it (a relative path)"_s;
    r = LaunchRequest();
    r.command = {u"--task"_s, u"mlp"_s, u"--rank"_s, u"3"_s};
    QTest::newRow("a flag the launcher sets")
        << r << Field::WorkerArguments << u"--rank is set by the launcher for every rank"_s;
    r = program();
    r.name = u"a/b"_s;
    QTest::newRow("name with a slash") << r << Field::Name << u"\"a/b\" must not contain '/'"_s;
}

void TestLaunchRequest::oneProblemNamesItsField()
{
    QFETCH(LaunchRequest, request);
    QFETCH(LaunchRequest::Field, field);
    QFETCH(QString, message);
    const QList<LaunchRequest::Problem> problems = request.problems();
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems.first().field, field);
    QCOMPARE(problems.first().message, message);
}

void TestLaunchRequest::becomesTheRunItAsks()
{
    LaunchRequest r = program();
    QVERIFY(r.problems().isEmpty());
    r.environment = {u"A=1"_s, u"B=x=y"_s};
    r.syncFolder = m_tmp.filePath(u"proj"_s);
    r.syncLimit = u"0"_s;
    r.workingDirectory = u"sub"_s;
    r.name = u"mine"_s;
    r.maxRestarts = 2;
    QVERIFY(r.problems().isEmpty());
    const TrainingConfig c = r.config(Profile::builtinLocal(2));
    QCOMPARE(c.program, r.command);
    QCOMPARE(c.environment.value(u"B"_s), u"x=y"_s);
    QCOMPARE(c.syncDirectory, QDir(m_tmp.filePath(u"proj"_s)).absolutePath());
    QCOMPARE(c.syncLimitBytes, qint64(-1)); // "0": no limit
    QCOMPARE(c.workingDirectory, u"sub"_s); // inside the copy, wherever it lands
    QCOMPARE(c.name, u"mine"_s);
    QCOMPARE(c.maxRestarts, 2);

    // Without a copy a local run starts here: its directory is made absolute.
    LaunchRequest here = program();
    here.workingDirectory = u"sub"_s;
    QCOMPARE(here.config(Profile::builtinLocal(2)).workingDirectory,
             QDir::current().absoluteFilePath(u"sub"_s));

    LaunchRequest worker;
    worker.command = {u"--task"_s, u"linear"_s};
    QVERIFY(worker.problems().isEmpty());
    const TrainingConfig w = worker.config(Profile::builtinLocal(2));
    QVERIFY(!w.isProgram());
    QCOMPARE(w.workerArguments, worker.command);
}

void TestLaunchRequest::textNamesTheFieldOnce()
{
    QCOMPARE(LaunchRequest::text({Field::SyncFolder, u"\"x\" does not exist"_s}, u"--sync"_s),
             u"--sync: \"x\" does not exist"_s);
    // A metric pattern's message names the pattern already.
    QCOMPARE(LaunchRequest::text({Field::Metric, u"metric pattern \"l\": expected NAME=REGEX"_s},
                                 u"--metric"_s),
             u"metric pattern \"l\": expected NAME=REGEX"_s);
}

// A recorded run's config becomes the request, and the CLI command, that launch it again.
void TestLaunchRequest::launchedAgainFromItsRecord()
{
    LaunchRequest r = program();
    r.environment = {u"A=1"_s, u"B=x y"_s};
    r.metricPatterns = {u"tok=([0-9.]+) tok/s"_s};
    r.syncFolder = m_tmp.filePath(u"proj"_s);
    r.syncLimit = u"0"_s;
    r.workingDirectory = u"sub"_s;
    r.tensorBoardDir = u"tb"_s;
    r.warmPython = true;
    r.flightRecorder = false;
    r.name = u"mine"_s;
    r.maxRestarts = 2;
    const TrainingConfig c = r.config(Profile::builtinLocal(2));
    const LaunchRequest again = LaunchRequest::of(c);
    QCOMPARE(again.config(Profile::builtinLocal(2)).toJson(), c.toJson());
    const QString proj = QDir(m_tmp.filePath(u"proj"_s)).absolutePath();
    const QStringList expected{u"launch"_s,
                               u"--profile"_s,
                               u"local"_s,
                               u"--nproc-per-node"_s,
                               u"2"_s,
                               u"--name"_s,
                               u"mine"_s,
                               u"--max-restarts"_s,
                               u"2"_s,
                               u"--no-flight-recorder"_s,
                               u"--exec"_s,
                               u"--workdir"_s,
                               u"sub"_s,
                               u"--env"_s,
                               u"A=1"_s,
                               u"--env"_s,
                               u"B=x y"_s,
                               u"--metric"_s,
                               u"tok=([0-9.]+) tok/s"_s,
                               u"--tensorboard-dir"_s,
                               u"tb"_s,
                               u"--sync"_s,
                               proj,
                               u"--sync-limit"_s,
                               u"0"_s,
                               u"--warm"_s,
                               u"--"_s,
                               u"python3"_s,
                               u"train.py"_s};
    QCOMPARE(again.cliArguments(u"local"_s, 2), expected);
    // Quoted where a shell needs it, and only there.
    QCOMPARE(shell::readable({u"rankdeck-cli"_s, u"--env"_s, u"B=x y"_s, u"it's"_s}),
             u"rankdeck-cli --env 'B=x y' 'it'\\''s'"_s);

    LaunchRequest worker;
    worker.command = {u"--task"_s, u"mlp"_s, u"--lr"_s, u"0.1"_s};
    const LaunchRequest workerAgain = LaunchRequest::of(worker.config(Profile::builtinLocal(4)));
    QCOMPARE(workerAgain.cliArguments(u"lab"_s, 0),
             (QStringList{u"launch"_s, u"--profile"_s, u"lab"_s, u"--"_s, u"--task"_s, u"mlp"_s,
                          u"--lr"_s, u"0.1"_s}));
}

QTEST_GUILESS_MAIN(TestLaunchRequest)
#include "tst_launchrequest.moc"
