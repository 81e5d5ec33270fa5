// SPDX-License-Identifier: GPL-3.0-or-later
#include "smalltmpfs.h"
#include "store/compactedfile.h"
#include "store/logstore.h"
#include "stream/rankstream.h"
#include "testprocesses.h"

#include "wire/wireprotocol.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <thread>
#include <vector>

using namespace rankdeck;
using namespace Qt::StringLiterals;
namespace wire = rankdeck::wire;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray eventLine(int rank, qint64 step)
{
    wire::WireEventWriter w(wire::event::Step, rank, 1);
    w.addInt(wire::field::Step, step).addDouble(wire::field::Loss, 0.5);
    return QByteArray::fromStdString(w.line());
}

// What a rank prints: ordinary lines, events mixed in, a megabyte line, NULs, invalid UTF-8,
// a progress bar. Returns the bytes a rank writes and, in *logBytes, what its log must hold.
QByteArray rankOutput(int rank, int lines, QByteArray *logBytes)
{
    QByteArray out;
    for (int i = 0; i < lines; ++i) {
        QByteArray line;
        switch (i % 7) {
        case 0:
            line = QByteArray("Rank ") + QByteArray::number(rank) + ": Epoch 1, Loss 0." +
                   QByteArray::number(i);
            break;
        case 1:
            line = QByteArray("bin\0ary\xff\xfe", 10) + QByteArray::number(i);
            break;
        case 2:
            line = "10%\r50%\r100% " + QByteArray::number(i);
            break;
        case 3:
            line = "";
            break;
        default:
            line = "plain " + QByteArray::number(i);
        }
        // Three lines of 3 MiB: together more than one bulk read back from disk takes.
        if (i == lines / 2 || i == lines / 3 || i == lines / 4)
            line = QByteArray(3 * 1024 * 1024, 'H') + QByteArray::number(i);
        out += line + '\n';
        *logBytes += line + '\n';
        if (i % 5 == 0)
            out += eventLine(rank, i);
    }
    return out;
}

void feed(LogStore &store, int rank, int lines)
{
    QList<LogLine> batch;
    for (int i = 0; i < lines; ++i) {
        LogLine l;
        l.rank = rank;
        l.raw = "line " + QByteArray::number(i);
        l.text = QString::fromLatin1(l.raw);
        batch.append(l);
    }
    store.append(batch);
}

} // namespace

class TestLogStore : public QObject
{
    Q_OBJECT
private slots:
    void nothingLostWithTinyWindow_data();
    void nothingLostWithTinyWindow();
    void mergedOrderAndReadBack();
    void reopenShowsOldLines();
    void compressedRecordReadsWholeElsewhere();
    void concurrentRanks();
    void manyRanksShareTheMemoryBudget();
    void memoryOnlyReportsElided();
    void eventsAreRecorded();
    void badDirectoryIsNamed();
    void fullDiskRollsBackAndCounts_data();
    void fullDiskRollsBackAndCounts();
};

void TestLogStore::nothingLostWithTinyWindow_data()
{
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<int>("compactLines"); // -1: the store's default; 0: never
    // The default compresses here too: the 3 MiB lines are over twice compactBytes.
    QTest::newRow("window 1, pipe-sized chunks") << 1 << 4096 << -1;
    QTest::newRow("window 50, odd chunks") << 50 << 333 << -1;
    QTest::newRow("window 50, compressed every 16 lines") << 50 << 333 << 16;
    QTest::newRow("window 50, never compressed") << 50 << 333 << 0;
}

void TestLogStore::nothingLostWithTinyWindow()
{
    QFETCH(int, window);
    QFETCH(int, chunk);
    QFETCH(int, compactLines);
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowPerRank = window;
    o.windowAll = window;
    if (compactLines >= 0) {
        o.compactLines = compactLines;
        o.compactAllEntries = compactLines;
    }
    LogStore store(o);
    QString error;
    QVERIFY2(store.open(dir.path(), &error), qPrintable(error));
    QCOMPARE(QFileInfo(dir.path()).isDir(), true);

    const int ranks = 3, lines = 400;
    std::vector<QByteArray> inputs, expected(ranks);
    std::vector<RankStream> streams;
    for (int r = 0; r < ranks; ++r) {
        inputs.push_back(rankOutput(r, lines, &expected[size_t(r)]));
        RankStream::Options so;
        so.maxPieceBytes = 64 * 1024;
        streams.emplace_back(r, so);
    }
    // Interleave the ranks chunk by chunk, as the transports deliver them.
    bool more = true;
    for (qsizetype off = 0; more; off += chunk) {
        more = false;
        for (int r = 0; r < ranks; ++r) {
            const QByteArray &in = inputs[size_t(r)];
            if (off >= in.size())
                continue;
            more = true;
            RankStream::Output out = streams[size_t(r)].feed(
                StreamKind::Stdout,
                QByteArrayView(in).sliced(off, qMin<qsizetype>(chunk, in.size() - off)));
            store.append(out.lines);
        }
    }
    for (int r = 0; r < ranks; ++r) {
        store.append(streams[size_t(r)].finish().lines);
        QCOMPARE(store.lineCount(r), lines);
        QCOMPARE(store.firstInMemory(r), lines - window);
        store.waitForCompaction();
        // The file on disk holds every line byte for byte, events taken out: the oldest in
        // compressed segments beside it, unless compaction is off.
        const QList<CompactedFile::Segment> segments =
            CompactedFile::segments(store.logFilePath(r));
        QCOMPARE(segments.isEmpty(), compactLines == 0);
        if (compactLines == 0)
            QCOMPARE(readFile(store.logFilePath(r)), expected[size_t(r)]);
        const QByteArray onDisk = CompactedFile::readAll(store.logFilePath(r));
        QCOMPARE(onDisk.size(), expected[size_t(r)].size());
        QVERIFY(onDisk == expected[size_t(r)]);
        // Every line reads back, text as the views show it.
        const QList<QByteArray> want = expected[size_t(r)].split('\n');
        const QList<LogLine> back = store.readLines(r, 0, lines, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(back.size(), lines);
        for (int i = 0; i < lines; ++i) {
            QCOMPARE(back[i].number, i);
            QCOMPARE(back[i].text, LineSplitter::displayText(want[i]));
            QCOMPARE(back[i].byteLength, want[i].size());
            QCOMPARE(store.readRawLine(r, i), want[i]);
        }
        QVERIFY(back[lines / 2].truncated);
        QVERIFY(back[lines / 3].truncated);
        // Short stretches come back in one bulk read too.
        const QList<LogLine> some = store.readLines(r, 10, 5);
        QCOMPARE(some.size(), 5);
        QCOMPARE(some[4].text, LineSplitter::displayText(want[14]));
    }
    QCOMPARE(store.lineCount(LogStore::AllRanks), ranks * lines);
    QVERIFY(store.lastError().isEmpty());
    QVERIFY2(store.compactionError().isEmpty(), qPrintable(store.compactionError()));
}

void TestLogStore::mergedOrderAndReadBack()
{
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowPerRank = 2;
    o.windowAll = 3;
    LogStore store(o);
    QVERIFY(store.open(dir.path()));
    QList<LogLine> batch;
    for (int i = 0; i < 10; ++i) {
        LogLine l;
        l.rank = i % 3;
        l.stream = i % 2 ? StreamKind::Stderr : StreamKind::Stdout;
        l.timeUs = 1000 + i;
        l.raw = "line " + QByteArray::number(i);
        l.text = QString::fromLatin1(l.raw);
        batch.append(l);
    }
    store.append(batch);
    QCOMPARE(store.lineCount(LogStore::AllRanks), 10);
    QCOMPARE(store.firstInMemory(LogStore::AllRanks), 7);
    QCOMPARE(store.elidedLines(LogStore::AllRanks), 7);
    const QList<LogLine> recent = store.recentLines(LogStore::AllRanks, 0);
    QCOMPARE(recent.size(), 3);
    QCOMPARE(recent.first().text, QStringLiteral("line 7"));
    QCOMPARE(recent.first().sequence, 7);
    const QList<LogLine> all = store.readLines(LogStore::AllRanks, 0, 100);
    QCOMPARE(all.size(), 10);
    for (int i = 0; i < 10; ++i) {
        QCOMPARE(all[i].text, QStringLiteral("line %1").arg(i));
        QCOMPARE(all[i].rank, i % 3);
        QCOMPARE(all[i].sequence, i);
        QCOMPARE(all[i].timeUs, 1000 + i);
        QCOMPARE(all[i].stream, i % 2 ? StreamKind::Stderr : StreamKind::Stdout);
    }
    QCOMPARE(store.ranks(), (QList<int>{0, 1, 2}));
    const QList<LogLine> r1 = store.readLines(1, 1, 2);
    QCOMPARE(r1.size(), 2);
    QCOMPARE(r1[0].text, QStringLiteral("line 4"));
    QCOMPARE(r1[1].text, QStringLiteral("line 7"));
    QCOMPARE(store.recentLines(1, 2).size(), 1); // only line 2 of rank 1 (…"line 7") onwards
}

void TestLogStore::reopenShowsOldLines()
{
    QTemporaryDir dir;
    {
        LogStore store;
        QVERIFY(store.open(dir.path()));
        RankStream s(5);
        store.append(s.feed(StreamKind::Stdout, "one\ntwo\nthree\n").lines);
        store.append(s.feed(StreamKind::Stderr, "oops\n").lines);
    }
    LogStore again;
    QVERIFY(again.open(dir.path()));
    QCOMPARE(again.lineCount(5), 4);
    QCOMPARE(again.lineCount(LogStore::AllRanks), 4);
    const QList<LogLine> lines = again.recentLines(5, 0);
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[3].text, QStringLiteral("oops"));
    QCOMPARE(lines[3].stream, StreamKind::Stderr);
    // New lines continue the numbering and the file.
    RankStream s(5);
    again.append(s.feed(StreamKind::Stdout, "four\n").lines);
    QCOMPARE(again.readLines(5, 4, 1).first().text, QStringLiteral("four"));
    QCOMPARE(readFile(again.logFilePath(5)), QByteArray("one\ntwo\nthree\noops\nfour\n"));
}

// A record whose oldest lines are compressed as it is written reads whole in a follower (the
// window following a CLI run), in a store that reopens it (the app, `logs`), and in a writer
// that continues it (re-attach); a lost segment is named, and the rest still reads.
void TestLogStore::compressedRecordReadsWholeElsewhere()
{
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowPerRank = 5;
    o.windowAll = 5;
    o.compactLines = 20;
    o.compactBytes = 700; // a segment by bytes now and then, and the events' segments
    o.compactAllEntries = 30;
    const int ranks = 3;
    QByteArray events; // rank 0's
    QList<QList<QString>> expected(ranks);
    QList<QPair<int, QString>> merged;
    auto batch = [&](LogStore &store, int lines) {
        QList<LogLine> out;
        for (int i = 0; i < lines; ++i) {
            for (int r = 0; r < ranks; ++r) {
                LogLine l;
                l.rank = r;
                l.timeUs = 1000 + merged.size();
                l.raw = "rank " + QByteArray::number(r) + " line " +
                        QByteArray::number(expected[r].size()) + (r == 1 ? " \x1b[1mbold" : "");
                l.text = LineSplitter::displayText(l.raw);
                expected[r].append(l.text);
                merged.append({r, l.text});
                out.append(l);
            }
        }
        store.append(out);
        RankStream s(0);
        const RankStream::Output ev =
            s.feed(StreamKind::Stdout, eventLine(0, merged.size()) + eventLine(0, 1));
        store.appendEvents(0, ev.events);
        for (const WorkerEvent &e : ev.events)
            events += e.json() + '\n';
    };
    auto readsWhole = [&](const LogStore &store, const char *who) {
        for (int r = 0; r < ranks; ++r) {
            QString error;
            const QList<LogLine> back = store.readLines(r, 0, int(expected[r].size()), &error);
            QVERIFY2(error.isEmpty(), qPrintable(u"%1: %2"_s.arg(QLatin1String(who), error)));
            QCOMPARE(back.size(), expected[r].size());
            for (qsizetype i = 0; i < back.size(); ++i)
                QCOMPARE(back[i].text, expected[r][i]);
        }
        QString error;
        const QList<LogLine> all =
            store.readLines(LogStore::AllRanks, 0, int(merged.size()), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(all.size(), merged.size());
        for (qsizetype i = 0; i < all.size(); ++i) {
            QCOMPARE(all[i].rank, merged[i].first);
            QCOMPARE(all[i].text, merged[i].second);
            QCOMPARE(all[i].timeUs, 1000 + i);
        }
    };
    {
        LogStore writer(o);
        QVERIFY(writer.open(dir.path()));
        LogStore follower(o);
        QVERIFY(follower.open(dir.path()));
        for (int b = 0; b < 30; ++b) {
            batch(writer, 13);
            follower.readAppended();
        }
        writer.waitForCompaction();
        QVERIFY2(writer.compactionError().isEmpty(), qPrintable(writer.compactionError()));
        for (const QString &name : {u"rank-0.log"_s, u"rank-2.idx"_s, u"all.idx"_s})
            QVERIFY2(CompactedFile::segments(dir.filePath(name)).size() >= 5, qPrintable(name));
        // The newest half stays plain, and the follower got every line as it came.
        QCOMPARE(follower.lineCount(LogStore::AllRanks), merged.size());
        readsWhole(follower, "follower");
        readsWhole(writer, "writer");
    }
    {
        // A writer that reopens the record compresses on from where the segments end.
        LogStore writer(o);
        QVERIFY(writer.open(dir.path()));
        const qsizetype before = CompactedFile::segments(dir.filePath(u"rank-1.log"_s)).size();
        for (int b = 0; b < 10; ++b)
            batch(writer, 13);
        writer.waitForCompaction();
        QVERIFY(CompactedFile::segments(dir.filePath(u"rank-1.log"_s)).size() > before);
        readsWhole(writer, "reopened writer");
    }
    LogStore reader;
    QVERIFY(reader.open(dir.path()));
    readsWhole(reader, "reader");
    QCOMPARE(CompactedFile::readAll(dir.filePath(u"rank-2.log"_s)).count('\n'), expected[2].size());
    const QString eventsFile = dir.filePath(u"rank-0.events.jsonl"_s);
    QVERIFY2(CompactedFile::segments(eventsFile).size() >= 3, qPrintable(eventsFile));
    QCOMPARE(CompactedFile::readAll(eventsFile), events);

    const QString lost = CompactedFile::segments(dir.filePath(u"rank-1.log"_s)).first().path;
    QVERIFY(QFile::remove(lost));
    LogStore damaged;
    QVERIFY(damaged.open(dir.path()));
    QString error;
    QVERIFY(damaged.readLines(1, 0, 5, &error).size() < 5);
    QVERIFY2(error.contains(u"rank-1.log"_s), qPrintable(error));
    error.clear();
    const qint64 newest = damaged.lineCount(1) - 1;
    QCOMPARE(damaged.readLines(1, newest, 1, &error).value(0).text, expected[1].last());
    QVERIFY(error.isEmpty());
}

void TestLogStore::concurrentRanks()
{
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowPerRank = 10;
    o.windowAll = 10;
    LogStore store(o);
    QVERIFY(store.open(dir.path()));
    const int ranks = 6, perRank = 3000;
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
        threads.emplace_back([&store, r] {
            RankStream s(r);
            for (int i = 0; i < perRank; i += 10) {
                QByteArray chunk;
                for (int k = i; k < i + 10; ++k)
                    chunk += "r" + QByteArray::number(r) + " line " + QByteArray::number(k) + '\n';
                store.append(s.feed(StreamKind::Stdout, chunk).lines);
            }
        });
    }
    // A view polling meanwhile.
    quint64 seen = 0;
    while (store.lineCount(LogStore::AllRanks) < ranks * perRank) {
        if (store.generation() != seen) {
            seen = store.generation();
            const qint64 first = store.firstInMemory(LogStore::AllRanks);
            for (const LogLine &l : store.recentLines(LogStore::AllRanks, first))
                QVERIFY(l.sequence >= first);
        }
    }
    for (auto &t : threads)
        t.join();
    for (int r = 0; r < ranks; ++r) {
        QCOMPARE(store.lineCount(r), perRank);
        const QList<QByteArray> lines = readFile(store.logFilePath(r)).split('\n');
        QCOMPARE(lines.size(), perRank + 1);
        for (int k = 0; k < perRank; ++k)
            QCOMPARE(lines[k], "r" + QByteArray::number(r) + " line " + QByteArray::number(k));
    }
    // The merged index covers every line once.
    const QList<LogLine> merged = store.readLines(LogStore::AllRanks, 0, ranks * perRank);
    QCOMPARE(merged.size(), ranks * perRank);
    std::vector<int> perRankSeen(ranks, 0);
    for (const LogLine &l : merged) {
        QCOMPARE(l.number, perRankSeen[size_t(l.rank)]);
        ++perRankSeen[size_t(l.rank)];
    }
}

void TestLogStore::manyRanksShareTheMemoryBudget()
{
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowPerRank = 1000;
    o.maxLinesInMemory = 20000;
    LogStore store(o);
    QVERIFY(store.open(dir.path()));
    // 100 ranks: 20000 / 100 = 200 lines each instead of 1000.
    for (int r = 0; r < 100; ++r)
        feed(store, r, 300);
    feed(store, 0, 1);
    for (int r : {0, 50, 99}) {
        QCOMPARE(store.lineCount(r), r == 0 ? 301 : 300);
        QCOMPARE(store.lineCount(r) - store.firstInMemory(r), 200);
        QCOMPARE(store.readLines(r, 0, 500).size(), r == 0 ? 301 : 300); // the rest from disk
    }
}

void TestLogStore::memoryOnlyReportsElided()
{
    LogStore::Options o;
    o.windowPerRank = 2;
    LogStore store(o);
    RankStream s(0);
    store.append(s.feed(StreamKind::Stdout, "a\nb\nc\n").lines);
    QCOMPARE(store.lineCount(0), 3);
    QCOMPARE(store.firstInMemory(0), 1);
    QString error;
    const QList<LogLine> lines = store.readLines(0, 0, 3, &error);
    QVERIFY(lines.isEmpty());
    QVERIFY(!error.isEmpty());
    QCOMPARE(store.readLines(0, 1, 2).size(), 2);
}

void TestLogStore::eventsAreRecorded()
{
    QTemporaryDir dir;
    LogStore store;
    QVERIFY(store.open(dir.path()));
    RankStream s(1);
    const RankStream::Output out =
        s.feed(StreamKind::Stdout, "x\n" + eventLine(1, 3) + eventLine(1, 4));
    store.append(out.lines);
    store.appendEvents(1, out.events);
    const QList<QByteArray> rows = readFile(store.eventsFilePath(1)).split('\n');
    QCOMPARE(rows.size(), 3);
    QVERIFY(rows[0].contains("\"step\":3"));
    QVERIFY(rows[1].contains("\"step\":4"));
    QCOMPARE(readFile(store.logFilePath(1)), QByteArray("x\n"));
}

void TestLogStore::badDirectoryIsNamed()
{
    LogStore store;
    QString error;
    QVERIFY(!store.open(QStringLiteral("/proc/rankdeck-cannot-be-here"), &error));
    QVERIFY2(error.contains(QStringLiteral("/proc/rankdeck-cannot-be-here")), qPrintable(error));
    // Still usable in memory.
    RankStream s(0);
    store.append(s.feed(StreamKind::Stdout, "kept\n").lines);
    QCOMPARE(store.recentLines(0, 0).first().text, QStringLiteral("kept"));
}

// A full disk mid-run: the files are rolled back to the last batch written whole (so the record
// read back has whole lines only, and no false "[line cut …]"), nothing more is written, and
// every byte appended is either in the log file or counted missing.
void TestLogStore::fullDiskRollsBackAndCounts_data()
{
    QTest::addColumn<int>("leave");
    QTest::addColumn<bool>("longLines"); // lines in pieces across batches
    QTest::newRow("short lines") << 20000 << false;
    QTest::newRow("lines in pieces") << 20000 << true;
    QTest::newRow("full from the start") << 0 << false;
}

void TestLogStore::fullDiskRollsBackAndCounts()
{
    QFETCH(int, leave);
    QFETCH(bool, longLines);
    rankdeck::testing::SmallTmpfs fs(512 * 1024);
    if (!fs.isMounted())
        QSKIP(qPrintable(fs.problem()));
    const QString dir = fs.path() + QStringLiteral("/run");
    qint64 appended = 0;
    qint64 complete = 0;
    {
        LogStore store;
        QVERIFY(store.open(dir));
        QVERIFY(fs.fill(leave));
        for (int batch = 0; batch < 400; ++batch) {
            QList<LogLine> lines;
            for (int i = 0; i < 10; ++i) {
                LogLine l;
                l.rank = 0;
                l.raw = "batch " + QByteArray::number(batch) + " line " + QByteArray::number(i) +
                        ' ' + QByteArray(60, 'x');
                // The last piece of a batch always completes its line.
                l.partial = longLines && i % 2 == 0;
                appended += l.raw.size() + (l.partial ? 0 : 1);
                complete += l.partial ? 0 : 1;
                lines.append(l);
            }
            store.append(lines);
        }
        QVERIFY(store.diskFailed());
        QVERIFY2(store.diskError().contains(QStringLiteral("rank 0")) &&
                     store.diskError().contains(QStringLiteral("No space left")),
                 qPrintable(store.diskError()));
        // Every line is still there for the views.
        QCOMPARE(store.lineCount(0), complete);
        const qint64 onDisk = QFileInfo(dir + QStringLiteral("/rank-0.log")).size();
        QCOMPARE(onDisk + store.missingBytes(0), appended);
        const qint64 indexed = QFileInfo(dir + QStringLiteral("/rank-0.idx")).size() / 24;
        QCOMPARE(indexed + store.missingLines(0), complete);
        store.close();
    }
    QVERIFY(fs.unfill());
    // Read back: whole lines only, as they were, and none claims to be cut.
    LogStore again;
    QVERIFY(again.open(dir));
    const qint64 n = again.lineCount(0);
    QString error;
    const QList<LogLine> back = again.readLines(0, 0, int(n), &error);
    QCOMPARE(back.size(), n);
    for (const LogLine &l : back) {
        QVERIFY2(l.text.startsWith(QStringLiteral("batch ")), qPrintable(l.text));
        QVERIFY2(!l.truncated && !l.text.contains(QStringLiteral("cut")), qPrintable(l.text));
    }
    QCOMPARE(qint64(rankdeck::testing::fileLines(dir + QStringLiteral("/rank-0.log")).size()), n);
}

QTEST_GUILESS_MAIN(TestLogStore)
#include "tst_logstore.moc"
