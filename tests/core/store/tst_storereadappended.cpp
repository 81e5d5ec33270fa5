// SPDX-License-Identifier: GPL-3.0-or-later
//
// A store opened on a record that another launcher is writing (issue 31: a run followed from
// the run list) takes in what that launcher appends: LogStore::readAppended() every line once,
// in the merged order, ranks that print their first line later included, and never a line
// whose bytes are not all on disk yet (the index may reach the disk before them);
// MetricsStore::readAppended() every complete row of metrics.csv once, never half a row. The
// writer here is a second store in the same process, writing the files as a launcher does.
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "stream/rankstream.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <memory>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestStoreReadAppended : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::map<int, std::unique_ptr<RankStream>> m_streams;

    void feed(LogStore &store, int rank, const QByteArray &text)
    {
        auto &s = m_streams[rank];
        if (!s)
            s = std::make_unique<RankStream>(rank);
        store.append(s->feed(StreamKind::Stdout, text).lines);
    }
    static QStringList texts(const LogStore &store, int rank)
    {
        QStringList out;
        for (const LogLine &l : store.readLines(rank, 0, int(store.lineCount(rank))))
            out << u"%1:%2"_s.arg(l.rank).arg(l.text);
        return out;
    }
    static QStringList recentTexts(const LogStore &store, int rank)
    {
        QStringList out;
        for (const LogLine &l : store.recentLines(rank, 0))
            out << u"%1:%2"_s.arg(l.rank).arg(l.text);
        return out;
    }

private slots:
    void init() { m_streams.clear(); }

    void linesAsTheyAreAppended_data()
    {
        QTest::addColumn<QList<int>>("batches"); // lines per batch, each over the ranks below
        QTest::addColumn<int>("ranks");
        QTest::newRow("one rank, line by line") << QList<int>{1, 1, 1, 1} << 1;
        QTest::newRow("8 ranks, batches") << QList<int>{3, 50, 1, 200} << 8;
        // More lines than the merged window holds: the window keeps the newest.
        QTest::newRow("past the window") << QList<int>{700, 700} << 4;
    }

    void linesAsTheyAreAppended()
    {
        QFETCH(QList<int>, batches);
        QFETCH(int, ranks);
        const QString dir = m_dir.filePath(QString::fromLatin1(QTest::currentDataTag()));
        LogStore::Options small;
        small.windowAll = 1000;
        LogStore writer(small);
        QVERIFY(writer.open(dir));
        feed(writer, 0, "before the reader\n");
        LogStore reader(small);
        QVERIFY(reader.open(dir));
        QCOMPARE(reader.lineCount(LogStore::AllRanks), 1);
        QVERIFY(!reader.readAppended()); // nothing new
        int printed = 1;
        for (int lines : std::as_const(batches)) {
            // Ranks take turns, the last rank printing its first line only in a later batch.
            for (int i = 0; i < lines; ++i, ++printed)
                feed(writer, printed % ranks, "line " + QByteArray::number(printed) + '\n');
            const quint64 generation = reader.generation();
            QVERIFY(reader.readAppended());
            QVERIFY(reader.generation() != generation);
            QVERIFY(!reader.readAppended());
            QCOMPARE(reader.lineCount(LogStore::AllRanks), printed);
            QCOMPARE(reader.ranks(), writer.ranks());
            for (int rank : writer.ranks()) {
                QCOMPARE(reader.lineCount(rank), writer.lineCount(rank));
                QCOMPARE(recentTexts(reader, rank), recentTexts(writer, rank));
            }
            QCOMPARE(recentTexts(reader, LogStore::AllRanks),
                     recentTexts(writer, LogStore::AllRanks));
            const QList<LogLine> merged = reader.recentLines(LogStore::AllRanks, 0);
            for (qsizetype i = 0; i < merged.size(); ++i)
                QCOMPARE(merged[i].sequence, reader.firstInMemory(LogStore::AllRanks) + i);
        }
        QCOMPARE(texts(reader, LogStore::AllRanks), texts(writer, LogStore::AllRanks));
    }

    void lineWithoutItsBytesWaits()
    {
        // The index records of a line reached the disk, its bytes not all yet (a large batch
        // goes out in pieces): the reader takes the line once its bytes are there, not before.
        const QString source = m_dir.filePath(u"tornsource"_s);
        {
            LogStore writer;
            QVERIFY(writer.open(source));
            feed(writer, 0, "first\nsecond line\n");
        }
        auto bytes = [&](const QString &name) {
            QFile f(source + u'/' + name);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray log = bytes(u"rank-0.log"_s);
        const QByteArray index = bytes(u"rank-0.idx"_s);
        const QByteArray all = bytes(u"all.idx"_s);
        QCOMPARE(log, QByteArray("first\nsecond line\n"));
        QCOMPARE(index.size(), 48);
        QCOMPARE(all.size(), 16);
        const QString dir = m_dir.filePath(u"torn"_s);
        QVERIFY(QDir().mkpath(dir));
        auto append = [&](const QString &name, const QByteArray &data) {
            QFile f(dir + u'/' + name);
            return f.open(QIODevice::Append) && f.write(data) == data.size();
        };
        QVERIFY(append(u"rank-0.log"_s, log.left(6)));
        QVERIFY(append(u"rank-0.idx"_s, index.left(24)));
        QVERIFY(append(u"all.idx"_s, all.left(8)));
        LogStore reader;
        QVERIFY(reader.open(dir));
        QCOMPARE(reader.lineCount(LogStore::AllRanks), 1);

        QVERIFY(append(u"rank-0.log"_s, log.mid(6, 4)));
        QVERIFY(append(u"rank-0.idx"_s, index.mid(24)));
        QVERIFY(append(u"all.idx"_s, all.mid(8)));
        QVERIFY(!reader.readAppended());
        QCOMPARE(reader.lineCount(LogStore::AllRanks), 1);
        QCOMPARE(reader.lineCount(0), 1);

        QVERIFY(append(u"rank-0.log"_s, log.mid(10)));
        QVERIFY(reader.readAppended());
        QCOMPARE(reader.lineCount(LogStore::AllRanks), 2);
        QCOMPARE(recentTexts(reader, LogStore::AllRanks),
                 (QStringList{u"0:first"_s, u"0:second line"_s}));
        QCOMPARE(recentTexts(reader, 0), (QStringList{u"0:first"_s, u"0:second line"_s}));
    }

    void metricsAsTheyAreAppended()
    {
        const QString dir = m_dir.filePath(u"metrics"_s);
        MetricsStore writer;
        QVERIFY(writer.open(dir));
        for (int step = 1; step <= 3; ++step)
            writer.append(0, u"loss"_s, step, 1000 * step, 1.0 / step);
        MetricsStore reader;
        QVERIFY(reader.open(dir));
        QCOMPARE(reader.pointCount(0, u"loss"_s), 3);
        QVERIFY(!reader.readAppended());

        // New points, a new rank and a new metric; then a restart (steps going back).
        for (int step = 4; step <= 6; ++step) {
            writer.append(0, u"loss"_s, step, 1000 * step, 1.0 / step);
            writer.append(1, u"lr"_s, step, 1000 * step, 0.1);
        }
        writer.append(0, u"loss"_s, 2, 7000, 0.75);
        const quint64 generation = reader.generation();
        QVERIFY(reader.readAppended());
        QVERIFY(reader.generation() != generation);
        QVERIFY(!reader.readAppended());
        QCOMPARE(reader.totalPoints(), writer.totalPoints());
        QCOMPARE(reader.metricNames(), writer.metricNames());
        for (int rank : {0, 1})
            for (const QString &name : writer.metricNames())
                QCOMPARE(reader.segments(rank, name).size(), writer.segments(rank, name).size());
        QCOMPARE(reader.segmentCount(0, u"loss"_s), 2);
        MetricPoint last;
        QVERIFY(reader.lastPoint(0, u"loss"_s, &last));
        QCOMPARE(last, (MetricPoint{2, 7000, 0.75}));

        // Half a row (a write the reader sees before its end) waits for the rest.
        QFile csv(dir + u"/metrics.csv"_s);
        QVERIFY(csv.open(QIODevice::Append));
        QVERIFY(csv.write("1,lr,0,7,7000,0.") == 16 && csv.flush());
        QVERIFY(!reader.readAppended());
        QCOMPARE(reader.pointCount(1, u"lr"_s), 3);
        QVERIFY(csv.write("05\n") == 3 && csv.flush());
        QVERIFY(reader.readAppended());
        QCOMPARE(reader.pointCount(1, u"lr"_s), 4);
        QVERIFY(reader.lastPoint(1, u"lr"_s, &last));
        QCOMPARE(last, (MetricPoint{7, 7000, 0.05}));

        // A store opened (a second GUI following the run) while a row is half written leaves
        // the file alone: the writer's row stays one row.
        QVERIFY(csv.write("1,lr,0,8,8000,0.") == 16 && csv.flush());
        MetricsStore follower;
        QVERIFY(follower.open(dir));
        QVERIFY(csv.write("5\n") == 2 && csv.flush());
        QVERIFY(follower.readAppended());
        QVERIFY(follower.lastPoint(1, u"lr"_s, &last));
        QCOMPARE(last, (MetricPoint{8, 8000, 0.5}));
        QFile whole(dir + u"/metrics.csv"_s);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        QVERIFY(whole.readAll().endsWith("\n1,lr,0,8,8000,0.5\n"));
    }

    // The launcher that wrote a record crashed mid-row; the record is appended to again (a
    // re-attach): the cut row ends where it was cut and the next row starts on its own line.
    void cutRowIsMendedByTheNextWriter()
    {
        const QString dir = m_dir.filePath(u"cut"_s);
        {
            MetricsStore crashed;
            QVERIFY(crashed.open(dir));
            crashed.append(0, u"loss"_s, 1, 1000, 0.5);
        }
        QFile csv(dir + u"/metrics.csv"_s);
        QVERIFY(csv.open(QIODevice::Append));
        QVERIFY(csv.write("0,loss,0,2,20") == 13 && csv.flush());
        csv.close();
        MetricsStore next;
        QVERIFY(next.open(dir));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QVERIFY(csv.readAll().endsWith(",20")); // opening alone wrote nothing
        csv.close();
        next.append(0, u"loss"_s, 3, 3000, 0.25);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QByteArray all = csv.readAll();
        QVERIFY2(all.endsWith("0,loss,0,2,20\n0,loss,0,3,3000,0.25\n"), all.constData());
        MetricsStore reader;
        QVERIFY(reader.open(dir));
        QCOMPARE(reader.pointCount(0, u"loss"_s), 2); // the cut row is not a point
    }
};

QTEST_GUILESS_MAIN(TestStoreReadAppended)
#include "tst_storereadappended.moc"
