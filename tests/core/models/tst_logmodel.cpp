// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/logmodel.h"
#include "store/logstore.h"
#include "stream/rankstream.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <thread>

using namespace rankdeck;

namespace {

void feed(LogStore &store, int rank, StreamKind stream, int from, int count)
{
    RankStream s(rank);
    QByteArray chunk;
    for (int i = from; i < from + count; ++i)
        chunk += "r" + QByteArray::number(rank) + " line " + QByteArray::number(i) + '\n';
    store.append(s.feed(stream, chunk).lines);
}

QString text(const LogModel &m, int row)
{
    return m.data(m.index(row), Qt::DisplayRole).toString();
}

struct Chunk
{
    StreamKind stream;
    QByteArray bytes;
};

// A program's real output as read from its pipes (tests/core/stream/data/progress).
QList<Chunk> captured(const QString &name)
{
    QFile f(qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
            QStringLiteral("/tests/core/stream/data/progress/") + name + QStringLiteral(".chunks"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    const QByteArray all = f.readAll();
    QList<Chunk> chunks;
    for (qsizetype at = 0; at < all.size();) {
        const qsizetype nl = all.indexOf('\n', at);
        const qsizetype n = all.mid(at + 2, nl - at - 2).toLongLong();
        chunks.append(
            {all.at(at) == 'E' ? StreamKind::Stderr : StreamKind::Stdout, all.mid(nl + 1, n)});
        at = nl + 1 + n + 1;
    }
    return chunks;
}

// What the run controller does with a chunk: the lines to the record, the live rows beside.
void record(LogStore &store, const RankStream::Output &out)
{
    store.append(out.lines);
    store.setLive(out.live);
}

} // namespace

class TestLogModel : public QObject
{
    Q_OBJECT
private slots:
    void followsOneRank();
    void allRanksPrefixed();
    void boundedWithMarkerRow();
    void burstIntoEmptyModel_data();
    void burstIntoEmptyModel();
    void burstPastTheStoreWindow();
    void fetchOlderFromDisk();
    void skipBacklogKeepsTheNewestAndElidesTheRest_data();
    void skipBacklogKeepsTheNewestAndElidesTheRest();
    void regexAndStreamFilter_data();
    void regexAndStreamFilter();
    void invalidRegexIsReported();
    void timerPollsStoreFedFromThread();
    void progressBarIsOneRowUpdatedInPlace_data();
    void progressBarIsOneRowUpdatedInPlace();
    void overdrawnLinesLeftOutAlsoFromDisk();
};

void TestLogModel::followsOneRank()
{
    LogStore store;
    LogModel model(&store, 1);
    model.setPollInterval(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    feed(store, 0, StreamKind::Stdout, 0, 5);
    feed(store, 1, StreamKind::Stdout, 0, 3);
    QSignalSpy appended(&model, &LogModel::linesAppended);
    model.poll();
    QCOMPARE(appended.size(), 1);
    QCOMPARE(appended.first().first().toInt(), 3);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(text(model, 0), QStringLiteral("r1 line 0"));
    QCOMPARE(model.data(model.index(2), LogModel::LineNumberRole).toLongLong(), 2);
    QCOMPARE(model.data(model.index(2), LogModel::RankRole).toInt(), 1);
    QVERIFY(!model.hasMarkerRow());
    // Nothing new: polling changes nothing.
    model.poll();
    QCOMPARE(appended.size(), 1);
}

void TestLogModel::allRanksPrefixed()
{
    LogStore store;
    LogModel model(&store, LogStore::AllRanks);
    model.setPollInterval(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    feed(store, 2, StreamKind::Stdout, 0, 1);
    feed(store, 0, StreamKind::Stderr, 0, 1);
    model.poll();
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(text(model, 0), QStringLiteral("[r2] r2 line 0"));
    QCOMPARE(text(model, 1), QStringLiteral("[r0] r0 line 0"));
    QCOMPARE(model.data(model.index(1), LogModel::StreamRole).toInt(), 1);
    QCOMPARE(model.data(model.index(1), LogModel::TextRole).toString(),
             QStringLiteral("r0 line 0"));
}

void TestLogModel::boundedWithMarkerRow()
{
    LogStore store;
    LogModel model(&store, 0);
    model.setPollInterval(0);
    model.setMaxRows(10);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    feed(store, 0, StreamKind::Stdout, 0, 8);
    model.poll();
    QCOMPARE(model.rowCount(), 8);
    feed(store, 0, StreamKind::Stdout, 8, 7);
    model.poll();
    // 15 lines, 10 kept: the marker row says 5 are elided.
    QVERIFY(model.hasMarkerRow());
    QCOMPARE(model.elidedCount(), 5);
    QCOMPARE(model.rowCount(), 11);
    QVERIFY(model.data(model.index(0), LogModel::IsMarkerRole).toBool());
    QCOMPARE(model.data(model.index(0), LogModel::ElidedCountRole).toLongLong(), 5);
    QVERIFY(text(model, 0).contains(QStringLiteral("5")));
    QCOMPARE(text(model, 1), QStringLiteral("r0 line 5"));
    QCOMPARE(text(model, 10), QStringLiteral("r0 line 14"));
    // A burst far larger than the model.
    feed(store, 0, StreamKind::Stdout, 15, 1000);
    model.poll();
    QCOMPARE(model.rowCount(), 11);
    QCOMPARE(model.elidedCount(), 1005);
    QCOMPARE(text(model, 10), QStringLiteral("r0 line 1014"));
}

void TestLogModel::burstIntoEmptyModel_data()
{
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("before"); // lines the model shows before the burst
    QTest::newRow("one rank, empty") << 0 << 0;
    QTest::newRow("all ranks, empty") << int(LogStore::AllRanks) << 0;
    QTest::newRow("one rank, some lines") << 0 << 4;
}

// More lines in one poll than the model holds: the tail is shown, and the marker counts every
// line before it, also when the model was empty before.
void TestLogModel::burstIntoEmptyModel()
{
    QFETCH(int, rank);
    QFETCH(int, before);
    LogStore store;
    LogModel model(&store, rank);
    model.setPollInterval(0);
    model.setMaxRows(10);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    feed(store, 0, StreamKind::Stdout, 0, before);
    model.poll();
    QCOMPARE(model.rowCount(), before);
    feed(store, 0, StreamKind::Stdout, before, 25);
    model.poll();
    QCOMPARE(model.lineRowCount(), 10);
    QVERIFY(model.hasMarkerRow());
    QCOMPARE(model.elidedCount(), before + 15);
    QCOMPARE(model.rowCount(), 11);
    QCOMPARE(model.data(model.index(1), LogModel::TextRole).toString(),
             QStringLiteral("r0 line %1").arg(before + 15));
}

// Between two polls the store's memory window moved past lines the model never saw: they are
// counted as elided (the run record has them), and the model shows what memory still holds.
void TestLogModel::burstPastTheStoreWindow()
{
    LogStore::Options o;
    o.windowPerRank = 5;
    o.windowAll = 5;
    LogStore store(o);
    for (int rank : {2, int(LogStore::AllRanks)}) {
        LogModel model(&store, rank);
        model.setPollInterval(0);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int before = int(store.lineCount(2));
        feed(store, 2, StreamKind::Stdout, before, 3);
        model.poll();
        QCOMPARE(model.lineRowCount(), qMin(5, before) + 3);
        feed(store, 2, StreamKind::Stdout, before + 3, 50);
        model.poll();
        QCOMPARE(model.lineRowCount(), 5);
        QCOMPARE(model.elidedCount(), before + 53 - 5);
        QCOMPARE(model.data(model.index(5), LogModel::TextRole).toString(),
                 QStringLiteral("r2 line %1").arg(before + 52));
    }
}

void TestLogModel::fetchOlderFromDisk()
{
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowPerRank = 20;
    o.windowAll = 20;
    LogStore store(o);
    QVERIFY(store.open(dir.path()));
    feed(store, 0, StreamKind::Stdout, 0, 500);
    for (int rank : {0, int(LogStore::AllRanks)}) {
        LogModel model(&store, rank);
        model.setPollInterval(0);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.elidedCount(), 480);
        QCOMPARE(model.rowCount(), 21);
        QCOMPARE(model.fetchOlder(100), 100);
        QCOMPARE(model.elidedCount(), 380);
        QCOMPARE(model.data(model.index(1), LogModel::TextRole).toString(),
                 QStringLiteral("r0 line 380"));
        QCOMPARE(model.fetchOlder(1000), 380);
        QVERIFY(!model.hasMarkerRow());
        QCOMPARE(model.rowCount(), 500);
        QCOMPARE(model.data(model.index(0), LogModel::TextRole).toString(),
                 QStringLiteral("r0 line 0"));
        QCOMPARE(model.fetchOlder(10), 0);
    }
    // While a run goes on, lines brought back stay when new ones arrive.
    LogModel live(&store, 0);
    live.setPollInterval(0);
    live.setMaxRows(20);
    QAbstractItemModelTester tester(&live, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(live.fetchOlder(30), 30);
    feed(store, 0, StreamKind::Stdout, 500, 5);
    live.poll();
    QCOMPARE(live.lineRowCount(), 50);
    QCOMPARE(live.data(live.index(1), LogModel::TextRole).toString(),
             QStringLiteral("r0 line 455"));
    QCOMPARE(live.elidedCount(), 455);
    // A filter change starts over from the memory window.
    live.setFilterPattern(QStringLiteral("line"));
    QCOMPARE(live.lineRowCount(), 20);
}

void TestLogModel::skipBacklogKeepsTheNewestAndElidesTheRest_data()
{
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("backlog"); // lines that came after the model's last poll
    QTest::addColumn<int>("keep");
    QTest::newRow("one rank, long backlog") << 0 << 300 << 50;
    QTest::newRow("merged, long backlog") << int(LogStore::AllRanks) << 300 << 50;
    QTest::newRow("backlog shorter than keep: nothing let go") << 0 << 30 << 50;
}

void TestLogModel::skipBacklogKeepsTheNewestAndElidesTheRest()
{
    QFETCH(int, rank);
    QFETCH(int, backlog);
    QFETCH(int, keep);
    QTemporaryDir dir;
    LogStore store;
    QVERIFY(store.open(dir.path()));
    feed(store, 0, StreamKind::Stdout, 0, 10);
    LogModel model(&store, rank);
    model.setPollInterval(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.poll();
    QCOMPARE(model.lineRowCount(), 10);
    feed(store, 0, StreamKind::Stdout, 10, backlog);
    model.skipBacklog(keep);
    model.poll();
    const int total = 10 + backlog;
    if (backlog > keep) {
        QCOMPARE(model.lineRowCount(), keep);
        QCOMPARE(model.elidedCount(), total - keep);
        QVERIFY(model.hasMarkerRow());
        QCOMPARE(model.data(model.index(1), LogModel::TextRole).toString(),
                 QStringLiteral("r0 line %1").arg(total - keep));
        // Scrolling up brings the elided lines back, in order.
        QCOMPARE(model.fetchOlder(total), total - keep);
        QCOMPARE(model.lineRowCount(), total);
        QCOMPARE(model.data(model.index(0), LogModel::TextRole).toString(),
                 QStringLiteral("r0 line 0"));
    } else {
        QCOMPARE(model.lineRowCount(), total);
        QVERIFY(!model.hasMarkerRow());
    }
    QCOMPARE(model.data(model.index(model.rowCount() - 1), LogModel::TextRole).toString(),
             QStringLiteral("r0 line %1").arg(total - 1));
}

void TestLogModel::regexAndStreamFilter_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<int>("streams");
    QTest::addColumn<int>("rows");
    // 10 stdout lines (line 0..9) and 10 stderr lines (line 10..19).
    QTest::newRow("everything") << QString() << int(LogModel::AllStreams) << 20;
    QTest::newRow("stderr only") << QString() << int(LogModel::StderrLines) << 10;
    QTest::newRow("regex") << QStringLiteral("line 1\\d$") << int(LogModel::AllStreams) << 10;
    QTest::newRow("regex, case-insensitive")
        << QStringLiteral("LINE 3$") << int(LogModel::AllStreams) << 1;
    QTest::newRow("regex and stream")
        << QStringLiteral("line [15]") << int(LogModel::StdoutLines) << 2;
    QTest::newRow("no stream") << QString() << 0 << 0;
}

void TestLogModel::regexAndStreamFilter()
{
    QFETCH(QString, pattern);
    QFETCH(int, streams);
    QFETCH(int, rows);
    LogStore store;
    LogModel model(&store, 0);
    model.setPollInterval(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    feed(store, 0, StreamKind::Stdout, 0, 10);
    model.setFilterPattern(pattern);
    model.setStreamFilter(streams);
    feed(store, 0, StreamKind::Stderr, 10, 10);
    model.poll();
    QCOMPARE(model.rowCount(), rows);
    QVERIFY(model.patternError().isEmpty());
    // Clearing the filters brings every line back.
    model.setFilterPattern(QString());
    model.setStreamFilter(LogModel::AllStreams);
    QCOMPARE(model.rowCount(), 20);
}

void TestLogModel::invalidRegexIsReported()
{
    LogStore store;
    feed(store, 0, StreamKind::Stdout, 0, 3);
    LogModel model(&store, 0);
    model.setFilterPattern(QStringLiteral("(unclosed"));
    QVERIFY(!model.patternError().isEmpty());
    QCOMPARE(model.rowCount(), 3); // an invalid filter shows everything
}

void TestLogModel::timerPollsStoreFedFromThread()
{
    LogStore store;
    LogModel model(&store, 3);
    model.setPollInterval(10);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy appended(&model, &LogModel::linesAppended);
    std::thread producer([&store] {
        for (int i = 0; i < 50; ++i)
            feed(store, 3, StreamKind::Stdout, i * 10, 10);
    });
    producer.join();
    QVERIFY(appended.wait(5000));
    QTRY_COMPARE(model.rowCount(), 500);
    QCOMPARE(text(model, 499), QStringLiteral("r3 line 499"));
}

// A tqdm bar (3 epochs × 20 redraws with set_postfix, real bytes): the view shows it as one row
// that changes in place while it is drawn, then the bar's last state as a line; the record has
// every redraw. Two ranks drawing at once: one live row each in the merged view.
void TestLogModel::progressBarIsOneRowUpdatedInPlace_data()
{
    QTest::addColumn<int>("rank");
    QTest::newRow("a rank's tab") << 1;
    QTest::newRow("all ranks") << int(LogStore::AllRanks);
}

void TestLogModel::progressBarIsOneRowUpdatedInPlace()
{
    QFETCH(int, rank);
    QTemporaryDir dir;
    LogStore store;
    QVERIFY(store.open(dir.path()));
    LogModel model(&store, rank);
    model.setPollInterval(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    RankStream r0(0), r1(1);
    const QList<Chunk> chunks = captured(QStringLiteral("tqdm_loop"));
    QByteArray stderrBytes;
    int mostLive = 0;
    qint64 t = 1;
    for (const Chunk &c : chunks) {
        record(store, r1.feed(c.stream, c.bytes, t));
        record(store, r0.feed(c.stream, c.bytes, t++));
        if (c.stream == StreamKind::Stderr)
            stderrBytes += c.bytes;
        model.poll();
        mostLive = qMax(mostLive, model.liveRowCount());
        // The live rows are the last rows, each a bar's current state.
        for (int i = 0; i < model.liveRowCount(); ++i) {
            const QModelIndex live = model.index(model.firstLiveRow() + i);
            QVERIFY(live.data(LogModel::IsLiveRole).toBool());
            QVERIFY2(live.data(LogModel::TextRole).toString().startsWith(QStringLiteral("Epoch ")),
                     qPrintable(live.data(LogModel::TextRole).toString()));
        }
    }
    record(store, r1.finish(t));
    record(store, r0.finish(t));
    model.poll();
    const int ranks = rank == LogStore::AllRanks ? 2 : 1;
    QCOMPARE(mostLive, ranks);
    QCOMPARE(model.liveRowCount(), 0);
    // Rows: each epoch's bar once and the last print. Inserted: those, and the live row coming
    // back for each of the 3 bars; the redraws changed a row in place.
    QCOMPARE(model.rowCount(), 4 * ranks);
    for (int row = 0; row < model.rowCount(); ++row)
        QVERIFY(!model.index(row).data(LogModel::IsLiveRole).toBool());
    QVERIFY(text(model, model.rowCount() - 1).endsWith(QStringLiteral("done 0")));
    QVERIFY2(inserted.size() <= 4 * ranks + 3 * ranks + 4,
             qPrintable(QString::number(inserted.size())));
    QVERIFY2(changed.size() >= 40, qPrintable(QString::number(changed.size())));
    // The record has every byte of every redraw.
    store.close();
    QFile log(dir.filePath(QStringLiteral("rank-1.log")));
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QByteArray recorded = log.readAll();
    QCOMPARE(recorded.count('\r'), stderrBytes.count('\r'));
    QVERIFY(recorded.contains(stderrBytes.left(200)));
}

// Lightning's validation bar (drawn below the main one with cursor-up): its rows are left out
// of the view, live and when the run is read back from disk; the record keeps them.
void TestLogModel::overdrawnLinesLeftOutAlsoFromDisk()
{
    QTemporaryDir dir;
    qint64 recorded = 0;
    {
        LogStore store;
        QVERIFY(store.open(dir.path()));
        LogModel model(&store, 0);
        model.setPollInterval(0);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        RankStream r0(0);
        qint64 t = 1;
        for (const Chunk &c : captured(QStringLiteral("lightning_tqdm"))) {
            record(store, r0.feed(c.stream, c.bytes, t++));
            model.poll();
        }
        record(store, r0.finish(t));
        model.poll();
        recorded = store.lineCount(0);
        QVERIFY(model.rowCount() < recorded - 15);
        for (int row = 0; row < model.rowCount(); ++row)
            QVERIFY(!text(model, row).contains(QStringLiteral("Validation")));
    }
    LogStore reopened;
    QVERIFY(reopened.open(dir.path()));
    const QList<LogLine> lines = reopened.readLines(0, 0, int(recorded));
    QCOMPARE(lines.size(), recorded);
    int overdrawn = 0, validation = 0;
    for (const LogLine &l : lines) {
        overdrawn += l.overdrawn ? 1 : 0;
        validation += l.text.contains(QStringLiteral("Validation")) ? 1 : 0;
        QVERIFY(!l.text.contains(QStringLiteral("Validation")) || l.overdrawn);
    }
    QVERIFY(validation >= 15);
    QVERIFY(overdrawn >= validation);
    LogModel again(&reopened, 0);
    again.setPollInterval(0);
    for (int row = 0; row < again.rowCount(); ++row)
        QVERIFY(!text(again, row).contains(QStringLiteral("Validation")));
    QCOMPARE(again.rowCount(), int(recorded) - overdrawn);
}

QTEST_GUILESS_MAIN(TestLogModel)
#include "tst_logmodel.moc"
