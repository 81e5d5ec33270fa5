// SPDX-License-Identifier: GPL-3.0-or-later
//
// CRC-32C against the standard test vectors (RFC 3720, B.4, and the "123456789" check value),
// the TFRecord framing against a record written by TensorFlow's own writer, and the reader on
// files that are still being written: a record cut at every byte, a corrupt record skipped.
#include "tensorboard/crc32c.h"
#include "tensorboard/tfrecord.h"

#include <tensorboard.pb.h>

#include <QTest>

using namespace rankdeck::tensorboard;

class TestTfRecord : public QObject
{
    Q_OBJECT

private slots:
    void crcVectors_data()
    {
        QTest::addColumn<QByteArray>("data");
        QTest::addColumn<quint32>("crc");
        QTest::newRow("32 zeros") << QByteArray(32, '\0') << quint32(0x8A9136AA);
        QTest::newRow("32 ones") << QByteArray(32, char(0xff)) << quint32(0x62A8AB43);
        QByteArray up(32, '\0'), down(32, '\0');
        for (int i = 0; i < 32; ++i) {
            up[i] = char(i);
            down[i] = char(31 - i);
        }
        QTest::newRow("incrementing") << up << quint32(0x46DD794E);
        QTest::newRow("decrementing") << down << quint32(0x113FDB5C);
        // RFC 3720 B.4: an iSCSI SCSI Read (10) command PDU.
        const QByteArray pdu = QByteArray::fromHex("01c00000000000000000000000000000"
                                                   "14000000000004000000001400000018"
                                                   "28000000000000000200000000000000");
        QTest::newRow("iSCSI read PDU") << pdu << quint32(0xD9963A56);
        QTest::newRow("check value") << QByteArray("123456789") << quint32(0xE3069283);
        QTest::newRow("empty") << QByteArray() << quint32(0);
    }
    void crcVectors()
    {
        QFETCH(QByteArray, data);
        QFETCH(quint32, crc);
        QCOMPARE(crc32c(data.constData(), size_t(data.size())), crc);
        // In pieces, carried over: the same CRC.
        const qsizetype half = data.size() / 2;
        const quint32 first = crc32c(data.constData(), size_t(half));
        QCOMPARE(crc32c(data.constData() + half, size_t(data.size() - half), first), crc);
    }

    void maskRoundTrips()
    {
        for (quint32 c : {0u, 1u, 0x8A9136AAu, 0xffffffffu})
            QCOMPARE(unmaskCrc(maskCrc(c)), c);
    }

    // Length (little endian), its masked CRC, the data, the data's masked CRC. That TensorBoard
    // reads what this writes is checked by tst_tensorboardexport with TensorBoard's own reader.
    void frameLayout()
    {
        const QByteArray data("hello");
        const QByteArray f = TfRecord::frame(data);
        QCOMPARE(f.size(), 8 + 4 + 5 + 4);
        QCOMPARE(quint8(f[0]), quint8(5));
        for (int i = 1; i < 8; ++i)
            QCOMPARE(quint8(f[i]), quint8(0));
        QCOMPARE(f.mid(12, 5), data);
        const auto le32 = [&](int at) {
            return quint32(quint8(f[at])) | quint32(quint8(f[at + 1])) << 8 |
                   quint32(quint8(f[at + 2])) << 16 | quint32(quint8(f[at + 3])) << 24;
        };
        QCOMPARE(le32(8), maskCrc(crc32c(f.constData(), 8)));
        QCOMPARE(le32(17), maskCrc(crc32c("hello", 5)));
    }

    void readerTakesRecordsCutAnywhere()
    {
        QByteArray file;
        QList<QByteArray> payloads;
        for (int i = 0; i < 5; ++i) {
            ::tensorboard::Event e;
            e.set_wall_time(1700000000.25 + i);
            e.set_step(i);
            auto *v = e.mutable_summary()->add_value();
            v->set_tag("loss");
            v->set_simple_value(1.0f / float(i + 1));
            std::string s;
            e.SerializeToString(&s);
            payloads << QByteArray(s.data(), qsizetype(s.size()));
            file += TfRecord::frame(payloads.last());
        }
        // Every split point: the part before is what a half-flushed writer left.
        for (qsizetype cut = 0; cut <= file.size(); ++cut) {
            TfRecordReader reader;
            reader.feed(file.left(cut));
            QList<QByteArray> got = reader.takeRecords();
            reader.feed(file.mid(cut));
            got += reader.takeRecords();
            QCOMPARE(got, payloads);
            QCOMPARE(reader.pendingBytes(), 0);
            QCOMPARE(reader.corruptRecords(), 0);
        }
        // Byte by byte.
        TfRecordReader slow;
        QList<QByteArray> got;
        for (char c : file) {
            slow.feed(QByteArray(1, c));
            got += slow.takeRecords();
        }
        QCOMPARE(got, payloads);
        ::tensorboard::Event back;
        QVERIFY(back.ParseFromArray(got[3].constData(), int(got[3].size())));
        QCOMPARE(back.step(), 3);
        QCOMPARE(back.summary().value(0).tag(), std::string("loss"));
        QCOMPARE(back.summary().value(0).simple_value(), 0.25f);
    }

    void corruptRecordIsSkipped_data()
    {
        QTest::addColumn<int>("flip"); // byte of the second record to damage
        QTest::newRow("data") << 14;
        QTest::newRow("length header") << 2;
        QTest::newRow("footer crc") << 19;
    }
    void corruptRecordIsSkipped()
    {
        QFETCH(int, flip);
        const QByteArray a = TfRecord::frame("first"), b = TfRecord::frame("oops!"),
                         c = TfRecord::frame("third");
        QByteArray damaged = b;
        damaged[flip] = char(damaged[flip] ^ 0x40);
        TfRecordReader reader;
        reader.feed(a + damaged + c);
        QCOMPARE(reader.takeRecords(), (QList<QByteArray>{"first", "third"}));
        QCOMPARE(reader.corruptRecords(), 1);
        QVERIFY(!reader.lastError().isEmpty());
    }

    // Bytes that are no record between two records, fed in pieces: the search for the next good
    // header runs out of bytes and goes on with the next piece. That is one damaged stretch, as
    // when the file is read at once, and it is named by its offset in the file, not in what the
    // reader still holds (found by fuzz_tfrecord: corpus/tfrecord/crash-garbage-counted-per-piece).
    void garbageCutAnywhereCountsOnce_data()
    {
        QTest::addColumn<int>("piece");
        QTest::newRow("at once") << 0;
        for (int piece : {1, 2, 5, 7, 11, 13, 21, 40})
            QTest::addRow("pieces of %d bytes", piece) << piece;
    }
    void garbageCutAnywhereCountsOnce()
    {
        QFETCH(int, piece);
        const QByteArray a = TfRecord::frame("first"), c = TfRecord::frame("third");
        const QByteArray garbage(37, 'x');
        const QByteArray file = a + garbage + c;
        TfRecordReader reader;
        QList<QByteArray> records;
        const qsizetype step = piece > 0 ? piece : file.size();
        for (qsizetype at = 0; at < file.size(); at += step) {
            reader.feed(file.mid(at, step));
            records += reader.takeRecords();
        }
        QCOMPARE(records, (QList<QByteArray>{"first", "third"}));
        QCOMPARE(reader.corruptRecords(), 1);
        QCOMPARE(reader.pendingBytes(), 0);
        QCOMPARE(reader.lastError(), QStringLiteral("bad record header at byte %1").arg(a.size()));
    }
};

QTEST_APPLESS_MAIN(TestTfRecord)
#include "tst_tfrecord.moc"
