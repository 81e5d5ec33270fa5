// SPDX-License-Identifier: GPL-3.0-or-later
// torch's flight recorder of a user's program through rankdeck-supervisor: the environment the
// program gets, dump-flight-recorder answered by real Gloo ranks blocked where they parted
// (barrier against all_reduce, a rank asleep, a subgroup), the files put back together from
// the frdump chunks and read by Python's pickle and torch's own analyser, and the end event's
// reason when there is no dump (off by flag, environment or user, no hook, not initialised,
// the GIL held).
#include "frdumpevents.h"
#include "wire/wireprotocol.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <vector>

using namespace Qt::StringLiterals;
using rankdeck::testing::FrDumpEvents;

namespace {

QString python()
{
    const QString p = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    return p.isEmpty() ? u"python3"_s : p;
}

QString program(const QString &name)
{
    return QStringLiteral(RANKDECK_SUPERVISOR_PROGRAMS "/") + name;
}

// One rank under rankdeck-supervisor: its events (with their line lengths) and log lines.
class Rank
{
public:
    Rank(int rank, int world, int port, const QString &runDir, const QStringList &command,
         const QStringList &options = {}, const QMap<QString, QString> &env = {})
    {
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        pe.insert(u"RANK"_s, QString::number(rank));
        pe.insert(u"WORLD_SIZE"_s, QString::number(world));
        pe.insert(u"LOCAL_RANK"_s, QString::number(rank));
        pe.insert(u"LOCAL_WORLD_SIZE"_s, QString::number(world));
        pe.insert(u"MASTER_ADDR"_s, u"127.0.0.1"_s);
        pe.insert(u"MASTER_PORT"_s, QString::number(port));
        for (const QString &name : {u"TORCH_FR_BUFFER_SIZE"_s, u"TORCH_NCCL_TRACE_BUFFER_SIZE"_s,
                                    u"RANKDECK_FLIGHT_RECORDER"_s})
            pe.remove(name);
        for (auto it = env.begin(); it != env.end(); ++it)
            pe.insert(it.key(), it.value());
        m_process.setProcessEnvironment(pe);
        m_process.setProgram(qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-supervisor"_s);
        m_process.setArguments(QStringList{u"--control-stdin"_s, u"--run-dir"_s, runDir,
                                           u"--stop-grace-ms"_s, u"2000"_s} +
                               options + QStringList{u"--"_s} + command);
        m_process.start();
    }
    ~Rank()
    {
        // The end of stdin stops the supervisor and the program's whole tree (a SIGKILL of the
        // supervisor alone would leave the program running when a check failed).
        if (m_process.state() != QProcess::NotRunning) {
            m_process.closeWriteChannel();
            if (!m_process.waitForFinished(10000)) {
                m_process.kill();
                m_process.waitForFinished(5000);
            }
        }
    }

    void send(const QByteArray &line) { m_process.write(line + '\n'); }
    // Waits until `ready` holds, reading output meanwhile.
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
    bool hasLog(const QString &text) const
    {
        for (const QString &l : m_log)
            if (l.contains(text))
                return true;
        return false;
    }
    QString logStarting(const QString &prefix) const
    {
        for (const QString &l : m_log)
            if (l.startsWith(prefix))
                return l;
        return {};
    }
    QList<QJsonObject> events(const QString &type) const
    {
        QList<QJsonObject> out;
        for (const QJsonObject &e : m_events)
            if (e.value(u"t"_s).toString() == type)
                out << e;
        return out;
    }
    // Events of `type` after the n-th event overall (to count heartbeats within a window).
    int countSince(qsizetype from, const QString &type) const
    {
        int n = 0;
        for (qsizetype i = from; i < m_events.size(); ++i)
            n += m_events[i].value(u"t"_s).toString() == type;
        return n;
    }
    qsizetype eventCount() const { return m_events.size(); }
    qsizetype indexOfEnd(qint64 id) const
    {
        for (qsizetype i = 0; i < m_events.size(); ++i)
            if (m_events[i].value(u"t"_s).toString() == u"frdump"_s &&
                m_events[i].value(u"end"_s).toBool() &&
                m_events[i].value(u"id"_s).toInteger() == id)
                return i;
        return -1;
    }
    const FrDumpEvents &dumps() const { return m_dumps; }
    QString stderrText() const { return QString::fromUtf8(m_stderr); }
    QProcess &process() { return m_process; }

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
            if (!m.valid) {
                m_log << QString::fromUtf8(line);
                continue;
            }
            const QJsonObject e =
                QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                    .object();
            m_events << e;
            m_dumps.add(e, line.size() + 1);
            if (m.markerPos > 0)
                m_log << QString::fromUtf8(line.left(qsizetype(m.markerPos)));
        }
    }

    QProcess m_process;
    QByteArray m_stdout;
    QByteArray m_stderr;
    QList<QJsonObject> m_events;
    QStringList m_log;
    FrDumpEvents m_dumps;
};

// Ranks 0..world-1 of `command`: rank 0 picks the port (its `store` event), the others join.
std::vector<std::unique_ptr<Rank>> startRanks(int world, const QString &runDir,
                                              const QStringList &command)
{
    std::vector<std::unique_ptr<Rank>> ranks;
    ranks.push_back(std::make_unique<Rank>(0, world, 0, runDir, command));
    if (!ranks[0]->waitFor([&] { return !ranks[0]->events(u"store"_s).isEmpty(); }))
        return ranks;
    const int port = ranks[0]->events(u"store"_s).first().value(u"port"_s).toInt();
    for (int r = 1; r < world; ++r)
        ranks.push_back(std::make_unique<Rank>(r, world, port, runDir, command));
    return ranks;
}

// The entries of one process group in torch's JSON dump, by collective sequence number.
QMap<qint64, QJsonObject> entriesOf(const QJsonObject &dump, const QString &group)
{
    QMap<qint64, QJsonObject> out;
    for (const QJsonValue &v : dump.value(u"entries"_s).toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(u"process_group"_s).toArray().at(0).toString() == group)
            out.insert(e.value(u"collective_seq_id"_s).toInteger(), e);
    }
    return out;
}

QString runPython(const QStringList &args, int *exitCode)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(python(), args);
    p.waitForFinished(180000);
    *exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return QString::fromUtf8(p.readAll());
}

} // namespace

class TestSupervisorFlightRecorder : public QObject
{
    Q_OBJECT

private slots:
    void environment_data();
    void environment();
    void reasons_data();
    void reasons();
    void parting_data();
    void parting();
};

// What the program finds in its environment, and whether the hook's thread runs in it.
void TestSupervisorFlightRecorder::environment_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QStringList>("env"); // NAME=VALUE
    QTest::addColumn<QString>("bufferSize");
    QTest::addColumn<QString>("ncclBufferSize");
    QTest::addColumn<bool>("thread");
    QTest::addColumn<bool>("ourPipe");
    QTest::newRow("default") << QStringList() << QStringList() << u"500"_s << QString() << true
                             << true;
    QTest::newRow("user's size kept") << QStringList() << QStringList{u"TORCH_FR_BUFFER_SIZE=64"_s}
                                      << u"64"_s << QString() << true << true;
    QTest::newRow("user's NCCL name kept")
        << QStringList() << QStringList{u"TORCH_NCCL_TRACE_BUFFER_SIZE=80"_s} << QString()
        << u"80"_s << true << true;
    QTest::newRow("user's pipe kept")
        << QStringList() << QStringList{u"TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/tmp/mine-"_s} << u"500"_s
        << QString() << true << false;
    QTest::newRow("--no-flight-recorder") << QStringList{u"--no-flight-recorder"_s} << QStringList()
                                          << u"0"_s << QString() << false << false;
    QTest::newRow("RANKDECK_FLIGHT_RECORDER=0")
        << QStringList() << QStringList{u"RANKDECK_FLIGHT_RECORDER=0"_s} << u"0"_s << QString()
        << false << false;
    QTest::newRow("off by the user") << QStringList() << QStringList{u"TORCH_FR_BUFFER_SIZE=0"_s}
                                     << u"0"_s << QString() << false << false;
}

void TestSupervisorFlightRecorder::environment()
{
    QFETCH(QStringList, options);
    QFETCH(QStringList, env);
    QFETCH(QString, bufferSize);
    QFETCH(QString, ncclBufferSize);
    QFETCH(bool, thread);
    QFETCH(bool, ourPipe);
    QTemporaryDir dir;
    QMap<QString, QString> vars;
    for (const QString &kv : env)
        vars.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
    Rank rank(0, 1, 29999, dir.path(), {python(), program(u"frenv.py"_s)}, options, vars);
    QVERIFY2(rank.waitFor([&] { return !rank.logStarting(u"frenv "_s).isEmpty(); }),
             qPrintable(rank.stderrText()));
    const QJsonObject got =
        QJsonDocument::fromJson(rank.logStarting(u"frenv "_s).mid(6).toUtf8()).object();
    QCOMPARE(got.value(u"TORCH_FR_BUFFER_SIZE"_s).toString(), bufferSize);
    QCOMPARE(got.value(u"TORCH_NCCL_TRACE_BUFFER_SIZE"_s).toString(), ncclBufferSize);
    QCOMPARE(got.value(u"thread"_s).toBool(), thread);
    // The NCCL debug pipe and its dump file go into the run directory unless the user chose.
    const QString pipe = got.value(u"TORCH_NCCL_DEBUG_INFO_PIPE_FILE"_s).toString();
    QCOMPARE(pipe.startsWith(dir.path() + u"/"_s), ourPipe);
    if (ourPipe)
        QCOMPARE(got.value(u"TORCH_FR_DUMP_TEMP_FILE"_s).toString(),
                 dir.path() + u"/nccl-trace-rank"_s);
    // The deprecated names are never set by us: torch would warn on every start.
    QVERIFY(got.value(u"TORCH_NCCL_DEBUG_INFO_TEMP_FILE"_s).isNull());
    QVERIFY2(!rank.stderrText().contains(u"deprecated"_s), qPrintable(rank.stderrText()));
    rank.send("stop");
    QVERIFY(rank.process().waitForFinished(20000));
}

// No dump: exactly one end event for the request's id, no chunk, and the reason.
void TestSupervisorFlightRecorder::reasons_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<qint64>("id");
    QTest::addColumn<QString>("reason");
    const QStringList sleeper{python(), program(u"parting.py"_s), u"none"_s};
    QTest::newRow("--no-flight-recorder")
        << sleeper << QStringList{u"--no-flight-recorder"_s} << QStringList()
        << QByteArray("dump-flight-recorder 7") << qint64(7)
        << u"flight recorder off (--no-flight-recorder)"_s;
    QTest::newRow("RANKDECK_FLIGHT_RECORDER=0, no id")
        << sleeper << QStringList() << QStringList{u"RANKDECK_FLIGHT_RECORDER=0"_s}
        << QByteArray("dump-flight-recorder") << qint64(0)
        << u"flight recorder off (RANKDECK_FLIGHT_RECORDER=0)"_s;
    QTest::newRow("off by the user")
        << sleeper << QStringList() << QStringList{u"TORCH_FR_BUFFER_SIZE=0"_s}
        << QByteArray("dump-flight-recorder 7") << qint64(7)
        << u"flight recorder off: TORCH_FR_BUFFER_SIZE=0 in the program's environment"_s;
    QTest::newRow("not initialised")
        << sleeper << QStringList() << QStringList() << QByteArray("dump-flight-recorder 7")
        << qint64(7) << u"torch.distributed is not initialised in the program"_s;
    QTest::newRow("native program")
        << QStringList{u"/bin/sh"_s, u"-c"_s, u"echo parting 0; exec sleep 60"_s} << QStringList()
        << QStringList() << QByteArray("dump-flight-recorder 12") << qint64(12)
        << u"not a Python program (no RankDeck hook registered)"_s;
    // One rank holding the GIL in native code (ctypes.PyDLL): the hook's thread cannot run.
    QTest::newRow("GIL held") << QStringList{python(), program(u"parting.py"_s), u"gil"_s}
                              << QStringList() << QStringList()
                              << QByteArray("dump-flight-recorder 7") << qint64(7)
                              << u"no answer within 2 s: the program holds the GIL in native "
                                 u"code or is stopped"_s;
}

void TestSupervisorFlightRecorder::reasons()
{
    QFETCH(QStringList, command);
    QFETCH(QStringList, options);
    QFETCH(QStringList, env);
    QFETCH(QByteArray, request);
    QFETCH(qint64, id);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    QMap<QString, QString> vars;
    for (const QString &kv : env)
        vars.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
    Rank rank(0, 1, 0, dir.path(), command, options, vars);
    QVERIFY2(rank.waitFor([&] { return rank.hasLog(u"parting 0"_s); }),
             qPrintable(rank.stderrText()));
    const qsizetype before = rank.eventCount();
    rank.send(request);
    QVERIFY2(rank.waitFor([&] { return rank.indexOfEnd(id) >= 0; }, 30000),
             qPrintable(rank.stderrText()));
    const auto answer = rank.dumps().answer(id);
    QCOMPARE(answer.message, reason);
    QCOMPARE(answer.chunks, 0);
    QVERIFY2(rank.dumps().errors().isEmpty(), qPrintable(rank.dumps().errors().join(u'\n')));
    if (reason.startsWith(u"no answer"_s)) {
        // The supervisor waited without blocking its loop: heartbeats (every 500 ms) went on.
        const int heartbeats = rank.countSince(before, u"heartbeat"_s);
        QVERIFY2(heartbeats >= 2, qPrintable(QString::number(heartbeats)));
    }
    // The program is unharmed: it still runs until stopped.
    QVERIFY(rank.process().state() == QProcess::Running);
    rank.send("stop");
    QVERIFY(rank.process().waitForFinished(20000));
    QCOMPARE(rank.events(u"frdump"_s).size(), 1);
}

// Real Gloo ranks blocked where they parted answer with torch's JSON and pickle: the JSON shows
// each rank's collective at the parting sequence number, the pickles go through torch's
// analyser, which names the mismatch or the missing rank.
void TestSupervisorFlightRecorder::parting_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("world");
    QTest::addColumn<QString>("group");
    QTest::addColumn<QStringList>("ops");    // per rank, the last op of `group` ("" none)
    QTest::addColumn<QList<qint64>>("seqs"); // per rank, its sequence number
    QTest::addColumn<QString>("ranks");      // `group`'s ranks in pg_config
    QTest::addColumn<QString>("analyser");   // what torch's fr_trace says
    QTest::newRow("barrier vs all_reduce")
        << u"barrier"_s << 2 << u"0"_s << QStringList{u"gloo:barrier"_s, u"gloo:all_reduce"_s}
        << QList<qint64>{4, 4} << u"[0, 1]"_s
        << u"Expected collective type: 'barrier' does not match found collective type: "
           u"'all_reduce'"_s;
    QTest::newRow("a rank asleep")
        << u"sleep"_s << 2 << u"0"_s << QStringList{u"gloo:all_reduce"_s, u"gloo:all_reduce"_s}
        << QList<qint64>{4, 3} << u"[0, 1]"_s << u"missing ranks: {1}"_s;
    QTest::newRow("subgroup of 3")
        << u"subgroup"_s << 3 << u"1"_s
        << QStringList{u"gloo:all_reduce"_s, u"gloo:barrier"_s, QString()} << QList<qint64>{1, 1, 0}
        << u"[0, 1]"_s
        << u"Expected collective type: 'all_reduce' does not match found collective type: "
           u"'barrier'"_s;
}

void TestSupervisorFlightRecorder::parting()
{
    QFETCH(QString, mode);
    QFETCH(int, world);
    QFETCH(QString, group);
    QFETCH(QStringList, ops);
    QFETCH(QList<qint64>, seqs);
    QFETCH(QString, ranks);
    QFETCH(QString, analyser);
    QTemporaryDir dir;
    auto all = startRanks(world, dir.path(), {python(), program(u"parting.py"_s), mode});
    QCOMPARE(int(all.size()), world);
    for (auto &r : all)
        QVERIFY2(r->waitFor([&] { return r->hasLog(u"parting "_s); }, 180000),
                 qPrintable(r->stderrText()));

    // "parting" is printed just before the parting call: the first request may come before
    // that call is recorded, so ask again (ids 8, 9, …) until every rank shows it.
    qint64 id = 7;
    QList<QJsonObject> dumps;
    for (;; ++id) {
        dumps.clear();
        for (auto &r : all)
            r->send("dump-flight-recorder " + QByteArray::number(id));
        for (auto &r : all) {
            QVERIFY2(r->waitFor([&] { return r->indexOfEnd(id) >= 0; }, 30000),
                     qPrintable(r->stderrText()));
            QVERIFY2(r->dumps().errors().isEmpty(), qPrintable(r->dumps().errors().join(u'\n')));
            const auto answer = r->dumps().answer(id);
            QVERIFY2(answer.message.isEmpty(), qPrintable(answer.message));
            QVERIFY(r->dumps().complete(id));
            QVERIFY(answer.files.contains(u"json"_s) && answer.files.contains(u"pickle"_s));
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(answer.files[u"json"_s], &error);
            QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
            dumps << doc.object();
        }
        bool recorded = true;
        for (int r = 0; r < world; ++r)
            if (!ops[r].isEmpty() && !entriesOf(dumps[r], group).contains(seqs[r]))
                recorded = false;
        if (recorded)
            break;
        QVERIFY2(id < 30, "the parting collective was never recorded");
        QTest::qWait(200);
    }
    for (int r = 0; r < world; ++r) {
        const auto entries = entriesOf(dumps[r], group);
        if (ops[r].isEmpty()) {
            QVERIFY(entries.isEmpty());
            continue;
        }
        // The parting collective is the rank's last in that group, at the expected number.
        QCOMPARE(entries.lastKey(), seqs[r]);
        QCOMPARE(entries.last().value(u"profiling_name"_s).toString(), ops[r]);
        if (ops[r] == u"gloo:all_reduce"_s)
            QCOMPARE(entries.last().value(u"input_sizes"_s).toArray().at(0).toArray().at(0).toInt(),
                     21);
        const QJsonObject status =
            dumps[r].value(u"pg_status"_s).toObject().value(group).toObject();
        QCOMPARE(status.value(u"last_enqueued_collective"_s).toString(), QString::number(seqs[r]));
        // pg_config names every group with its ranks (Gloo leaves it empty, the hook fills it).
        const QJsonObject config = dumps[r].value(u"pg_config"_s).toObject();
        QCOMPARE(config.value(group).toObject().value(u"ranks"_s).toString(), ranks);
        QVERIFY(!config.contains(QString()));
    }

    // The pickles: Python's pickle reads them, torch's analyser finds where the ranks parted.
    QTemporaryDir pickles;
    for (int r = 0; r < world; ++r) {
        QFile f(pickles.filePath(u"rank_%1"_s.arg(r)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(all[r]->dumps().answer(id).files[u"pickle"_s]);
    }
    int code = 0;
    const QString loaded =
        runPython({u"-c"_s,
                   u"import pickle,sys,glob\n"
                   u"for p in sorted(glob.glob(sys.argv[1] + '/rank_*')):\n"
                   u"    d = pickle.load(open(p, 'rb'))\n"
                   u"    print(p[-6:], len(d['entries']), sorted(d['pg_config']))\n"_s,
                   pickles.path()},
                  &code);
    QVERIFY2(code == 0, qPrintable(loaded));
    QVERIFY2(loaded.contains(u"rank_0"_s), qPrintable(loaded));
    const QString report = runPython({u"-m"_s, u"torch.distributed.flight_recorder.fr_trace"_s,
                                      pickles.path(), u"--prefix"_s, u"rank_"_s},
                                     &code);
    QVERIFY2(code == 0, qPrintable(report));
    QVERIFY2(report.contains(analyser), qPrintable(report));
    for (auto &r : all)
        r->send("stop");
    for (auto &r : all)
        QVERIFY(r->process().waitForFinished(30000));
    // What the hooks wrote in the run directory is gone with the program.
    QVERIFY2(QDir(dir.path()).entryList({u"fr-*"_s}, QDir::Files | QDir::System).isEmpty(),
             qPrintable(QDir(dir.path()).entryList().join(u' ')));
}

QTEST_GUILESS_MAIN(TestSupervisorFlightRecorder)
#include "tst_supervisorflightrecorder.moc"
