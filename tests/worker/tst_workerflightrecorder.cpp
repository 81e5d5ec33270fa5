// SPDX-License-Identifier: GPL-3.0-or-later
// rankdeck-worker's flight recorder: real ranks over Gloo, one of which leaves out a bucket
// collective (--fault skip-allreduce), answer dump-flight-recorder with torch's JSON and pickle
// of their own collectives (the parameter broadcasts, the bucket all-gathers, the final
// barrier's all-reduce); torch's analyser reads the pickles and names the rank that left the
// bucket out. Recording turned off gives the end event with the reason.
#include "frdumpevents.h"
#include "wire/wireprotocol.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>
#include <vector>

using namespace Qt::StringLiterals;
using rankdeck::testing::FrDumpEvents;

namespace {

// One worker process under test: its events and the frdump answers among them.
class Worker
{
public:
    Worker(int rank, int world, int port, const QStringList &args,
           const QMap<QString, QString> &env = {})
    {
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        for (const QString &name : {u"TORCH_FR_BUFFER_SIZE"_s, u"TORCH_NCCL_TRACE_BUFFER_SIZE"_s,
                                    u"RANKDECK_FLIGHT_RECORDER"_s})
            pe.remove(name);
        pe.insert(u"RANK"_s, QString::number(rank));
        pe.insert(u"WORLD_SIZE"_s, QString::number(world));
        pe.insert(u"LOCAL_RANK"_s, QString::number(rank));
        pe.insert(u"LOCAL_WORLD_SIZE"_s, QString::number(world));
        pe.insert(u"MASTER_ADDR"_s, u"127.0.0.1"_s);
        pe.insert(u"MASTER_PORT"_s, QString::number(port));
        for (auto it = env.begin(); it != env.end(); ++it)
            pe.insert(it.key(), it.value());
        m_process.setProcessEnvironment(pe);
        m_process.start(qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-worker"_s,
                        args + QStringList{u"--control-stdin"_s});
    }
    ~Worker()
    {
        // The end of stdin makes a worker stop, and leave within 5 s even when it hangs.
        if (m_process.state() != QProcess::NotRunning) {
            m_process.closeWriteChannel();
            if (!m_process.waitForFinished(10000)) {
                m_process.kill();
                m_process.waitForFinished(5000);
            }
        }
    }
    void send(const QByteArray &line) { m_process.write(line + '\n'); }
    bool waitFor(const std::function<bool()> &ready, int ms = 60000)
    {
        QElapsedTimer t;
        t.start();
        pump();
        while (!ready() && t.elapsed() < ms && m_process.state() != QProcess::NotRunning) {
            m_process.waitForReadyRead(50);
            pump();
        }
        return ready();
    }
    QList<QJsonObject> events(const QString &type) const
    {
        QList<QJsonObject> out;
        for (const QJsonObject &e : m_events)
            if (e.value(u"t"_s).toString() == type)
                out << e;
        return out;
    }
    bool ended(qint64 id) const { return m_dumps.answer(id).ended; }
    const FrDumpEvents &dumps() const { return m_dumps; }
    QString stderrText() const { return QString::fromUtf8(m_stderr); }

private:
    void pump()
    {
        m_stdout += m_process.readAllStandardOutput();
        m_stderr += m_process.readAllStandardError();
        qsizetype nl;
        while ((nl = m_stdout.indexOf('\n')) >= 0) {
            const QByteArray line = m_stdout.left(nl);
            m_stdout.remove(0, nl + 1);
            const auto m = rankdeck::wire::findWireEvent(
                std::string_view(line.constData(), size_t(line.size())));
            if (!m.valid)
                continue;
            const QJsonObject e =
                QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                    .object();
            m_events << e;
            m_dumps.add(e, line.size() + 1);
        }
    }

    QProcess m_process;
    QByteArray m_stdout;
    QByteArray m_stderr;
    QList<QJsonObject> m_events;
    FrDumpEvents m_dumps;
};

std::vector<std::unique_ptr<Worker>> startWorkers(int world, const QStringList &args)
{
    std::vector<std::unique_ptr<Worker>> workers;
    workers.push_back(std::make_unique<Worker>(0, world, 0, args));
    if (!workers[0]->waitFor([&] { return !workers[0]->events(u"store"_s).isEmpty(); }))
        return workers;
    const int port = workers[0]->events(u"store"_s).first().value(u"port"_s).toInt();
    for (int r = 1; r < world; ++r)
        workers.push_back(std::make_unique<Worker>(r, world, port, args));
    return workers;
}

QList<QJsonObject> entries(const QJsonObject &dump)
{
    QList<QJsonObject> out;
    for (const QJsonValue &v : dump.value(u"entries"_s).toArray())
        out << v.toObject();
    return out;
}

QString runPython(const QStringList &args, int *exitCode)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(qEnvironmentVariable("RANKDECK_TORCH_PYTHON"), args);
    p.waitForFinished(180000);
    *exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return QString::fromUtf8(p.readAll());
}

} // namespace

class TestWorkerFlightRecorder : public QObject
{
    Q_OBJECT

private slots:
    void skipAllreduce_data();
    void skipAllreduce();
    void off_data();
    void off();
};

// Rank 1 leaves out its only bucket's all-gather in step 3: it runs a step ahead of the others
// and, done, enters the final barrier's all-reduce at the number where they enter their last
// all-gather. Both hang there; the dumps say so.
void TestWorkerFlightRecorder::skipAllreduce_data()
{
    QTest::addColumn<int>("world");
    QTest::newRow("2 ranks") << 2;
    QTest::newRow("4 ranks") << 4;
}

void TestWorkerFlightRecorder::skipAllreduce()
{
    QFETCH(int, world);
    constexpr int steps = 8;
    // Two broadcasts (weight, bias), then one all-gather per step: the last step's is number
    // 2 + steps on the ranks that kept in step, and rank 1 is in its barrier there.
    constexpr qint64 parting = 2 + steps;
    auto workers =
        startWorkers(world, {u"--task"_s, u"linear"_s, u"--steps"_s, QString::number(steps),
                             u"--fault"_s, u"skip-allreduce@3"_s, u"--fault-rank"_s, u"1"_s,
                             u"--collective-timeout"_s, u"600"_s});
    QCOMPARE(int(workers.size()), world);
    QVERIFY2(workers[1]->waitFor([&] { return !workers[1]->events(u"finished"_s).isEmpty(); }),
             qPrintable(workers[1]->stderrText()));
    QVERIFY(workers[1]->stderrText().contains(u"leaves out bucket 0 of 1"_s));

    qint64 id = 7;
    QList<QJsonObject> dumps;
    for (;; ++id) {
        dumps.clear();
        for (auto &w : workers)
            w->send("dump-flight-recorder " + QByteArray::number(id));
        for (auto &w : workers) {
            QVERIFY2(w->waitFor([&] { return w->ended(id); }, 30000), qPrintable(w->stderrText()));
            QVERIFY2(w->dumps().errors().isEmpty(), qPrintable(w->dumps().errors().join(u'\n')));
            QVERIFY2(w->dumps().answer(id).message.isEmpty(),
                     qPrintable(w->dumps().answer(id).message));
            QVERIFY(w->dumps().complete(id));
            QJsonParseError error;
            dumps
                << QJsonDocument::fromJson(w->dumps().answer(id).files[u"json"_s], &error).object();
            QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        }
        bool all = true;
        for (const QJsonObject &d : dumps)
            all = all && !entries(d).isEmpty() &&
                  entries(d).last().value(u"collective_seq_id"_s).toInteger() == parting;
        if (all)
            break;
        QVERIFY2(id < 40, "the ranks never reached the parting collective");
        QTest::qWait(200);
    }
    for (int r = 0; r < world; ++r) {
        const QList<QJsonObject> list = entries(dumps[r]);
        // The worker's own collectives, named as torch names them, in its one group.
        QCOMPARE(list.first().value(u"profiling_name"_s).toString(), u"gloo:broadcast"_s);
        QCOMPARE(list.first().value(u"collective_seq_id"_s).toInteger(), 1);
        int gathers = 0;
        for (const QJsonObject &e : list) {
            QCOMPARE(e.value(u"process_group"_s).toArray().at(1).toString(), u"default_pg"_s);
            gathers += e.value(u"profiling_name"_s).toString() == u"gloo:all_gather"_s &&
                       e.value(u"input_sizes"_s).toArray().at(0).toArray().at(0).toInt() == 12;
        }
        const QJsonObject last = list.last();
        if (r == 1) {
            QCOMPARE(gathers, steps - 1);
            QCOMPARE(last.value(u"profiling_name"_s).toString(), u"gloo:all_reduce"_s);
        } else {
            QCOMPARE(gathers, steps);
            QCOMPARE(last.value(u"profiling_name"_s).toString(), u"gloo:all_gather"_s);
        }
        const QJsonObject group =
            dumps[r].value(u"pg_config"_s).toObject().value(u"0"_s).toObject();
        QCOMPARE(group.value(u"desc"_s).toString(), u"default_pg"_s);
        QString ranks = u"["_s;
        for (int k = 0; k < world; ++k)
            ranks += (k ? u", "_s : QString()) + QString::number(k);
        QCOMPARE(group.value(u"ranks"_s).toString(), ranks + u"]"_s);
    }

    QTemporaryDir pickles;
    for (int r = 0; r < world; ++r) {
        QFile f(pickles.filePath(u"rank_%1"_s.arg(r)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(workers[r]->dumps().answer(id).files[u"pickle"_s]);
    }
    int code = 0;
    const QString report = runPython({u"-m"_s, u"torch.distributed.flight_recorder.fr_trace"_s,
                                      pickles.path(), u"--prefix"_s, u"rank_"_s},
                                     &code);
    QVERIFY2(code == 0, qPrintable(report));
    QVERIFY2(report.contains(u"Collective sequence number: %1 has errors"_s.arg(parting)),
             qPrintable(report));
    QVERIFY2(report.contains(u"Culprit rank 1; Error type: COLLECTIVE_TYPE_MISMATCH"_s),
             qPrintable(report));
}

void TestWorkerFlightRecorder::off_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QString>("reason"); // empty: a dump
    QTest::newRow("on") << QStringList() << QStringList() << QString();
    QTest::newRow("--no-flight-recorder")
        << QStringList{u"--no-flight-recorder"_s} << QStringList()
        << u"flight recorder off (--no-flight-recorder or RANKDECK_FLIGHT_RECORDER=0)"_s;
    QTest::newRow("RANKDECK_FLIGHT_RECORDER=0")
        << QStringList() << QStringList{u"RANKDECK_FLIGHT_RECORDER=0"_s}
        << u"flight recorder off (--no-flight-recorder or RANKDECK_FLIGHT_RECORDER=0)"_s;
    QTest::newRow("TORCH_FR_BUFFER_SIZE=0")
        << QStringList() << QStringList{u"TORCH_FR_BUFFER_SIZE=0"_s}
        << u"flight recorder off: TORCH_FR_BUFFER_SIZE=0 in the worker's environment"_s;
}

void TestWorkerFlightRecorder::off()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, env);
    QFETCH(QString, reason);
    QMap<QString, QString> vars;
    for (const QString &kv : env)
        vars.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
    Worker w(0, 1, 0, args + QStringList{u"--steps"_s, u"100000"_s, u"--step-delay-ms"_s, u"20"_s},
             vars);
    QVERIFY2(w.waitFor([&] { return w.events(u"step"_s).size() >= 2; }),
             qPrintable(w.stderrText()));
    w.send("dump-flight-recorder 3");
    QVERIFY2(w.waitFor([&] { return w.ended(3); }), qPrintable(w.stderrText()));
    const auto answer = w.dumps().answer(3);
    QCOMPARE(answer.message, reason);
    QVERIFY(w.dumps().errors().isEmpty());
    if (reason.isEmpty()) {
        // One rank alone still broadcasts its parameters through the group: recorded.
        QVERIFY(w.dumps().complete(3));
        const QJsonObject dump = QJsonDocument::fromJson(answer.files[u"json"_s]).object();
        QVERIFY(!entries(dump).isEmpty());
        QVERIFY(!answer.files[u"pickle"_s].isEmpty());
    } else {
        QCOMPARE(answer.chunks, 0);
    }
    w.send("stop");
    QVERIFY(w.waitFor([&] { return !w.events(u"finished"_s).isEmpty(); }));
}

QTEST_GUILESS_MAIN(TestWorkerFlightRecorder)
#include "tst_workerflightrecorder.moc"
