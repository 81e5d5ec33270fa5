// SPDX-License-Identifier: GPL-3.0-or-later
//
// The user's own program on two sshd nodes through `rankdeck-cli launch --exec`: with --sync the
// program runs from the node's copy of a local directory, and a second launch sends only what
// changed (the counts the launcher reports, checked against what the test changed); without it
// the program runs in the home directory; a program that is missing or not executable on one
// node fails the run with a message naming the node and the program, and nothing hangs.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"

#include "testprocesses.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;
using rankdeck::testing::fileLines;
using rankdeck::testing::haveGit;
using rankdeck::testing::processesMatching;
using rankdeck::testing::writeFile;

namespace {

// The program of the tests: it reads a value from a data file next to it, so the output says
// whether it ran from an up-to-date copy, and writes into its working directory as training
// programs do (checkpoints), which a later sync must leave alone.
const QByteArray kTrain = R"PY(import os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "data", "value.txt")) as f:
    value = f.read().strip()
with open("written-by-rank-%s.txt" % os.environ["RANK"], "w") as f:
    f.write("output")
print("rank %s value=%s cwd=%s" % (os.environ["RANK"], value, os.getcwd()), flush=True)
)PY";

} // namespace

class TestSshSync : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void syncedProgramRunsFromTheCopy();
    void noChangeResyncOfManyFiles();
    void nodeRunDirectoryStaysOutOfTheCopy();
    void workingDirectoryDefaultsToHome();
    void programUnusableOnOneNode_data();
    void programUnusableOnOneNode();
    void badSyncDirectory_data();
    void badSyncDirectory();

private:
    struct Launch
    {
        int exitCode = -1;
        QString output;
        QString runId;
        qint64 wallMs = 0;
    };
    Launch launch(const QStringList &options, const QStringList &program);
    // The "sync: HOST: …" line the launcher printed for a node.
    static QString syncLine(const Launch &l, const QString &host);
    QString copyOnNode(int node, const QString &name) const;

    SshFixture m_ssh;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_runsDir;
};

void TestSshSync::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    m_cli = bin + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(QFileInfo(bin + u"/rankdeck-supervisor"_s).isExecutable());
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    Profile p = rankdeck::testing::fixtureProfile(m_ssh, u"syncpair"_s, 2, 1);
    p.backend = u"gloo"_s;
    p.connectTimeoutSec = 5;
    p.rendezvousTimeoutSec = 30;
    QString error;
    QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
}

TestSshSync::Launch TestSshSync::launch(const QStringList &options, const QStringList &program)
{
    const QStringList before = QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.setWorkingDirectory(m_tmp.path());
    QElapsedTimer clock;
    clock.start();
    cli.start(m_cli, QStringList{u"launch"_s, u"--profile"_s, u"syncpair"_s, u"--no-progress"_s,
                                 u"--accept-new-host-keys"_s, u"--exec"_s} +
                         options + QStringList{u"--"_s} + program);
    Launch l;
    // Nothing here takes more than seconds; a hang is a failure, not a wait.
    if (!cli.waitForFinished(90000)) {
        cli.kill();
        cli.waitForFinished();
    }
    l.wallMs = clock.elapsed();
    l.output = QString::fromUtf8(cli.readAll());
    l.exitCode = cli.exitStatus() == QProcess::NormalExit ? cli.exitCode() : -1;
    for (const QString &d : QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (!before.contains(d))
            l.runId = d;
    }
    qInfo("rankdeck-cli exit %d after %lld ms:\n%s", l.exitCode, l.wallMs, qPrintable(l.output));
    return l;
}

QString TestSshSync::syncLine(const Launch &l, const QString &host)
{
    const QRegularExpression re(u"sync: "_s + QRegularExpression::escape(host) + u": [^\n]*"_s);
    return re.match(l.output).captured(0);
}

QString TestSshSync::copyOnNode(int node, const QString &name) const
{
    const QDir base(m_ssh.home(node) + u"/.cache/rankdeck/sync"_s);
    const QStringList copies = base.entryList({name + u"-*"_s}, QDir::Dirs | QDir::NoDotAndDotDot);
    return copies.size() == 1 ? base.filePath(copies.first()) : QString();
}

void TestSshSync::syncedProgramRunsFromTheCopy()
{
    const QString proj = m_tmp.filePath(u"proj"_s);
    QVERIFY(writeFile(proj + u"/train.py"_s, kTrain));
    QVERIFY(writeFile(proj + u"/data/value.txt"_s, "42\n"));
    QVERIFY(writeFile(proj + u"/run.sh"_s, "#!/bin/sh\nexec python3 train.py\n", true));
    for (int i = 0; i < 10; ++i)
        QVERIFY(writeFile(proj + u"/lib/mod%1.py"_s.arg(i), "X = " + QByteArray::number(i) + "\n"));
    QVERIFY(writeFile(proj + u"/.gitignore"_s, "*.ckpt\nout/\n"));
    QVERIFY(writeFile(proj + u"/model.ckpt"_s, QByteArray(10000, 'c')));
    QVERIFY(writeFile(proj + u"/out/log.txt"_s, "old output"));
    if (haveGit()) {
        QProcess git;
        git.start(u"git"_s, {u"-C"_s, proj, u"init"_s, u"-q"_s});
        QVERIFY(git.waitForFinished(10000) && git.exitCode() == 0);
        QVERIFY(QFileInfo(proj + u"/.git"_s).isDir());
    } else {
        QVERIFY(writeFile(proj + u"/.git/config"_s, "stands in for a repository"));
    }
    // What must travel: 14 files, and their bytes.
    qint64 bytes = 0;
    int files = 0;
    for (const QString &f : {u"train.py"_s, u"data/value.txt"_s, u"run.sh"_s, u".gitignore"_s}) {
        bytes += QFileInfo(proj + u'/' + f).size();
        ++files;
    }
    for (int i = 0; i < 10; ++i, ++files)
        bytes += QFileInfo(proj + u"/lib/mod%1.py"_s.arg(i)).size();
    QCOMPARE(files, 14);

    // A relative script path: it resolves in the copy, the program's working directory.
    Launch l = launch({u"--sync"_s, proj}, {u"python3"_s, u"train.py"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node) {
        const QString line = syncLine(l, m_ssh.address(node));
        QVERIFY2(
            line.startsWith(u"sync: %1: %2 files, %3 bytes (0 unchanged)"_s.arg(m_ssh.address(node))
                                .arg(files)
                                .arg(bytes)),
            qPrintable(line));
        const QString copy = copyOnNode(node, u"proj"_s);
        QVERIFY2(!copy.isEmpty(), qPrintable(m_ssh.home(node)));
        QVERIFY2(l.output.contains(u"[r%1] rank %1 value=42 cwd=%2"_s.arg(node).arg(copy)),
                 qPrintable(l.output));
        // .git/ and what .gitignore excludes stay behind; the executable bit travels.
        QVERIFY(!QFileInfo::exists(copy + u"/.git"_s));
        QVERIFY(!QFileInfo::exists(copy + u"/model.ckpt"_s));
        QVERIFY(!QFileInfo::exists(copy + u"/out"_s));
        QVERIFY(QFileInfo(copy + u"/run.sh"_s).isExecutable());
        QVERIFY(!QFileInfo(copy + u"/train.py"_s).isExecutable());
        QCOMPARE(QFile(copy + u"/lib/mod7.py"_s).size(), QFile(proj + u"/lib/mod7.py"_s).size());
        QVERIFY(QFileInfo::exists(copy + u"/written-by-rank-%1.txt"_s.arg(node)));
    }
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);

    // One file changed: exactly that file, its bytes, goes to each node.
    QVERIFY(writeFile(proj + u"/data/value.txt"_s, "1234\n"));
    l = launch({u"--sync"_s, proj}, {u"./run.sh"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node) {
        const QString line = syncLine(l, m_ssh.address(node));
        QVERIFY2(
            line.startsWith(u"sync: %1: 1 file, 5 bytes (%2 unchanged)"_s.arg(m_ssh.address(node))
                                .arg(files - 1)),
            qPrintable(line));
        QVERIFY2(l.output.contains(u"[r%1] rank %1 value=1234"_s.arg(node)), qPrintable(l.output));
    }

    // A file gone locally goes from the copies too; what the program wrote there stays.
    QVERIFY(QFile::remove(proj + u"/lib/mod9.py"_s));
    l = launch({u"--sync"_s, proj, u"--workdir"_s, u"lib"_s}, {u"python3"_s, u"../train.py"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node) {
        const QString line = syncLine(l, m_ssh.address(node));
        QVERIFY2(line.startsWith(u"sync: %1: 0 files, 0 bytes (%2 unchanged, 1 removed)"_s
                                     .arg(m_ssh.address(node))
                                     .arg(files - 1)),
                 qPrintable(line));
        const QString copy = copyOnNode(node, u"proj"_s);
        QVERIFY(!QFileInfo::exists(copy + u"/lib/mod9.py"_s));
        QVERIFY(QFileInfo::exists(copy + u"/written-by-rank-%1.txt"_s.arg(node)));
        // --workdir is inside the copy.
        QVERIFY2(l.output.contains(u"rank %1 value=1234 cwd=%2/lib"_s.arg(node).arg(copy)),
                 qPrintable(l.output));
    }
    // The record keeps what was synced, for `show`.
    QProcess show;
    show.start(m_cli, {u"show"_s, l.runId});
    QVERIFY(show.waitForFinished(30000));
    const QString shown = QString::fromUtf8(show.readAllStandardOutput());
    QVERIFY2(shown.contains(u"Synced:    "_s + proj), qPrintable(shown));
}

// What a re-launch costs when nothing changed: one round trip per node, whatever the file count.
void TestSshSync::noChangeResyncOfManyFiles()
{
    const QString proj = m_tmp.filePath(u"many"_s);
    QVERIFY(writeFile(proj + u"/train.py"_s, kTrain));
    QVERIFY(writeFile(proj + u"/data/value.txt"_s, "7\n"));
    for (int i = 0; i < 198; ++i)
        QVERIFY(writeFile(proj + u"/src/d%1/f%2.py"_s.arg(i % 10).arg(i),
                          QByteArray(100 + i * 10, 'p')));
    Launch first = launch({u"--sync"_s, proj}, {u"python3"_s, u"train.py"_s});
    QVERIFY2(first.exitCode == 0, qPrintable(first.output));
    QVERIFY2(syncLine(first, m_ssh.address(0)).contains(u": 200 files,"_s),
             qPrintable(first.output));
    Launch again = launch({u"--sync"_s, proj}, {u"python3"_s, u"train.py"_s});
    QVERIFY2(again.exitCode == 0, qPrintable(again.output));
    for (int node = 0; node < 2; ++node) {
        const QString line = syncLine(again, m_ssh.address(node));
        QVERIFY2(line.contains(u": 0 files, 0 bytes (200 unchanged)"_s), qPrintable(line));
        qInfo("first launch: %s", qPrintable(syncLine(first, m_ssh.address(node))));
        qInfo("no-change re-sync: %s", qPrintable(line));
    }
    qInfo("launch wall time: first %lld ms, unchanged %lld ms", first.wallMs, again.wallMs);
}

// The rank's run directory on the node (the rankdeck module in python/, error and stack files)
// is ~/.cache/rankdeck/runs/<id> whatever the working directory: passed relative, it landed in
// the synced copy, where the program starts, and the failure report pointed nowhere (issue 29,
// problem 5). A rank that segfaults under --sync --workdir shows where its stacks really are.
void TestSshSync::nodeRunDirectoryStaysOutOfTheCopy()
{
    const QString proj = m_tmp.filePath(u"crashproj"_s);
    QVERIFY(writeFile(proj + u"/lib/crash.py"_s,
                      "import ctypes, os, rankdeck\nprint('module from', rankdeck.__file__)\n"
                      "print('error file', os.environ['TORCHELASTIC_ERROR_FILE'], flush=True)\n"
                      "ctypes.string_at(0)\n"));
    const Launch l =
        launch({u"--sync"_s, proj, u"--workdir"_s, u"lib"_s}, {u"python3"_s, u"crash.py"_s});
    QVERIFY2(l.exitCode != 0 && !l.runId.isEmpty(), qPrintable(l.output));
    // A crash report, when the failure names one, is where the rank wrote it.
    static const QRegularExpression report(u"report:\\s+(\\S+) \\(on the node\\)"_s);
    const QString reported = report.match(l.output).captured(1);
    bool found = reported.isEmpty();
    for (int node = 0; node < 2; ++node) {
        const QString copy = copyOnNode(node, u"crashproj"_s);
        QVERIFY(!copy.isEmpty());
        const QString runDir = m_ssh.home(node) + u"/.cache/rankdeck/runs/"_s + l.runId;
        QVERIFY2(QFileInfo(runDir + u"/python/rankdeck/__init__.py"_s).isFile(),
                 qPrintable(runDir));
        QVERIFY2(l.output.contains(
                     u"[r%1] module from %2/python/rankdeck/__init__.py"_s.arg(node).arg(runDir)),
                 qPrintable(l.output));
        QVERIFY2(
            l.output.contains(u"[r%1] error file %2/error-rank%1.json"_s.arg(node).arg(runDir)),
            qPrintable(l.output));
        for (const QString &inside : {copy + u"/.cache"_s, copy + u"/lib/.cache"_s})
            QVERIFY2(!QFileInfo::exists(inside), qPrintable(inside));
        found = found || (reported.startsWith(runDir + u'/') && QFileInfo(reported).isFile());
    }
    QVERIFY2(found, qPrintable(reported));
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);
}

// Without --sync a user's program runs in the node's home directory, and a relative program or
// script path means a file there.
void TestSshSync::workingDirectoryDefaultsToHome()
{
    for (int node = 0; node < 2; ++node) {
        QVERIFY(writeFile(m_ssh.home(node) + u"/where.py"_s,
                          "import os\nprint('rank', os.environ['RANK'], 'cwd=' + os.getcwd())\n"));
        QVERIFY(writeFile(m_ssh.home(node) + u"/bin/where.sh"_s,
                          "#!/bin/sh\necho \"rank $RANK sh-cwd=$(pwd)\"\n", true));
    }
    Launch l = launch({}, {u"python3"_s, u"where.py"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node)
        QVERIFY2(l.output.contains(u"[r%1] rank %1 cwd=%2\n"_s.arg(node).arg(m_ssh.home(node))),
                 qPrintable(l.output));
    l = launch({}, {u"bin/where.sh"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node)
        QVERIFY2(l.output.contains(u"[r%1] rank %1 sh-cwd=%2\n"_s.arg(node).arg(m_ssh.home(node))),
                 qPrintable(l.output));
}

void TestSshSync::programUnusableOnOneNode_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<bool>("executableOnNode1"); // else missing there
    QTest::newRow("missing on node 1") << u"tools/step-missing.sh"_s << false;
    QTest::newRow("not executable on node 1") << u"tools/step-noexec.sh"_s << true;
}

void TestSshSync::programUnusableOnOneNode()
{
    QFETCH(QString, program);
    QFETCH(bool, executableOnNode1);
    const QByteArray script = "#!/bin/sh\necho \"rank $RANK ran\"\nsleep 1\n";
    QVERIFY(writeFile(m_ssh.home(0) + u'/' + program, script, true));
    const QString onNode1 = m_ssh.home(1) + u'/' + program;
    QFile::remove(onNode1);
    if (executableOnNode1)
        QVERIFY(writeFile(onNode1, script, false));
    const Launch l = launch({}, {program});
    QCOMPARE(l.exitCode, 1);
    QVERIFY2(l.wallMs < 60000, "the failed run took a minute: a hang");
    // The node, the program and why, in the summary the user reads. The node names itself by
    // its hostname (every fixture node is this machine); rank 1 is the one rank on node 1.
    const QString why = executableOnNode1 ? u"Permission denied"_s : u"No such file or directory"_s;
    const QString message =
        u"cannot run %1 on %2: %3"_s.arg(program, QSysInfo::machineHostName(), why);
    QVERIFY2(l.output.contains(u"Root cause (first failure): rank 1 "_s), qPrintable(l.output));
    QVERIFY2(l.output.contains(u"  message: "_s + message), qPrintable(l.output));
    QVERIFY2(QRegularExpression(u"rank +1 .*failed .*root cause"_s).match(l.output).hasMatch(),
             qPrintable(l.output));
    // Rank 0, whose program ran, is stopped as a consequence, not reported as a failure.
    QVERIFY2(l.output.contains(u"[r0] rank 0 ran"_s), qPrintable(l.output));
    QVERIFY2(QRegularExpression(u"rank +0 .*stopped"_s).match(l.output).hasMatch(),
             qPrintable(l.output));
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);
}

void TestSshSync::badSyncDirectory_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString file = m_tmp.filePath(u"plain-file"_s);
    QVERIFY(writeFile(file, "x"));
    const QString big = m_tmp.filePath(u"big"_s);
    QVERIFY(writeFile(big + u"/weights.bin"_s, QByteArray(2 << 20, 'w')));
    QTest::newRow("missing") << QStringList{u"--sync"_s, u"/nonexistent/proj"_s} << 2
                             << u"--sync: \"/nonexistent/proj\" does not exist"_s;
    QTest::newRow("a file") << QStringList{u"--sync"_s, file} << 2
                            << u"--sync: \"%1\" is not a directory"_s.arg(file);
    QTest::newRow("bad limit") << QStringList{u"--sync"_s, big, u"--sync-limit"_s, u"lots"_s} << 2
                               << u"--sync-limit: \"lots\" is not a size"_s;
    QTest::newRow("absolute workdir")
        << QStringList{u"--sync"_s, big, u"--workdir"_s, u"/tmp"_s} << 2
        << u"--workdir: with a sync folder, \"/tmp\" must be a folder inside it"_s;
    QTest::newRow("over the limit")
        << QStringList{u"--sync"_s, big, u"--sync-limit"_s, u"1M"_s} << 1
        << u"holds 2.0 MiB in 1 file, more than the limit of 1.0 MiB; largest: weights.bin"_s;
}

void TestSshSync::badSyncDirectory()
{
    QFETCH(QStringList, options);
    QFETCH(int, code);
    QFETCH(QString, message);
    const Launch l = launch(options, {u"python3"_s, u"train.py"_s});
    QCOMPARE(l.exitCode, code);
    QVERIFY2(l.output.contains(message), qPrintable(l.output));
    // The limit's message once, not once per node.
    QVERIFY(l.output.count(message) <= 2);
}

QTEST_GUILESS_MAIN(TestSshSync)
#include "tst_sshsync.moc"
