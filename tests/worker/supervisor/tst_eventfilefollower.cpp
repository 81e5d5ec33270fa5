// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for the follower end to end,
// case by case.
//
// The TensorBoard follower end to end on real files: the supervisor's EventFileFollower reads
// event files in a directory as a program writes them, its `tfevents` lines go through the wire
// parser and the launcher's TensorBoardScalars, and what comes out are the points written. A
// record cut anywhere waits for its rest; a file and a directory that appear late are found;
// several files per rank, add_scalars' sub-directories, files of other ranks, hosts and earlier
// runs; a garbage file and a damaged one are named once while the good ones go on; a file that
// shrinks; real SummaryWriter files (tests/core/stream/data). The walk of the working directory:
// Lightning's tb_logs/… found, hidden directories, environments and what lies too deep not, a
// file seen by both ways followed once, and what a walk of a big tree costs.
#include "supervisor/eventfilefollower.h"

#include "stream/tensorboardscalars.h"
#include "stream/workerevent.h"
#include "tensorboard/tfrecord.h"
#include "wire/wireprotocol.h"

#include <tensorboard.pb.h>

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>

using namespace rankdeck;
using rankdeck::supervisor::EventFileFollower;
using Point = TensorBoardScalars::Point;

namespace {

constexpr int kRank = 3;
constexpr pid_t kOurPid = 4242;
constexpr pid_t kOtherRankPid = 4343;
const std::string kHost = "node-7.cluster";

QByteArray scalarRecord(const QString &tag, qint64 step, float value, double wallTime = 1.5e9)
{
    ::tensorboard::Event e;
    e.set_wall_time(wallTime);
    e.set_step(step);
    ::tensorboard::Summary::Value *v = e.mutable_summary()->add_value();
    v->set_tag(tag.toStdString());
    v->set_simple_value(value);
    std::string bytes;
    e.SerializeToString(&bytes);
    return rankdeck::tensorboard::TfRecord::frame(
        QByteArray(bytes.data(), qsizetype(bytes.size())));
}

QByteArray versionRecord()
{
    ::tensorboard::Event e;
    e.set_wall_time(1.5e9);
    e.set_file_version("brain.Event:2");
    std::string bytes;
    e.SerializeToString(&bytes);
    return rankdeck::tensorboard::TfRecord::frame(
        QByteArray(bytes.data(), qsizetype(bytes.size())));
}

// The launcher names the event files' curves "tb/<tag>", apart from printed ones.
Point point(const QString &tag, qint64 step, float value)
{
    return Point{QStringLiteral("tb/") + tag, step, qint64(1.5e15), double(value), tag};
}

} // namespace

class TestEventFileFollower : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    QString m_dir;
    std::int64_t m_start = 0;
    std::unique_ptr<EventFileFollower> m_follower;
    std::set<pid_t> m_pids{kOurPid};
    std::vector<std::string> m_lines;
    QStringList m_notes;
    TensorBoardScalars m_scalars;
    QList<Point> m_points;
    QStringList m_problems;
    std::size_t m_longestLine = 0;

    QString fileName(pid_t pid = kOurPid, int n = 0, std::int64_t time = 0,
                     const std::string &host = kHost) const
    {
        return QStringLiteral("events.out.tfevents.%1.%2.%3.%4")
            .arg(time ? time : m_start)
            .arg(QString::fromStdString(host))
            .arg(pid)
            .arg(n);
    }

    static void append(const QString &path, const QByteArray &bytes)
    {
        QDir().mkpath(QFileInfo(path).path());
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Append));
        QCOMPARE(f.write(bytes), bytes.size());
    }

    // One poll of the supervisor's loop, its lines through the launcher's side.
    std::size_t pump(bool drain = false)
    {
        m_lines.clear();
        const std::size_t bytes = drain ? m_follower->drain() : m_follower->poll();
        for (const std::string &line : m_lines) {
            m_longestLine = std::max(m_longestLine, line.size());
            std::string_view text = line;
            if (!text.empty() && text.back() == '\n')
                text.remove_suffix(1);
            const wire::WireEventMatch m = wire::findWireEvent(text);
            if (!m.valid)
                qFatal("the follower wrote a line that is no valid event: %s", line.c_str());
            const std::optional<WorkerEvent> e =
                WorkerEvent::fromJson(QByteArrayView(m.json.data(), qsizetype(m.json.size())));
            if (!e || e->type() != WorkerEvent::Type::TfEvents || e->rank() != kRank)
                qFatal("not a tfevents event of rank %d: %s", kRank, line.c_str());
            TensorBoardScalars::Output out;
            m_scalars.feed(kRank, *e, out);
            m_points += out.points;
            m_problems += out.problems;
        }
        return bytes;
    }

    // Polls (as the supervisor's loop does, here every 5 ms) until the follower walked the
    // working directory `walks` more times: a walk waits 100× the duration of the last one.
    void pumpUntilWalked(std::size_t walks)
    {
        const std::size_t until = m_follower->walks() + walks;
        QElapsedTimer t;
        t.start();
        while (m_follower->walks() < until && t.elapsed() < 60000) {
            pump();
            QTest::qWait(5);
        }
        QVERIFY(m_follower->walks() >= until);
    }

    QStringList finish()
    {
        TensorBoardScalars::Output out;
        m_scalars.finish(kRank, out);
        m_points += out.points;
        return out.problems;
    }

private slots:
    void init()
    {
        QVERIFY(m_tmp.isValid());
        m_dir =
            m_tmp.filePath(QStringLiteral("case-%1").arg(QRandomGenerator::global()->generate()));
        m_start = QDateTime::currentSecsSinceEpoch();
        m_lines.clear();
        m_notes.clear();
        m_points.clear();
        m_problems.clear();
        m_scalars = TensorBoardScalars();
        m_longestLine = 0;
        makeFollower(m_dir, QString());
    }

    // directory: the followed one; workDirectory: the walked one (empty: none).
    void makeFollower(const QString &directory, const QString &workDirectory)
    {
        EventFileFollower::Options o;
        o.directory = directory.toStdString();
        o.workDirectory = workDirectory.toStdString();
        o.host = kHost;
        o.rank = kRank;
        o.startSec = m_start;
        m_follower = std::make_unique<EventFileFollower>(
            o, [this](pid_t pid) { return m_pids.count(pid) > 0; },
            [this](const std::string &line) { m_lines.push_back(line); },
            [this](const std::string &note) { m_notes << QString::fromStdString(note); });
    }

    // A record cut at any byte (SummaryWriter's buffer flushes anywhere) waits for its rest.
    void halfWrittenRecordWaits_data()
    {
        QTest::addColumn<int>("cut");
        const int size = int(scalarRecord(QStringLiteral("loss"), 1, 0.25f).size());
        for (int cut : {1, 7, 11, 12, 13, size / 2, size - 4, size - 1})
            QTest::newRow(qPrintable(QStringLiteral("cut at %1 of %2").arg(cut).arg(size))) << cut;
    }
    void halfWrittenRecordWaits()
    {
        QFETCH(int, cut);
        const QString path = m_dir + u'/' + fileName();
        const QByteArray second = scalarRecord(QStringLiteral("loss"), 1, 0.25f);
        append(path,
               versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 0.5f) + second.left(cut));
        pump();
        QCOMPARE(m_points, (QList<Point>{point(QStringLiteral("loss"), 0, 0.5f)}));
        pump(); // nothing new: nothing sent, nothing made up
        QCOMPARE(m_lines.size(), size_t(0));
        append(path, second.mid(cut));
        pump();
        QCOMPARE(m_points, (QList<Point>{point(QStringLiteral("loss"), 0, 0.5f),
                                         point(QStringLiteral("loss"), 1, 0.25f)}));
        QVERIFY2(m_problems.isEmpty(), qPrintable(m_problems.join(u'\n')));
        QVERIFY(finish().isEmpty());
    }

    // The directory is made after the program started, the files later still, in
    // SummaryWriter's own layout: runs/<date>_<host>/ and add_scalars' runs/…/<tag>_<sub>/.
    void lateDirectoryAndSeveralFiles()
    {
        QCOMPARE(pump(), size_t(0));
        QCOMPARE(m_follower->fileCount(), size_t(0));
        const QString run = m_dir + QStringLiteral("/Dec01_17-20-00_node-7");
        append(run + u'/' + fileName(kOurPid, 0), versionRecord());
        pump();
        QCOMPARE(m_follower->fileCount(), size_t(1));
        append(run + u'/' + fileName(kOurPid, 0), scalarRecord(QStringLiteral("loss"), 0, 2.0f));
        append(run + QStringLiteral("/grad_norm/") + fileName(kOurPid, 1),
               versionRecord() + scalarRecord(QStringLiteral("grad"), 0, 3.0f));
        pump();
        QCOMPARE(m_follower->fileCount(), size_t(2));
        // A second writer of the same process, later (e.g. after a resume).
        append(run + u'/' + fileName(kOurPid, 2), scalarRecord(QStringLiteral("loss"), 1, 1.0f));
        append(run + u'/' + fileName(kOurPid, 0), scalarRecord(QStringLiteral("acc"), 0, 0.75f));
        pump();
        QCOMPARE(m_follower->fileCount(), size_t(3));
        QList<Point> sorted = m_points;
        std::sort(sorted.begin(), sorted.end(), [](const Point &a, const Point &b) {
            return std::tie(a.name, a.step) < std::tie(b.name, b.step);
        });
        QCOMPARE(sorted, (QList<Point>{point(QStringLiteral("acc"), 0, 0.75f),
                                       point(QStringLiteral("grad/norm"), 0, 3.0f),
                                       point(QStringLiteral("loss"), 0, 2.0f),
                                       point(QStringLiteral("loss"), 1, 1.0f)}));
        QVERIFY(m_problems.isEmpty());
    }

    // Every rank may write into the same directory: only this rank's program's files count.
    void otherRanksFilesAreNotThisRanks_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("another rank's pid") << fileName(kOtherRankPid);
        QTest::newRow("another host") << fileName(kOurPid, 0, 0, "node-8.cluster");
        QTest::newRow("host is a prefix") << fileName(kOurPid, 0, 0, "node-7");
        QTest::newRow("an earlier run") << fileName(kOurPid, 0, 1700000000);
        QTest::newRow("no pid") << QStringLiteral("events.out.tfevents.%1.node-7.cluster")
                                       .arg(QDateTime::currentSecsSinceEpoch());
        QTest::newRow("not an event file") << QStringLiteral("events.out.json");
    }
    void otherRanksFilesAreNotThisRanks()
    {
        QFETCH(QString, name);
        append(m_dir + u'/' + name, versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 9));
        append(m_dir + u'/' + fileName(),
               versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 1));
        pump();
        QCOMPARE(m_follower->fileCount(), size_t(1));
        QCOMPARE(m_points, (QList<Point>{point(QStringLiteral("loss"), 0, 1)}));
    }

    // Garbage under an event file's name, and a file damaged in the middle: each named once,
    // nothing made up, the good file and the good records still read.
    void garbageAndDamagedFiles()
    {
        QByteArray garbage(5000, '\0');
        for (char &c : garbage)
            c = char(QRandomGenerator::global()->generate());
        const QString bad = m_dir + u'/' + fileName(kOurPid, 1);
        const QString damaged = m_dir + u'/' + fileName(kOurPid, 2);
        const QString good = m_dir + u'/' + fileName(kOurPid, 3);
        append(bad, garbage);
        QByteArray broken = scalarRecord(QStringLiteral("acc"), 0, 0.5f);
        broken[broken.size() - 6] = char(broken[broken.size() - 6] ^ 0x10); // in the data
        append(damaged, versionRecord() + broken + scalarRecord(QStringLiteral("acc"), 1, 0.6f));
        append(good, versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 1));
        pump();
        append(bad, garbage);
        append(good, scalarRecord(QStringLiteral("loss"), 1, 2));
        pump();
        QCOMPARE(m_problems.size(), 2);
        QVERIFY2(m_problems.filter(m_dir + u'/' + fileName(kOurPid, 1)).size() == 1,
                 qPrintable(m_problems.join(u'\n')));
        QVERIFY2(m_problems.filter(fileName(kOurPid, 2)).size() == 1,
                 qPrintable(m_problems.join(u'\n')));
        for (const QString &p : std::as_const(m_problems))
            QVERIFY2(p.startsWith(u"rank 3: TensorBoard event file ") && p.contains(u"damaged"),
                     qPrintable(p));
        QList<Point> sorted = m_points;
        std::sort(sorted.begin(), sorted.end(), [](const Point &a, const Point &b) {
            return std::tie(a.name, a.step) < std::tie(b.name, b.step);
        });
        QCOMPARE(sorted, (QList<Point>{point(QStringLiteral("acc"), 1, 0.6f),
                                       point(QStringLiteral("loss"), 0, 1),
                                       point(QStringLiteral("loss"), 1, 2)}));
    }

    // The program died in the middle of a record: said once, at the rank's end.
    void endsInHalfARecord()
    {
        const QString path = m_dir + u'/' + fileName();
        append(path, versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 1).left(20));
        pump(true);
        const QStringList problems = finish();
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems.first().contains(fileName()) &&
                     problems.first().contains(u"half-written record (20 bytes)"),
                 qPrintable(problems.first()));
        QVERIFY(finish().isEmpty());
    }

    // A file cut back (truncated by hand, rewritten): followed from its new end, said once.
    void shrunkFile()
    {
        const QString path = m_dir + u'/' + fileName();
        append(path, versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 1) +
                         scalarRecord(QStringLiteral("loss"), 1, 2));
        pump();
        QFile f(path);
        QVERIFY(f.resize(0));
        pump();
        QCOMPARE(m_problems.size(), 1);
        QVERIFY2(m_problems.first().contains(u"shrank to 0 bytes"), qPrintable(m_problems.first()));
        append(path, versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 5));
        pump();
        QCOMPARE(m_points, (QList<Point>{point(QStringLiteral("loss"), 0, 1),
                                         point(QStringLiteral("loss"), 1, 2),
                                         point(QStringLiteral("loss"), 0, 5)}));
        QCOMPARE(m_problems.size(), 1);
    }

    // A big file goes in bounded chunks (each line atomic on a pipe), over several polls, and
    // every record arrives.
    void boundedChunks()
    {
        const QString path = m_dir + u'/' + fileName();
        QByteArray bytes = versionRecord();
        const int records = 12000;
        for (int i = 0; i < records; ++i)
            bytes += scalarRecord(QStringLiteral("loss"), i, float(i) / 8);
        append(path, bytes);
        QVERIFY(bytes.size() > qsizetype(EventFileFollower::kMaxBytesPerPoll));
        QCOMPARE(pump(), EventFileFollower::kMaxBytesPerPoll);
        int polls = 1;
        while (pump() > 0)
            ++polls;
        QCOMPARE(polls, int((bytes.size() + EventFileFollower::kMaxBytesPerPoll - 1) /
                            EventFileFollower::kMaxBytesPerPoll));
        QVERIFY2(m_longestLine < 4096, qPrintable(QString::number(m_longestLine)));
        QCOMPARE(m_points.size(), records);
        for (int i = 0; i < records; ++i)
            QCOMPARE(m_points[i], point(QStringLiteral("loss"), i, float(i) / 8));
    }

    // What torch's SummaryWriter really wrote (see tests/core/stream/data/README.md).
    void realSummaryWriterFiles()
    {
        const QString data = qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                             QStringLiteral("/tests/core/stream/data/");
        QFile scalars(data + QStringLiteral("summarywriter-scalars.tfevents"));
        QFile grad(data + QStringLiteral("summarywriter-add-scalars.tfevents"));
        QVERIFY(scalars.open(QIODevice::ReadOnly) && grad.open(QIODevice::ReadOnly));
        const QByteArray a = scalars.readAll();
        const QByteArray b = grad.readAll();
        // Written in two halves each, as a writer's flushes would.
        append(m_dir + u'/' + fileName(kOurPid, 0), a.left(100));
        append(m_dir + QStringLiteral("/grad_norm/") + fileName(kOurPid, 1), b.left(77));
        pump();
        append(m_dir + u'/' + fileName(kOurPid, 0), a.mid(100));
        append(m_dir + QStringLiteral("/grad_norm/") + fileName(kOurPid, 1), b.mid(77));
        pump();
        QVERIFY(m_problems.isEmpty());
        QHash<QString, QList<double>> values;
        for (const Point &p : std::as_const(m_points)) {
            QCOMPARE(p.step, qint64(values[p.name].size()));
            QVERIFY(p.wallTimeUs > qint64(1.7e15));
            values[p.name].append(p.value);
        }
        QCOMPARE(values.value(QStringLiteral("tb/loss")),
                 (QList<double>{3.1822540760040283, 7.35990047454834, 2.9963200092315674}));
        QCOMPARE(values.value(QStringLiteral("tb/acc")),
                 (QList<double>{0.23910550773143768, 0.11961864680051804, 0.25023022294044495}));
        QCOMPARE(values.value(QStringLiteral("tb/grad/norm")),
                 (QList<double>{2.8350000381469727, 7.25061559677124, 3.47072696685791}));
        QCOMPARE(values.size(), 3);
    }

    void directoryFor_data()
    {
        QTest::addColumn<QStringList>("command");
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("expected");
        const QStringList py{QStringLiteral("python"), QStringLiteral("train.py")};
        QTest::newRow("default") << py << QString() << QStringLiteral("runs");
        QTest::newRow("--logdir DIR")
            << py + QStringList{QStringLiteral("--logdir"), QStringLiteral("tb")} << QString()
            << QStringLiteral("tb");
        QTest::newRow("--log_dir=DIR") << py + QStringList{QStringLiteral("--log_dir=/abs/tb")}
                                       << QString() << QStringLiteral("/abs/tb");
        QTest::newRow("--log-dir, last wins")
            << py + QStringList{QStringLiteral("--log-dir"), QStringLiteral("a"),
                                QStringLiteral("--logdir=b")}
            << QString() << QStringLiteral("b");
        QTest::newRow("the option wins")
            << py + QStringList{QStringLiteral("--logdir"), QStringLiteral("tb")}
            << QStringLiteral("mine") << QStringLiteral("mine");
        QTest::newRow("a value, not a flag")
            << QStringList{QStringLiteral("--logdir"), QStringLiteral("x")} << QString()
            << QStringLiteral("runs");
        QTest::newRow("flag without value")
            << py + QStringList{QStringLiteral("--logdir")} << QString() << QStringLiteral("runs");
        QTest::newRow("--logdirs is another flag")
            << py + QStringList{QStringLiteral("--logdirs=x")} << QString()
            << QStringLiteral("runs");
    }
    void directoryFor()
    {
        QFETCH(QStringList, command);
        QFETCH(QString, option);
        QFETCH(QString, expected);
        std::vector<std::string> c;
        for (const QString &w : command)
            c.push_back(w.toStdString());
        QCOMPARE(QString::fromStdString(EventFileFollower::directoryFor(c, option.toStdString())),
                 expected);
    }

    // Scalars in the other forms writers use: a scalar tensor (SummaryWriter's new_style,
    // TensorFlow 2), of each number type, in its repeated field or as raw content; a tensor of
    // another plugin or with more than one number is no curve.
    void tensorScalars_data()
    {
        QTest::addColumn<QByteArray>("plugin");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QList<float>>("floats");
        QTest::addColumn<QList<qint64>>("int64s");
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<bool>("isCurve");
        QTest::addColumn<double>("value");
        const double tenth = 0.1;
        const QByteArray tenthBytes(reinterpret_cast<const char *>(&tenth), 8);
        QTest::newRow("float, scalars plugin")
            << QByteArray("scalars") << int(::tensorboard::DT_FLOAT) << QList<float>{1.5f}
            << QList<qint64>{} << QByteArray() << true << 1.5;
        QTest::newRow("double content")
            << QByteArray() << int(::tensorboard::DT_DOUBLE) << QList<float>{} << QList<qint64>{}
            << tenthBytes << true << 0.1;
        QTest::newRow("int64") << QByteArray() << int(::tensorboard::DT_INT64) << QList<float>{}
                               << QList<qint64>{7} << QByteArray() << true << 7.0;
        QTest::newRow("text plugin")
            << QByteArray("text") << int(::tensorboard::DT_FLOAT) << QList<float>{9.0f}
            << QList<qint64>{} << QByteArray() << false << 0.0;
        QTest::newRow("two numbers")
            << QByteArray() << int(::tensorboard::DT_FLOAT) << QList<float>{1.0f, 2.0f}
            << QList<qint64>{} << QByteArray() << false << 0.0;
        QTest::newRow("content of the wrong size")
            << QByteArray() << int(::tensorboard::DT_DOUBLE) << QList<float>{} << QList<qint64>{}
            << tenthBytes.left(4) << false << 0.0;
    }
    void tensorScalars()
    {
        QFETCH(QByteArray, plugin);
        QFETCH(int, dtype);
        QFETCH(QList<float>, floats);
        QFETCH(QList<qint64>, int64s);
        QFETCH(QByteArray, content);
        QFETCH(bool, isCurve);
        QFETCH(double, value);
        ::tensorboard::Event e;
        e.set_step(4);
        e.set_wall_time(2.0);
        ::tensorboard::Summary::Value *v = e.mutable_summary()->add_value();
        v->set_tag("t");
        if (!plugin.isEmpty())
            v->mutable_metadata()->mutable_plugin_data()->set_plugin_name(plugin.toStdString());
        ::tensorboard::TensorProto *t = v->mutable_tensor();
        t->set_dtype(::tensorboard::DataType(dtype));
        for (float f : floats)
            t->add_float_val(f);
        for (qint64 i : int64s)
            t->add_int64_val(i);
        t->set_tensor_content(content.toStdString());
        std::string bytes;
        e.SerializeToString(&bytes);
        QList<Point> points;
        QVERIFY(TensorBoardScalars::decode(QByteArray(bytes.data(), qsizetype(bytes.size())),
                                           QStringLiteral("runs/events.out.tfevents.1.h.2.0"),
                                           &points));
        if (isCurve)
            QCOMPARE(points, (QList<Point>{Point{QStringLiteral("tb/t"), 4, 2000000, value,
                                                 QStringLiteral("t")}}));
        else
            QVERIFY(points.isEmpty());
        // Not an Event at all.
        QVERIFY(!TensorBoardScalars::decode(QByteArray("\xff\xff\xff"), QString(), &points));
    }

    // Where frameworks put their logs in the working directory, beside `runs/`: found by the
    // walk, this rank's files only; what is hidden, in an environment or too deep is not.
    void walkFindsFrameworkLogs_data()
    {
        QTest::addColumn<QString>("where");
        QTest::addColumn<bool>("found");
        QTest::newRow("Lightning tb_logs") << "tb_logs/lightning_logs/version_0" << true;
        QTest::newRow("Lightning default") << "lightning_logs/version_3" << true;
        QTest::newRow("Transformers") << "out/runs/Dec02_02-18-30_node-7" << true;
        QTest::newRow("the working directory") << "" << true;
        QTest::newRow("5 levels down") << "a/b/c/d/e" << true;
        QTest::newRow("6 levels down") << "a/b/c/d/e/f" << false;
        QTest::newRow("hidden") << ".cache/tb" << false;
        QTest::newRow("pycache") << "__pycache__" << false;
        QTest::newRow("a virtual environment") << "venv/logs" << false;
    }
    void walkFindsFrameworkLogs()
    {
        QFETCH(QString, where);
        QFETCH(bool, found);
        QDir().mkpath(m_dir);
        QFile cfg(m_dir + QStringLiteral("/venv/pyvenv.cfg"));
        QVERIFY(QDir().mkpath(m_dir + QStringLiteral("/venv")) && cfg.open(QIODevice::WriteOnly));
        cfg.close();
        // Followed: runs/ (absent here); walked: the working directory.
        makeFollower(m_dir + QStringLiteral("/runs"), m_dir);
        pump();
        const QString dir = where.isEmpty() ? m_dir : m_dir + u'/' + where;
        append(dir + u'/' + fileName(kOtherRankPid, 0),
               versionRecord() + scalarRecord(QStringLiteral("train_loss"), 9, 7.0f));
        append(dir + u'/' + fileName(kOurPid, 0),
               versionRecord() + scalarRecord(QStringLiteral("train_loss"), 4, 0.5f));
        pumpUntilWalked(2);
        QCOMPARE(m_follower->fileCount(), size_t(found ? 1 : 0));
        QCOMPARE(m_points, found ? QList<Point>{point(QStringLiteral("train_loss"), 4, 0.5f)}
                                 : QList<Point>{});
    }

    // --tensorboard-dir inside the working directory: the file is seen both ways, followed once.
    void walkAndFollowedDirectoryShareFiles()
    {
        const QString runs = m_dir + QStringLiteral("/runs");
        QDir().mkpath(runs);
        // The same directory under another name, as a path the walk would give it.
        makeFollower(m_dir + QStringLiteral("/./runs/"), m_dir);
        append(runs + QStringLiteral("/Dec02/") + fileName(),
               versionRecord() + scalarRecord(QStringLiteral("loss"), 0, 1.0f));
        pumpUntilWalked(2);
        pump(true);
        QCOMPARE(m_follower->fileCount(), size_t(1));
        QCOMPARE(m_points, (QList<Point>{point(QStringLiteral("loss"), 0, 1.0f)}));
        // Symbolic links are not walked into: a second path of the same tree.
        QVERIFY(QFile::link(runs, m_dir + QStringLiteral("/runs-link")));
        append(runs + QStringLiteral("/Dec02/") + fileName(kOurPid, 1),
               versionRecord() + scalarRecord(QStringLiteral("loss"), 1, 0.5f));
        pumpUntilWalked(2);
        pump(true);
        QCOMPARE(m_follower->fileCount(), size_t(2));
        QCOMPARE(m_points.size(), 2);
    }

    // A working directory far bigger than the walk's bounds (a home directory, a dataset
    // unpacked beside the script): each walk stops at its bounds, a steady tree is not read
    // again, walks space out by their cost, and a log directory near the top is still found.
    // The numbers are printed for docs/benchmarks.md; what is asserted are counts, not times.
    void walkBigTree()
    {
        // 18 + 18² + 18³ = 6,174 directories within 3 levels (half again the walk's bound), 5
        // files in each last-level one under the first.
        const int fan = 18;
        QElapsedTimer made;
        made.start();
        for (int a = 0; a < fan; ++a) {
            for (int b = 0; b < fan; ++b) {
                for (int c = 0; c < fan; ++c) {
                    const QString d =
                        m_dir + QStringLiteral("/data/d%1/d%2/d%3").arg(a).arg(b).arg(c);
                    QVERIFY(QDir().mkpath(d));
                    if (a == 0) {
                        for (int f = 0; f < 5; ++f) {
                            QFile file(d + QStringLiteral("/sample%1.bin").arg(f));
                            QVERIFY(file.open(QIODevice::WriteOnly));
                        }
                    }
                }
            }
        }
        qInfo("made the tree in %lld ms", qint64(made.elapsed()));
        const QString logs = m_dir + QStringLiteral("/tb_logs/lightning_logs/version_0");
        append(logs + u'/' + fileName(),
               versionRecord() + scalarRecord(QStringLiteral("train_loss"), 4, 0.5f));
        makeFollower(m_dir + QStringLiteral("/runs"), m_dir);
        QElapsedTimer t;
        t.start();
        pumpUntilWalked(1); // in slices of 50 ms at most, 100× their time apart
        const qint64 firstWalkUs = t.nsecsElapsed() / 1000;
        const EventFileFollower::WalkStats first = m_follower->lastWalk();
        qInfo("first walk: %zu directories, %zu read, %zu entries, %lld us of walking over "
              "%lld us",
              first.directories, first.read, first.entries, qint64(first.microseconds),
              firstWalkUs);
        QVERIFY(first.cut);
        QCOMPARE(first.directories, EventFileFollower::kWalkDirectories);
        QVERIFY(first.entries <= EventFileFollower::kWalkEntries + 1);
        QCOMPARE(m_follower->fileCount(), size_t(1)); // breadth first: tb_logs is near the top
        QCOMPARE(m_points, (QList<Point>{point(QStringLiteral("train_loss"), 4, 0.5f)}));
        QCOMPARE(m_notes.size(), 1);
        QVERIFY2(m_notes[0].contains(QStringLiteral("--tensorboard-dir")), qPrintable(m_notes[0]));
        // Later walks, nothing changed: directories are looked at, not read again (those older
        // than the 2 s a coarse clock could hide a change in), and each slice of a walk waits
        // 100× its own duration: walking takes about 1% of the time (2% and one slice allowed).
        QElapsedTimer window;
        window.start();
        std::size_t seen = m_follower->walks();
        qint64 lastWalkAt = 0;
        std::int64_t walking = 0;
        int steady = 0;
        while (steady < 3 && window.elapsed() < 120000) {
            pump();
            if (m_follower->walks() != seen) {
                seen = m_follower->walks();
                const EventFileFollower::WalkStats w = m_follower->lastWalk();
                const qint64 at = window.nsecsElapsed() / 1000;
                qInfo("walk %zu after %lld us: %zu directories, %zu read, %zu entries, %lld us",
                      seen, at - lastWalkAt, w.directories, w.read, w.entries,
                      qint64(w.microseconds));
                walking += w.microseconds;
                QVERIFY2(walking <= at / 50 + EventFileFollower::kWalkSliceUs,
                         qPrintable(QStringLiteral("%1 us walking in %2 us").arg(walking).arg(at)));
                QCOMPARE(w.directories, EventFileFollower::kWalkDirectories);
                if (w.read == 0)
                    ++steady;
                lastWalkAt = at;
            }
            QTest::qWait(10);
        }
        QCOMPARE(steady, 3);
        QCOMPARE(m_notes.size(), 1); // named once
    }
};

QTEST_GUILESS_MAIN(TestEventFileFollower)
#include "tst_eventfilefollower.moc"
