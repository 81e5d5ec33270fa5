// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for the CLI end to end, each case a
// real run of rankdeck-cli.
//
// rankdeck-cli end to end, with the real worker on the built-in local profile: usage and exit
// codes, scripted profiles, a 2-rank run whose record holds every line each rank printed, a run
// where one rank fails (root cause named, the other rank stopped, no process left), and a
// detached run stopped from another process.
#include "config/profile.h"
#include "config/profilestore.h"
#include "models/rundiffmodel.h"
#include "record/runrecord.h"
#include "tensorboardreader.h"
#include "testprocesses.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <csignal>
#include <functional>

class TestCliE2e : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_home;
    QString m_cli;
    QString m_worker;
    QString m_workerProblem;

    Result cli(const QStringList &args, int timeoutMs = 120000)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path() + QStringLiteral("/data"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path() + QStringLiteral("/config"));
        env.insert(QStringLiteral("RANKDECK_WORKER"), m_worker);
        return rankdeck::testing::runCommand(m_cli, args, env, timeoutMs);
    }

    QString runsDir() const { return m_home.path() + QStringLiteral("/data/rankdeck/runs"); }

    static QString runIdFrom(const Result &r)
    {
        static const QRegularExpression re(QStringLiteral("\\[rankdeck\\] run (\\S+) \\("));
        return re.match(r.err).captured(1);
    }

    QJsonObject state(const QString &id) const
    {
        QFile f(runsDir() + QLatin1Char('/') + id + QStringLiteral("/state.json"));
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }

    static QStringList fileLines(const QString &path)
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return {};
        QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
        if (!lines.isEmpty() && lines.last().isEmpty())
            lines.removeLast();
        return lines;
    }

    static QStringList consoleLines(const QString &out, int rank)
    {
        QStringList lines;
        const QString prefix = QStringLiteral("[r%1] ").arg(rank);
        for (const QString &l : out.split(QLatin1Char('\n')))
            if (l.startsWith(prefix))
                lines << l.mid(prefix.size());
        return lines;
    }

    static int processesOfRun(const QString &runId)
    {
        return int(rankdeck::testing::processesOfRun(runId).size());
    }

    void requireWorker()
    {
        if (!m_workerProblem.isEmpty())
            QSKIP(qPrintable(m_workerProblem));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        m_cli = bin + QStringLiteral("/rankdeck-cli");
        // RANKDECK_WORKER picks another build's worker (as the CLI itself does).
        m_worker =
            qEnvironmentVariable("RANKDECK_WORKER", bin + QStringLiteral("/rankdeck-worker"));
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        QProcess w;
        w.start(m_worker, {QStringLiteral("--help")});
        if (!w.waitForFinished(30000))
            m_workerProblem = QStringLiteral("rankdeck-worker --help did not answer");
        else if (!QString::fromUtf8(w.readAllStandardOutput() + w.readAllStandardError())
                      .contains(QStringLiteral("--fault")))
            m_workerProblem =
                QStringLiteral(
                    "%1 is not the real worker yet (built with RANKDECK_BUILD_WORKER=OFF?)")
                    .arg(m_worker);
    }

    void help_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("global") << QStringList{QStringLiteral("--help")}
                                << QStringLiteral("launch");
        QTest::newRow("launch") << QStringList{QStringLiteral("launch"), QStringLiteral("--help")}
                                << QStringLiteral("--nproc-per-node");
        QTest::newRow("runs") << QStringList{QStringLiteral("runs"), QStringLiteral("--help")}
                              << QStringLiteral("runs");
        QTest::newRow("show") << QStringList{QStringLiteral("show"), QStringLiteral("--help")}
                              << QStringLiteral("RUN");
        QTest::newRow("logs") << QStringList{QStringLiteral("logs"), QStringLiteral("--help")}
                              << QStringLiteral("--follow");
        QTest::newRow("stop") << QStringList{QStringLiteral("stop"), QStringLiteral("--help")}
                              << QStringLiteral("RUN");
        QTest::newRow("export") << QStringList{QStringLiteral("export"), QStringLiteral("--help")}
                                << QStringLiteral("--tensorboard");
        QTest::newRow("plot") << QStringList{QStringLiteral("plot"), QStringLiteral("--help")}
                              << QStringLiteral("--compare");
        QTest::newRow("stacks") << QStringList{QStringLiteral("stacks"), QStringLiteral("--help")}
                                << QStringLiteral("--rank");
        QTest::newRow("profiles") << QStringList{QStringLiteral("profiles"),
                                                 QStringLiteral("--help")}
                                  << QStringLiteral("check");
        QTest::newRow("profiles add")
            << QStringList{QStringLiteral("profiles"), QStringLiteral("add"),
                           QStringLiteral("--help")}
            << QStringLiteral("--identity");
    }
    void help()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const Result r = cli(args);
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(mentions), qPrintable(r.out));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("names");
        QTest::newRow("no command") << QStringList{} << QStringLiteral("Usage");
        QTest::newRow("unknown command")
            << QStringList{QStringLiteral("lunch")} << QStringLiteral("lunch");
        QTest::newRow("unknown option")
            << QStringList{QStringLiteral("launch"), QStringLiteral("--bogus")}
            << QStringLiteral("bogus");
        QTest::newRow("bad nproc")
            << QStringList{QStringLiteral("launch"), QStringLiteral("--nproc-per-node"),
                           QStringLiteral("two")}
            << QStringLiteral("--nproc-per-node");
        QTest::newRow("unknown profile")
            << QStringList{QStringLiteral("launch"), QStringLiteral("--profile"),
                           QStringLiteral("nope")}
            << QStringLiteral("nope");
        QTest::newRow("worker flag before --")
            << QStringList{QStringLiteral("launch"), QStringLiteral("linear")}
            << QStringLiteral("--");
        QTest::newRow("show without run")
            << QStringList{QStringLiteral("show")} << QStringLiteral("RUN");
        QTest::newRow("logs bad rank")
            << QStringList{QStringLiteral("logs"), QStringLiteral("x"), QStringLiteral("--rank"),
                           QStringLiteral("one")}
            << QStringLiteral("--rank");
        QTest::newRow("export without csv")
            << QStringList{QStringLiteral("export"), QStringLiteral("x")}
            << QStringLiteral("--csv");
        QTest::newRow("profiles bad port")
            << QStringList{QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("c"),
                           QStringLiteral("--node"), QStringLiteral("h:99999")}
            << QStringLiteral("99999");
        QTest::newRow("profiles orphan grace 0")
            << QStringList{QStringLiteral("profiles"), QStringLiteral("add"),
                           QStringLiteral("c"),        QStringLiteral("--node"),
                           QStringLiteral("h"),        QStringLiteral("--orphan-grace"),
                           QStringLiteral("0")}
            << QStringLiteral("--orphan-grace: \"0\"");
        QTest::newRow("profiles connect timeout")
            << QStringList{QStringLiteral("profiles"), QStringLiteral("add"),
                           QStringLiteral("c"),        QStringLiteral("--node"),
                           QStringLiteral("h"),        QStringLiteral("--connect-timeout"),
                           QStringLiteral("soon")}
            << QStringLiteral("--connect-timeout: \"soon\"");
        QTest::newRow("profiles unknown")
            << QStringList{QStringLiteral("profiles"), QStringLiteral("frob")}
            << QStringLiteral("frob");
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, names);
        const Result r = cli(args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(names), qPrintable(r.err));
    }

    void unknownRunIsAFailure()
    {
        const Result r = cli({QStringLiteral("show"), QStringLiteral("no-such-run")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains(QStringLiteral("no-such-run")));
    }

    void slurmProfileFromScripts()
    {
        Result r = cli({QStringLiteral("profiles"),
                        QStringLiteral("add"),
                        QStringLiteral("hpc"),
                        QStringLiteral("--slurm"),
                        QStringLiteral("--login"),
                        QStringLiteral("login.example:2222"),
                        QStringLiteral("--user"),
                        QStringLiteral("alice"),
                        QStringLiteral("--partition"),
                        QStringLiteral("gpu"),
                        QStringLiteral("--nodes"),
                        QStringLiteral("2"),
                        QStringLiteral("--nproc-per-node"),
                        QStringLiteral("4"),
                        QStringLiteral("--gpus-per-node"),
                        QStringLiteral("4"),
                        QStringLiteral("--time"),
                        QStringLiteral("1:00:00"),
                        QStringLiteral("--account"),
                        QStringLiteral("proj"),
                        QStringLiteral("--sbatch-arg=--exclusive"),
                        QStringLiteral("--shared-dir"),
                        QStringLiteral("/scratch/alice/rd")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli({QStringLiteral("profiles"), QStringLiteral("list")});
        QVERIFY(r.out.contains(QRegularExpression(QStringLiteral("hpc\\s+slurm\\s+8 rank"))));
        r = cli({QStringLiteral("profiles"), QStringLiteral("show"), QStringLiteral("hpc")});
        QCOMPARE(r.code, 0);
        for (const char *want : {"[slurm]", "login.example", "2222", "nproc_per_node = 4",
                                 "--exclusive", "/scratch/alice/rd", "1:00:00"})
            QVERIFY2(r.out.contains(QLatin1String(want)), qPrintable(r.out));
        QVERIFY(!r.out.contains(QStringLiteral("[[nodes]]")));
        // What cannot work is refused with the option named, and nothing is written.
        const QList<QPair<QStringList, QString>> bad{
            {{QStringLiteral("--slurm"), QStringLiteral("--node"), QStringLiteral("a")},
             QStringLiteral("--node")},
            {{QStringLiteral("--slurm"), QStringLiteral("--nodes"), QStringLiteral("zero")},
             QStringLiteral("--nodes")},
            {{QStringLiteral("--slurm"), QStringLiteral("--sbatch-arg=--ntasks=3")},
             QStringLiteral("--ntasks is set by RankDeck")},
            {{QStringLiteral("--slurm"), QStringLiteral("--time"), QStringLiteral("later")},
             QStringLiteral("slurm.time")},
            {{QStringLiteral("--slurm"), QStringLiteral("--login"), QStringLiteral("h:port")},
             QStringLiteral("--login h:port")}};
        for (const auto &[extra, names] : bad) {
            r = cli(QStringList{QStringLiteral("profiles"), QStringLiteral("add"),
                                QStringLiteral("hpc-bad")} +
                    extra);
            QVERIFY2(r.code == 2 && r.err.contains(names), qPrintable(extra.join(u' ') + r.err));
        }
        r = cli({QStringLiteral("profiles"), QStringLiteral("list")});
        QVERIFY(!r.out.contains(QStringLiteral("hpc-bad")));
    }

    void profilesFromScripts()
    {
        Result r = cli({QStringLiteral("profiles"),
                        QStringLiteral("add"),
                        QStringLiteral("cluster"),
                        QStringLiteral("--node"),
                        QStringLiteral("gpu-a:2222"),
                        QStringLiteral("--node"),
                        QStringLiteral("gpu-b"),
                        QStringLiteral("--user"),
                        QStringLiteral("alice"),
                        QStringLiteral("--identity"),
                        QStringLiteral("/keys/id"),
                        QStringLiteral("--nproc-per-node"),
                        QStringLiteral("4"),
                        QStringLiteral("--env"),
                        QStringLiteral("NCCL_DEBUG=INFO"),
                        QStringLiteral("--warm"),
                        QStringLiteral("--connect-timeout"),
                        QStringLiteral("25"),
                        QStringLiteral("--orphan-grace"),
                        QStringLiteral("7")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        {
            rankdeck::Profile written;
            QList<rankdeck::ProfileError> errors;
            QVERIFY(
                rankdeck::ProfileStore(m_home.path() + QStringLiteral("/config/rankdeck/profiles"))
                    .load(QStringLiteral("cluster"), &written, &errors));
            QVERIFY(written.warmPython);
            QCOMPARE(written.connectTimeoutSec, 25);
            QCOMPARE(written.orphanGraceSec, 7);
        }
        r = cli({QStringLiteral("profiles"), QStringLiteral("list")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains(QStringLiteral("local")));
        QVERIFY(r.out.contains(QRegularExpression(QStringLiteral("cluster\\s+ssh\\s+8 rank"))));
        r = cli({QStringLiteral("profiles"), QStringLiteral("show"), QStringLiteral("cluster")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains(QStringLiteral("gpu-a")));
        QVERIFY(r.out.contains(QStringLiteral("2222")));
        QVERIFY(r.out.contains(QStringLiteral("NCCL_DEBUG")));
        r = cli({QStringLiteral("profiles"), QStringLiteral("check"), QStringLiteral("--offline"),
                 QStringLiteral("cluster")});
        QCOMPARE(r.code, 0);
        // Adding it again is refused, the file stays.
        r = cli({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("cluster"),
                 QStringLiteral("--node"), QStringLiteral("x")});
        QCOMPARE(r.code, 1);

        // A hand-edited file with a typo: named with file:line and field, never rewritten.
        const QString path =
            m_home.path() + QStringLiteral("/config/rankdeck/profiles/cluster.toml");
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        text.replace("port = 2222", "port = \"2222\"");
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(text);
        f.close();
        r = cli({QStringLiteral("profiles"), QStringLiteral("check"), QStringLiteral("cluster")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QRegularExpression(QRegularExpression::escape(path) +
                                                   QStringLiteral(":\\d+: nodes\\[0\\]\\.port: "))),
                 qPrintable(r.err));
        r = cli({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("cluster"),
                 QStringLiteral("--force"), QStringLiteral("--node"), QStringLiteral("x")});
        QCOMPARE(r.code, 1);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), text);
        f.close();
        r = cli({QStringLiteral("profiles"), QStringLiteral("remove"), QStringLiteral("cluster")});
        QCOMPARE(r.code, 0);
        QVERIFY(!QFile::exists(path));
    }

    void twoRanksSucceedAndRecordEveryLine()
    {
        requireWorker();
        const Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--profile"), QStringLiteral("local"),
                 QStringLiteral("--nproc-per-node"), QStringLiteral("2"), QStringLiteral("--name"),
                 QStringLiteral("e2e-ok"), QStringLiteral("--"), QStringLiteral("--task"),
                 QStringLiteral("linear"), QStringLiteral("--steps"), QStringLiteral("20")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QString id = runIdFrom(r);
        QVERIFY(!id.isEmpty());
        QVERIFY(r.out.contains(QStringLiteral("finished")));
        for (int rank = 0; rank < 2; ++rank) {
            const QStringList console = consoleLines(r.out, rank);
            QCOMPARE(console
                         .filter(QRegularExpression(
                             QStringLiteral("^Rank %1: Epoch \\d+, Loss ").arg(rank)))
                         .size(),
                     20);
            // The record holds every line the rank printed, in order, and the console showed
            // exactly those.
            const QStringList recorded = fileLines(runsDir() + QLatin1Char('/') + id +
                                                   QStringLiteral("/rank-%1.log").arg(rank));
            QCOMPARE(recorded, console);
        }
        const QJsonObject st = state(id);
        QCOMPARE(st.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        QVERIFY(st.value(QStringLiteral("master_port")).toInt() > 0);
        QCOMPARE(processesOfRun(id), 0);

        // The other commands on the record, by name.
        Result s = cli({QStringLiteral("runs")});
        QCOMPARE(s.code, 0);
        QVERIFY(s.out.contains(id));
        s = cli({QStringLiteral("show"), QStringLiteral("e2e-ok")});
        QCOMPARE(s.code, 0);
        QVERIFY(s.out.contains(id));
        QVERIFY(s.out.contains(QStringLiteral("finished")));
        s = cli({QStringLiteral("logs"), QStringLiteral("e2e-ok"), QStringLiteral("--rank"),
                 QStringLiteral("1")});
        QCOMPARE(s.code, 0);
        QCOMPARE(s.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts), consoleLines(r.out, 1));
        s = cli({QStringLiteral("logs"), id});
        QCOMPARE(s.code, 0);
        QCOMPARE(consoleLines(s.out, 0), consoleLines(r.out, 0));
        QCOMPARE(consoleLines(s.out, 1), consoleLines(r.out, 1));
        const QString csv = m_home.path() + QStringLiteral("/metrics.csv");
        s = cli({QStringLiteral("export"), id, QStringLiteral("--csv"), csv});
        QCOMPARE(s.code, 0);
        const QStringList rows = fileLines(csv);
        QVERIFY(rows.size() > 1);
        for (int rank = 0; rank < 2; ++rank)
            QCOMPARE(rows.filter(QRegularExpression(QStringLiteral("^%1,loss,").arg(rank))).size(),
                     20);

        // The same points as TensorBoard event files, read back by TensorBoard's own reader:
        // one run per rank, every step of every metric, equal values (float32, as TensorBoard
        // keeps scalars) and the same wall times.
        if (rankdeck::testing::tensorBoardPython().isEmpty())
            QSKIP("RANKDECK_TORCH_PYTHON is not set (TensorBoard's reader)");
        const QString tb = m_home.path() + QStringLiteral("/tb");
        s = cli({QStringLiteral("export"), id, QStringLiteral("--tensorboard"), tb});
        QVERIFY2(s.code == 0, qPrintable(s.err));
        QVERIFY2(s.err.contains(QStringLiteral("2 rank(s)")), qPrintable(s.err));
        QString error;
        const QJsonObject runs = rankdeck::testing::readWithTensorBoard(tb, &error);
        QVERIFY2(!runs.isEmpty(), qPrintable(error));
        QCOMPARE(runs.keys(), (QStringList{QStringLiteral("rank-0"), QStringLiteral("rank-1")}));
        QHash<QString, QJsonArray> fromCsv; // "rank/metric" -> [[step, wall_time_us, value]]
        for (const QString &row : rows.mid(1)) {
            const QStringList f = row.split(QLatin1Char(','));
            QCOMPARE(f.size(), 6);
            fromCsv[f[0] + QLatin1Char('/') + f[1]].append(
                QJsonArray{f[3].toLongLong(), f[4].toLongLong(), f[5].toDouble()});
        }
        int tags = 0;
        for (const QString &run : runs.keys()) {
            const QJsonObject byTag = runs.value(run).toObject();
            for (const QString &tag : byTag.keys()) {
                ++tags;
                const QJsonArray got = byTag.value(tag).toArray();
                const QJsonArray want = fromCsv.value(run.mid(5) + QLatin1Char('/') + tag);
                QCOMPARE(got.size(), want.size());
                for (qsizetype i = 0; i < got.size(); ++i) {
                    const QJsonArray g = got[i].toArray(), w = want[i].toArray();
                    QCOMPARE(g[0].toInteger(), w[0].toInteger());
                    QVERIFY(std::abs(g[1].toDouble() - double(w[1].toInteger()) / 1e6) < 1e-6);
                    QCOMPARE(float(g[2].toDouble()), float(w[2].toDouble()));
                }
            }
        }
        QCOMPARE(tags, int(fromCsv.size()));
        QVERIFY(runs.value(QStringLiteral("rank-1")).toObject().contains(QStringLiteral("loss")));
    }

    // Rank 3 sleeps 30 ms inside each step (--step-delay-ms with --fault-rank, no --fault):
    // show names it from the recorded step times, and the ranks that wait for it.
    void stragglerIsNamedByShow()
    {
        requireWorker();
        const Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--profile"), QStringLiteral("local"),
                 QStringLiteral("--nproc-per-node"), QStringLiteral("4"), QStringLiteral("--name"),
                 QStringLiteral("e2e-straggler"), QStringLiteral("--"), QStringLiteral("--task"),
                 QStringLiteral("linear"), QStringLiteral("--steps"), QStringLiteral("80"),
                 QStringLiteral("--step-delay-ms"), QStringLiteral("30"),
                 QStringLiteral("--fault-rank"), QStringLiteral("3")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const Result s = cli({QStringLiteral("show"), QStringLiteral("e2e-straggler")});
        QCOMPARE(s.code, 0);
        const QRegularExpressionMatch m =
            QRegularExpression(QStringLiteral("Step time: rank 3 on (\\S+): median step ([0-9.]+)× "
                                              "the others' over the last 80 steps"))
                .match(s.out);
        QVERIFY2(m.hasMatch(), qPrintable(s.out));
        QVERIFY2(m.captured(2).toDouble() > 3, qPrintable(s.out)); // 30 ms against ~1 ms of work
        // The host is the one the rank ran on, as its line in the rank table says.
        QVERIFY2(QRegularExpression(QStringLiteral("rank +3 +%1 ").arg(m.captured(1)))
                     .match(s.out)
                     .hasMatch(),
                 qPrintable(s.out));
        QVERIFY2(s.out.contains(QStringLiteral("Ranks 0–2 wait for it")), qPrintable(s.out));

        // A long run's metrics.csv: show reads only its last 16 MiB (from a whole line), where
        // the last steps are. 17 MiB of another metric's rows go before the run's own: the
        // verdict is the same, and the cut row at the tail's start is not read as a row.
        const QStringList dirs =
            QDir(runsDir()).entryList({QStringLiteral("*-e2e-straggler-*")}, QDir::Dirs);
        QCOMPARE(dirs.size(), 1);
        QFile csv(runsDir() + u'/' + dirs.first() + QStringLiteral("/metrics.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QByteArray own = csv.readAll();
        csv.close();
        const qsizetype headerEnd = own.indexOf('\n') + 1;
        QByteArray longer = own.left(headerEnd);
        for (qint64 i = 0; longer.size() < 17 * 1024 * 1024; ++i)
            longer += "0,earlier_metric,0," + QByteArray::number(i) + ",1," +
                      QByteArray::number(i % 997) + ".25\n";
        longer += own.mid(headerEnd);
        QVERIFY(csv.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(csv.write(longer), longer.size());
        csv.close();
        const Result tail = cli({QStringLiteral("show"), QStringLiteral("e2e-straggler")});
        QCOMPARE(tail.code, 0);
        QVERIFY2(tail.out.contains(m.captured(0)), qPrintable(tail.out));

        // Without the slowed rank: no straggler.
        const Result even =
            cli({QStringLiteral("launch"), QStringLiteral("--profile"), QStringLiteral("local"),
                 QStringLiteral("--nproc-per-node"), QStringLiteral("4"), QStringLiteral("--name"),
                 QStringLiteral("e2e-even"), QStringLiteral("--"), QStringLiteral("--task"),
                 QStringLiteral("linear"), QStringLiteral("--steps"), QStringLiteral("40"),
                 QStringLiteral("--step-delay-ms"), QStringLiteral("20")});
        QVERIFY2(even.code == 0, qPrintable(even.out + even.err));
        const Result e = cli({QStringLiteral("show"), QStringLiteral("e2e-even")});
        QVERIFY2(e.out.contains(QStringLiteral("Step time: No straggler")), qPrintable(e.out));
    }

    // Two real runs that differ in --lr. Drawn without a display (no QT_QPA_PLATFORM, no
    // DISPLAY: the CLI picks offscreen itself): the picture has the asked size and curves in
    // its plot area; with --compare, each run's curve in its own colour and its min–max band
    // across ranks as a tint of that colour (or its mean alone). Compared: --lr, the
    // duration and the metrics differ, nothing else.
    void plotAndCompareTwoRuns()
    {
        requireWorker();
        for (const QString &lr : {QStringLiteral("0.05"), QStringLiteral("0.005")}) {
            const Result r = cli(
                {QStringLiteral("launch"), QStringLiteral("--profile"), QStringLiteral("local"),
                 QStringLiteral("--nproc-per-node"), QStringLiteral("2"), QStringLiteral("--name"),
                 QStringLiteral("e2e-lr-") + lr, QStringLiteral("--"), QStringLiteral("--task"),
                 QStringLiteral("mlp"), QStringLiteral("--steps"), QStringLiteral("60"),
                 QStringLiteral("--lr"), lr, QStringLiteral("--shuffle")});
            QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path() + QStringLiteral("/data"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path() + QStringLiteral("/config"));
        const auto plot = [&](const QStringList &args) {
            return rankdeck::testing::runCommand(m_cli, QStringList{QStringLiteral("plot")} + args,
                                                 env, 60000);
        };
        // Pixels near a colour in the plot area (away from the axes, labels and legend).
        const auto countNear = [](const QImage &image, const std::function<bool(QColor)> &pred) {
            int n = 0;
            for (int y = image.height() / 6; y < image.height() * 5 / 6; ++y)
                for (int x = image.width() / 8; x < image.width() * 3 / 4; ++x)
                    n += pred(image.pixelColor(x, y)) ? 1 : 0;
            return n;
        };
        const auto near = [](QColor want) {
            return [want](QColor c) {
                return std::abs(c.red() - want.red()) + std::abs(c.green() - want.green()) +
                           std::abs(c.blue() - want.blue()) <
                       60;
            };
        };
        const QString one = m_home.path() + QStringLiteral("/one.png");
        Result p = plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--png"), one,
                         QStringLiteral("--width"), QStringLiteral("640"),
                         QStringLiteral("--height"), QStringLiteral("400")});
        QVERIFY2(p.code == 0, qPrintable(p.err));
        QImage image(one);
        QCOMPARE(image.size(), QSize(640, 400));
        // Curves: coloured pixels (the ranks) and dark ones (the mean) on a light background.
        QVERIFY(countNear(image, [](QColor c) { return c.hsvSaturation() > 100; }) > 300);
        QVERIFY(countNear(image, [](QColor c) { return c.lightness() < 60; }) > 100);

        const QString both = m_home.path() + QStringLiteral("/compare.png");
        p = plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--compare"),
                  QStringLiteral("e2e-lr-0.005"), QStringLiteral("--png"), both});
        QVERIFY2(p.code == 0, qPrintable(p.err));
        image = QImage(both);
        QCOMPARE(image.size(), QSize(1200, 600));
        // The first two colours of the run palette (Okabe–Ito, colour-blind safe): orange and
        // sky blue.
        const QColor first(0xe6, 0x9f, 0x00), second(0x56, 0xb4, 0xe9);
        QVERIFY(countNear(image, near(first)) > 200);
        QVERIFY(countNear(image, near(second)) > 200);

        // The min–max band across each run's ranks (the default, here by name): a
        // translucent tint of the run's colour over the white plot area, next to its mean.
        // Without it (mean only) the tints are gone; with every rank, a line per rank.
        const auto tint = [](QColor c) {
            const double a = 56 / 255.0; // the band's alpha
            return QColor(int(c.red() * a + 255 * (1 - a)), int(c.green() * a + 255 * (1 - a)),
                          int(c.blue() * a + 255 * (1 - a)));
        };
        const auto nearTint = [&](QColor c) {
            const QColor want = tint(c);
            return [want](QColor got) {
                return std::abs(got.red() - want.red()) + std::abs(got.green() - want.green()) +
                           std::abs(got.blue() - want.blue()) <
                       12;
            };
        };
        const auto comparePicture = [&](const QString &how, const QString &file) {
            return plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--compare"),
                         QStringLiteral("e2e-lr-0.005"), QStringLiteral("--compare-ranks"), how,
                         QStringLiteral("--width"), QStringLiteral("800"),
                         QStringLiteral("--height"), QStringLiteral("500"), QStringLiteral("--png"),
                         file});
        };
        const QString bandFile = m_home.path() + QStringLiteral("/band.png");
        p = comparePicture(QStringLiteral("band"), bandFile);
        QVERIFY2(p.code == 0, qPrintable(p.err));
        image = QImage(bandFile);
        QCOMPARE(image.size(), QSize(800, 500));
        const int firstBand = countNear(image, nearTint(first));
        const int secondBand = countNear(image, nearTint(second));
        QVERIFY2(firstBand > 150 && secondBand > 150,
                 qPrintable(QStringLiteral("band pixels: %1 of the first run, %2 of the second")
                                .arg(firstBand)
                                .arg(secondBand)));
        QVERIFY(countNear(image, near(first)) > 100);
        QVERIFY(countNear(image, near(second)) > 100);
        const QString meanFile = m_home.path() + QStringLiteral("/mean.png");
        p = comparePicture(QStringLiteral("mean"), meanFile);
        QVERIFY2(p.code == 0, qPrintable(p.err));
        image = QImage(meanFile);
        QVERIFY(countNear(image, nearTint(first)) < firstBand / 4);
        QVERIFY(countNear(image, nearTint(second)) < secondBand / 4);
        const QString allFile = m_home.path() + QStringLiteral("/all.png");
        p = comparePicture(QStringLiteral("all"), allFile);
        QVERIFY2(p.code == 0, qPrintable(p.err));
        QCOMPARE(QImage(allFile).size(), QSize(800, 500));
        p = comparePicture(QStringLiteral("most"), allFile);
        QCOMPARE(p.code, 2);
        QVERIFY2(p.err.contains(QStringLiteral("--compare-ranks: \"most\"")), qPrintable(p.err));
        p = plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--compare-ranks"),
                  QStringLiteral("band"), QStringLiteral("--png"), allFile});
        QCOMPARE(p.code, 2);
        QVERIFY2(p.err.contains(QStringLiteral("--compare")), qPrintable(p.err));

        const QString pdf = m_home.path() + QStringLiteral("/plot.pdf");
        p = plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--metric"),
                  QStringLiteral("step_ms"), QStringLiteral("--pdf"), pdf});
        QVERIFY2(p.code == 0, qPrintable(p.err));
        QFile f(pdf);
        QVERIFY(f.open(QIODevice::ReadOnly) && f.read(4) == "%PDF");

        // Bad input is named.
        p = plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--png"), one,
                  QStringLiteral("--pdf"), pdf});
        QCOMPARE(p.code, 2);
        p = plot({QStringLiteral("e2e-lr-0.05"), QStringLiteral("--metric"), QStringLiteral("nope"),
                  QStringLiteral("--png"), one});
        QCOMPARE(p.code, 1);
        QVERIFY2(p.err.contains(QStringLiteral("no metric \"nope\"")) &&
                     p.err.contains(QStringLiteral("loss")),
                 qPrintable(p.err));
        p = plot({QStringLiteral("no-such-run"), QStringLiteral("--png"), one});
        QCOMPARE(p.code, 1);

        // What differs: --lr, and nothing the two runs share (--task, --steps, the profile,
        // the world size). The model under QAbstractItemModelTester, from the records.
        QList<rankdeck::RunSummary> summaries;
        for (const QString &name :
             {QStringLiteral("e2e-lr-0.05"), QStringLiteral("e2e-lr-0.005")}) {
            QString error;
            const QString dir = rankdeck::RunRecord::resolve(runsDir(), name, &error);
            QVERIFY2(!dir.isEmpty(), qPrintable(error));
            rankdeck::RunSummary s;
            QVERIFY2(rankdeck::RunSummary::fromRecord(dir, &s, &error), qPrintable(error));
            summaries << s;
        }
        rankdeck::RunDiffModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns(summaries);
        const QStringList keys = model.keys();
        QVERIFY2(keys.contains(QStringLiteral("flag:--lr")), qPrintable(keys.join(u' ')));
        for (const QString &same : {QStringLiteral("flag:--task"), QStringLiteral("flag:--steps"),
                                    QStringLiteral("flag:--shuffle"), QStringLiteral("profile"),
                                    QStringLiteral("world_size")})
            QVERIFY2(!keys.contains(same), qPrintable(keys.join(u' ')));
        QCOMPARE(model.columnCount(), 2);
        for (int row = 0; row < model.rowCount(); ++row)
            QVERIFY2(
                model.index(row, 0).data() != model.index(row, 1).data(),
                qPrintable(model.index(row, 0).data(rankdeck::RunDiffModel::KeyRole).toString()));
        const int lrRow = int(keys.indexOf(QStringLiteral("flag:--lr")));
        // The numbers of a row share their decimals (issue 41), so 0.05 reads 0.050.
        QCOMPARE(model.index(lrRow, 0).data().toString(), QStringLiteral("0.050"));
        QCOMPARE(model.index(lrRow, 1).data().toString(), QStringLiteral("0.005"));
        QVERIFY(keys.contains(QStringLiteral("final:loss")));
        // The CLI prints the same table.
        const Result c = cli({QStringLiteral("compare"), QStringLiteral("e2e-lr-0.05"),
                              QStringLiteral("e2e-lr-0.005")});
        QVERIFY2(c.code == 0, qPrintable(c.err));
        QVERIFY2(QRegularExpression(QStringLiteral("\\n--lr +0\\.050 +0\\.005\\n"))
                     .match(c.out)
                     .hasMatch(),
                 qPrintable(c.out));
        QVERIFY2(!c.out.contains(QStringLiteral("--task")), qPrintable(c.out));
        QCOMPARE(cli({QStringLiteral("compare"), QStringLiteral("e2e-lr-0.05")}).code, 2);
    }

    void failingRankIsTheRootCause()
    {
        requireWorker();
        const Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("2"),
                 QStringLiteral("--name"), QStringLiteral("e2e-fail"), QStringLiteral("--"),
                 QStringLiteral("--task"), QStringLiteral("linear"), QStringLiteral("--steps"),
                 QStringLiteral("100000"), QStringLiteral("--step-delay-ms"), QStringLiteral("20"),
                 QStringLiteral("--fault"), QStringLiteral("exit:3@5"),
                 QStringLiteral("--fault-rank"), QStringLiteral("1")});
        QVERIFY2(r.code == 1, qPrintable(r.out + r.err));
        const QString id = runIdFrom(r);
        // After the ranks' lines, the summary starts with the root cause, naming rank 1.
        QStringList after;
        for (const QString &l : r.out.split(QLatin1Char('\n'))) {
            if (l.startsWith(QStringLiteral("[r")))
                after.clear();
            else if (!l.trimmed().isEmpty())
                after << l;
        }
        QVERIFY(!after.isEmpty());
        QVERIFY2(after.first().startsWith(QStringLiteral("Root cause")),
                 qPrintable(after.join(QLatin1Char('\n'))));
        QVERIFY2(after.first().contains(QStringLiteral("rank 1")), qPrintable(after.first()));
        const QJsonObject st = state(id);
        QCOMPARE(st.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        QCOMPARE(st.value(QStringLiteral("root_cause_rank")).toInt(), 1);
        const QJsonArray ranks = st.value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.at(1).toObject().value(QStringLiteral("state")).toString(),
                 QStringLiteral("failed"));
        QCOMPARE(ranks.at(1).toObject().value(QStringLiteral("exit_code")).toInt(), 3);
        // Rank 0 was stopped by the launcher, or died of the lost peer first (Gloo's "connection
        // closed by peer"): either way a consequence, never the root cause.
        const QString rank0 = ranks.at(0).toObject().value(QStringLiteral("state")).toString();
        QVERIFY2(rank0 == QLatin1String("stopped") || rank0 == QLatin1String("failed"),
                 qPrintable(rank0));
        QFile failureFile(runsDir() + QLatin1Char('/') + id + QStringLiteral("/failure.json"));
        QVERIFY(failureFile.open(QIODevice::ReadOnly));
        const QJsonArray failures = QJsonDocument::fromJson(failureFile.readAll())
                                        .object()
                                        .value(QStringLiteral("failures"))
                                        .toArray();
        QCOMPARE(failures.size(), 2);
        QCOMPARE(failures.at(0).toObject().value(QStringLiteral("rank")).toInt(), 1);
        QVERIFY(failures.at(0).toObject().value(QStringLiteral("root_cause")).toBool());
        QCOMPARE(failures.at(1).toObject().value(QStringLiteral("rank")).toInt(), 0);
        QCOMPARE(failures.at(1).toObject().value(QStringLiteral("kind")).toString(),
                 QStringLiteral("consequence"));
        QCOMPARE(processesOfRun(id), 0);
        // What rank 1 printed before it died is in the record.
        const QStringList recorded =
            fileLines(runsDir() + QLatin1Char('/') + id + QStringLiteral("/rank-1.log"));
        QCOMPARE(recorded, consoleLines(r.out, 1));
        QVERIFY(recorded.filter(QRegularExpression(QStringLiteral("^Rank 1: Epoch"))).size() >= 5);
        const Result s = cli({QStringLiteral("show"), QStringLiteral("e2e-fail")});
        QCOMPARE(s.code, 0);
        QVERIFY(s.out.contains(QStringLiteral("Root cause")));
        QVERIFY(s.out.contains(QStringLiteral("rank 1")));
    }

    void detachedRunStopsFromAnotherProcess()
    {
        requireWorker();
        Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("2"),
                 QStringLiteral("--name"), QStringLiteral("e2e-bg"), QStringLiteral("--detach"),
                 QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("1000000"),
                 QStringLiteral("--step-delay-ms"), QStringLiteral("20")});
        QCOMPARE(r.code, 0);
        const QString id = r.out.trimmed();
        QVERIFY(!id.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(state(id).value(QStringLiteral("state")).toString(),
                                  QStringLiteral("running"), 60000);
        QVERIFY(processesOfRun(id) >= 2);
        r = cli({QStringLiteral("stop"), QStringLiteral("e2e-bg")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(state(id).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
        QTRY_COMPARE_WITH_TIMEOUT(processesOfRun(id), 0, 10000);
    }

    void hungRankShowsWhereItWaits()
    {
        requireWorker();
        // Rank 1 stops joining collectives; rank 0 blocks in one. Both stay alive: a hang is
        // flagged and dumped, never killed.
        Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("2"),
                 QStringLiteral("--name"), QStringLiteral("e2e-hang"),
                 QStringLiteral("--hang-timeout"), QStringLiteral("2"), QStringLiteral("--detach"),
                 QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("1000000"),
                 QStringLiteral("--step-delay-ms"), QStringLiteral("20"), QStringLiteral("--fault"),
                 QStringLiteral("hang@3"), QStringLiteral("--fault-rank"), QStringLiteral("1")});
        QCOMPARE(r.code, 0);
        const QString id = r.out.trimmed();
        QTRY_VERIFY_WITH_TIMEOUT(state(id).value(QStringLiteral("hung")).toBool(), 60000);
        QCOMPARE(state(id).value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        r = cli({QStringLiteral("stacks"), id, QStringLiteral("--rank"), QStringLiteral("1")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("hangWithoutJoiningCollectives")),
                 qPrintable(r.out));
        r = cli({QStringLiteral("stacks"), id, QStringLiteral("--rank"), QStringLiteral("0")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("waits in a collective")), qPrintable(r.out));
        r = cli({QStringLiteral("stop"), id});
        QCOMPARE(r.code, 0);
        QTRY_COMPARE_WITH_TIMEOUT(processesOfRun(id), 0, 10000);
    }

    void killedLauncherLeavesAConsistentRecord()
    {
        requireWorker();
        Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("2"),
                 QStringLiteral("--name"), QStringLiteral("e2e-orphan"), QStringLiteral("--detach"),
                 QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("1000000"),
                 QStringLiteral("--step-delay-ms"), QStringLiteral("20")});
        QCOMPARE(r.code, 0);
        const QString id = r.out.trimmed();
        QTRY_VERIFY_WITH_TIMEOUT(state(id)
                                         .value(QStringLiteral("ranks"))
                                         .toArray()
                                         .at(1)
                                         .toObject()
                                         .value(QStringLiteral("step"))
                                         .toInt() >= 3,
                                 60000);
        const qint64 launcher = state(id).value(QStringLiteral("launcher_pid")).toInteger();
        QVERIFY(launcher > 0);
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(::kill(pid_t(launcher), SIGKILL), 0);
        // The ranks notice the closed control channel and end by themselves, within 5 s.
        QTRY_COMPARE_WITH_TIMEOUT(processesOfRun(id), 0, 5000);
        qInfo("local ranks ended %lld ms after the launcher's SIGKILL", clock.elapsed());
        r = cli({QStringLiteral("runs")});
        QVERIFY(r.out.contains(QRegularExpression(QRegularExpression::escape(id) +
                                                  QStringLiteral(".*launcher gone"))));
        // Every complete line received before the launcher died is in the record, each whole.
        const QStringList lines =
            fileLines(runsDir() + QLatin1Char('/') + id + QStringLiteral("/rank-0.log"));
        QVERIFY(
            lines.filter(QRegularExpression(QStringLiteral("^Rank 0: Epoch \\d+, Loss -?[0-9.]+$")))
                .size() >= 3);
        r = cli({QStringLiteral("stop"), id});
        QCOMPARE(r.code, 0);
        QCOMPARE(state(id).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    }
};

QTEST_GUILESS_MAIN(TestCliE2e)
#include "tst_cli_e2e.moc"
