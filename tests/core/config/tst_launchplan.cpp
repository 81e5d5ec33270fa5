// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/launchplan.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

class TestLaunchPlan : public QObject
{
    Q_OBJECT

private slots:
    // launch --sync: paths of files inside the synced directory are made relative to where the
    // program runs (the node's copy has another absolute path); other words stay as typed.
    void programInSyncedDirectory_data()
    {
        QTest::addColumn<QString>("workdir");
        QTest::addColumn<QStringList>("program"); // DIR stands for the synced directory
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("script") << QString() << QStringList{u"python3"_qs, u"DIR/train.py"_qs}
                                << QStringList{u"python3"_qs, u"train.py"_qs};
        QTest::newRow("program itself") << QString() << QStringList{u"DIR/train.sh"_qs, u"--lr"_qs}
                                        << QStringList{u"./train.sh"_qs, u"--lr"_qs};
        QTest::newRow("below workdir")
            << u"sub"_qs << QStringList{u"python3"_qs, u"DIR/train.py"_qs}
            << QStringList{u"python3"_qs, u"../train.py"_qs};
        QTest::newRow("outside stays")
            << QString() << QStringList{u"python3"_qs, u"/etc/hostname"_qs}
            << QStringList{u"python3"_qs, u"/etc/hostname"_qs};
        QTest::newRow("missing file stays")
            << QString() << QStringList{u"python3"_qs, u"DIR/nope.py"_qs}
            << QStringList{u"python3"_qs, u"DIR/nope.py"_qs};
    }
    void programInSyncedDirectory()
    {
        QFETCH(QString, workdir);
        QFETCH(QStringList, program);
        QFETCH(QStringList, expected);
        QTemporaryDir dir;
        for (const char *name : {"train.py", "train.sh"}) {
            QFile f(dir.filePath(QString::fromLatin1(name)));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        TrainingConfig c;
        c.syncDirectory = dir.path();
        c.workingDirectory = workdir;
        for (QString &w : program)
            w.replace(u"DIR"_qs, dir.path());
        for (QString &w : expected)
            w.replace(u"DIR"_qs, dir.path());
        c.program = program;
        QCOMPARE(LaunchPlan::programInSyncedDirectory(c), expected);
        QCOMPARE(LaunchPlan::workingDirectoryIn(u"/copy"_qs, workdir),
                 workdir.isEmpty() ? u"/copy"_qs : u"/copy/"_qs + workdir);
        // The record keeps the directory, for `show`.
        const TrainingConfig back = TrainingConfig::fromJson(c.toJson());
        QCOMPARE(back.syncDirectory, dir.path());
    }
    void torchrunEnvironment_data()
    {
        QTest::addColumn<QList<int>>("ranksPerNode");
        QTest::newRow("one node, one rank") << QList<int>{1};
        QTest::newRow("one node, four ranks") << QList<int>{4};
        QTest::newRow("three nodes, uneven") << QList<int>{2, 1, 3};
    }
    void torchrunEnvironment()
    {
        QFETCH(QList<int>, ranksPerNode);
        Profile p;
        p.name = QStringLiteral("c");
        p.transport = QStringLiteral("ssh");
        int world = 0;
        for (int i = 0; i < ranksPerNode.size(); ++i) {
            ProfileNode n;
            n.host = QStringLiteral("node%1").arg(i);
            n.ranksPerNode = ranksPerNode[i];
            p.nodes.append(n);
            world += ranksPerNode[i];
        }
        const LaunchPlan plan = LaunchPlan::create(p, TrainingConfig(), QStringLiteral("run-1"),
                                                   QStringLiteral("/tmp/r"));
        QVERIFY2(plan.isValid(), qPrintable(plan.error()));
        QCOMPARE(plan.worldSize(), world);
        QCOMPARE(plan.masterAddress(), QStringLiteral("node0"));
        int rank = 0;
        for (int node = 0; node < ranksPerNode.size(); ++node) {
            for (int local = 0; local < ranksPerNode[node]; ++local, ++rank) {
                const RankLaunchSpec s =
                    plan.spec(rank, QStringLiteral("/w"), rank == 0 ? 0 : 4242);
                QCOMPARE(s.rank, rank);
                QCOMPARE(s.nodeIndex, node);
                QCOMPARE(s.program, QStringLiteral("/w"));
                QCOMPARE(s.environment.value(QStringLiteral("RANK")), QString::number(rank));
                QCOMPARE(s.environment.value(QStringLiteral("LOCAL_RANK")), QString::number(local));
                QCOMPARE(s.environment.value(QStringLiteral("WORLD_SIZE")), QString::number(world));
                QCOMPARE(s.environment.value(QStringLiteral("LOCAL_WORLD_SIZE")),
                         QString::number(ranksPerNode[node]));
                QCOMPARE(s.environment.value(QStringLiteral("GROUP_RANK")), QString::number(node));
                QCOMPARE(s.environment.value(QStringLiteral("GROUP_WORLD_SIZE")),
                         QString::number(ranksPerNode.size()));
                QCOMPARE(s.environment.value(QStringLiteral("MASTER_ADDR")),
                         QStringLiteral("node0"));
                QCOMPARE(s.environment.value(QStringLiteral("MASTER_PORT")),
                         rank == 0 ? QStringLiteral("0") : QStringLiteral("4242"));
                QCOMPARE(s.environment.value(QStringLiteral("RANKDECK_RUN_ID")),
                         QStringLiteral("run-1"));
                QCOMPARE(s.environment.value(QStringLiteral("RANKDECK_CONTROL")),
                         QStringLiteral("stdin"));
                QVERIFY(s.arguments.contains(QStringLiteral("--control-stdin")));
                QCOMPARE(s.arguments.at(s.arguments.indexOf(QStringLiteral("--run-dir")) + 1),
                         QStringLiteral("/tmp/r"));
                QCOMPARE(s.nodeRunDirectory, QStringLiteral("/tmp/r"));
            }
        }
    }

    // launch --exec --tensorboard-dir: the supervisor gets it before the program's own words
    // (a relative directory resolves where the program runs); without it the supervisor looks
    // at the program's --logdir itself. The record keeps it.
    void tensorBoardDirReachesTheSupervisor_data()
    {
        QTest::addColumn<QString>("dir");
        QTest::newRow("given") << u"tb/logs"_qs;
        QTest::newRow("not given") << QString();
    }
    void tensorBoardDirReachesTheSupervisor()
    {
        QFETCH(QString, dir);
        TrainingConfig c;
        c.program = QStringList{u"python3"_qs, u"train.py"_qs, u"--tensorboard-dir"_qs};
        c.tensorBoardDir = dir;
        const LaunchPlan plan = LaunchPlan::create(Profile::builtinLocal(2), c, u"r"_qs, u"/n"_qs);
        const QStringList args = plan.spec(1, u"/s"_qs, 4242).arguments;
        const qsizetype end = args.indexOf(u"--"_qs);
        QVERIFY(end > 0);
        QCOMPARE(args.mid(end + 1), c.program); // the program's words untouched
        const qsizetype at = args.indexOf(u"--tensorboard-dir"_qs);
        if (dir.isEmpty()) {
            QVERIFY(at < 0 || at > end);
        } else {
            QVERIFY(at >= 0 && at < end);
            QCOMPARE(args.at(at + 1), dir);
        }
        QCOMPARE(TrainingConfig::fromJson(c.toJson()).tensorBoardDir, dir);
    }

    void localUsesLoopback()
    {
        const LaunchPlan plan = LaunchPlan::create(Profile::builtinLocal(2), TrainingConfig(),
                                                   QStringLiteral("r"), QString());
        QCOMPARE(plan.masterAddress(), QStringLiteral("127.0.0.1"));
        QVERIFY(
            !plan.spec(0, QStringLiteral("w"), 0).arguments.contains(QStringLiteral("--run-dir")));
    }

    void gpuPolicy_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("backend");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("visible");
        QTest::newRow("cpu node") << 2 << 0 << QStringLiteral("auto") << true << QString();
        QTest::newRow("one gpu per rank")
            << 2 << 2 << QStringLiteral("auto") << true << QStringLiteral("0,1");
        QTest::newRow("spare gpus")
            << 2 << 4 << QStringLiteral("nccl") << true << QStringLiteral("0,1,2,3");
        QTest::newRow("too few gpus for nccl")
            << 4 << 2 << QStringLiteral("auto") << false << QString();
        QTest::newRow("too few gpus, gloo")
            << 4 << 2 << QStringLiteral("gloo") << true << QStringLiteral("0,1");
    }
    void gpuPolicy()
    {
        QFETCH(int, ranks);
        QFETCH(int, gpus);
        QFETCH(QString, backend);
        QFETCH(bool, valid);
        QFETCH(QString, visible);
        Profile p = Profile::builtinLocal(ranks);
        p.nodes[0].gpusPerNode = gpus;
        p.backend = backend;
        const LaunchPlan plan =
            LaunchPlan::create(p, TrainingConfig(), QStringLiteral("r"), QString());
        QCOMPARE(plan.isValid(), valid);
        if (!valid) {
            QVERIFY(plan.error().contains(QStringLiteral("GPU")));
            return;
        }
        const RankLaunchSpec s = plan.spec(ranks - 1, QStringLiteral("w"), 1);
        QVERIFY(s.environment.contains(QStringLiteral("CUDA_VISIBLE_DEVICES")));
        QCOMPARE(s.environment.value(QStringLiteral("CUDA_VISIBLE_DEVICES")), visible);
        if (backend != QLatin1String("auto"))
            QCOMPARE(s.arguments.at(s.arguments.indexOf(QStringLiteral("--backend")) + 1), backend);
        else
            QVERIFY(!s.arguments.contains(QStringLiteral("--backend")));
    }

    void profileEnvironmentCannotBreakTheContract()
    {
        Profile p = Profile::builtinLocal(2);
        p.environment.insert(QStringLiteral("RANK"), QStringLiteral("7"));
        p.environment.insert(QStringLiteral("MASTER_PORT"), QStringLiteral("1"));
        p.environment.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("3"));
        p.environment.insert(QStringLiteral("NCCL_DEBUG"), QStringLiteral("INFO"));
        p.environment.insert(QStringLiteral("TORCH_NCCL_ASYNC_ERROR_HANDLING"),
                             QStringLiteral("3"));
        const RankLaunchSpec s =
            LaunchPlan::create(p, TrainingConfig(), QStringLiteral("r"), QString())
                .spec(1, QStringLiteral("w"), 5555);
        QCOMPARE(s.environment.value(QStringLiteral("RANK")), QStringLiteral("1"));
        QCOMPARE(s.environment.value(QStringLiteral("MASTER_PORT")), QStringLiteral("5555"));
        // Everything else is the profile's to choose.
        QCOMPARE(s.environment.value(QStringLiteral("CUDA_VISIBLE_DEVICES")), QStringLiteral("3"));
        QCOMPARE(s.environment.value(QStringLiteral("NCCL_DEBUG")), QStringLiteral("INFO"));
        QCOMPARE(s.environment.value(QStringLiteral("TORCH_NCCL_ASYNC_ERROR_HANDLING")),
                 QStringLiteral("3"));
    }

    void workerArguments_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("error");
        QTest::newRow("plain") << QStringList{QStringLiteral("--task"), QStringLiteral("mlp")}
                               << QString();
        QTest::newRow("launcher flag") << QStringList{QStringLiteral("--rank"), QStringLiteral("3")}
                                       << QStringLiteral("--rank");
        QTest::newRow("launcher flag with =")
            << QStringList{QStringLiteral("--master-port=1")} << QStringLiteral("--master-port");
    }
    void workerArguments()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, error);
        TrainingConfig c;
        c.workerArguments = args;
        const LaunchPlan plan =
            LaunchPlan::create(Profile::builtinLocal(1), c, QStringLiteral("r"), QString());
        if (!error.isEmpty()) {
            QVERIFY(!plan.isValid());
            QVERIFY(plan.error().contains(error));
            return;
        }
        QVERIFY(plan.isValid());
        const RankLaunchSpec s = plan.spec(0, QStringLiteral("w"), 0);
        // The user's flags come last, so a missing value after the last one names it.
        QCOMPARE(s.arguments.mid(s.arguments.size() - args.size()), args);
        QVERIFY(!s.arguments.contains(QStringLiteral("--resume")));
        QVERIFY(plan.spec(0, QStringLiteral("w"), 0, true)
                    .arguments.contains(QStringLiteral("--resume")));
    }

    void programName_data()
    {
        QTest::addColumn<QStringList>("program");
        QTest::addColumn<QString>("name");
        QTest::newRow("binary") << QStringList{u"./bin/trainer"_qs, u"--lr"_qs, u"1"_qs}
                                << u"trainer"_qs;
        QTest::newRow("python script")
            << QStringList{u"python3"_qs, u"train.py"_qs, u"5"_qs} << u"train"_qs;
        QTest::newRow("venv python, options first")
            << QStringList{u"/venv/bin/python3.11"_qs, u"-u"_qs, u"-X"_qs, u"dev"_qs,
                           u"src/train_gpt.py"_qs}
            << u"train_gpt"_qs;
        QTest::newRow("module") << QStringList{u"python"_qs, u"-m"_qs, u"pkg.train"_qs}
                                << u"pkg.train"_qs;
        QTest::newRow("inline code")
            << QStringList{u"python3"_qs, u"-c"_qs, u"print(1)"_qs} << u"python3"_qs;
        QTest::newRow("shell script") << QStringList{u"bash"_qs, u"run.sh"_qs} << u"run.sh"_qs;
        QTest::newRow("interpreter alone") << QStringList{u"python3"_qs} << u"python3"_qs;
        QTest::newRow("nothing") << QStringList{} << QString();
    }

    void programName()
    {
        QFETCH(QStringList, program);
        QFETCH(QString, name);
        QCOMPARE(TrainingConfig::programName(program), name);
    }

    void trainingConfigFlags()
    {
        TrainingConfig c;
        c.workerArguments = {QStringLiteral("--task"),    QStringLiteral("mlp"),
                             QStringLiteral("--shuffle"), QStringLiteral("--steps=40"),
                             QStringLiteral("--steps"),   QStringLiteral("50")};
        QCOMPARE(c.task(), QStringLiteral("mlp"));
        QCOMPARE(c.totalSteps(), 50);
        QVERIFY(c.hasFlag(QStringLiteral("--shuffle")));
        c.setValue(QStringLiteral("--steps"), QStringLiteral("7"));
        QCOMPARE(c.totalSteps(), 7);
        QCOMPARE(c.workerArguments, (QStringList{QStringLiteral("--task"), QStringLiteral("mlp"),
                                                 QStringLiteral("--shuffle"),
                                                 QStringLiteral("--steps"), QStringLiteral("7")}));
        QCOMPARE(TrainingConfig::fromJson(c.toJson()).workerArguments, c.workerArguments);
        QCOMPARE(TrainingConfig().totalSteps(), 100);
        QCOMPARE(TrainingConfig().effectiveName(), QStringLiteral("linear"));
    }
    // launch --warm or the profile's warm_python: the supervisor gets --warm-python, before
    // the program's own words (which stay the user's, untouched).
    void warmPythonReachesTheSupervisor_data()
    {
        QTest::addColumn<bool>("launch");
        QTest::addColumn<bool>("profile");
        QTest::newRow("neither") << false << false;
        QTest::newRow("launch --warm") << true << false;
        QTest::newRow("profile warm_python") << false << true;
    }
    void warmPythonReachesTheSupervisor()
    {
        QFETCH(bool, launch);
        QFETCH(bool, profile);
        Profile p = Profile::builtinLocal(2);
        p.warmPython = profile;
        TrainingConfig c;
        c.program = {u"python3"_qs, u"train.py"_qs, u"--warm-python"_qs};
        c.warmPython = launch;
        const LaunchPlan plan = LaunchPlan::create(p, c, u"r"_qs, u"/run"_qs);
        QVERIFY(plan.isValid());
        const QStringList args = plan.spec(0, u"/w"_qs, 0).arguments;
        const qsizetype dashes = args.indexOf(u"--"_qs);
        QVERIFY(dashes > 0);
        QCOMPARE(args.first(dashes).contains(u"--warm-python"_qs), launch || profile);
        QCOMPARE(args.mid(dashes + 1), c.program);
        QCOMPARE(TrainingConfig::fromJson(c.toJson()).warmPython, launch);
    }
    // launch --no-flight-recorder or the profile's flight_recorder = false: the supervisor and
    // the worker get --no-flight-recorder, and the launcher knows why there will be no dump. A
    // user who turned torch's recorder off in the environment is told so too (the supervisor
    // and the worker read that themselves: no flag).
    void flightRecorderOff_data()
    {
        QTest::addColumn<bool>("program");
        QTest::addColumn<bool>("launch");  // recording on at launch
        QTest::addColumn<bool>("profile"); // and in the profile
        QTest::addColumn<QString>("env");  // NAME=VALUE in the launch's environment
        QTest::addColumn<QString>("reason");
        for (bool program : {true, false}) {
            const char *what = program ? "program" : "worker";
            QTest::addRow("%s, on", what) << program << true << true << QString() << QString();
            QTest::addRow("%s, launch --no-flight-recorder", what)
                << program << false << true << QString()
                << u"flight recorder off (--no-flight-recorder)"_qs;
            QTest::addRow("%s, profile flight_recorder = false", what)
                << program << true << false << QString()
                << u"flight recorder off (the profile's flight_recorder = false)"_qs;
            QTest::addRow("%s, TORCH_FR_BUFFER_SIZE=0", what)
                << program << true << true << u"TORCH_FR_BUFFER_SIZE=0"_qs
                << u"flight recorder off (TORCH_FR_BUFFER_SIZE=0)"_qs;
            QTest::addRow("%s, TORCH_FR_BUFFER_SIZE=64", what)
                << program << true << true << u"TORCH_FR_BUFFER_SIZE=64"_qs << QString();
        }
    }
    void flightRecorderOff()
    {
        QFETCH(bool, program);
        QFETCH(bool, launch);
        QFETCH(bool, profile);
        QFETCH(QString, env);
        QFETCH(QString, reason);
        Profile p = Profile::builtinLocal(2);
        p.flightRecorder = profile;
        TrainingConfig c;
        if (program)
            c.program = {u"python3"_qs, u"train.py"_qs};
        else
            c.workerArguments = {u"--task"_qs, u"linear"_qs};
        c.flightRecorder = launch;
        if (!env.isEmpty())
            c.environment.insert(env.section(u'=', 0, 0), env.section(u'=', 1));
        const LaunchPlan plan = LaunchPlan::create(p, c, u"r"_qs, u"/run"_qs);
        QVERIFY(plan.isValid());
        const QStringList args = plan.spec(0, u"/w"_qs, 0).arguments;
        const qsizetype end = program ? args.indexOf(u"--"_qs) : args.size();
        const bool flag = !launch || !profile;
        QCOMPARE(args.first(end).count(u"--no-flight-recorder"_qs), flag ? 1 : 0);
        QCOMPARE(LaunchPlan::flightRecorderOffReason(p, c), reason);
        QCOMPARE(TrainingConfig::fromJson(c.toJson()).flightRecorder, launch);
        QCOMPARE(Profile::fromJson(p.toJson()).flightRecorder, profile);
    }
};

QTEST_GUILESS_MAIN(TestLaunchPlan)
#include "tst_launchplan.moc"
