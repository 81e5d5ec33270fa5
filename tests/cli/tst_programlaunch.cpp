// SPDX-License-Identifier: GPL-3.0-or-later
//
// The user's own program on every rank (launch --exec), end to end through rankdeck-cli on the
// local profile, with real Python from the torch environment: the unmodified reference DDP
// script on 2 and 4 ranks (every line recorded, one loss point per epoch equal to the printed
// value), stop and SIGKILL of the launcher leaving no process of the run (a child and a setsid
// grandchild included), and the bad inputs a user meets.
#include "testprocesses.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Qt::StringLiterals;

class TestProgramLaunch : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_home;
    QString m_cli;
    QString m_python;
    QString m_programs;

    QProcessEnvironment environment() const
    {
        return rankdeck::testing::cliEnvironment(m_home.path());
    }

    Result cli(const QStringList &args, int timeoutMs = 180000) const
    {
        return rankdeck::testing::runCommand(m_cli, args, environment(), timeoutMs);
    }

    // The one run directory whose id carries `name`.
    QString runDirectory(const QString &name) const
    {
        return rankdeck::testing::runDirectoryNamed(m_home.path(), name);
    }

    static QByteArray readFile(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    static QStringList processesOfRun(const QString &runId)
    {
        return rankdeck::testing::processesOfRun(runId);
    }

    // The loss points of one rank in metrics.csv: step → value.
    static QMap<qint64, double> lossPoints(const QString &runDir, int rank)
    {
        QMap<qint64, double> points;
        const QList<QByteArray> lines = readFile(runDir + u"/metrics.csv"_s).split('\n');
        for (const QByteArray &line : lines) {
            const QList<QByteArray> f = line.split(',');
            if (f.size() == 6 && f[0] == QByteArray::number(rank) && f[1] == "loss")
                points.insert(f[3].toLongLong(), f[5].toDouble());
        }
        return points;
    }

    // Starts a launch in the background and waits until every rank printed "ready".
    bool startAndWaitReady(QProcess &p, const QString &name, int ranks)
    {
        p.setProcessEnvironment(environment());
        p.start(m_cli, {u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s,
                        QString::number(ranks), u"--name"_s, name, u"--quiet"_s, u"--no-progress"_s,
                        u"--exec"_s, u"--"_s, m_python, m_programs + u"/spawn_and_wait.py"_s});
        return QTest::qWaitFor(
            [&] {
                const QString dir = runDirectory(name);
                if (dir.isEmpty())
                    return false;
                for (int r = 0; r < ranks; ++r) {
                    if (!readFile(dir + u"/rank-%1.log"_s.arg(r)).contains("ready rank="))
                        return false;
                }
                return true;
            },
            60000);
    }

private slots:
    void initTestCase();
    void referenceScript_data();
    void referenceScript();
    void rankdeckLogReportsEveryScalar();
    void nativeProgram();
    void storeProxyAcceptsBeforeTheStoreListens();
    void crashOfTheProgramIsTheRootCause();
    void errorFileWinsOverPrintedTraceback();
    void stopLeavesNoProcess();
    void killedLauncherLeavesNoProcess();
    void restartsTellTheProgramItsAttempt();
    void profileMetricPatternsApply();
    void detachedProgramRunsInTheBackground();
    void badInput_data();
    void badInput();
    void helpNamesYourProgram();
};

void TestProgramLaunch::initTestCase()
{
    QVERIFY(m_home.isValid());
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    QVERIFY2(QFileInfo(qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-supervisor"_s)
                 .isExecutable(),
             "rankdeck-supervisor is not built next to rankdeck-cli");
    m_programs = qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs"_s;
    m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON): scripts/bootstrap.sh creates it");
}

void TestProgramLaunch::referenceScript_data()
{
    QTest::addColumn<int>("ranks");
    QTest::newRow("2 ranks") << 2;
    QTest::newRow("4 ranks") << 4;
}

void TestProgramLaunch::referenceScript()
{
    QFETCH(int, ranks);
    const QString name = u"ref%1"_s.arg(ranks);
    const Result r = cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s,
                          QString::number(ranks), u"--name"_s, name, u"--no-progress"_s,
                          u"--exec"_s, u"--"_s, m_python, m_programs + u"/train_ddp.py"_s});
    const QString dir = runDirectory(name);
    QVERIFY(!dir.isEmpty());
    if (r.code != 0) {
        // torch 2.14.1 sometimes aborts a rank after its last line, at exit ("terminate called
        // without an active exception"), with or without RankDeck (measured: 1 of 10 plain
        // 4-process runs). Then the run rightly fails with that rank as the root cause; anything
        // else is a failure of ours.
        QVERIFY2(r.out.contains(u"terminate called without an active exception"_s) &&
                     r.out.contains(u"what:    SIGABRT"_s),
                 qPrintable(r.out.right(3000) + r.err.right(2000)));
        qWarning(
            "a rank aborted at exit inside torch (terminate called without an active exception)");
    }
    static const QRegularExpression printed(u"^Rank (\\d+): Epoch (\\d+), Loss (\\S+)$"_s);
    for (int rank = 0; rank < ranks; ++rank) {
        // Every line the rank printed is in its record, and each gave exactly its loss point.
        QMap<qint64, double> expected;
        for (const QByteArray &line : readFile(dir + u"/rank-%1.log"_s.arg(rank)).split('\n')) {
            const QRegularExpressionMatch m = printed.match(QString::fromUtf8(line));
            if (m.hasMatch()) {
                QCOMPARE(m.captured(1).toInt(), rank);
                expected.insert(m.captured(2).toLongLong(), m.captured(3).toDouble());
            }
        }
        QCOMPARE(expected.keys(), (QList<qint64>{0, 1, 2, 3, 4}));
        const QMap<qint64, double> got = lossPoints(dir, rank);
        QCOMPARE(got.keys(), expected.keys());
        for (auto it = expected.cbegin(); it != expected.cend(); ++it)
            QVERIFY2(qAbs(got.value(it.key()) - it.value()) <= 1e-8 * qMax(1.0, qAbs(it.value())),
                     qPrintable(u"rank %1 epoch %2: %3 vs %4"_s.arg(rank)
                                    .arg(it.key())
                                    .arg(got.value(it.key()))
                                    .arg(it.value())));
        // The console showed them too, prefixed; the summary names the last epoch printed.
        QVERIFY(r.out.contains(u"[r%1] Rank %1: Epoch 4, Loss"_s.arg(rank)));
        static const QRegularExpression summary(u"rank +(\\d+) .*  step 4  loss (\\S+)"_s);
        bool summarized = false;
        for (auto it = summary.globalMatch(r.out); it.hasNext();) {
            const QRegularExpressionMatch m = it.next();
            summarized = summarized || m.captured(1).toInt() == rank;
        }
        QVERIFY2(summarized, qPrintable(r.out.right(800)));
    }
    QVERIFY(processesOfRun(QFileInfo(dir).fileName()).isEmpty());

    // Patterns can be defined after the run: export re-extracts them from the record.
    const QString csv = m_home.filePath(u"epochs-%1.csv"_s.arg(ranks));
    const Result e = cli({u"export"_s, QFileInfo(dir).fileName(), u"--csv"_s, csv, u"--metric"_s,
                          u"epoch_seen=Epoch (\\d+),"_s});
    QVERIFY2(e.code == 0, qPrintable(e.err));
    const QByteArray exported = readFile(csv);
    for (int rank = 0; rank < ranks; ++rank) {
        for (int epoch = 0; epoch < 5; ++epoch)
            QVERIFY(exported.contains(QByteArray::number(rank) + ",epoch_seen,0," +
                                      QByteArray::number(epoch) + ','));
    }
    QVERIFY(exported.contains(",loss,")); // what the run recorded is still there
    QCOMPARE(readFile(dir + u"/metrics.csv"_s).count("epoch_seen"), 0); // the record is untouched
    const Result bad =
        cli({u"export"_s, QFileInfo(dir).fileName(), u"--csv"_s, csv, u"--metric"_s, u"x=(("_s});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains(u"metric pattern \"x=((\": invalid regular expression"_s),
             qPrintable(bad.err));
    const Result clash = cli({u"export"_s, QFileInfo(dir).fileName(), u"--csv"_s, csv,
                              u"--metric"_s, u"loss=Loss (\\S+)"_s});
    QCOMPARE(clash.code, 2);
    QVERIFY2(clash.err.contains(u"the record has a metric of that name already"_s),
             qPrintable(clash.err));
}

// rankdeck.log(step, acc=…, tokens_per_s=…): each scalar its own series per rank, in the CSV of
// the record; the module reaches the program through the supervisor (nothing installed).
void TestProgramLaunch::rankdeckLogReportsEveryScalar()
{
    const Result r = cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"2"_s,
                          u"--name"_s, u"scalars"_s, u"--no-progress"_s, u"--quiet"_s, u"--exec"_s,
                          u"--"_s, m_python, m_programs + u"/log_scalars.py"_s});
    QVERIFY2(r.code == 0, qPrintable(r.err.right(3000)));
    const QString dir = runDirectory(u"scalars"_s);
    const QList<QByteArray> csv = readFile(dir + u"/metrics.csv"_s).split('\n');
    for (int rank = 0; rank < 2; ++rank) {
        for (int step = 0; step < 6; ++step) {
            const QByteArray acc =
                QByteArray::number(rank) + ",acc,0," + QByteArray::number(step) + ',';
            const QByteArray tok =
                QByteArray::number(rank) + ",tokens_per_s,0," + QByteArray::number(step) + ',';
            const auto has = [&](const QByteArray &prefix, double value) {
                for (const QByteArray &line : csv) {
                    if (line.startsWith(prefix))
                        return qAbs(line.mid(line.lastIndexOf(',') + 1).toDouble() - value) < 1e-9;
                }
                return false;
            };
            QVERIFY2(has(acc, 0.5 + 0.05 * step + rank), acc.constData());
            QVERIFY2(has(tok, 1000.0 * (step + 1)), tok.constData());
        }
    }
    // The events are not log lines; the program's own lines are.
    const QByteArray log0 = readFile(dir + u"/rank-0.log"_s);
    QVERIFY(log0.contains("rank 0 step 5 done"));
    QVERIFY(!log0.contains("\x1erdk1"));
}

// A native binary as PROGRAM: the torchrun contract reaches it (rank 0's reserved ports too),
// its printed loss and its rankdeck::log() scalar become curves.
void TestProgramLaunch::nativeProgram()
{
    const Result r = cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"2"_s,
                          u"--name"_s, u"native"_s, u"--no-progress"_s, u"--exec"_s, u"--"_s,
                          QStringLiteral(RANKDECK_PLAIN_PROGRAM)});
    QVERIFY2(r.code == 0, qPrintable(r.err.right(3000)));
    const QString dir = runDirectory(u"native"_s);
    static const QRegularExpression contract(u"native rank=(\\d) world=2 port=(\\d+)"_s);
    QSet<QString> ports;
    for (int rank = 0; rank < 2; ++rank) {
        const QRegularExpressionMatch m =
            contract.match(QString::fromUtf8(readFile(dir + u"/rank-%1.log"_s.arg(rank))));
        QVERIFY2(m.hasMatch() && m.captured(1).toInt() == rank, qPrintable(dir));
        QVERIFY(m.captured(2).toInt() > 0);
        ports.insert(m.captured(2));
        QCOMPARE(lossPoints(dir, rank), (QMap<qint64, double>{{0, 1.0}, {1, 0.5}, {2, 0.333333}}));
    }
    // Rank 0's program serves its store on its own reserved port; the others come in through
    // the supervisor's store proxy, the port the launcher announced.
    QCOMPARE(ports.size(), 2);
    static const QRegularExpression announced(u"serves the rendezvous store on [^:]+:(\\d+)"_s);
    const QRegularExpressionMatch a = announced.match(r.out + r.err);
    QVERIFY2(a.hasMatch(), qPrintable(r.out + r.err));
    const QRegularExpressionMatch rank1 =
        contract.match(QString::fromUtf8(readFile(dir + u"/rank-1.log"_s)));
    QCOMPARE(rank1.captured(2), a.captured(1));
    QVERIFY(readFile(dir + u"/metrics.csv"_s).contains("1,grad_norm,0,2,"));
}

// Rank 1's program dies of SIGSEGV after rank 0 is well under way: the summary names rank 1 and
// the signal, root cause first, and rank 0 is stopped as its consequence.
void TestProgramLaunch::storeProxyAcceptsBeforeTheStoreListens()
{
    // Rank 0's "store" listens a second late; the others' first connect must not be refused.
    const Result r = cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"3"_s,
                          u"--name"_s, u"latestore"_s, u"--no-progress"_s, u"--exec"_s, u"--"_s,
                          m_python, m_programs + u"/late_store.py"_s});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const QString dir = runDirectory(u"latestore"_s);
    QVERIFY(readFile(dir + u"/rank-0.log"_s).contains("store served"));
    for (int rank = 1; rank < 3; ++rank) {
        const QByteArray log = readFile(dir + u"/rank-%1.log"_s.arg(rank));
        QVERIFY2(log.contains("connected on the first try"), log.constData());
        QVERIFY2(log.contains("store answered pong " + QByteArray::number(rank)), log.constData());
    }
}

void TestProgramLaunch::errorFileWinsOverPrintedTraceback()
{
    // torchelastic's error file says exactly what ended the program; an earlier traceback the
    // program printed (of an exception it handled) must not replace it.
    const Result r = cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"1"_s,
                          u"--name"_s, u"errfile"_s, u"--no-progress"_s, u"--exec"_s, u"--"_s,
                          m_python, m_programs + u"/error_file.py"_s});
    QCOMPARE(r.code, 1);
    QVERIFY2(readFile(runDirectory(u"errfile"_s) + u"/rank-0.log"_s).contains("KeyError"),
             "the handled exception's traceback is not in the log");
    const QJsonArray failures =
        QJsonDocument::fromJson(readFile(runDirectory(u"errfile"_s) + u"/failure.json"_s))
            .object()
            .value(u"failures"_s)
            .toArray();
    QVERIFY(!failures.isEmpty());
    const QJsonObject root = failures.first().toObject();
    QCOMPARE(root.value(u"exception"_s).toString(), u"ValueError"_s);
    QCOMPARE(root.value(u"message"_s).toString(), u"shard 7 is corrupt"_s);
    QVERIFY2(r.out.contains(u"File \"train.py\", line 7, in load"_s), qPrintable(r.out));
}

void TestProgramLaunch::crashOfTheProgramIsTheRootCause()
{
    const Result r =
        cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s,
             u"segv"_s, u"--no-progress"_s, u"--exec"_s, u"--"_s, u"/bin/sh"_s, u"-c"_s,
             u"if [ \"$RANK\" = 1 ]; then sleep 0.3; kill -SEGV $$; fi; sleep 30"_s});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains(u"Root cause (first failure): rank 1"_s), qPrintable(r.out));
    QVERIFY2(r.out.contains(u"SIGSEGV"_s), qPrintable(r.out));
    QVERIFY2(r.out.contains(u"sh was killed by SIGSEGV"_s), qPrintable(r.out));
    QVERIFY2(r.out.contains(u"stopped as a consequence"_s), qPrintable(r.out));
    QVERIFY(processesOfRun(QFileInfo(runDirectory(u"segv"_s)).fileName()).isEmpty());
}

void TestProgramLaunch::stopLeavesNoProcess()
{
    QProcess launcher;
    QVERIFY(startAndWaitReady(launcher, u"stopme"_s, 2));
    const QString id = QFileInfo(runDirectory(u"stopme"_s)).fileName();
    QVERIFY(processesOfRun(id).size() >= 2 * 4); // supervisor, python, its child, the setsid sleep
    const Result stop = cli({u"stop"_s, id});
    QVERIFY2(stop.code == 0, qPrintable(stop.err));
    QVERIFY(rankdeck::testing::ended(launcher, 60000));
    QVERIFY2(QTest::qWaitFor([&] { return processesOfRun(id).isEmpty(); }, 15000),
             qPrintable(processesOfRun(id).join(u", "_s)));
}

void TestProgramLaunch::killedLauncherLeavesNoProcess()
{
    QProcess launcher;
    QVERIFY(startAndWaitReady(launcher, u"orphan"_s, 2));
    const QString id = QFileInfo(runDirectory(u"orphan"_s)).fileName();
    QElapsedTimer clock;
    clock.start();
    ::kill(pid_t(launcher.processId()), SIGKILL);
    QVERIFY(rankdeck::testing::ended(launcher, 10000));
    // The supervisors see their control channel close and stop their whole trees, within 5 s.
    QVERIFY2(QTest::qWaitFor([&] { return processesOfRun(id).isEmpty(); }, 5000),
             qPrintable(processesOfRun(id).join(u", "_s)));
    qInfo("the program trees ended %lld ms after the launcher's SIGKILL", clock.elapsed());
}

void TestProgramLaunch::restartsTellTheProgramItsAttempt()
{
    // Fails on its first attempt, succeeds on the second: a script resuming from its checkpoint
    // reads TORCHELASTIC_RESTART_COUNT as it would under torchrun.
    const QString flag = m_home.path() + u"/failed-once"_s;
    const Result r =
        cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s,
             u"restarts"_s, u"--no-progress"_s, u"--max-restarts"_s, u"1"_s, u"--exec"_s, u"--"_s,
             u"/bin/sh"_s, u"-c"_s,
             u"echo \"attempt $TORCHELASTIC_RESTART_COUNT of $TORCHELASTIC_MAX_RESTARTS\"; "
             u"if [ \"$RANK\" = 1 ] && [ ! -e %1 ]; then touch %1; exit 3; fi"_s.arg(flag)});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains(u"1 restarts"_s), qPrintable(r.out));
    const QString dir = runDirectory(u"restarts"_s);
    for (int rank = 0; rank < 2; ++rank) {
        const QByteArray log = readFile(dir + u"/rank-%1.log"_s.arg(rank));
        QVERIFY2(log.contains("attempt 0 of 1") && log.contains("attempt 1 of 1"), log.constData());
    }
}

void TestProgramLaunch::profileMetricPatternsApply()
{
    // A cluster's own log format, set once in its profile; the launch adds one more.
    const Result bad = cli({u"profiles"_s, u"add"_s, u"mine"_s, u"--transport"_s, u"local"_s,
                            u"--metric"_s, u"speed=([0-9.]+ tok/s"_s});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains(u"speed=([0-9.]+ tok/s"_s), qPrintable(bad.err));
    const Result add =
        cli({u"profiles"_s, u"add"_s, u"mine"_s, u"--transport"_s, u"local"_s,
             u"--nproc-per-node"_s, u"2"_s, u"--metric"_s, u"tokens_per_s=([0-9.]+) tok/s"_s});
    QVERIFY2(add.code == 0, qPrintable(add.err));
    const Result r = cli(
        {u"launch"_s, u"--profile"_s, u"mine"_s, u"--name"_s, u"profmetric"_s, u"--no-progress"_s,
         u"--exec"_s, u"--metric"_s, u"mfu=MFU ([0-9.]+)"_s, u"--"_s, u"/bin/sh"_s, u"-c"_s,
         u"echo \"step 1 1234.5 tok/s MFU 41.5\"; echo \"step 2 1300 tok/s MFU 42\""_s});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const QByteArray csv = readFile(runDirectory(u"profmetric"_s) + u"/metrics.csv"_s);
    QVERIFY2(csv.contains("0,tokens_per_s,0,1,") && csv.contains("1,tokens_per_s,0,2,"),
             csv.constData());
    QVERIFY2(csv.contains("1,mfu,0,2,"), csv.constData());
}

void TestProgramLaunch::detachedProgramRunsInTheBackground()
{
    const Result r =
        cli({u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s,
             u"bgprog"_s, u"--detach"_s, u"--exec"_s, u"--"_s, u"/bin/sh"_s, u"-c"_s,
             u"for i in 1 2 3 4 5; do echo \"tick $i\"; sleep 0.4; done"_s});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    // The id comes first on stdout, before the launcher in the background made the record.
    const QString id = r.out.section(u'\n', 0, 0).trimmed();
    QVERIFY2(id.contains(u"-bgprog-"_s), qPrintable(r.out + r.err));
    QVERIFY(QTest::qWaitFor([&] { return !runDirectory(u"bgprog"_s).isEmpty(); }, 20000));
    // It returned at once, the program still runs: `logs --follow` sees it through to the end.
    const Result logs = cli({u"logs"_s, id, u"--rank"_s, u"1"_s, u"--follow"_s}, 60000);
    QCOMPARE(logs.code, 0);
    QVERIFY2(logs.out.contains(u"tick 1"_s) && logs.out.contains(u"tick 5"_s),
             qPrintable(logs.out));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return cli({u"show"_s, id}).out.contains(u"finished"_s);
        },
        30000));
    QVERIFY(processesOfRun(id).isEmpty());
}

void TestProgramLaunch::badInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QStringList launch{u"launch"_s, u"--profile"_s,     u"local"_s,  u"--nproc-per-node"_s,
                             u"2"_s,      u"--no-progress"_s, u"--quiet"_s};
    QTest::newRow("nothing after --")
        << launch + QStringList{u"--exec"_s, u"--"_s} << 2 << u"--exec needs a program after --"_s;
    QTest::newRow("no -- at all") << launch + QStringList{u"--exec"_s} << 2
                                  << u"--exec needs a program after --"_s;
    QTest::newRow("bad metric regex")
        << launch + QStringList{u"--exec"_s, u"--metric"_s, u"acc=(\\d+"_s, u"--"_s, u"/bin/true"_s}
        << 2 << u"metric pattern \"acc=(\\d+\": invalid regular expression"_s;
    QTest::newRow("metric without --exec")
        << launch + QStringList{u"--metric"_s, u"acc=(\\d+)"_s, u"--"_s, u"--task"_s, u"linear"_s}
        << 2 << u"--metric, --workdir, --env and --tensorboard-dir need --exec"_s;
    QTest::newRow("bad env") << launch + QStringList{u"--exec"_s, u"--env"_s, u"NOEQUALS"_s,
                                                     u"--"_s, u"/bin/true"_s}
                             << 2 << u"--env: \"NOEQUALS\" is not NAME=VALUE"_s;
    // Issue 27: `python train.py` without --exec went to the worker ("unknown flag").
    QTest::newRow("a program without --exec")
        << launch + QStringList{u"--"_s, m_python, u"train.py"_s} << 2
        << u"\"%1\" after -- is not a worker flag; to run your own program, put --exec before "
           u"--: rankdeck-cli launch ... --exec -- %1 train.py"_s.arg(m_python);
    QTest::newRow("a program before --")
        << launch + QStringList{u"python3"_s, u"train.py"_s} << 2
        << u"unexpected argument \"python3\" (your program goes after --exec --"_s;
    QTest::newRow("program missing")
        << launch + QStringList{u"--exec"_s, u"--"_s, u"/nonexistent/train"_s} << 1
        << u"cannot run /nonexistent/train"_s;
}

void TestProgramLaunch::badInput()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    const Result r = cli(args, 60000);
    QVERIFY2(r.code == code, qPrintable(u"exit %1: %2"_s.arg(r.code).arg(r.err.right(2000))));
    // Usage errors go to stderr, a failed run's summary (root cause first) to stdout.
    QVERIFY2((r.err + r.out).contains(message), qPrintable(r.err.right(2000) + r.out.right(2000)));
}

// Issue 27: the help spoke of libtorch and worker arguments only, and of "step progress" for a
// hang where `show` says "no output and no new metric".
void TestProgramLaunch::helpNamesYourProgram()
{
    const Result top = cli({u"--help"_s}, 30000);
    QCOMPARE(top.code, 0);
    QVERIFY2(top.out.contains(u"Launch distributed PyTorch training, your own program or "_s),
             qPrintable(top.out));
    QVERIFY2(top.out.contains(u"--exec -- PROGRAM ARGS..."_s), qPrintable(top.out));
    const Result launch = cli({u"launch"_s, u"--help"_s}, 30000);
    QCOMPARE(launch.code, 0);
    const QString help = launch.out.simplified();
    for (const QString &words :
         {u"rankdeck-cli launch --profile local --nproc-per-node 2 --exec -- python train.py"_s,
          u"--exec -- PROGRAM ARGS... | -- WORKER-ARGS..."_s,
          u"with --exec, no output and no new metric while the process lives"_s})
        QVERIFY2(help.contains(words), qPrintable(u"no \"%1\" in:\n%2"_s.arg(words, launch.out)));
    QVERIFY2(!help.contains(u"without step progress"_s), qPrintable(launch.out));
}

QTEST_GUILESS_MAIN(TestProgramLaunch)
#include "tst_programlaunch.moc"
