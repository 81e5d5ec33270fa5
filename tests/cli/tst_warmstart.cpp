// SPDX-License-Identifier: GPL-3.0-or-later
//
// Warm start of a Python program (launch --exec --warm), end to end through rankdeck-cli on the
// local profile with the torch environment's Python: the first --warm launch starts the warm
// server and runs cold, later ones fork from it. A warm run must be indistinguishable from a
// cold one (same output and loss points, the torchrun contract per rank, the same root cause for
// an exception and a segfault, Python and native stacks), stop and a SIGKILLed launcher leave no
// process (a setsid grandchild included), the server ends after its idle timeout, and another
// PYTHONPATH gets a server of its own.
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

#include <csignal>

using namespace Qt::StringLiterals;

class TestWarmStart : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_home;
    QString m_cli;
    QString m_python;
    QString m_programs;

    QString runtimeDir() const { return m_home.path() + u"/runtime"_s; }
    QString warmDir() const { return runtimeDir() + u"/rankdeck-warm"_s; }
    QString runsDir() const { return m_home.path() + u"/data/rankdeck/runs"_s; }

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"XDG_DATA_HOME"_s, m_home.path() + u"/data"_s);
        env.insert(u"XDG_CONFIG_HOME"_s, m_home.path() + u"/config"_s);
        // Servers of this test only, found (and ended) through their pid files.
        env.insert(u"XDG_RUNTIME_DIR"_s, runtimeDir());
        env.remove(u"RANKDECK_WARM_IDLE_SEC"_s);
        return env;
    }

    QStringList launchArgs(const QString &name, int ranks, bool warm,
                           const QStringList &extra = {}) const
    {
        QStringList a{u"launch"_s,
                      u"--profile"_s,
                      u"local"_s,
                      u"--nproc-per-node"_s,
                      QString::number(ranks),
                      u"--name"_s,
                      name,
                      u"--no-progress"_s,
                      u"--exec"_s};
        if (warm)
            a << u"--warm"_s;
        return a + extra;
    }

    Result cli(const QStringList &args, int timeoutMs = 180000) const
    {
        return rankdeck::testing::runCommand(m_cli, args, environment(), timeoutMs);
    }

    // torch 2.14.1 sometimes aborts a rank after its last line, at interpreter exit ("terminate
    // called without an active exception"), with or without RankDeck (tst_programlaunch): then
    // the run is launched once more under another name (*name), saying so.
    Result launchOnceMore(QString *name, int ranks, bool warm, const QStringList &extra) const
    {
        Result r = cli(launchArgs(*name, ranks, warm, extra));
        if (r.out.contains(u"terminate called without an active exception"_s)) {
            qWarning("%s: a rank aborted at exit inside torch; launching once more",
                     qPrintable(*name));
            *name += u"-again"_s;
            r = cli(launchArgs(*name, ranks, warm, extra));
        }
        return r;
    }

    QString runDirectory(const QString &name) const
    {
        const QStringList dirs = QDir(runsDir()).entryList({u"*-"_s + name + u"-*"_s}, QDir::Dirs);
        return dirs.size() == 1 ? runsDir() + u'/' + dirs.first() : QString();
    }

    static QByteArray readFile(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    QStringList sockets() const
    {
        return QDir(warmDir()).entryList({u"*.sock"_s}, QDir::System | QDir::Files, QDir::Name);
    }

    // The pids of the running warm servers (their masters).
    QList<qint64> servers() const
    {
        QList<qint64> pids;
        for (const QString &f : QDir(warmDir()).entryList({u"*.pid"_s}, QDir::Files))
            if (const qint64 pid = readFile(warmDir() + u'/' + f).trimmed().toLongLong();
                pid > 0 && rankdeck::testing::processRuns(pid))
                pids << pid;
        return pids;
    }

    // Starts the server for `args` (a --warm launch that runs cold) and waits until it listens.
    void startServer(const QStringList &programArgs, int ranks = 2,
                     const QStringList &extraLaunchArgs = {})
    {
        const QStringList before = sockets();
        const Result r = cli(launchArgs(u"warmup"_s + QString::number(before.size()), ranks, true,
                                        extraLaunchArgs + QStringList{u"--"_s} + programArgs));
        QVERIFY2(r.out.contains(u"--warm: starting the warm Python server"_s),
                 qPrintable(r.out + r.err));
        QVERIFY2(QTest::qWaitFor([&] { return sockets().size() > before.size(); }, 60000),
                 "the warm server did not come up within 60 s");
    }

    static QMap<qint64, double> lossPoints(const QString &runDir, int rank)
    {
        QMap<qint64, double> points;
        for (const QByteArray &line : readFile(runDir + u"/metrics.csv"_s).split('\n')) {
            const QList<QByteArray> f = line.split(',');
            if (f.size() == 6 && f[0] == QByteArray::number(rank) && f[1] == "loss")
                points.insert(f[3].toLongLong(), f[5].toDouble());
        }
        return points;
    }

    // The program's own lines of a rank (no supervisor notes).
    static QByteArrayList programLines(const QString &runDir, int rank, const QByteArray &prefix)
    {
        QByteArrayList out;
        for (const QByteArray &line : readFile(runDir + u"/rank-%1.log"_s.arg(rank)).split('\n'))
            if (line.startsWith(prefix))
                out << line;
        return out;
    }

    // Every pid the rank printed on its "ready" line (itself, its child, its setsid grandchild).
    QList<qint64> printedPids(const QString &runDir, int ranks) const
    {
        static const QRegularExpression rx(u"child=(\\d+) detached=(\\d+) pid=(\\d+)"_s);
        QList<qint64> pids;
        for (int r = 0; r < ranks; ++r) {
            const QRegularExpressionMatch m =
                rx.match(QString::fromUtf8(readFile(runDir + u"/rank-%1.log"_s.arg(r))));
            for (int i = 1; m.hasMatch() && i <= 3; ++i)
                pids << m.captured(i).toLongLong();
        }
        return pids;
    }

    static bool noneRuns(const QList<qint64> &pids)
    {
        for (qint64 pid : pids)
            if (rankdeck::testing::processRuns(pid))
                return false;
        return true;
    }

private slots:
    void initTestCase();
    void cleanupTestCase();
    void warmRunEqualsColdRun();
    void contractPerRank();
    void faultIsTheSameRootCause_data();
    void faultIsTheSameRootCause();
    void hangShowsPythonAndNativeStacks();
    void stopOrKilledLauncherLeaveNoProcess_data();
    void stopOrKilledLauncherLeaveNoProcess();
    void otherPythonPathGetsItsOwnServerWhichEndsWhenIdle();
    void nonPythonProgramStartsCold();
};

void TestWarmStart::initTestCase()
{
    QVERIFY(m_home.isValid());
    QVERIFY(QDir().mkpath(runtimeDir()));
    QVERIFY(QFile::setPermissions(runtimeDir(),
                                  QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    m_programs = qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs"_s;
    m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON): scripts/bootstrap.sh creates it");
    // One server for the tests below (they share its key: this python, this environment).
    startServer({m_python, m_programs + u"/print_contract.py"_s});
}

void TestWarmStart::cleanupTestCase()
{
    for (qint64 pid : servers())
        ::kill(pid_t(pid), SIGTERM);
}

void TestWarmStart::warmRunEqualsColdRun()
{
    const QStringList program{u"--"_s, m_python, m_programs + u"/train_ddp.py"_s};
    QString coldName = u"cold"_s;
    QString warmName = u"warm"_s;
    const Result cold = launchOnceMore(&coldName, 2, false, program);
    QVERIFY2(cold.code == 0, qPrintable(cold.out.right(3000) + cold.err.right(2000)));
    const Result warm = launchOnceMore(&warmName, 2, true, program);
    QVERIFY2(warm.code == 0, qPrintable(warm.out.right(3000) + warm.err.right(2000)));
    // It did start warm: no rank fell back (each would have said so).
    QVERIFY2(!warm.out.contains(u"--warm:"_s) && !warm.err.contains(u"--warm:"_s),
             qPrintable(warm.out + warm.err));
    const QString coldDir = runDirectory(coldName);
    const QString warmDir = runDirectory(warmName);
    for (int rank = 0; rank < 2; ++rank) {
        const QByteArrayList coldLines = programLines(coldDir, rank, "Rank ");
        QCOMPARE(coldLines.size(), 5);
        QCOMPARE(programLines(warmDir, rank, "Rank "), coldLines);
        const QMap<qint64, double> points = lossPoints(warmDir, rank);
        QCOMPARE(points.keys(), (QList<qint64>{0, 1, 2, 3, 4}));
        QCOMPARE(points, lossPoints(coldDir, rank));
    }
}

void TestWarmStart::contractPerRank()
{
    const QStringList program{u"--"_s, m_python, m_programs + u"/print_contract.py"_s, u"a b"_s};
    for (bool warm : {false, true}) {
        QString name = warm ? u"contract-warm"_s : u"contract-cold"_s;
        const Result r = launchOnceMore(&name, 2, warm, program);
        QVERIFY2(r.code == 0, qPrintable(r.out.right(3000) + r.err.right(2000)));
        const QString dir = runDirectory(name);
        const QString id = QFileInfo(dir).fileName();
        QSet<QString> ports;
        for (int rank = 0; rank < 2; ++rank) {
            const QString log = QString::fromUtf8(readFile(dir + u"/rank-%1.log"_s.arg(rank)));
            const QString expected =
                u"contract RANK=%1 LOCAL_RANK=%1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 "
                u"ROLE_RANK=%1 ROLE_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="_s.arg(rank);
            const qsizetype at = log.indexOf(expected);
            QVERIFY2(at >= 0, qPrintable(log));
            const QString rest = log.mid(at + expected.size()).section(u'\n', 0, 0);
            ports << rest.section(u' ', 0, 0);
            QVERIFY2(rest.endsWith(u" TORCHELASTIC_RUN_ID=%1 PYTHONUNBUFFERED=1"_s.arg(id)),
                     qPrintable(rest));
            // sys.argv, sys.path[0], __file__ and __name__ as `python script.py` sets them.
            QVERIFY2(log.contains(u"argv=['%1/print_contract.py', 'a b'] path0=%2 file=%1/"
                                  u"print_contract.py main=__main__"_s.arg(
                                      m_programs, QFileInfo(m_programs).canonicalFilePath())),
                     qPrintable(log));
            QVERIFY2(log.contains(u"joined rank=%1 world=2"_s.arg(rank)), qPrintable(log));
            // Its parent: the warm server's waiter, or the supervisor when cold.
            QVERIFY2(log.contains(warm ? u"parent="_s + m_python + u" -m rankdeck._warmstart"_s
                                       : u"/rankdeck-supervisor"_s),
                     qPrintable(log));
        }
        QCOMPARE(ports.size(), 2); // rank 0's own port, the store proxy's for rank 1
    }
}

void TestWarmStart::faultIsTheSameRootCause_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("what");
    QTest::newRow("exception") << u"valueerror"_s << u"ValueError: bad batch at epoch 2"_s;
    QTest::newRow("segfault") << u"segfault"_s << u"SIGSEGV"_s;
}

void TestWarmStart::faultIsTheSameRootCause()
{
    QFETCH(QString, mode);
    QFETCH(QString, what);
    const QString script = m_programs + u"/faulty_ddp.py"_s;
    int line = 0;
    const QList<QByteArray> lines = readFile(script).split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i)
        if (lines[i].trimmed().endsWith("# FAULT: " + mode.toUtf8()))
            line = int(i) + 1;
    QVERIFY(line > 0);
    QJsonObject roots[2];
    for (int warm = 0; warm < 2; ++warm) {
        QString name = mode + (warm ? u"-warm"_s : u"-cold"_s);
        const Result r =
            launchOnceMore(&name, 2, warm != 0, {u"--"_s, m_python, script, mode, u"1"_s, u"2"_s});
        QCOMPARE(r.code, 1);
        QVERIFY2(!warm || !r.out.contains(u"--warm:"_s), qPrintable(r.out));
        const QString dir = runDirectory(name);
        const QJsonArray failures = QJsonDocument::fromJson(readFile(dir + u"/failure.json"_s))
                                        .object()
                                        .value(u"failures"_s)
                                        .toArray();
        QVERIFY2(!failures.isEmpty(), qPrintable(r.out));
        roots[warm] = failures.first().toObject();
        QVERIFY(roots[warm].value(u"root_cause"_s).toBool());
        QCOMPARE(roots[warm].value(u"rank"_s).toInt(), 1);
        const Result show = cli({u"show"_s, QFileInfo(dir).fileName()});
        QVERIFY2(show.out.contains(u"Root cause (first failure): rank 1"_s), qPrintable(show.out));
        QVERIFY2(show.out.contains(what), qPrintable(show.out));
        // Where in Python: the traceback, or faulthandler's dump of the crashing thread.
        const QRegularExpression where(u"faulty_ddp\\.py\", line %1\\b"_s.arg(line));
        QVERIFY2(where.match(show.out).hasMatch(), qPrintable(show.out));
        if (mode == u"segfault"_s) {
            QCOMPARE(roots[warm].value(u"signal_name"_s).toString(), u"SIGSEGV"_s);
            // The supervisor traced the warm rank too: the faulting thread's native frames.
            QVERIFY2(!roots[warm].value(u"stack"_s).toArray().isEmpty(), qPrintable(r.out));
        }
        const QString id = QFileInfo(dir).fileName();
        QVERIFY(QTest::qWaitFor([&] { return rankdeck::testing::processesOfRun(id).isEmpty(); },
                                15000));
    }
    // The same cause.
    for (const QString &key : {u"exception"_s, u"message"_s})
        QCOMPARE(roots[1].value(key), roots[0].value(key));
}

void TestWarmStart::hangShowsPythonAndNativeStacks()
{
    // As tst_programfaults' hang, warm: the hang watch asks the quiet ranks for their stacks;
    // rank 1 sleeps at the hang line, rank 0 waits in DDP's backward, native threads included.
    const QString script = m_programs + u"/faulty_ddp.py"_s;
    auto faultLine = [&](const QByteArray &what) {
        const QList<QByteArray> lines = readFile(script).split('\n');
        for (qsizetype i = 0; i < lines.size(); ++i)
            if (lines[i].trimmed().endsWith("# FAULT: " + what))
                return int(i) + 1;
        return -1;
    };
    QProcess launcher;
    launcher.setProcessEnvironment(environment());
    launcher.setProcessChannelMode(QProcess::MergedChannels);
    launcher.start(m_cli, launchArgs(u"hang"_s, 2, true,
                                     {u"--hang-timeout"_s, u"20"_s, u"--"_s, m_python, script,
                                      u"hang"_s, u"1"_s, u"2"_s}));
    QVERIFY(launcher.waitForStarted());
    QString dir;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     dir = runDirectory(u"hang"_s);
                     return !dir.isEmpty() && QFileInfo::exists(dir + u"/stacks-rank-0.txt"_s) &&
                            QFileInfo::exists(dir + u"/stacks-rank-1.txt"_s);
                 },
                 150000),
             qPrintable(QString::fromUtf8(launcher.readAll())));
    const QString id = QFileInfo(dir).fileName();
    const QRegularExpression sleepLine(u"faulty_ddp\\.py\", line %1\\b"_s.arg(faultLine("hang")));
    const QRegularExpression backwardLine(
        u"faulty_ddp\\.py\", line %1\\b"_s.arg(faultLine("allreduce")));
    Result stacks;
    const auto section = [&](int rank) {
        const qsizetype from = stacks.out.indexOf(u"=== rank %1,"_s.arg(rank));
        const qsizetype to = stacks.out.indexOf(u"=== rank "_s, from + 1);
        return from < 0 ? QString() : stacks.out.mid(from, to < 0 ? -1 : to - from);
    };
    // A dump taken while the ranks were still starting is followed by a later one at the hang.
    QDeadlineTimer deadline(90000);
    for (;;) {
        stacks = cli({u"stacks"_s, id, u"--last"_s});
        if ((stacks.code == 0 && sleepLine.match(section(1)).hasMatch() &&
             backwardLine.match(section(0)).hasMatch()) ||
            deadline.hasExpired())
            break;
        QTest::qWait(1000);
    }
    QVERIFY2(sleepLine.match(section(1)).hasMatch(), qPrintable(stacks.out + stacks.err));
    QVERIFY2(backwardLine.match(section(0)).hasMatch(), qPrintable(section(0)));
    QVERIFY2(section(0).contains(u"thread "_s), qPrintable(section(0)));
    QCOMPARE(launcher.state(), QProcess::Running);
    QVERIFY(!QString::fromUtf8(readFile(dir + u"/rank-1.log"_s)).contains(u"--warm:"_s));
    const Result stop = cli({u"stop"_s, id});
    QVERIFY2(stop.code == 0, qPrintable(stop.err));
    QVERIFY(rankdeck::testing::ended(launcher, 60000));
}

void TestWarmStart::stopOrKilledLauncherLeaveNoProcess_data()
{
    QTest::addColumn<bool>("killLauncher");
    QTest::newRow("stop") << false;
    QTest::newRow("SIGKILL of the launcher") << true;
}

void TestWarmStart::stopOrKilledLauncherLeaveNoProcess()
{
    QFETCH(bool, killLauncher);
    const QString name = killLauncher ? u"orphan"_s : u"stopme"_s;
    QProcess launcher;
    launcher.setProcessEnvironment(environment());
    launcher.start(
        m_cli, launchArgs(name, 2, true,
                          {u"--quiet"_s, u"--"_s, m_python, m_programs + u"/spawn_and_wait.py"_s}));
    QList<qint64> pids;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     const QString dir = runDirectory(name);
                     pids = dir.isEmpty() ? QList<qint64>() : printedPids(dir, 2);
                     return pids.size() == 6;
                 },
                 60000),
             "the ranks did not print their pids");
    const QString dir = runDirectory(name);
    QVERIFY2(!readFile(dir + u"/rank-0.log"_s).contains("--warm:"),
             readFile(dir + u"/rank-0.log"_s).constData());
    QVERIFY(!noneRuns(pids));
    if (killLauncher) {
        ::kill(pid_t(launcher.processId()), SIGKILL);
    } else {
        const Result stop = cli({u"stop"_s, QFileInfo(dir).fileName()});
        QVERIFY2(stop.code == 0, qPrintable(stop.err));
    }
    QVERIFY(rankdeck::testing::ended(launcher, 60000));
    // The rank processes (forked by the server, so not below the supervisor), their child and
    // their setsid grandchild: all gone, and nothing else carries the run's id.
    QVERIFY2(QTest::qWaitFor([&] { return noneRuns(pids); }, 10000), "a process of the run lives");
    const QString id = QFileInfo(dir).fileName();
    QVERIFY2(
        QTest::qWaitFor([&] { return rankdeck::testing::processesOfRun(id).isEmpty(); }, 10000),
        qPrintable(rankdeck::testing::processesOfRun(id).join(u", "_s)));
    QVERIFY(!servers().isEmpty()); // the server itself lives on for the next launch
}

void TestWarmStart::otherPythonPathGetsItsOwnServerWhichEndsWhenIdle()
{
    const QStringList before = sockets();
    QVERIFY(!before.isEmpty());
    const QList<qint64> running = servers();
    // Another PYTHONPATH changes what an import finds: a fresh server, this launch cold.
    // Idle for longer than a loaded machine's cold launch takes, so that it still listens when
    // that launch is over.
    const QStringList env{u"--env"_s, u"PYTHONPATH="_s + m_home.path(), u"--env"_s,
                          u"RANKDECK_WARM_IDLE_SEC=15"_s};
    const QStringList program{m_python, m_programs + u"/print_contract.py"_s};
    startServer(program, 1, env);
    QStringList added = sockets();
    for (const QString &s : before)
        added.removeAll(s);
    QCOMPARE(added.size(), 1);
    QList<qint64> fresh = servers();
    for (qint64 pid : running)
        fresh.removeAll(pid);
    QCOMPARE(fresh.size(), 1);
    // The next launch with that PYTHONPATH is warm, from the new server.
    const Result r = cli(launchArgs(u"otherpath"_s, 1, true, env + QStringList{u"--"_s} + program));
    QVERIFY2(r.code == 0 && !r.out.contains(u"--warm:"_s), qPrintable(r.out + r.err));
    const QByteArray log = readFile(runDirectory(u"otherpath"_s) + u"/rank-0.log"_s);
    QVERIFY2(log.contains("parent=" + m_python.toUtf8() + " -m rankdeck._warmstart --socket " +
                          warmDir().toUtf8() + '/' + added.first().toUtf8()),
             log.constData());
    // Idle for 15 s, it ends itself and removes its socket; the other one stays.
    QVERIFY2(QTest::qWaitFor([&] { return !rankdeck::testing::processRuns(fresh.first()); }, 45000),
             "the idle server did not end");
    QCOMPARE(sockets(), before);
    for (qint64 pid : running)
        QVERIFY(rankdeck::testing::processRuns(pid));
}

void TestWarmStart::nonPythonProgramStartsCold()
{
    // --warm never makes a launch fail: what cannot start warm starts cold and says why.
    const Result r =
        cli(launchArgs(u"shell"_s, 1, true, {u"--"_s, u"/bin/sh"_s, u"-c"_s, u"echo shell ran"_s}));
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains(u"--warm: /bin/sh is not a Python interpreter"_s), qPrintable(r.out));
    QVERIFY(r.out.contains(u"shell ran"_s));
}

QTEST_GUILESS_MAIN(TestWarmStart)
#include "tst_warmstart.moc"
