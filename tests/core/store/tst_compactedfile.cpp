// SPDX-License-Identifier: GPL-3.0-or-later
//
// The compressed segments of a run record's append-only files (CompactedFile): every byte reads
// back at its offset, from the file or from a segment, while a writer compacts beside the
// reader; the segments are plain zstd; what is lost is named.
#include "store/compactedfile.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <atomic>
#include <thread>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// Line n of the test file: 40 bytes, so the byte at any offset is known without the file.
constexpr qint64 kLine = 40;
QByteArray lineAt(qint64 n)
{
    QByteArray l = "line " + QByteArray::number(n).rightJustified(10, '0') + " of a long run ";
    return l.leftJustified(kLine - 1, '.') + '\n';
}
QByteArray expectedBytes(qint64 offset, qint64 length)
{
    QByteArray out;
    for (qint64 n = offset / kLine; qint64(out.size()) < (offset % kLine) + length; ++n)
        out += lineAt(n);
    return out.mid(offset % kLine, length);
}

bool appendLines(const QString &path, qint64 from, qint64 count)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Append))
        return false;
    QByteArray out;
    for (qint64 n = from; n < from + count; ++n)
        out += lineAt(n);
    return f.write(out) == out.size() && f.flush();
}

qint64 allocated(const QString &path)
{
    struct stat st
    {
    };
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? qint64(st.st_blocks) * 512 : -1;
}

} // namespace

class TestCompactedFile : public QObject
{
    Q_OBJECT
private slots:
    void readsBackAcrossSegmentsAndFile();
    void segmentsArePlainZstd();
    void readerBesideACompactingWriter();
    void lostSegmentIsNamed_data();
    void lostSegmentIsNamed();
    void sparseFileReadsItsZeros();
};

void TestCompactedFile::readsBackAcrossSegmentsAndFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(u"rank-0.log"_s);
    QVERIFY(appendLines(path, 0, 5000)); // 200,000 bytes
    const qint64 size = 5000 * kLine;
    const qint64 before = allocated(path);
    QString error;
    QVERIFY2(CompactedFile::compact(path, 0, 30001, &error), qPrintable(error));
    QVERIFY2(CompactedFile::compact(path, 30001, 150000, &error), qPrintable(error));
    QCOMPARE(QFileInfo(path).size(), size); // offsets stay
    // The blocks below the compacted end are freed; what is above stays.
    QVERIFY2(allocated(path) <= before - 150000 / 4096 * 4096,
             qPrintable(u"%1 of %2 bytes still allocated"_s.arg(allocated(path)).arg(before)));
    QCOMPARE(CompactedFile::segments(path).size(), 2);

    CompactedFile f(path);
    QVERIFY(f.open(&error));
    QCOMPARE(f.size(), size);
    QCOMPARE(CompactedFile::compactedEnds(dir.path()),
             (QHash<QString, qint64>{{u"rank-0.log"_s, 150000}}));
    // Ranges inside a segment, across both, across the segments' end into the file, above.
    for (const auto &[offset, length] : {std::pair<qint64, qint64>{0, 100},
                                         {29990, 30},
                                         {30001, 5},
                                         {149000, 2000},
                                         {4095, 8193},
                                         {160000, 40000},
                                         {199990, 100},
                                         {0, size}}) {
        const QByteArray got = f.read(offset, length, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(got, expectedBytes(offset, qMin(length, size - offset)));
    }
    QCOMPARE(CompactedFile::readAll(path, &error), expectedBytes(0, size));
    QVERIFY(f.read(size, 10).isEmpty());
}

void TestCompactedFile::segmentsArePlainZstd()
{
    const QString zstd = QStandardPaths::findExecutable(u"zstd"_s);
    if (zstd.isEmpty())
        QSKIP("no zstd command here (scripts/bootstrap.sh installs it)");
    QTemporaryDir dir;
    const QString path = dir.filePath(u"rank-3.log"_s);
    QVERIFY(appendLines(path, 0, 3000));
    QVERIFY(CompactedFile::compact(path, 0, 50000));
    QVERIFY(CompactedFile::compact(path, 50000, 100000));
    // What the file's header says: `zstdcat rank-3.log.*.zst` gives the oldest text.
    QByteArray text;
    for (const CompactedFile::Segment &s : CompactedFile::segments(path)) {
        QProcess p;
        p.start(zstd, {u"-dc"_s, s.path});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        text += p.readAllStandardOutput();
    }
    QCOMPARE(text, expectedBytes(0, 100000));
}

// A reader that starts reading a range, the writer freeing it meanwhile: the reader must never
// return the zeros of the freed blocks. Readers in other processes (the window following a
// run, `logs --follow`) share no lock with the writer.
void TestCompactedFile::readerBesideACompactingWriter()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(u"rank-1.log"_s);
    QVERIFY(appendLines(path, 0, 100));
    std::atomic<qint64> written{100 * kLine};
    std::atomic<bool> done{false};
    std::atomic<int> writerFailures{0};
    std::thread writer([&] {
        qint64 lines = 100, compacted = 0;
        for (int round = 0; round < 400; ++round) {
            if (!appendLines(path, lines, 100)) {
                ++writerFailures;
                break;
            }
            lines += 100;
            written.store(lines * kLine);
            // Keep the newest half plain, as the log store does; odd ends, not block-aligned.
            const qint64 end = lines * kLine / 2 + 7;
            if (end > compacted && !CompactedFile::compact(path, compacted, end)) {
                ++writerFailures;
                break;
            }
            compacted = qMax(compacted, end);
        }
        done.store(true);
    });
    qint64 reads = 0, wrong = 0;
    QString firstWrong;
    quint32 seed = 1;
    auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
    while (!done.load()) {
        const qint64 size = written.load();
        CompactedFile f(path);
        QVERIFY(f.open());
        const qint64 offset = qint64(next() % quint32(size));
        const qint64 length = 1 + qint64(next() % 20000);
        QString error;
        const QByteArray got = f.read(offset, length, &error);
        const QByteArray want = expectedBytes(offset, qMin(length, size - offset));
        ++reads;
        if (!error.isEmpty() || got.left(want.size()) != want) {
            if (++wrong == 1)
                firstWrong = u"bytes %1+%2: %3"_s.arg(offset).arg(length).arg(
                    error.isEmpty() ? u"other bytes"_s : error);
        }
    }
    writer.join();
    QCOMPARE(writerFailures.load(), 0);
    QVERIFY2(wrong == 0,
             qPrintable(u"%1 of %2 reads wrong, first %3"_s.arg(wrong).arg(reads).arg(firstWrong)));
    QVERIFY(reads > 10);
    QCOMPARE(CompactedFile::readAll(path), expectedBytes(0, 40100 * kLine));
}

void TestCompactedFile::lostSegmentIsNamed_data()
{
    QTest::addColumn<bool>("remove");
    QTest::newRow("a segment removed") << true;
    QTest::newRow("a segment cut short") << false;
}

void TestCompactedFile::lostSegmentIsNamed()
{
    QFETCH(bool, remove);
    QTemporaryDir dir;
    const QString path = dir.filePath(u"all.idx"_s);
    QVERIFY(appendLines(path, 0, 1000));
    QVERIFY(CompactedFile::compact(path, 0, 20000));
    QVERIFY(CompactedFile::compact(path, 20000, 25000));
    const QString segment = CompactedFile::segmentPath(path, 0, 20000);
    if (remove) {
        QVERIFY(QFile::remove(segment));
    } else {
        QFile f(segment);
        QVERIFY(f.open(QIODevice::ReadWrite) && f.resize(f.size() / 2));
    }
    CompactedFile f(path);
    QVERIFY(f.open());
    QString error;
    QVERIFY(f.read(100, 50, &error).isEmpty());
    QVERIFY2(error.contains(remove ? path : segment), qPrintable(error));
    // What the file still holds reads as before.
    error.clear();
    QCOMPARE(f.read(30000, 100, &error), expectedBytes(30000, 100));
    QVERIFY(error.isEmpty());
}

// A hole that no compaction made (a sparse file, hostile input: tst_hostileinput's 1.5 GiB line)
// is the file's own content: zeros, not a lost segment.
void TestCompactedFile::sparseFileReadsItsZeros()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(u"rank-0.log"_s);
    QVERIFY(appendLines(path, 0, 10));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadWrite) && f.resize(10 * kLine + (8 << 20)));
    }
    CompactedFile f(path);
    QVERIFY(f.open());
    QString error;
    QCOMPARE(f.read(0, 10 * kLine, &error), expectedBytes(0, 10 * kLine));
    QCOMPARE(f.read(4 << 20, 100, &error), QByteArray(100, '\0'));
    QVERIFY2(error.isEmpty(), qPrintable(error));
    // The same above the segments of a compacted file.
    QVERIFY(CompactedFile::compact(path, 0, 5 * kLine));
    QCOMPARE(f.read(0, 10 * kLine + 10, &error),
             expectedBytes(0, 10 * kLine) + QByteArray(10, '\0'));
    QVERIFY2(error.isEmpty(), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestCompactedFile)
#include "tst_compactedfile.moc"
