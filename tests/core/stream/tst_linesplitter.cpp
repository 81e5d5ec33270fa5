// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/linesplitter.h"

#include <QRandomGenerator>
#include <QtTest>

using namespace rankdeck;

class TestLineSplitter : public QObject
{
    Q_OBJECT
private slots:
    void splitsChunks_data();
    void splitsChunks();
    void everyByteLeavesOnce_data();
    void everyByteLeavesOnce();
    void longLineLeavesInBoundedPieces();
    void lineThatNeverEndsStaysBounded();
    void displayText_data();
    void displayText();
    void displayCutsAtCharacterBoundary();
};

// Chunks are separated by '|' in the data tags below; lines in the result by '|' too.
void TestLineSplitter::splitsChunks_data()
{
    QTest::addColumn<QList<QByteArray>>("chunks");
    QTest::addColumn<QList<QByteArray>>("lines");
    QTest::addColumn<QByteArray>("pending");

    QTest::newRow("one line") << QList<QByteArray>{"abc\n"} << QList<QByteArray>{"abc"}
                              << QByteArray();
    QTest::newRow("partial then rest")
        << QList<QByteArray>{"ab", "c\nde"} << QList<QByteArray>{"abc"} << QByteArray("de");
    QTest::newRow("newline alone")
        << QList<QByteArray>{"abc", "\n"} << QList<QByteArray>{"abc"} << QByteArray();
    QTest::newRow("empty lines") << QList<QByteArray>{"\n\n", "\n"} << QList<QByteArray>{"", "", ""}
                                 << QByteArray();
    QTest::newRow("crlf keeps cr")
        << QList<QByteArray>{"a\r\nb\r", "\n"} << QList<QByteArray>{"a\r", "b\r"} << QByteArray();
    QTest::newRow("progress bar") << QList<QByteArray>{"10%\r", "50%\r100%\n"}
                                  << QList<QByteArray>{"10%\r50%\r100%"} << QByteArray();
    QTest::newRow("nul bytes") << QList<QByteArray>{QByteArray("a\0b\n\0", 5)}
                               << QList<QByteArray>{QByteArray("a\0b", 3)} << QByteArray("\0", 1);
    QTest::newRow("invalid utf8") << QList<QByteArray>{"\xff\xfe\xc3", "\x28\n"}
                                  << QList<QByteArray>{"\xff\xfe\xc3\x28"} << QByteArray();
    QTest::newRow("many in one chunk")
        << QList<QByteArray>{"1\n2\n3\n4"} << QList<QByteArray>{"1", "2", "3"} << QByteArray("4");
    QTest::newRow("empty chunks") << QList<QByteArray>{"", "x", "", "\n", ""}
                                  << QList<QByteArray>{"x"} << QByteArray();
}

void TestLineSplitter::splitsChunks()
{
    QFETCH(QList<QByteArray>, chunks);
    QFETCH(QList<QByteArray>, lines);
    QFETCH(QByteArray, pending);
    LineSplitter s;
    QList<LinePiece> out;
    for (const QByteArray &c : chunks)
        s.feed(c, out);
    QCOMPARE(out.size(), lines.size());
    for (int i = 0; i < lines.size(); ++i) {
        QCOMPARE(out[i].bytes, lines[i]);
        QVERIFY(out[i].complete);
    }
    QCOMPARE(s.pendingBytes(), pending.size());
    QList<LinePiece> rest;
    s.finish(rest);
    if (pending.isEmpty()) {
        QVERIFY(rest.isEmpty());
    } else {
        QCOMPARE(rest.size(), 1);
        QCOMPARE(rest[0].bytes, pending);
        QVERIFY(rest[0].complete);
    }
}

void TestLineSplitter::everyByteLeavesOnce_data()
{
    QTest::addColumn<int>("maxPiece");
    QTest::addColumn<int>("maxChunk");
    QTest::newRow("tiny pieces, byte chunks") << 16 << 1;
    QTest::newRow("tiny pieces, big chunks") << 16 << 5000;
    QTest::newRow("default pieces, odd chunks") << int(LineSplitter::kDefaultMaxPieceBytes) << 977;
}

// Whatever the chunking, joining the pieces (with '\n' after complete ones) gives the input
// back byte for byte: the run record can be exact.
void TestLineSplitter::everyByteLeavesOnce()
{
    QFETCH(int, maxPiece);
    QFETCH(int, maxChunk);
    QRandomGenerator rng(1234);
    QByteArray input;
    for (int i = 0; i < 20000; ++i) {
        const quint32 r = rng.bounded(100);
        if (r < 8)
            input.append('\n');
        else if (r < 10)
            input.append('\r');
        else
            input.append(char(rng.bounded(256)));
    }
    input.append(QByteArray(300, 'L')); // a line longer than the tiny piece size
    input.append('\n');
    LineSplitter s(maxPiece);
    QList<LinePiece> out;
    for (qsizetype off = 0; off < input.size();) {
        const qsizetype n = qMin<qsizetype>(input.size() - off, 1 + rng.bounded(maxChunk));
        s.feed(QByteArrayView(input).sliced(off, n), out);
        off += n;
        QVERIFY(s.pendingBytes() <= maxPiece);
    }
    s.finish(out);
    QByteArray joined;
    for (const LinePiece &p : out) {
        QVERIFY(p.bytes.size() <= maxPiece);
        QVERIFY(!p.bytes.contains('\n'));
        joined += p.bytes;
        if (p.complete)
            joined += '\n';
    }
    QCOMPARE(joined.size(), input.size());
    QVERIFY(joined == input);
}

void TestLineSplitter::longLineLeavesInBoundedPieces()
{
    const qsizetype piece = 64 * 1024;
    LineSplitter s(piece);
    QByteArray line(3 * 1024 * 1024 + 17, 'x');
    line[0] = 'A';
    QList<LinePiece> out;
    s.feed(line + "\nnext\n", out);
    // 3 MiB + 17 bytes: 48 full pieces and one of 17 bytes, then "next".
    QCOMPARE(out.size(), 48 + 1 + 1);
    for (int i = 0; i < 48; ++i) {
        QCOMPARE(out[i].bytes.size(), piece);
        QVERIFY(!out[i].complete);
    }
    QCOMPARE(out[48].bytes.size(), 17);
    QVERIFY(out[48].complete);
    QCOMPARE(out[49].bytes, QByteArray("next"));
    QCOMPARE(out[0].bytes.at(0), 'A');
}

void TestLineSplitter::lineThatNeverEndsStaysBounded()
{
    LineSplitter s(1000);
    QList<LinePiece> out;
    qint64 fed = 0;
    for (int i = 0; i < 2000; ++i) {
        s.feed(QByteArray(777, 'z'), out);
        fed += 777;
        QVERIFY(s.pendingBytes() <= 1000);
    }
    qint64 got = s.pendingBytes();
    for (const LinePiece &p : out) {
        QVERIFY(!p.complete);
        got += p.bytes.size();
    }
    QCOMPARE(got, fed);
}

void TestLineSplitter::displayText_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("maxBytes");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<bool>("truncated");

    QTest::newRow("plain") << QByteArray("Rank 0: Epoch 1, Loss 0.5") << 100
                           << QStringLiteral("Rank 0: Epoch 1, Loss 0.5") << false;
    QTest::newRow("crlf") << QByteArray("abc\r") << 100 << QStringLiteral("abc") << false;
    QTest::newRow("progress shows last state")
        << QByteArray("10%\r50%\r100%") << 100 << QStringLiteral("100%") << false;
    QTest::newRow("progress then crlf")
        << QByteArray("10%\r100%\r") << 100 << QStringLiteral("100%") << false;
    QTest::newRow("ansi colour") << QByteArray("\x1b[31mred\x1b[0m text") << 100
                                 << QStringLiteral("red text") << false;
    QTest::newRow("ansi osc title") << QByteArray("\x1b]0;title\x07"
                                                  "after")
                                    << 100 << QStringLiteral("after") << false;
    QTest::newRow("nul visible") << QByteArray("a\0b", 3) << 100 << QStringLiteral("a\u2400b")
                                 << false;
    QTest::newRow("tab kept") << QByteArray("a\tb") << 100 << QStringLiteral("a\tb") << false;
    QTest::newRow("invalid utf8 replaced")
        << QByteArray("ok\xff!") << 100 << QStringLiteral("ok\ufffd!") << false;
    QTest::newRow("utf8 kept") << QByteArray("loss \xce\xbb=1") << 100 << QStringLiteral("loss λ=1")
                               << false;
    QTest::newRow("cut") << QByteArray("0123456789") << 4
                         << QStringLiteral("0123") + LineSplitter::cutMarker(10) << true;
}

void TestLineSplitter::displayText()
{
    QFETCH(QByteArray, line);
    QFETCH(int, maxBytes);
    QFETCH(QString, expected);
    QFETCH(bool, truncated);
    bool cut = !truncated;
    QCOMPARE(LineSplitter::displayText(line, maxBytes, &cut), expected);
    QCOMPARE(cut, truncated);
}

void TestLineSplitter::displayCutsAtCharacterBoundary()
{
    // "ééé" is 6 bytes; a cut at 3 bytes must not split the second 'é'.
    bool cut = false;
    const QString text = LineSplitter::displayText(QByteArray("\xc3\xa9\xc3\xa9\xc3\xa9"), 3, &cut);
    QVERIFY(cut);
    QVERIFY(text.startsWith(QStringLiteral("é")));
    QVERIFY(!text.contains(QChar(0xfffd)));
    QVERIFY(text.contains(QStringLiteral("6"))); // the marker names the full length
    // A head of a longer line is cut even when the head itself fits.
    cut = false;
    LineSplitter::displayText("head", 100, &cut, 5'000'000);
    QVERIFY(cut);
}

QTEST_GUILESS_MAIN(TestLineSplitter)
#include "tst_linesplitter.moc"
