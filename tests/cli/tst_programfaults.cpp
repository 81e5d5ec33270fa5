// SPDX-License-Identifier: GPL-3.0-or-later
//
// The fault matrix of a user's own program (launch --exec), on 2 local ranks and on 2 sshd
// nodes × 2 ranks: a small Python DDP script (Gloo, CPU; tests/cli/programs/faulty_ddp.py)
// fails on rank 1 at epoch 2 with a ValueError in a nested function, a ctypes segfault,
// os.abort(), abort() inside libc called through ctypes, or hangs in time.sleep while the
// others block in DDP's all-reduce. Each case must name the right rank and kind, the exception
// or the signal, the Python file:line of the faulting line, a native frame for the native
// cases; the survivors must be stopped within 10 s and no process may be left. The hang must
// show both ranks' Python stacks at the right lines while they are still alive.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"
#include "testprocesses.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace rankdeck;

class TestProgramFaults : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void faultOnOneRank_data();
    void faultOnOneRank();
    void nativeProgramNamesItsOwnFunction();
    void workerDumpStaysWholeBesideABar_data();
    void workerDumpStaysWholeBesideABar();
    void hangShowsBothPythonStacks_data();
    void hangShowsBothPythonStacks();

private:
    using Result = testing::CommandResult;

    Result cli(const QStringList &args, int timeoutMs = 240000) const
    {
        return testing::runCommand(m_cli, args, QProcessEnvironment::systemEnvironment(),
                                   timeoutMs);
    }
    QStringList launchArgs(const QString &profile, const QString &name) const
    {
        QStringList args{
            u"launch"_s, u"--profile"_s, profile == u"local"_s ? profile : u"sshpair"_s,
            u"--name"_s, name,           u"--no-progress"_s};
        if (profile == u"local"_s)
            args << u"--nproc-per-node"_s << u"2"_s;
        else
            args << u"--accept-new-host-keys"_s;
        return args;
    }
    QString runDirectory(const QString &name) const
    {
        const QStringList dirs = QDir(m_runsDir).entryList({u"*-"_s + name + u"-*"_s}, QDir::Dirs);
        return dirs.size() == 1 ? m_runsDir + u'/' + dirs.first() : QString();
    }
    // The line of the script that ends with "# FAULT: <what>".
    int faultLine(const QString &what) const
    {
        QFile f(m_script);
        if (!f.open(QIODevice::ReadOnly))
            return -1;
        const QList<QByteArray> lines = f.readAll().split('\n');
        for (qsizetype i = 0; i < lines.size(); ++i)
            if (lines[i].trimmed().endsWith("# FAULT: " + what.toUtf8()))
                return int(i) + 1;
        return -1;
    }
    void skipUnlessAvailable(const QString &profile)
    {
        if (profile == u"ssh"_s && !m_sshWhy.isEmpty())
            QSKIP(qPrintable(m_sshWhy));
    }

    SshFixture m_ssh;
    QString m_sshWhy;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_python;
    QString m_script;
    QString m_runsDir;
};

void TestProgramFaults::initTestCase()
{
    m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON)");
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    m_script = qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs/faulty_ddp.py"_s;
    QVERIFY(QFileInfo::exists(m_script));
    QVERIFY(m_tmp.isValid());
    QVERIFY(testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    m_sshWhy = SshFixture::unavailableReason();
    if (m_sshWhy.isEmpty() && !m_ssh.start(2))
        m_sshWhy = u"sshd fixture: "_s + m_ssh.lastError();
    if (m_sshWhy.isEmpty()) {
        Profile p = testing::fixtureProfile(m_ssh, u"sshpair"_s, 2, 2);
        p.connectTimeoutSec = 5;
        p.rendezvousTimeoutSec = 60;
        p.heartbeatTimeoutSec = 30;
        QString error;
        QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
    }
}

void TestProgramFaults::faultOnOneRank_data()
{
    QTest::addColumn<QString>("profile");
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("what"); // in the root cause's summary
    QTest::addColumn<bool>("native");  // a native frame must be there
    for (const QString &profile : {u"local"_s, u"ssh"_s}) {
        auto row = [&](const QString &mode, const QString &what, bool native) {
            QTest::addRow("%s %s", qPrintable(profile), qPrintable(mode))
                << profile << mode << what << native;
        };
        row(u"valueerror"_s, u"ValueError: bad batch at epoch 2"_s, false);
        row(u"segfault"_s, u"SIGSEGV"_s, true);
        row(u"abort"_s, u"SIGABRT"_s, true);
        row(u"nativeabort"_s, u"SIGABRT"_s, true);
    }
}

void TestProgramFaults::faultOnOneRank()
{
    QFETCH(QString, profile);
    QFETCH(QString, mode);
    QFETCH(QString, what);
    QFETCH(bool, native);
    skipUnlessAvailable(profile);
    const QString name = profile + u'-' + mode;
    const Result r = cli(launchArgs(profile, name) + QStringList{u"--exec"_s, u"--"_s, m_python,
                                                                 m_script, mode, u"1"_s, u"2"_s});
    QCOMPARE(r.code, 1);
    const QString dir = runDirectory(name);
    QVERIFY2(!dir.isEmpty(), qPrintable(r.out + r.err));

    QFile json(dir + u"/failure.json"_s);
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonArray failures =
        QJsonDocument::fromJson(json.readAll()).object().value(u"failures"_s).toArray();
    QVERIFY(!failures.isEmpty());
    const QJsonObject root = failures.first().toObject();
    QVERIFY2(root.value(u"root_cause"_s).toBool(), qPrintable(r.out));
    QCOMPARE(root.value(u"rank"_s).toInt(), 1);
    if (native) {
        QCOMPARE(root.value(u"signal_name"_s).toString(), what);
        // Symbolized native frames of the faulting thread, captured by the supervisor.
        const QJsonArray stack = root.value(u"stack"_s).toArray();
        QVERIFY2(!stack.isEmpty(), qPrintable(r.out));
        static const QRegularExpression frame(u"^#\\d+ 0x[0-9a-f]+ in \\S.* \\[[^\\]]+\\]$"_s);
        QVERIFY2(frame.match(stack.first().toString()).hasMatch(),
                 qPrintable(stack.first().toString()));
    } else {
        QCOMPARE(root.value(u"exception"_s).toString(), u"ValueError"_s);
        QCOMPARE(root.value(u"message"_s).toString(), u"bad batch at epoch 2"_s);
    }

    // The report, in the CLI's words as in the run record: the rank, what, and where in Python.
    const Result show = cli({u"show"_s, QFileInfo(dir).fileName()});
    QCOMPARE(show.code, 0);
    QVERIFY2(show.out.contains(u"Root cause (first failure): rank 1"_s), qPrintable(show.out));
    QVERIFY2(show.out.contains(what), qPrintable(show.out));
    const int line = faultLine(mode);
    QVERIFY(line > 0);
    const QRegularExpression where(u"faulty_ddp\\.py\", line %1\\b"_s.arg(line));
    QVERIFY2(where.match(show.out).hasMatch(), qPrintable(show.out));

    // Every survivor stopped within 10 s of the root cause, as a consequence.
    const qint64 t0 = root.value(u"time_us"_s).toInteger();
    const int ranks = profile == u"local"_s ? 2 : 4;
    QCOMPARE(failures.size(), ranks);
    for (qsizetype i = 1; i < failures.size(); ++i) {
        const QJsonObject f = failures[i].toObject();
        QVERIFY2(f.value(u"time_us"_s).toInteger() - t0 < 10'000'000,
                 QJsonDocument(f).toJson().constData());
        QVERIFY2(!f.value(u"root_cause"_s).toBool(), qPrintable(show.out));
    }
    const QString id = QFileInfo(dir).fileName();
    QVERIFY2(QTest::qWaitFor([&] { return testing::processesOfRun(id).isEmpty(); }, 15000),
             qPrintable(testing::processesOfRun(id).join(u", "_s)));
}

void TestProgramFaults::nativeProgramNamesItsOwnFunction()
{
    // A C++ program of the user's that segfaults on rank 1: its own function and file:line.
    const Result r = cli(launchArgs(u"local"_s, u"native-segv"_s) +
                         QStringList{u"--exec"_s, u"--"_s, u"/bin/sh"_s, u"-c"_s,
                                     u"if [ \"$RANK\" = 1 ]; then exec %1; fi; sleep 60"_s.arg(
                                         QStringLiteral(RANKDECK_NATIVECRASH))});
    QCOMPARE(r.code, 1);
    const QString id = QFileInfo(runDirectory(u"native-segv"_s)).fileName();
    const Result show = cli({u"show"_s, id});
    QVERIFY2(show.out.contains(u"Root cause (first failure): rank 1"_s), qPrintable(show.out));
    QVERIFY2(show.out.contains(u"supervisor_nativecrash was killed by SIGSEGV"_s),
             qPrintable(show.out));
    static const QRegularExpression own(
        u"in victim::writeThroughNull\\(int volatile\\*\\) at \\S*nativecrash\\.cpp:14\\b"_s);
    QVERIFY2(own.match(show.out).hasMatch(), qPrintable(show.out));
    QVERIFY2(QTest::qWaitFor([&] { return testing::processesOfRun(id).isEmpty(); }, 15000),
             qPrintable(testing::processesOfRun(id).join(u", "_s)));
}

// A DataLoader worker's crash dump and the rank's progress bar share its stderr: faulthandler
// wrote the dump a few bytes at a time and the bar's redraws came in between, so the dump's lines
// were spliced, the Dataset line lost and the worker not named (issue 42). Its dump now reaches
// the record whole, on lines of its own, with 2 and 4 workers.
void TestProgramFaults::workerDumpStaysWholeBesideABar_data()
{
    QTest::addColumn<int>("workers");
    QTest::newRow("2 workers") << 2;
    QTest::newRow("4 workers") << 4;
}

void TestProgramFaults::workerDumpStaysWholeBesideABar()
{
    QFETCH(int, workers);
    const QString script =
        qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs/worker_fault_bars.py"_s;
    const QString name = u"bars%1"_s.arg(workers);
    const Result r = cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--name"_s, name,
                          u"--no-progress"_s, u"--nproc-per-node"_s, u"1"_s, u"--exec"_s, u"--"_s,
                          m_python, script, QString::number(workers)});
    QCOMPARE(r.code, 1);
    const QString dir = runDirectory(name);
    QVERIFY2(!dir.isEmpty(), qPrintable(r.out + r.err));
    QFile log(dir + u"/rank-0.log"_s);
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = log.readAll().split('\n');
    // The dump, from its first line to the Dataset's frame, is lines of faulthandler's alone.
    qsizetype first = -1, dataset = -1;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (first < 0 && lines[i] == "Fatal Python error: Segmentation fault")
            first = i;
        if (first >= 0 && lines[i].endsWith("worker_fault_bars.py\", line 24 in __getitem__"))
            dataset = i;
    }
    QVERIFY2(first >= 0 && dataset > first, qPrintable(r.out));
    for (qsizetype i = first; i <= dataset; ++i)
        QVERIFY2(!lines[i].contains("Epoch 0:") && !lines[i].contains('\r'),
                 lines[i].left(300).constData());
    const Result show = cli({u"show"_s, QFileInfo(dir).fileName()});
    // The worker's pid when torch's SIGCHLD handler named it first, else "a DataLoader worker".
    static const QRegularExpression worker(u"SIGSEGV \\(signal 11\\) in (a )?DataLoader worker"_s);
    QVERIFY2(worker.match(show.out).hasMatch(), qPrintable(show.out));
    QVERIFY2(show.out.contains(u"→ File \""_s + script + u"\", line 24 in __getitem__"_s),
             qPrintable(show.out));
    // The worker's file is gone: the rank wrote it out.
    QVERIFY(QDir(dir + u"/node"_s).entryList({u"worker-fault-*"_s}).isEmpty());
}

void TestProgramFaults::hangShowsBothPythonStacks_data()
{
    QTest::addColumn<QString>("profile");
    QTest::newRow("local") << u"local"_s;
    QTest::newRow("ssh") << u"ssh"_s;
}

void TestProgramFaults::hangShowsBothPythonStacks()
{
    QFETCH(QString, profile);
    skipUnlessAvailable(profile);
    const QString name = profile + u"-hang"_s;
    QProcess launcher;
    launcher.setProcessChannelMode(QProcess::MergedChannels);
    launcher.start(m_cli, launchArgs(profile, name) +
                              QStringList{u"--hang-timeout"_s, u"20"_s, u"--exec"_s, u"--"_s,
                                          m_python, m_script, u"hang"_s, u"1"_s, u"2"_s});
    QVERIFY(launcher.waitForStarted());
    // The hang watch fires after 20 s of silence and asks every quiet rank for its stacks. A
    // rank is silent from its start too: with 5 s, a loaded machine's torch import and Gloo
    // setup already counted as the hang, and the stacks showed the import, not the sleep.
    const int ranks = profile == u"local"_s ? 2 : 4;
    QString dir;
    auto dumped = [&] {
        dir = runDirectory(name);
        if (dir.isEmpty())
            return false;
        for (int r = 0; r < ranks; ++r)
            if (!QFileInfo::exists(dir + u"/stacks-rank-%1.txt"_s.arg(r)))
                return false;
        return true;
    };
    QVERIFY2(QTest::qWaitFor(dumped, 150000), qPrintable(QString::fromUtf8(launcher.readAll())));
    const QString id = QFileInfo(dir).fileName();
    Result stacks;
    // Rank 1 sleeps at the sleep line; rank 0 waits in DDP's backward (its all-reduce).
    const auto section = [&](int rank) {
        const qsizetype from = stacks.out.indexOf(u"=== rank %1,"_s.arg(rank));
        const qsizetype to = stacks.out.indexOf(u"=== rank "_s, from + 1);
        return from < 0 ? QString() : stacks.out.mid(from, to < 0 ? -1 : to - from);
    };
    const QRegularExpression sleepLine(
        u"faulty_ddp\\.py\", line %1\\b"_s.arg(faultLine(u"hang"_s)));
    const QRegularExpression backwardLine(
        u"faulty_ddp\\.py\", line %1\\b"_s.arg(faultLine(u"allreduce"_s)));
    // On a loaded machine the first dump can come while the ranks still import torch (20 s
    // of silence there too); a rank that prints again and then goes quiet is dumped again, so
    // the latest dump reaches the real hang.
    QDeadlineTimer deadline(90000);
    for (;;) {
        stacks = cli({u"stacks"_s, id, u"--last"_s});
        const bool atHang = stacks.code == 0 && sleepLine.match(section(1)).hasMatch() &&
                            backwardLine.match(section(0)).hasMatch();
        if (atHang || deadline.hasExpired())
            break;
        QTest::qWait(1000);
    }
    QVERIFY2(stacks.code == 0, qPrintable(stacks.out + stacks.err));
    QVERIFY2(sleepLine.match(section(1)).hasMatch(), qPrintable(section(1)));
    QVERIFY2(backwardLine.match(section(0)).hasMatch(), qPrintable(section(0)));
    // Native frames too, from the supervisor's ptrace of the live program.
    QVERIFY2(section(0).contains(u"thread "_s), qPrintable(section(0)));
    // Both still alive while we looked.
    QCOMPARE(launcher.state(), QProcess::Running);
    const Result stop = cli({u"stop"_s, id});
    QVERIFY2(stop.code == 0, qPrintable(stop.err));
    QVERIFY(testing::ended(launcher, 60000));
    QVERIFY2(QTest::qWaitFor([&] { return testing::processesOfRun(id).isEmpty(); }, 15000),
             qPrintable(testing::processesOfRun(id).join(u", "_s)));
}

QTEST_GUILESS_MAIN(TestProgramFaults)
#include "tst_programfaults.moc"
