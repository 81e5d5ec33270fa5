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
};

QTEST_GUILESS_MAIN(TestWireProtocol)
#include "tst_wireprotocol.moc"
