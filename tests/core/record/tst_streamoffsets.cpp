// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/streamoffsets.h"
#include "record/streamoffsetsfile.h"
#include "stream/linesplitter.h"

#include <QFileInfo>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

using namespace rankdeck;

namespace {

constexpr qsizetype kPiece = LineSplitter::kDefaultMaxPieceBytes;

} // namespace

class TestStreamOffsets : public QObject
{
    Q_OBJECT
private slots:
    void committedLeavesPartialLinePending_data();
    void committedLeavesPartialLinePending();
    void streamsAreApart();
    void flushCommitsEverything();
    void restartCountsAnew();
    void longLines_data();
    void longLines();
    void mirrorsTheSplitter();
    void json();
    void jsonReadBackHasNothingPending();
    void fileKeepsTheLatestInPlace();
};

void TestStreamOffsets::committedLeavesPartialLinePending_data()
{
    QTest::addColumn<QList<QByteArray>>("chunks");
    QTest::addColumn<qint64>("committed");
    QTest::addColumn<qint64>("received");
    QTest::newRow("nothing") << QList<QByteArray>{} << qint64(0) << qint64(0);
    QTest::newRow("one whole line") << QList<QByteArray>{"hello\n"} << qint64(6) << qint64(6);
    QTest::newRow("partial line") << QList<QByteArray>{"hel"} << qint64(0) << qint64(3);
    QTest::newRow("line then partial") << QList<QByteArray>{"a\nbc"} << qint64(2) << qint64(4);
    QTest::newRow("partial completed later")
        << QList<QByteArray>{"hel", "lo\nwo"} << qint64(6) << qint64(8);
    QTest::newRow("partial across three")
        << QList<QByteArray>{"a", "b", "c"} << qint64(0) << qint64(3);
    QTest::newRow("newline alone") << QList<QByteArray>{"abc", "\n"} << qint64(4) << qint64(4);
    QTest::newRow("several lines") << QList<QByteArray>{"1\n2\n3\n4"} << qint64(6) << qint64(7);
    QTest::newRow("empty chunk") << QList<QByteArray>{"ab", "", "c\n"} << qint64(4) << qint64(4);
    QTest::newRow("progress bar (\\r)")
        << QList<QByteArray>{"10%\r20%\r", "30%\n"} << qint64(12) << qint64(12);
}

void TestStreamOffsets::committedLeavesPartialLinePending()
{
    QFETCH(QList<QByteArray>, chunks);
    QFETCH(qint64, committed);
    QFETCH(qint64, received);
    StreamOffsets o;
    for (const QByteArray &c : chunks)
        o.add(StreamKind::Stdout, c);
    QCOMPARE(o.committed(StreamKind::Stdout), committed);
    QCOMPARE(o.received[0], received);
    QCOMPARE(o.pending[0], received - committed);
}

void TestStreamOffsets::streamsAreApart()
{
    StreamOffsets o;
    o.add(StreamKind::Stdout, "out line\nout part");
    o.add(StreamKind::Stderr, "err part");
    QCOMPARE(o.committed(StreamKind::Stdout), qint64(9));
    QCOMPARE(o.committed(StreamKind::Stderr), qint64(0));
    // A newline on stderr does not complete stdout's line.
    o.add(StreamKind::Stderr, "\n");
    QCOMPARE(o.committed(StreamKind::Stderr), qint64(9));
    QCOMPARE(o.committed(StreamKind::Stdout), qint64(9));
}

void TestStreamOffsets::flushCommitsEverything()
{
    StreamOffsets o;
    o.attempt = 2;
    o.add(StreamKind::Stdout, "a\nrest");
    o.add(StreamKind::Stderr, "no newline");
    o.flush(); // the rank ended: its stream wrote out the rest
    QCOMPARE(o.committed(StreamKind::Stdout), qint64(6));
    QCOMPARE(o.committed(StreamKind::Stderr), qint64(10));
    QCOMPARE(o.attempt, 2);
}

void TestStreamOffsets::restartCountsAnew()
{
    StreamOffsets o;
    QCOMPARE(o.attempt, 0);
    o.restart(); // the first start
    QCOMPARE(o.attempt, 1);
    o.add(StreamKind::Stdout, "x\ny");
    o.add(StreamKind::Stderr, "z\n");
    o.restart(); // a gang restart: rank<R>.a2.*
    QCOMPARE(o.attempt, 2);
    QCOMPARE(o.received[0], qint64(0));
    QCOMPARE(o.received[1], qint64(0));
    QCOMPARE(o.pending[0], qint64(0));
    QCOMPARE(o.pending[1], qint64(0));
    QCOMPARE(o.committed(StreamKind::Stdout), qint64(0));
}

void TestStreamOffsets::longLines_data()
{
    QTest::addColumn<QList<qsizetype>>(
        "chunkSizes"); // bytes without newline, then an optional tail
    QTest::addColumn<QByteArray>("tail");
    QTest::addColumn<qint64>("pending");
    // The splitter keeps at most one piece of a line that never ends; full pieces go to disk.
    QTest::newRow("just under a piece")
        << QList<qsizetype>{kPiece - 1} << QByteArray() << qint64(kPiece - 1);
    QTest::newRow("exactly a piece") << QList<qsizetype>{kPiece} << QByteArray() << qint64(kPiece);
    QTest::newRow("a piece and one") << QList<qsizetype>{kPiece + 1} << QByteArray() << qint64(1);
    QTest::newRow("two and a half pieces")
        << QList<qsizetype>{2 * kPiece + kPiece / 2} << QByteArray() << qint64(kPiece / 2);
    QTest::newRow("three pieces exactly")
        << QList<qsizetype>{3 * kPiece} << QByteArray() << qint64(kPiece);
    QTest::newRow("grows over chunks") << QList<qsizetype>{kPiece / 2, kPiece / 2, kPiece / 2}
                                       << QByteArray() << qint64(kPiece / 2);
    QTest::newRow("ends at last") << QList<qsizetype>{kPiece + 10} << QByteArray("\n") << qint64(0);
    QTest::newRow("ends, long rest")
        << QList<qsizetype>{10} << QByteArray("\n" + QByteArray(kPiece + 7, 'y')) << qint64(7);
}

void TestStreamOffsets::longLines()
{
    QFETCH(QList<qsizetype>, chunkSizes);
    QFETCH(QByteArray, tail);
    QFETCH(qint64, pending);
    StreamOffsets o;
    LineSplitter splitter;
    QList<LinePiece> pieces;
    qint64 total = 0;
    auto feed = [&](const QByteArray &chunk) {
        o.add(StreamKind::Stderr, chunk);
        splitter.feed(chunk, pieces);
        total += chunk.size();
    };
    for (qsizetype n : chunkSizes)
        feed(QByteArray(n, 'x'));
    if (!tail.isEmpty())
        feed(tail);
    QCOMPARE(o.pending[1], pending);
    QCOMPARE(o.committed(StreamKind::Stderr), total - pending);
    QCOMPARE(o.pending[1], qint64(splitter.pendingBytes()));
}

void TestStreamOffsets::mirrorsTheSplitter()
{
    // Random chunkings of text with short, empty and very long lines: what the offsets leave
    // pending is what the real splitter holds, after every chunk.
    QRandomGenerator rng(20261201);
    QByteArray text;
    for (int i = 0; i < 60; ++i) {
        const int kind = rng.bounded(10);
        const qsizetype len = kind == 0 ? kPiece * rng.bounded(1, 4) + rng.bounded(-2, 3)
                                        : (kind == 1 ? 0 : rng.bounded(1, 200));
        text += QByteArray(len, char('a' + i % 26));
        if (rng.bounded(8) != 0)
            text += '\n';
    }
    for (int round = 0; round < 4; ++round) {
        StreamOffsets o;
        LineSplitter splitter;
        QList<LinePiece> pieces;
        qsizetype at = 0;
        const qsizetype maxChunk =
            round == 0 ? 7 : (round == 1 ? 4096 : (round == 2 ? 300000 : kPiece * 3));
        while (at < text.size()) {
            const qsizetype n =
                std::min<qsizetype>(text.size() - at, rng.bounded(1, int(maxChunk) + 1));
            const QByteArray chunk = text.mid(at, n);
            o.add(StreamKind::Stdout, chunk);
            splitter.feed(chunk, pieces);
            at += n;
            QCOMPARE(o.pending[0], qint64(splitter.pendingBytes()));
        }
        QCOMPARE(o.received[0], qint64(text.size()));
    }
}

void TestStreamOffsets::json()
{
    StreamOffsets o;
    o.attempt = 4;
    o.add(StreamKind::Stdout, "line\npart");
    o.add(StreamKind::Stderr, "err\n");
    const QJsonObject j = o.toJson(3);
    QCOMPARE(j.value(QStringLiteral("rank")).toInt(), 3);
    QCOMPARE(j.value(QStringLiteral("attempt")).toInt(), 4);
    QCOMPARE(j.value(QStringLiteral("stdout_bytes")).toInteger(),
             qint64(5)); // committed, not received
    QCOMPARE(j.value(QStringLiteral("stderr_bytes")).toInteger(), qint64(4));
    QCOMPARE(j.size(), 4);

    // Beyond 32 bits: a rank that printed for weeks.
    StreamOffsets big;
    big.attempt = 1;
    big.received[0] = qint64(6) << 32;
    const QJsonObject bj = big.toJson(0);
    QCOMPARE(StreamOffsets::fromJson(bj).committed(StreamKind::Stdout), qint64(6) << 32);
}

void TestStreamOffsets::jsonReadBackHasNothingPending()
{
    StreamOffsets o;
    o.attempt = 2;
    o.add(StreamKind::Stdout, "a\nbb\nccc");
    o.add(StreamKind::Stderr, "dd");
    const StreamOffsets r = StreamOffsets::fromJson(o.toJson(0));
    QCOMPARE(r.attempt, 2);
    QCOMPARE(r.pending[0], qint64(0));
    QCOMPARE(r.pending[1], qint64(0));
    QCOMPARE(r.committed(StreamKind::Stdout), o.committed(StreamKind::Stdout));
    QCOMPARE(r.committed(StreamKind::Stderr), o.committed(StreamKind::Stderr));
    QCOMPARE(r.toJson(0), o.toJson(0));

    const StreamOffsets empty = StreamOffsets::fromJson(QJsonObject());
    QCOMPARE(empty.attempt, 0);
    QCOMPARE(empty.committed(StreamKind::Stdout), qint64(0));
}

// streams.bin: one fixed record per rank, rewritten in place; what it has ahead of state.json
// wins, what it lacks (an older attempt, fewer bytes) does not.
void TestStreamOffsets::fileKeepsTheLatestInPlace()
{
    QTemporaryDir dir;
    StreamOffsetsFile file;
    QVERIFY(file.open(dir.path()));
    StreamOffsets r0{1, {0, 0}, {0, 0}}, r2{2, {0, 0}, {0, 0}};
    r0.add(StreamKind::Stdout, "one\ntw"); // 4 committed, 2 pending
    file.write(0, r0);
    r0.add(StreamKind::Stdout, "o\n");
    r0.add(StreamKind::Stderr, "e\n");
    file.write(0, r0);
    r2.add(StreamKind::Stderr, "x\n");
    file.write(2, r2);
    QCOMPARE(QFileInfo(dir.filePath(StreamOffsetsFile::fileName())).size(), 3 * 24);
    const QList<StreamOffsets> read = StreamOffsetsFile::read(dir.path(), 3);
    QCOMPARE(read.size(), 3);
    QCOMPARE(read[0].attempt, 1);
    QCOMPARE(read[0].committed(StreamKind::Stdout), 8);
    QCOMPARE(read[0].committed(StreamKind::Stderr), 2);
    QCOMPARE(read[1].attempt, 0); // never written
    QCOMPARE(read[2].committed(StreamKind::Stderr), 2);

    QList<StreamOffsets> state(3);
    state[0] = StreamOffsets{1, {4, 0}, {0, 0}};  // behind: the file wins
    state[1] = StreamOffsets{1, {10, 0}, {0, 0}}; // the file has nothing: state stays
    state[2] = StreamOffsets{3, {0, 0}, {0, 0}};  // a later attempt than the file's: state stays
    StreamOffsetsFile::takeNewer(&state, read);
    QCOMPARE(state[0].committed(StreamKind::Stdout), 8);
    QCOMPARE(state[1].committed(StreamKind::Stdout), 10);
    QCOMPARE(state[2].attempt, 3);
}

QTEST_GUILESS_MAIN(TestStreamOffsets)
#include "tst_streamoffsets.moc"
