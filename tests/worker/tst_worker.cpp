// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for the worker's whole command line and
// its DDP results, each case a real multi-process run.
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

using namespace Qt::StringLiterals;

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
    return qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
           QStringLiteral("/tests/worker/ddp_reference.py");
}

// One worker process and everything it printed, split into log lines and wire events.
class Rank
{
public:
    explicit Rank(int rank) : m_rank(rank) {}

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
            const auto m =
                rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            if (!m.valid)
                continue;
            const QJsonObject o =
                QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                    .object();
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
            const auto m =
                rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
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
template <typename Pred> bool waitFor(Ranks &ranks, Pred pred, int ms)
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
    const bool gotPort = waitFor(
        ranks, [&] { return !ranks[0]->events(QStringLiteral("store")).isEmpty(); }, 30000);
    if (!gotPort) {
        qWarning("rank 0 reported no store port: %s", qPrintable(ranks[0]->stderrText()));
        return ranks;
    }
    const int port =
        ranks[0]->events(QStringLiteral("store")).first().value(QStringLiteral("port")).toInt();
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
        s += QStringLiteral("rank %1 exit %2: %3\n")
                 .arg(r->rank())
                 .arg(r->exitCode())
                 .arg(r->stderrText());
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
        if (QFile::exists(m_dir.filePath(QStringLiteral("data-5.pt"))))
            return true;
        QProcess python;
        const QString script = QStringLiteral(
            "import sys, torch\n"
            "torch.manual_seed(1)\n"
            "m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, "
            "3))\n"
            "torch.jit.script(m).save(sys.argv[1] + '/model.pt')\n"
            "x = torch.randn(200, 6)\n"
            "torch.save({'x': x, 'y': x[:, :3].argmax(1)}, sys.argv[1] + '/data.pt')\n"
            "x5 = torch.randn(40, 5)\n" // one feature short of what the model takes
            "torch.save({'x': x5, 'y': x5[:, :3].argmax(1)}, sys.argv[1] + '/data-5.pt')\n");
        python.start(pythonPath(), {u"-c"_s, script, m_dir.path()});
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
        Ranks ranks = launch(2, {u"--task"_s, u"linear"_s, u"--steps"_s, u"5"_s});
        QVERIFY2(waitAll(ranks, 60000), qPrintable(describe(ranks)));
        for (auto &r : ranks) {
            QCOMPARE(r->exitCode(), 0);
            const auto hello = r->events(QStringLiteral("hello"));
            QCOMPARE(hello.size(), 1);
            QCOMPARE(hello[0].value(u"rank"_s).toInt(), r->rank());
            QCOMPARE(hello[0].value(u"world_size"_s).toInt(), 2);
            QCOMPARE(hello[0].value(u"backend"_s).toString(), QStringLiteral("gloo"));
            QCOMPARE(hello[0].value(u"proto"_s).toInt(), rankdeck::wire::kProtocolVersion);
            QVERIFY(!hello[0].value(u"build_id"_s).toString().isEmpty());
            QCOMPARE(hello[0].value(u"pid"_s).toInteger(), r->pid());
            QCOMPARE(r->events(QStringLiteral("rendezvous")).size(), 1);
            QVERIFY(!r->events(QStringLiteral("heartbeat")).isEmpty());
            const auto steps = r->events(QStringLiteral("step"));
            QCOMPARE(steps.size(), 5);
            for (int i = 0; i < steps.size(); ++i) {
                QCOMPARE(steps[i].value(u"step"_s).toInt(), i + 1);
                QVERIFY(steps[i].value(u"samples_per_s"_s).toDouble() > 0);
                QVERIFY(steps[i].value(u"lr"_s).toDouble() > 0);
            }
            const auto finished = r->events(QStringLiteral("finished"));
            QCOMPARE(finished.size(), 1);
            QCOMPARE(finished[0].value(u"step"_s).toInt(), 5);
            // The reference example's human lines, one per step, with the loss of the event.
            const QStringList lines =
                r->logLines().filter(QRegularExpression(QStringLiteral("^Rank \\d+: Epoch")));
            QCOMPARE(lines.size(), 5);
            for (int i = 0; i < lines.size(); ++i) {
                const QRegularExpression re(
                    QStringLiteral("^Rank (\\d+): Epoch (\\d+), Loss (\\S+)$"));
                const auto m = re.match(lines[i]);
                QVERIFY2(m.hasMatch(), qPrintable(lines[i]));
                QCOMPARE(m.captured(1).toInt(), r->rank());
                QCOMPARE(m.captured(2).toInt(), i);
                QVERIFY(qAbs(m.captured(3).toDouble() - steps[i].value(u"loss"_s).toDouble()) <=
                        1e-6 * qMax(1.0, qAbs(m.captured(3).toDouble())));
            }
        }
    }

    void matchesSingleProcess_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<QStringList>("args");
        QTest::addRow("linear, 2 ranks")
            << 2 << QStringList{u"--task"_s, u"linear"_s,         u"--steps"_s,
                                u"12"_s,     u"--dataset-size"_s, u"100"_s};
        QTest::addRow("linear, 4 ranks, shuffle")
            << 4
            << QStringList{u"--task"_s, u"linear"_s,    u"--steps"_s, u"12"_s, u"--dataset-size"_s,
                           u"90"_s,     u"--shuffle"_s, u"--seed"_s,  u"3"_s};
        QTest::addRow("mlp, 2 ranks, momentum, accum, cosine")
            << 2 << QStringList{u"--task"_s,
                                u"mlp"_s,
                                u"--steps"_s,
                                u"10"_s,
                                u"--dataset-size"_s,
                                u"200"_s,
                                u"--batch-size"_s,
                                u"8"_s,
                                u"--momentum"_s,
                                u"0.9"_s,
                                u"--accum-steps"_s,
                                u"2"_s,
                                u"--schedule"_s,
                                u"cosine"_s,
                                u"--warmup-steps"_s,
                                u"3"_s,
                                u"--shuffle"_s,
                                u"--lr"_s,
                                u"0.05"_s};
        QTest::addRow("script, 2 ranks, cross-entropy")
            << 2 << QStringList{u"--task"_s,       u"script"_s,
                                u"--model"_s,      u"%DIR%/model.pt"_s,
                                u"--data"_s,       u"%DIR%/data.pt"_s,
                                u"--loss"_s,       u"cross-entropy"_s,
                                u"--steps"_s,      u"10"_s,
                                u"--batch-size"_s, u"10"_s,
                                u"--shuffle"_s,    u"--momentum"_s,
                                u"0.5"_s};
        QTest::addRow("mlp, 4 ranks, adamw, clip, several buckets")
            << 4 << QStringList{u"--task"_s,           u"mlp"_s,   u"--steps"_s,      u"8"_s,
                                u"--dataset-size"_s,   u"256"_s,   u"--batch-size"_s, u"4"_s,
                                u"--optimizer"_s,      u"adamw"_s, u"--lr"_s,         u"0.003"_s,
                                u"--clip-grad-norm"_s, u"0.5"_s,   u"--mlp-width"_s,  u"700"_s,
                                u"--mlp-depth"_s,      u"2"_s};
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
        const QString tag = QString::fromLatin1(QTest::currentDataTag())
                                .replace(QRegularExpression(u"[^a-z0-9]+"_s), u"-"_s);
        const QString init = initialState(args, tag);
        QVERIFY(QFile::exists(init));
        QStringList runArgs = args;
        runArgs << QStringLiteral("--save-state")
                << m_dir.filePath(tag + QStringLiteral("-{rank}.pt"));
        Ranks ranks = launch(world, runArgs);
        QVERIFY2(waitAll(ranks, 120000), qPrintable(describe(ranks)));
        for (auto &r : ranks)
            QVERIFY2(r->exitCode() == 0, qPrintable(describe(ranks)));

        QStringList py{referenceScript(), u"--world"_s, QString::number(world), u"--init"_s, init};
        // The worker's defaults, spelled out for the reference.
        QMap<QString, QString> flags{
            {u"--batch-size"_s, args.contains(QLatin1String("linear")) ? u"20"_s : u"32"_s},
            {u"--lr"_s, u"0.01"_s}};
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
        QVERIFY2(python.exitCode() == 0,
                 (out + python.readAllStandardError().right(600)).constData());
        qInfo("%s", out.trimmed().constData());
    }

    void lossFalls_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addRow("mlp") << QStringList{
            u"--task"_s,     u"mlp"_s,          u"--steps"_s,  u"60"_s,   u"--dataset-size"_s,
            u"512"_s,        u"--batch-size"_s, u"16"_s,       u"--lr"_s, u"0.1"_s,
            u"--momentum"_s, u"0.9"_s,          u"--shuffle"_s};
        QTest::addRow("charlm") << QStringList{u"--task"_s,   u"charlm"_s,       u"--steps"_s,
                                               u"40"_s,       u"--batch-size"_s, u"8"_s,
                                               u"--shuffle"_s};
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
            QCOMPARE(n, args[args.indexOf(u"--steps"_s) + 1].toInt());
            const double first = meanLoss(steps, 0, 5);
            const double last = meanLoss(steps, n - 5, n);
            QVERIFY2(
                last < 0.8 * first,
                qPrintable(
                    QStringLiteral("rank %1: loss %2 -> %3").arg(r->rank()).arg(first).arg(last)));
        }
    }

    void resumeEqualsUninterrupted()
    {
        if (pythonPath().isEmpty())
            QSKIP("RANKDECK_TORCH_PYTHON is not set");
        const QStringList common{u"--task"_s,     u"mlp"_s,          u"--dataset-size"_s,
                                 u"128"_s,        u"--batch-size"_s, u"8"_s,
                                 u"--momentum"_s, u"0.9"_s,          u"--shuffle"_s,
                                 u"--schedule"_s, u"cosine"_s,       u"--optimizer"_s,
                                 u"adamw"_s};
        const QString ckpt = m_dir.filePath(QStringLiteral("ckpt"));
        // Uninterrupted: 14 steps.
        Ranks full = launch(2, common + QStringList{u"--steps"_s, u"14"_s, u"--save-state"_s,
                                                    m_dir.filePath(u"full-{rank}.pt"_s)});
        QVERIFY2(waitAll(full, 60000), qPrintable(describe(full)));
        // Interrupted: a run of 14 steps stopped after step 9 (its last checkpoint: step 8)…
        Ranks first =
            launch(2, common + QStringList{u"--steps"_s, u"14"_s, u"--checkpoint-dir"_s, ckpt,
                                           u"--checkpoint-every"_s, u"4"_s, u"--fault"_s,
                                           u"exit:7@9"_s, u"--fault-rank"_s, u"1"_s});
        waitAll(first, 60000);
        QVERIFY(QFile::exists(ckpt + QStringLiteral("/checkpoint-0000000008.pt")));
        QVERIFY(!QFile::exists(ckpt + QStringLiteral("/checkpoint-0000000012.pt")));
        // …then resumed.
        Ranks resumed = launch(2, common + QStringList{u"--steps"_s, u"14"_s, u"--checkpoint-dir"_s,
                                                       ckpt, u"--checkpoint-every"_s, u"4"_s,
                                                       u"--resume"_s, u"--save-state"_s,
                                                       m_dir.filePath(u"resumed-{rank}.pt"_s)});
        QVERIFY2(waitAll(resumed, 60000), qPrintable(describe(resumed)));
        for (auto &r : resumed) {
            QVERIFY2(r->exitCode() == 0, qPrintable(describe(resumed)));
            QCOMPARE(r->events(QStringLiteral("step")).first().value(u"step"_s).toInt(), 9);
        }
        QProcess python;
        const QString script =
            QStringLiteral("import sys, torch\n"
                           "a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])\n"
                           "bad = [k for k in a if not torch.equal(a[k], b[k])]\n"
                           "print(bad); sys.exit(1 if bad or not a else 0)\n");
        python.start(pythonPath(), {u"-c"_s, script, m_dir.filePath(u"full-0.pt"_s),
                                    m_dir.filePath(u"resumed-0.pt"_s)});
        QVERIFY(python.waitForFinished(60000));
        QVERIFY2(python.exitCode() == 0,
                 python.readAllStandardOutput() + python.readAllStandardError());
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
        const QString ckpt = m_dir.filePath(closeInstead ? u"stop-ckpt-closed"_s : u"stop-ckpt"_s);
        Ranks ranks = launch(2,
                             {u"--task"_s, u"linear"_s, u"--steps"_s, u"100000"_s,
                              u"--step-delay-ms"_s, u"20"_s, u"--checkpoint-dir"_s, ckpt},
                             /*controlStdin=*/true);
        QVERIFY(waitFor(
            ranks,
            [&] {
                return ranks.size() == 2 && ranks[0]->events(u"step"_s).size() >= 3 &&
                       ranks[1]->events(u"step"_s).size() >= 3;
            },
            60000));
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
        const auto f0 = ranks[0]->events(u"finished"_s);
        const auto f1 = ranks[1]->events(u"finished"_s);
        QCOMPARE(f0.size(), 1);
        QCOMPARE(f1.size(), 1);
        QCOMPARE(f0[0].value(u"step"_s).toInt(), f1[0].value(u"step"_s).toInt());
        const auto stopping = ranks[1]->events(u"stopping"_s);
        QCOMPARE(stopping.size(), 1);
        QCOMPARE(stopping[0].value(u"reason"_s).toString(),
                 closeInstead ? QStringLiteral("stdin-closed") : QStringLiteral("stdin-stop"));
        // Checkpointing was on: the stop wrote one at the final step.
        const auto ck = ranks[0]->events(u"checkpoint"_s);
        QCOMPARE(ck.size(), 1);
        QCOMPARE(ck[0].value(u"step"_s).toInt(), f0[0].value(u"step"_s).toInt());
        QVERIFY(QFile::exists(ck[0].value(u"path"_s).toString()));
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
        Ranks ranks = launch(world, {u"--task"_s, u"linear"_s, u"--steps"_s, u"30"_s,
                                     u"--step-delay-ms"_s, u"40"_s, u"--cpu-affinity"_s, affinity});
        QVERIFY2(waitFor(
                     ranks,
                     [&] {
                         for (auto &r : ranks)
                             if (r->events(QStringLiteral("step")).isEmpty())
                                 return false;
                         return true;
                     },
                     60000),
                 qPrintable(describe(ranks)));
        QList<QSet<int>> slices;
        for (auto &r : ranks) {
            const QSet<int> kernel = parseCpuList(allowedCpuList(r->pid()));
            const QStringList joined = r->logLines().filter(QStringLiteral(": joined "));
            QCOMPARE(joined.size(), 1);
            const auto m =
                QRegularExpression(QStringLiteral(", CPUs ([0-9,-]+)$")).match(joined.first());
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
                    QVERIFY2(!slices[r].intersects(slices[q]),
                             qPrintable(QStringLiteral("ranks %1 and %2 overlap").arg(q).arg(r)));
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
        Ranks ranks = launch(1, {u"--task"_s, u"linear"_s, u"--steps"_s, QString::number(steps),
                                 u"--log-every"_s, QString::number(logEvery)});
        QVERIFY2(waitAll(ranks, 60000), qPrintable(describe(ranks)));
        QCOMPARE(ranks[0]->exitCode(), 0);
        int lastStep = 0, logLinesSeen = 0;
        bool finishedSeen = false;
        const QRegularExpression epoch(QStringLiteral("^Rank 0: Epoch (\\d+),"));
        for (const QByteArray &line : ranks[0]->stdoutBytes().split('\n')) {
            const auto m =
                rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            if (m.valid) {
                const QJsonObject o =
                    QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                        .object();
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
        Ranks ranks = launch(1, {u"--task"_s, u"linear"_s, u"--steps"_s, u"20"_s});
        QVERIFY(waitAll(ranks, 60000));
        QCOMPARE(ranks[0]->exitCode(), 0);
        QCOMPARE(ranks[0]->events(u"finished"_s).value(0).value(u"step"_s).toInt(), 20);
        QVERIFY(ranks[0]->events(u"stopping"_s).isEmpty());
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("env"); // NAME=VALUE
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("unknown flag")
            << QStringList{u"--bogus"_s} << QStringList{} << 2 << u"--bogus"_s;
        QTest::addRow("steps not a number")
            << QStringList{u"--steps"_s, u"ten"_s} << QStringList{} << 2 << u"--steps"_s;
        QTest::addRow("missing value") << QStringList{u"--lr"_s} << QStringList{} << 2 << u"--lr"_s;
        QTest::addRow("unknown task")
            << QStringList{u"--task"_s, u"gan"_s} << QStringList{} << 2 << u"--task"_s;
        QTest::addRow("bad cpu affinity") << QStringList{u"--cpu-affinity"_s, u"all"_s}
                                          << QStringList{} << 2 << u"--cpu-affinity"_s;
        QTest::addRow("bad WORLD_SIZE")
            << QStringList{} << QStringList{u"WORLD_SIZE=two"_s} << 2 << u"WORLD_SIZE"_s;
        QTest::addRow("RANK beyond world")
            << QStringList{} << QStringList{u"RANK=3"_s, u"WORLD_SIZE=2"_s} << 2 << u"RANK"_s;
        QTest::addRow("bad MASTER_PORT")
            << QStringList{} << QStringList{u"MASTER_PORT=99999"_s} << 2 << u"MASTER_PORT"_s;
        QTest::addRow("count window not a range")
            << QStringList{} << QStringList{u"RANKDECK_COUNT_STEPS=10"_s} << 2
            << u"RANKDECK_COUNT_STEPS"_s;
        QTest::addRow("empty count window")
            << QStringList{} << QStringList{u"RANKDECK_COUNT_STEPS=5:5"_s} << 2
            << u"RANKDECK_COUNT_STEPS"_s;
        QTest::addRow("count window past the last step")
            << QStringList{u"--steps"_s, u"20"_s} << QStringList{u"RANKDECK_COUNT_STEPS=5:30"_s}
            << 2 << u"RANKDECK_COUNT_STEPS"_s;
        QTest::addRow("bad fault")
            << QStringList{u"--fault"_s, u"melt@3"_s} << QStringList{} << 2 << u"--fault"_s;
        // --fault-rank picks the faulting rank, or with --step-delay-ms the slow one (a
        // straggler); alone it means nothing.
        QTest::addRow("fault rank alone")
            << QStringList{u"--fault-rank"_s, u"1"_s} << QStringList{} << 2 << u"--step-delay-ms"_s;
        QTest::addRow("script without model")
            << QStringList{u"--task"_s, u"script"_s} << QStringList{} << 2 << u"--model"_s;
        QTest::addRow("batch larger than shard")
            << QStringList{u"--dataset-size"_s, u"10"_s, u"--batch-size"_s, u"50"_s}
            << QStringList{} << 2 << u"--batch-size"_s;
        QTest::addRow("missing model file") << QStringList{u"--task"_s,  u"script"_s,
                                                           u"--model"_s, u"/nonexistent/model.pt"_s,
                                                           u"--data"_s,  u"/nonexistent/data.pt"_s}
                                            << QStringList{} << 1 << u"/nonexistent/model.pt"_s;
        // The shape error itself, with the batch's shape, not only "The following operation
        // failed in the TorchScript interpreter."
        QTest::addRow("data shape does not fit the model")
            << QStringList{u"--task"_s,       u"script"_s,
                           u"--model"_s,      u"%DIR%/model.pt"_s,
                           u"--data"_s,       u"%DIR%/data-5.pt"_s,
                           u"--steps"_s,      u"2"_s,
                           u"--batch-size"_s, u"4"_s,
                           u"--loss"_s,       u"cross-entropy"_s}
            << QStringList{} << 1 << u"shapes cannot be multiplied (4x5 and 6x16)"_s;
        QTest::addRow("missing corpus")
            << QStringList{u"--task"_s, u"charlm"_s, u"--corpus"_s, u"/nonexistent/corpus.txt"_s}
            << QStringList{} << 1 << u"/nonexistent/corpus.txt"_s;
    }

    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QStringList, env);
        QFETCH(int, exitCode);
        QFETCH(QString, mentions);
        if (args.join(u' ').contains(u"%DIR%"_s)) {
            if (!makeScriptFiles())
                QSKIP("the torch environment's Python could not write the script files");
            args.replaceInStrings(u"%DIR%"_s, m_dir.path());
        }
        QMap<QString, QString> extra;
        for (const QString &kv : env)
            extra[kv.section(QLatin1Char('='), 0, 0)] = kv.section(QLatin1Char('='), 1);
        QProcess p;
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        pe.insert(u"MASTER_ADDR"_s, u"127.0.0.1"_s);
        pe.insert(u"MASTER_PORT"_s, u"0"_s);
        pe.insert(u"WORLD_SIZE"_s, u"1"_s);
        pe.insert(u"RANK"_s, u"0"_s);
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
            const auto m =
                rankdeck::wire::findWireEvent(std::string_view(line.constData(), line.size()));
            if (!m.valid)
                continue;
            const auto o =
                QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                    .object();
            if (o.value(u"t"_s).toString() == QLatin1String("error")) {
                sawError = true;
                QVERIFY(o.value(u"msg"_s).toString().contains(mentions));
                QCOMPARE(o.value(u"exit_code"_s).toInt(), exitCode);
            }
        }
        QVERIFY(sawError);
    }

    void rendezvousTimeoutNamesMissingRanks()
    {
        // Three ranks expected, rank 2 never starts.
        Ranks ranks = launch(
            3, {u"--task"_s, u"linear"_s, u"--steps"_s, u"5"_s, u"--rendezvous-timeout"_s, u"3"_s},
            false, {}, 2);
        QVERIFY2(waitAll(ranks, 30000), qPrintable(describe(ranks)));
        QCOMPARE(ranks[0]->exitCode(), 1);
        const QString err = ranks[0]->stderrText();
        QVERIFY2(err.contains(QLatin1String("never arrived")) &&
                     err.contains(QLatin1String("rank 2")),
                 qPrintable(err));
        QVERIFY(ranks[1]->exitCode() != 0);
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
