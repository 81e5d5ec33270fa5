// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/wireprotocol.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace rankdeck::wire;

class TestWireProtocol : public QObject
{
    Q_OBJECT
private slots:
    void crcMatchesZlib()
    {
        // Reference value of zlib's crc32("123456789").
        QCOMPARE(crc32("123456789"), 0xcbf43926u);
        QCOMPARE(crc32(""), 0u);
    }

    void roundTrip()
    {
        WireEventWriter w(event::Step, 3, 1700000000123456);
        w.addInt(field::Step, 42)
            .addDouble(field::Loss, 0.125)
            .addString(field::Message, "a\"b\\c\nd\x01");
        w.addDouble(field::LearningRate, std::nan(""));
        const std::string line = w.line();
        QVERIFY(line.back() == '\n');
        const auto m = findWireEvent(std::string_view(line).substr(0, line.size() - 1));
        QVERIFY(m.found);
        QVERIFY(m.valid);
        QCOMPARE(m.markerPos, 0u);
        QJsonParseError err;
        const auto doc =
            QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())), &err);
        QCOMPARE(err.error, QJsonParseError::NoError);
        const QJsonObject o = doc.object();
        QCOMPARE(o.value(u"t").toString(), QStringLiteral("step"));
        QCOMPARE(o.value(u"rank").toInt(), 3);
        QCOMPARE(o.value(u"ts").toInteger(), 1700000000123456);
        QCOMPARE(o.value(u"step").toInt(), 42);
        QCOMPARE(o.value(u"loss").toDouble(), 0.125);
        QCOMPARE(o.value(u"msg").toString(), QStringLiteral("a\"b\\c\nd\x01"));
        QCOMPARE(o.value(u"lr").toString(), QStringLiteral("nan"));
    }

    void eventAfterPartialUserLine()
    {
        const std::string ev = WireEventWriter(event::Heartbeat, 0, 1).line();
        const std::string line = "progress 40%" + ev.substr(0, ev.size() - 1);
        const auto m = findWireEvent(line);
        QVERIFY(m.valid);
        QCOMPARE(m.markerPos, std::string("progress 40%").size());
    }

    void rejectsForgedOrTornEvents_data()
    {
        QTest::addColumn<QByteArray>("line");
        const std::string ev = WireEventWriter(event::Heartbeat, 0, 1).line();
        const QByteArray good = QByteArray::fromStdString(ev.substr(0, ev.size() - 1));
        QTest::newRow("torn") << good.left(good.size() - 3);
        QByteArray flipped = good;
        flipped[flipped.size() - 2] = 'X';
        QTest::newRow("flipped byte") << flipped;
        QTest::newRow("no crc") << QByteArray("\x1erdk1 {\"t\":\"step\"}");
        QTest::newRow("bad hex") << QByteArray("\x1erdk1 zzzzzzzz {}");
        QTest::newRow("marker only") << QByteArray("\x1erdk1 ");
    }
    void rejectsForgedOrTornEvents()
    {
        QFETCH(QByteArray, line);
        const auto m = findWireEvent(std::string_view(line.constData(), size_t(line.size())));
        QVERIFY(m.found);
        QVERIFY(!m.valid);
    }

    void plainLinesAreNotEvents()
    {
        QVERIFY(!findWireEvent("Rank 0: Epoch 1, Loss 0.5").found);
        QVERIFY(!findWireEvent("rdk1 00000000 {}").found);
    }

    void parsesDumpFlightRecorder_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("id");
        QTest::newRow("with id") << QByteArray("dump-flight-recorder 7") << true << qint64(7);
        QTest::newRow("alone means 0") << QByteArray("dump-flight-recorder") << true << qint64(0);
        QTest::newRow("spaces") << QByteArray("dump-flight-recorder   12") << true << qint64(12);
        QTest::newRow("2^53") << QByteArray("dump-flight-recorder 9007199254740992") << true
                              << qint64(9007199254740992);
        QTest::newRow("over 2^53")
            << QByteArray("dump-flight-recorder 9007199254740993") << false << qint64(0);
        QTest::newRow("overflow") << QByteArray("dump-flight-recorder 99999999999999999999999")
                                  << false << qint64(0);
        QTest::newRow("negative") << QByteArray("dump-flight-recorder -1") << false << qint64(0);
        QTest::newRow("junk id") << QByteArray("dump-flight-recorder 7x") << false << qint64(0);
        QTest::newRow("glued") << QByteArray("dump-flight-recorder7") << false << qint64(0);
        QTest::newRow("trailing space")
            << QByteArray("dump-flight-recorder ") << false << qint64(0);
        QTest::newRow("other command") << QByteArray("dump-stacks") << false << qint64(0);
    }
    void parsesDumpFlightRecorder()
    {
        QFETCH(QByteArray, line);
        QFETCH(bool, valid);
        QFETCH(qint64, id);
        std::int64_t got = -5;
        QCOMPARE(
            parseDumpFlightRecorder(std::string_view(line.constData(), size_t(line.size())), &got),
            valid);
        if (valid)
            QCOMPARE(qint64(got), id);
    }

    // A file cut into frdump chunks comes back whole from the lines alone, each line under
    // PIPE_BUF; the end event carries the reason, cut to one line.
    void flightRecorderChunksRoundTrip_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("chunks");
        QTest::newRow("empty") << 0 << 0;
        QTest::newRow("one byte") << 1 << 1;
        QTest::newRow("one chunk") << 2048 << 1;
        QTest::newRow("one more") << 2049 << 2;
        QTest::newRow("larger") << 100000 << 49;
    }
    void flightRecorderChunksRoundTrip()
    {
        QFETCH(int, size);
        QFETCH(int, chunks);
        std::string bytes(size_t(size), '\0');
        for (int i = 0; i < size; ++i)
            bytes[size_t(i)] = char((i * 131 + 7) & 0xff);
        std::vector<std::string> lines;
        emitFlightRecorderChunks(2, 9, kFlightRecorderPickle, bytes, 1700000000000000,
                                 [&](const std::string &l) { lines.push_back(l); });
        QCOMPARE(int(lines.size()), chunks);
        QByteArray back(size, '\0');
        for (const std::string &l : lines) {
            QVERIFY(l.size() < 4096);
            const auto m = findWireEvent(std::string_view(l).substr(0, l.size() - 1));
            QVERIFY(m.valid);
            const QJsonObject o =
                QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                    .object();
            QCOMPARE(o.value(u"t").toString(), QStringLiteral("frdump"));
            QCOMPARE(o.value(u"id").toInteger(), 9);
            QCOMPARE(o.value(u"file").toString(), QStringLiteral("pickle"));
            QCOMPARE(o.value(u"size").toInteger(), size);
            const QByteArray data = QByteArray::fromBase64(o.value(u"data").toString().toLatin1());
            back.replace(o.value(u"offset").toInteger(), data.size(), data);
        }
        QCOMPARE(back, QByteArray(bytes.data(), qsizetype(bytes.size())));

        const std::string why(3000, 'x');
        const std::string end = flightRecorderEnd(2, 9, "\xc3\xa9" + why, 1700000000000000);
        QVERIFY(end.size() < 4096);
        const auto m = findWireEvent(std::string_view(end).substr(0, end.size() - 1));
        QVERIFY(m.valid);
        const QJsonObject o =
            QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size()))).object();
        QVERIFY(o.value(u"end").toBool());
        QVERIFY(o.value(u"msg").toString().startsWith(QString::fromUtf8("\xc3\xa9xxx")));
        const std::string none = flightRecorderEnd(2, 9, {}, 1700000000000000);
        QVERIFY(none.find("\"msg\"") == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestWireProtocol)
#include "tst_wireprotocol.moc"
