// SPDX-License-Identifier: GPL-3.0-or-later
// rankdeck-worker as the launcher sees it: real processes, 1–4 ranks on this machine over
// Gloo, started the way RankDeck starts them (rank 0 with MASTER_PORT=0 reports the store
// port in a `store` event, the others then join on it).
#include "wire/wireprotocol.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <vector>

namespace {

QString workerPath()
{
    return qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-worker");
}

QString pythonPath()
{
    return qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
}

QString referenceScript()
{
    return qEnvironmentVariable("RANKDECK_SOURCE_DIR") + QStringLiteral("/tests/worker/ddp_reference.py");
}

// One worker process and everything it printed, split into log lines and wire events.
class Rank
{
public:
    explicit Rank(int rank)
        : m_rank(rank)
    {
    }

    void start(const QStringList &args, const QMap<QString, QString> &env, bool controlStdin)
    {
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        for (auto it = env.begin(); it != env.end(); ++it)
            pe.insert(it.key(), it.value());
        m_process.setProcessEnvironment(pe);
        QStringList a = args;
        if (controlStdin)
            a << QStringLiteral("--control-stdin");
        m_process.start(workerPath(), a);
        QVERIFY2(m_process.waitForStarted(10000), qPrintable(m_process.errorString()));
        m_pid = m_process.processId();
        if (!controlStdin)
            m_process.closeWriteChannel(); // as by hand: stdin is /dev/null-like
    }

    void pump()
    {
        m_out += m_process.readAllStandardOutput();
        m_err += m_process.readAllStandardError();
    }

    QList<QJsonObject> events(const QString &type = QString())
    {
        pump();
        QList<QJsonObject> out;
        for (const QByteArray &line : m_out.split('\n')) {
            const auto m = rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            if (!m.valid)
                continue;
            const QJsonObject o =
                QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size()))).object();
            if (type.isEmpty() || o.value(QStringLiteral("t")).toString() == type)
                out << o;
        }
        return out;
    }

    QStringList logLines()
    {
        pump();
        QStringList out;
        for (const QByteArray &line : m_out.split('\n')) {
            const auto m = rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            const QByteArray text = m.found ? line.left(qsizetype(m.markerPos)) : line;
            if (!text.isEmpty())
                out << QString::fromUtf8(text);
        }
        return out;
    }

    QByteArray stdoutBytes()
    {
        pump();
        return m_out;
    }

    QString stderrText()
    {
        pump();
        return QString::fromUtf8(m_err);
    }

    bool waitFinished(int ms)
    {
        const bool ok = m_process.state() == QProcess::NotRunning || m_process.waitForFinished(ms);
        pump();
        return ok;
    }

    QProcess &process() { return m_process; }
    int exitCode() const { return m_process.exitCode(); }
    bool crashed() const { return m_process.exitStatus() == QProcess::CrashExit; }
    int rank() const { return m_rank; }
    qint64 pid() const { return m_pid; }

    ~Rank()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

private:
    int m_rank;
    qint64 m_pid = 0;
    QProcess m_process;
    QByteArray m_out;
    QByteArray m_err;
};

using Ranks = std::vector<std::unique_ptr<Rank>>;

// "0-2,5" (the kernel's list format, also the worker's) -> {0,1,2,5}
QSet<int> parseCpuList(const QString &list)
{
    QSet<int> cpus;
    for (const QString &part : list.trimmed().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList ends = part.split(QLatin1Char('-'));
        for (int c = ends.first().toInt(); c <= ends.last().toInt(); ++c)
            cpus.insert(c);
    }
    return cpus;
}

// Cpus_allowed_list of a process's main thread, from /proc.
QString allowedCpuList(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("Cpus_allowed_list:"))
            return QString::fromLatin1(line.mid(18)).trimmed();
    return {};
}

// Waits (processing output) until `pred` holds or `ms` passed.
template<typename Pred>
bool waitFor(Ranks &ranks, Pred pred, int ms)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < ms) {
        for (auto &r : ranks) {
            r->process().waitForReadyRead(20);
            r->pump();
        }
        if (pred())
            return true;
    }
    return pred();
}

// Starts `world` ranks; rank 0 binds a free port and the others join on it.
Ranks launch(int world, const QStringList &args, bool controlStdin = false,
             const QMap<QString, QString> &extraEnv = {}, int startRanks = -1)
{
    Ranks ranks;
    QMap<QString, QString> env = extraEnv;
    env[QStringLiteral("MASTER_ADDR")] = QStringLiteral("127.0.0.1");
    env[QStringLiteral("MASTER_PORT")] = QStringLiteral("0");
    env[QStringLiteral("WORLD_SIZE")] = QString::number(world);
    env[QStringLiteral("RANK")] = QStringLiteral("0");
    env[QStringLiteral("LOCAL_RANK")] = QStringLiteral("0");
    env[QStringLiteral("LOCAL_WORLD_SIZE")] = QString::number(world);
    ranks.push_back(std::make_unique<Rank>(0));
    ranks[0]->start(args, env, controlStdin);
    if (world == 1)
        return ranks;
    const bool gotPort = waitFor(ranks, [&] { return !ranks[0]->events(QStringLiteral("store")).isEmpty(); }, 30000);
    if (!gotPort) {
        qWarning("rank 0 reported no store port: %s", qPrintable(ranks[0]->stderrText()));
        return ranks;
    }
    const int port = ranks[0]->events(QStringLiteral("store")).first().value(QStringLiteral("port")).toInt();
    env[QStringLiteral("MASTER_PORT")] = QString::number(port);
    const int n = startRanks < 0 ? world : startRanks;
    for (int r = 1; r < n; ++r) {
        env[QStringLiteral("RANK")] = QString::number(r);
        env[QStringLiteral("LOCAL_RANK")] = QString::number(r);
        ranks.push_back(std::make_unique<Rank>(r));
        ranks.back()->start(args, env, controlStdin);
    }
    return ranks;
}

bool waitAll(Ranks &ranks, int ms)
{
    QElapsedTimer timer;
    timer.start();
    bool ok = true;
    for (auto &r : ranks)
        ok = r->waitFinished(int(qMax<qint64>(1, ms - timer.elapsed()))) && ok;
    return ok;
}

QString describe(Ranks &ranks)
{
    QString s;
    for (auto &r : ranks)
        s += QStringLiteral("rank %1 exit %2: %3\n").arg(r->rank()).arg(r->exitCode()).arg(r->stderrText());
    return s;
}

double meanLoss(const QList<QJsonObject> &steps, int from, int to)
{
    double sum = 0;
    for (int i = from; i < to; ++i)
        sum += steps.at(i).value(QStringLiteral("loss")).toDouble();
    return sum / (to - from);
}

} // namespace

class TestWorker : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    // Runs the worker once in one process with --steps 0: its initial parameters, which the
    // single-process reference starts from.
    QString initialState(const QStringList &trainArgs, const QString &name)
    {
        QStringList args = trainArgs;
        const int s = int(args.indexOf(QStringLiteral("--steps")));
        args[s + 1] = QStringLiteral("0");
        const QString path = m_dir.filePath(name + QStringLiteral("-init.pt"));
        args << QStringLiteral("--save-state") << path;
        Ranks ranks = launch(1, args);
        if (!waitAll(ranks, 60000) || ranks[0]->exitCode() != 0)
            qWarning("init run failed: %s", qPrintable(describe(ranks)));
        return path;
    }

    // A user's TorchScript classifier and its tensor dataset, saved the documented way.
    bool makeScriptFiles()
    {
        if (QFile::exists(m_dir.filePath(QStringLiteral("data.pt"))))
            return true;
        QProcess python;
        python.start(pythonPath(), {"-c", "import sys, torch\n"
                                          "torch.manual_seed(1)\n"
                                          "m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))\n"
                                          "torch.jit.script(m).save(sys.argv[1] + '/model.pt')\n"
                                          "x = torch.randn(200, 6)\n"
                                          "torch.save({'x': x, 'y': x[:, :3].argmax(1)}, sys.argv[1] + '/data.pt')\n",
                                    m_dir.path()});
        python.waitForFinished(60000);
        if (python.exitCode() != 0)
            qWarning("%s", python.readAllStandardError().constData());
        return python.exitCode() == 0;
    }

private slots:
    void initTestCase()
    {
        if (!QFile::exists(workerPath()))
            QSKIP("rankdeck-worker was not built (RANKDECK_BUILD_WORKER=OFF)");
        QVERIFY(m_dir.isValid());
    }

    void telemetryAndLogOfTwoRanks()
    {
        Ranks ranks = launch(2, {"--task", "linear", "--steps", "5"});
        QVERIFY2(waitAll(ranks, 60000), qPrintable(describe(ranks)));
        for (auto &r : ranks) {
            QCOMPARE(r->exitCode(), 0);
            const auto hello = r->events(QStringLiteral("hello"));
            QCOMPARE(hello.size(), 1);
            QCOMPARE(hello[0].value("rank").toInt(), r->rank());
            QCOMPARE(hello[0].value("world_size").toInt(), 2);
            QCOMPARE(hello[0].value("backend").toString(), QStringLiteral("gloo"));
            QCOMPARE(hello[0].value("proto").toInt(), rankdeck::wire::kProtocolVersion);
            QVERIFY(!hello[0].value("build_id").toString().isEmpty());
            QCOMPARE(hello[0].value("pid").toInteger(), r->pid());
            QCOMPARE(r->events(QStringLiteral("rendezvous")).size(), 1);
            QVERIFY(!r->events(QStringLiteral("heartbeat")).isEmpty());
            const auto steps = r->events(QStringLiteral("step"));
            QCOMPARE(steps.size(), 5);
            for (int i = 0; i < steps.size(); ++i) {
                QCOMPARE(steps[i].value("step").toInt(), i + 1);
                QVERIFY(steps[i].value("samples_per_s").toDouble() > 0);
                QVERIFY(steps[i].value("lr").toDouble() > 0);
            }
            const auto finished = r->events(QStringLiteral("finished"));
            QCOMPARE(finished.size(), 1);
            QCOMPARE(finished[0].value("step").toInt(), 5);
            // The reference example's human lines, one per step, with the loss of the event.
            const QStringList lines = r->logLines().filter(QRegularExpression(QStringLiteral("^Rank \\d+: Epoch")));
            QCOMPARE(lines.size(), 5);
            for (int i = 0; i < lines.size(); ++i) {
                const QRegularExpression re(QStringLiteral("^Rank (\\d+): Epoch (\\d+), Loss (\\S+)$"));
                const auto m = re.match(lines[i]);
                QVERIFY2(m.hasMatch(), qPrintable(lines[i]));
                QCOMPARE(m.captured(1).toInt(), r->rank());
                QCOMPARE(m.captured(2).toInt(), i);
                QVERIFY(qAbs(m.captured(3).toDouble() - steps[i].value("loss").toDouble())
                        <= 1e-6 * qMax(1.0, qAbs(m.captured(3).toDouble())));
            }
        }
    }

    void matchesSingleProcess_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<QStringList>("args");
        QTest::addRow("linear, 2 ranks") << 2 << QStringList{"--task", "linear", "--steps", "12", "--dataset-size", "100"};
        QTest::addRow("linear, 4 ranks, shuffle") << 4 << QStringList{"--task", "linear", "--steps", "12", "--dataset-size", "90", "--shuffle", "--seed", "3"};
        QTest::addRow("mlp, 2 ranks, momentum, accum, cosine")
            << 2 << QStringList{"--task", "mlp", "--steps", "10", "--dataset-size", "200", "--batch-size", "8",
                                "--momentum", "0.9", "--accum-steps", "2", "--schedule", "cosine",
                                "--warmup-steps", "3", "--shuffle", "--lr", "0.05"};
        QTest::addRow("script, 2 ranks, cross-entropy")
            << 2 << QStringList{"--task", "script", "--model", "%DIR%/model.pt", "--data", "%DIR%/data.pt",
                                "--loss", "cross-entropy", "--steps", "10", "--batch-size", "10", "--shuffle",
                                "--momentum", "0.5"};
        QTest::addRow("mlp, 4 ranks, adamw, clip, several buckets")
            << 4 << QStringList{"--task", "mlp", "--steps", "8", "--dataset-size", "256", "--batch-size", "4",
                                "--optimizer", "adamw", "--lr", "0.003", "--clip-grad-norm", "0.5",
                                "--mlp-width", "700", "--mlp-depth", "2"};
    }

    void matchesSingleProcess()
    {
        QFETCH(int, world);
        QFETCH(QStringList, args);
        if (pythonPath().isEmpty())
            QSKIP("RANKDECK_TORCH_PYTHON is not set");
        args.replaceInStrings(QStringLiteral("%DIR%"), m_dir.path());
        if (args.contains(QStringLiteral("script")))
            QVERIFY(makeScriptFiles());
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(QRegularExpression("[^a-z0-9]+"), "-");
        const QString init = initialState(args, tag);
        QVERIFY(QFile::exists(init));
        QStringList runArgs = args;
        runArgs << QStringLiteral("--save-state") << m_dir.filePath(tag + QStringLiteral("-{rank}.pt"));
        Ranks ranks = launch(world, runArgs);
        QVERIFY2(waitAll(ranks, 120000), qPrintable(describe(ranks)));
        for (auto &r : ranks)
            QVERIFY2(r->exitCode() == 0, qPrintable(describe(ranks)));

        QStringList py{referenceScript(), "--world", QString::number(world), "--init", init};
        // The worker's defaults, spelled out for the reference.
        QMap<QString, QString> flags{{"--batch-size", args.contains("linear") ? "20" : "32"}, {"--lr", "0.01"}};
        for (int i = 0; i < args.size(); ++i) {
            if (args[i] == QLatin1String("--shuffle"))
                py << args[i];
            else if (i + 1 < args.size() && args[i].startsWith(QLatin1String("--"))) {
                const QString name = args[i];
                flags[name] = args[++i];
            }
        }
        for (auto it = flags.begin(); it != flags.end(); ++it)
            py << it.key() << it.value();
        py << QStringLiteral("--states");
        for (int r = 0; r < world; ++r)
            py << m_dir.filePath(tag + QStringLiteral("-%1.pt").arg(r));
        QProcess python;
        python.start(pythonPath(), py);
        QVERIFY(python.waitForFinished(120000));
        const QByteArray out = python.readAllStandardOutput();
        QVERIFY2(python.exitCode() == 0, qPrintable(out + python.readAllStandardError().right(600)));
        qInfo("%s", out.trimmed().constData());
    }

    void lossFalls_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addRow("mlp") << QStringList{"--task", "mlp", "--steps", "60", "--dataset-size", "512",
                                            "--batch-size", "16", "--lr", "0.1", "--momentum", "0.9", "--shuffle"};
        QTest::addRow("charlm") << QStringList{"--task", "charlm", "--steps", "40", "--batch-size", "8", "--shuffle"};
    }

    void lossFalls()
    {
        QFETCH(QStringList, args);
        Ranks ranks = launch(2, args);
        QVERIFY2(waitAll(ranks, 150000), qPrintable(describe(ranks)));
        for (auto &r : ranks) {
            QCOMPARE(r->exitCode(), 0);
            const auto steps = r->events(QStringLiteral("step"));
            const int n = int(steps.size());
            QCOMPARE(n, args[args.indexOf("--steps") + 1].toInt());
            const double first = meanLoss(steps, 0, 5);
            const double last = meanLoss(steps, n - 5, n);
            QVERIFY2(last < 0.8 * first, qPrintable(QStringLiteral("rank %1: loss %2 -> %3").arg(r->rank()).arg(first).arg(last)));
        }
    }

    void resumeEqualsUninterrupted()
    {
        if (pythonPath().isEmpty())
            QSKIP("RANKDECK_TORCH_PYTHON is not set");
        const QStringList common{"--task", "mlp", "--dataset-size", "128", "--batch-size", "8", "--momentum", "0.9",
                                 "--shuffle", "--schedule", "cosine", "--optimizer", "adamw"};
        const QString ckpt = m_dir.filePath(QStringLiteral("ckpt"));
        // Uninterrupted: 14 steps.
        Ranks full = launch(2, common + QStringList{"--steps", "14", "--save-state", m_dir.filePath("full-{rank}.pt")});
        QVERIFY2(waitAll(full, 60000), qPrintable(describe(full)));
        // Interrupted: a run of 14 steps stopped after step 9 (its last checkpoint: step 8)…
        Ranks first = launch(2, common + QStringList{"--steps", "14", "--checkpoint-dir", ckpt, "--checkpoint-every", "4",
                                                     "--fault", "exit:7@9", "--fault-rank", "1"});
        waitAll(first, 60000);
        QVERIFY(QFile::exists(ckpt + QStringLiteral("/checkpoint-0000000008.pt")));
        QVERIFY(!QFile::exists(ckpt + QStringLiteral("/checkpoint-0000000012.pt")));
        // …then resumed.
        Ranks resumed = launch(2, common + QStringList{"--steps", "14", "--checkpoint-dir", ckpt, "--checkpoint-every", "4",
                                                       "--resume", "--save-state", m_dir.filePath("resumed-{rank}.pt")});
        QVERIFY2(waitAll(resumed, 60000), qPrintable(describe(resumed)));
        for (auto &r : resumed) {
            QVERIFY2(r->exitCode() == 0, qPrintable(describe(resumed)));
            QCOMPARE(r->events(QStringLiteral("step")).first().value("step").toInt(), 9);
        }
        QProcess python;
        python.start(pythonPath(), {"-c", "import sys, torch\n"
                                          "a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])\n"
                                          "bad = [k for k in a if not torch.equal(a[k], b[k])]\n"
                                          "print(bad); sys.exit(1 if bad or not a else 0)\n",
                                    m_dir.filePath("full-0.pt"), m_dir.filePath("resumed-0.pt")});
        QVERIFY(python.waitForFinished(60000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardOutput() + python.readAllStandardError());
    }

    void stopOnStdin_data()
    {
        QTest::addColumn<bool>("closeInstead");
        QTest::addRow("stop command to rank 1 only") << false;
        QTest::addRow("stdin closed on rank 1 only") << true;
    }

    void stopOnStdin()
    {
        QFETCH(bool, closeInstead);
        const QString ckpt = m_dir.filePath(closeInstead ? "stop-ckpt-closed" : "stop-ckpt");
        Ranks ranks = launch(2, {"--task", "linear", "--steps", "100000", "--step-delay-ms", "20",
                                 "--checkpoint-dir", ckpt},
                             /*controlStdin=*/true);
        QVERIFY(waitFor(ranks, [&] {
            return ranks.size() == 2 && ranks[0]->events("step").size() >= 3 && ranks[1]->events("step").size() >= 3;
        }, 60000));
        if (closeInstead) {
            ranks[1]->process().closeWriteChannel();
        } else {
            ranks[1]->process().write("stop\n");
            ranks[1]->process().waitForBytesWritten(5000);
        }
        // Both end: the stop is agreed on through the gradient all-reduce, so rank 0 stops at
        // the same step although only rank 1 was told.
        QVERIFY2(waitAll(ranks, 10000), qPrintable(describe(ranks)));
        for (auto &r : ranks) {
            QCOMPARE(r->exitCode(), 0);
            QVERIFY(!r->crashed());
        }
        const auto f0 = ranks[0]->events("finished");
        const auto f1 = ranks[1]->events("finished");
        QCOMPARE(f0.size(), 1);
        QCOMPARE(f1.size(), 1);
        QCOMPARE(f0[0].value("step").toInt(), f1[0].value("step").toInt());
        const auto stopping = ranks[1]->events("stopping");
        QCOMPARE(stopping.size(), 1);
        QCOMPARE(stopping[0].value("reason").toString(), closeInstead ? QStringLiteral("stdin-closed") : QStringLiteral("stdin-stop"));
        // Checkpointing was on: the stop wrote one at the final step.
        const auto ck = ranks[0]->events("checkpoint");
        QCOMPARE(ck.size(), 1);
        QCOMPARE(ck[0].value("step").toInt(), f0[0].value("step").toInt());
        QVERIFY(QFile::exists(ck[0].value("path").toString()));
    }

    void cpuSlicesOfLocalRanks_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<QString>("affinity");
        QTest::addRow("2 ranks, auto") << 2 << QStringLiteral("auto");
        QTest::addRow("4 ranks, auto") << 4 << QStringLiteral("auto");
        QTest::addRow("2 ranks, off") << 2 << QStringLiteral("off");
    }

    // Each CPU rank is bound to its own slice of the CPUs the launcher may use, the log says
    // which, and the kernel agrees; with more ranks than CPUs they share CPUs round robin.
    void cpuSlicesOfLocalRanks()
    {
        QFETCH(int, world);
        QFETCH(QString, affinity);
        const QSet<int> allowed = parseCpuList(allowedCpuList(QCoreApplication::applicationPid()));
        QVERIFY(!allowed.isEmpty());
        Ranks ranks = launch(world, {"--task", "linear", "--steps", "30", "--step-delay-ms", "40",
                                     "--cpu-affinity", affinity});
        QVERIFY2(waitFor(ranks, [&] {
                     for (auto &r : ranks)
                         if (r->events(QStringLiteral("step")).isEmpty())
                             return false;
                     return true;
                 }, 60000),
                 qPrintable(describe(ranks)));
        QList<QSet<int>> slices;
        for (auto &r : ranks) {
            const QSet<int> kernel = parseCpuList(allowedCpuList(r->pid()));
            const QStringList joined = r->logLines().filter(QStringLiteral(": joined "));
            QCOMPARE(joined.size(), 1);
            const auto m = QRegularExpression(QStringLiteral(", CPUs ([0-9,-]+)$")).match(joined.first());
            if (affinity == QLatin1String("off")) {
                QVERIFY2(!m.hasMatch(), qPrintable(joined.first()));
                QCOMPARE(kernel, allowed);
                continue;
            }
            QVERIFY2(m.hasMatch(), qPrintable(joined.first()));
            const QSet<int> logged = parseCpuList(m.captured(1));
            QCOMPARE(kernel, logged);
            QVERIFY(allowed.contains(logged));
            slices.push_back(logged);
        }
        QVERIFY2(waitAll(ranks, 60000), qPrintable(describe(ranks)));
        if (affinity == QLatin1String("off"))
            return;
        QSet<int> covered;
        for (int r = 0; r < world; ++r) {
            covered += slices[r];
            if (allowed.size() >= world) {
                for (int q = 0; q < r; ++q)
                    QVERIFY2(!slices[r].intersects(slices[q]), qPrintable(QStringLiteral("ranks %1 and %2 overlap").arg(q).arg(r)));
            } else {
                QCOMPARE(slices[r].size(), 1);
            }
        }
        QCOMPARE(covered, allowed.size() >= world ? allowed : covered);
        if (allowed.size() < world)
            QCOMPARE(covered.size(), int(allowed.size()));
    }

    // Step events of fast steps leave the worker in batches (Telemetry::kCoalesce); none may be
    // lost, and the stream must keep call order: the event of step E+1 (1-based) before the
    // log line "Epoch E" (0-based), and events after the line only for later steps.
    void fastStepEventsArriveInOrder_data()
    {
        QTest::addColumn<int>("logEvery");
        QTest::addRow("log every step") << 1;
        QTest::addRow("log every 37 steps") << 37;
    }

    void fastStepEventsArriveInOrder()
    {
        QFETCH(int, logEvery);
        const int steps = 600;
        Ranks ranks = launch(1, {"--task", "linear", "--steps", QString::number(steps), "--log-every",
                                 QString::number(logEvery)});
        QVERIFY2(waitAll(ranks, 60000), qPrintable(describe(ranks)));
        QCOMPARE(ranks[0]->exitCode(), 0);
        int lastStep = 0, logLinesSeen = 0;
        bool finishedSeen = false;
        const QRegularExpression epoch(QStringLiteral("^Rank 0: Epoch (\\d+),"));
        for (const QByteArray &line : ranks[0]->stdoutBytes().split('\n')) {
            const auto m = rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            if (m.valid) {
                const QJsonObject o = QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size()))).object();
                const QString type = o.value(QStringLiteral("t")).toString();
                if (type == QLatin1String("step")) {
                    QVERIFY2(!finishedSeen, "a step event after the finished event");
                    QCOMPARE(o.value(QStringLiteral("step")).toInt(), lastStep + 1);
                    lastStep = o.value(QStringLiteral("step")).toInt();
                } else if (type == QLatin1String("finished")) {
                    finishedSeen = true;
                }
                continue;
            }
            const auto e = epoch.match(QString::fromUtf8(line));
            if (e.hasMatch()) {
                QCOMPARE(lastStep, e.captured(1).toInt() + 1);
                ++logLinesSeen;
            }
        }
        QCOMPARE(lastStep, steps);
        QVERIFY(finishedSeen);
        QCOMPARE(logLinesSeen, (steps - 1) / logEvery + 1 + ((steps - 1) % logEvery == 0 ? 0 : 1));
    }

    void stdinIgnoredWithoutControl()
    {
        // Started by hand or by torchrun: stdin closed at once must not stop training.
        Ranks ranks = launch(1, {"--task", "linear", "--steps", "20"});
        QVERIFY(waitAll(ranks, 60000));
        QCOMPARE(ranks[0]->exitCode(), 0);
        QCOMPARE(ranks[0]->events("finished").value(0).value("step").toInt(), 20);
        QVERIFY(ranks[0]->events("stopping").isEmpty());
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("env"); // NAME=VALUE
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("unknown flag") << QStringList{"--bogus"} << QStringList{} << 2 << "--bogus";
        QTest::addRow("steps not a number") << QStringList{"--steps", "ten"} << QStringList{} << 2 << "--steps";
        QTest::addRow("missing value") << QStringList{"--lr"} << QStringList{} << 2 << "--lr";
        QTest::addRow("unknown task") << QStringList{"--task", "gan"} << QStringList{} << 2 << "--task";
        QTest::addRow("bad cpu affinity") << QStringList{"--cpu-affinity", "all"} << QStringList{} << 2 << "--cpu-affinity";
        QTest::addRow("bad WORLD_SIZE") << QStringList{} << QStringList{"WORLD_SIZE=two"} << 2 << "WORLD_SIZE";
        QTest::addRow("RANK beyond world") << QStringList{} << QStringList{"RANK=3", "WORLD_SIZE=2"} << 2 << "RANK";
        QTest::addRow("bad MASTER_PORT") << QStringList{} << QStringList{"MASTER_PORT=99999"} << 2 << "MASTER_PORT";
        QTest::addRow("bad fault") << QStringList{"--fault", "melt@3"} << QStringList{} << 2 << "--fault";
        QTest::addRow("script without model") << QStringList{"--task", "script"} << QStringList{} << 2 << "--model";
        QTest::addRow("batch larger than shard") << QStringList{"--dataset-size", "10", "--batch-size", "50"}
                                                 << QStringList{} << 2 << "--batch-size";
        QTest::addRow("missing model file")
            << QStringList{"--task", "script", "--model", "/nonexistent/model.pt", "--data", "/nonexistent/data.pt"}
            << QStringList{} << 1 << "/nonexistent/model.pt";
        QTest::addRow("missing corpus") << QStringList{"--task", "charlm", "--corpus", "/nonexistent/corpus.txt"}
                                        << QStringList{} << 1 << "/nonexistent/corpus.txt";
    }

    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QStringList, env);
        QFETCH(int, exitCode);
        QFETCH(QString, mentions);
        QMap<QString, QString> extra;
        for (const QString &kv : env)
            extra[kv.section('=', 0, 0)] = kv.section('=', 1);
        QProcess p;
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        pe.insert("MASTER_ADDR", "127.0.0.1");
        pe.insert("MASTER_PORT", "0");
        pe.insert("WORLD_SIZE", "1");
        pe.insert("RANK", "0");
        for (auto it = extra.begin(); it != extra.end(); ++it)
            pe.insert(it.key(), it.value());
        p.setProcessEnvironment(pe);
        p.start(workerPath(), args);
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        const QByteArray out = p.readAllStandardOutput();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), exitCode);
        QVERIFY2(err.contains(mentions), qPrintable(err));
        // The launcher gets the same message as an error event.
        bool sawError = false;
        for (const QByteArray &line : out.split('\n')) {
            const auto m = rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            if (!m.valid)
                continue;
            const auto o = QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size()))).object();
            if (o.value("t").toString() == QLatin1String("error")) {
                sawError = true;
                QVERIFY(o.value("msg").toString().contains(mentions));
                QCOMPARE(o.value("exit_code").toInt(), exitCode);
            }
        }
        QVERIFY(sawError);
    }

    void rendezvousTimeoutNamesMissingRanks()
    {
        // Three ranks expected, rank 2 never starts.
        Ranks ranks = launch(3, {"--task", "linear", "--steps", "5", "--rendezvous-timeout", "3"}, false, {}, 2);
        QVERIFY2(waitAll(ranks, 30000), qPrintable(describe(ranks)));
        QCOMPARE(ranks[0]->exitCode(), 1);
        const QString err = ranks[0]->stderrText();
        QVERIFY2(err.contains("never arrived") && err.contains("rank 2"), qPrintable(err));
        QVERIFY(ranks[1]->exitCode() != 0);
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
