// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli end to end, with the real worker on the built-in local profile: usage and exit
// codes, scripted profiles, a 2-rank run whose record holds every line each rank printed, a run
// where one rank fails (root cause named, the other rank stopped, no process left), and a
// detached run stopped from another process.
#include "testprocesses.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

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
                                << QStringLiteral("--csv");
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

    void profilesFromScripts()
    {
        Result r =
            cli({QStringLiteral("profiles"), QStringLiteral("add"), QStringLiteral("cluster"),
                 QStringLiteral("--node"), QStringLiteral("gpu-a:2222"), QStringLiteral("--node"),
                 QStringLiteral("gpu-b"), QStringLiteral("--user"), QStringLiteral("alice"),
                 QStringLiteral("--identity"), QStringLiteral("/keys/id"),
                 QStringLiteral("--nproc-per-node"), QStringLiteral("4"), QStringLiteral("--env"),
                 QStringLiteral("NCCL_DEBUG=INFO")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
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
