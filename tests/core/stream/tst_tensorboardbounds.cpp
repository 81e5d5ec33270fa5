// SPDX-License-Identifier: GPL-3.0-or-later
//
// TensorBoardScalars against a rank that forges its tfevents events (issue 29, problem 3): 300
// file names, each starting a record that claims 200 MiB, and one file that sends a long one.
// Without bounds the launcher holds all it is sent (150 MiB here; 1,000 files each claiming
// 256 MiB would get it killed for memory); with them it holds at most kMaxHeldTotal, reads at
// most kMaxFilesPerRank files of a rank, says each excess once naming the rank, and still reads
// the scalars of the files it accepted.
#include "stream/tensorboardscalars.h"
#include "stream/workerevent.h"
#include "tensorboard/crc32c.h"
#include "tensorboard/tfrecord.h"

#include <tensorboard.pb.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QtEndian>

using namespace rankdeck;

namespace {

WorkerEvent tfevents(int rank, const QString &file, qint64 offset, const QByteArray &data)
{
    const QJsonObject o{{QStringLiteral("t"), QStringLiteral("tfevents")},
                        {QStringLiteral("ts"), 1},
                        {QStringLiteral("rank"), rank},
                        {QStringLiteral("file"), file},
                        {QStringLiteral("offset"), offset},
                        {QStringLiteral("data"), QString::fromLatin1(data.toBase64())}};
    return *WorkerEvent::fromJson(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// A record header whose CRC checks out and that claims `length` bytes of data.
QByteArray header(quint64 length)
{
    QByteArray h(12, Qt::Uninitialized);
    qToLittleEndian<quint64>(length, h.data());
    qToLittleEndian<quint32>(
        rankdeck::tensorboard::maskCrc(rankdeck::tensorboard::crc32c(h.constData(), 8)),
        h.data() + 8);
    return h;
}

QByteArray scalarRecord(qint64 step, float value)
{
    ::tensorboard::Event e;
    e.set_wall_time(1.5e9);
    e.set_step(step);
    ::tensorboard::Summary::Value *v = e.mutable_summary()->add_value();
    v->set_tag("loss");
    v->set_simple_value(value);
    std::string bytes;
    e.SerializeToString(&bytes);
    return rankdeck::tensorboard::TfRecord::frame(
        QByteArray(bytes.data(), qsizetype(bytes.size())));
}

int mentions(const QStringList &problems, const QString &text)
{
    return int(problems.filter(text).size());
}

} // namespace

class TestTensorBoardBounds : public QObject
{
    Q_OBJECT

private slots:
    void forgedFileNames()
    {
        TensorBoardScalars scalars;
        TensorBoardScalars::Output out;
        const QByteArray half(512 * 1024, 'x');
        const int files = 300;
        for (int i = 0; i < files; ++i)
            scalars.feed(3,
                         tfevents(3, QStringLiteral("runs/f%1/events.out.tfevents").arg(i), 0,
                                  header(200 * 1024 * 1024) + half),
                         out);
        QVERIFY2(scalars.fileCount() <= TensorBoardScalars::kMaxFilesPerRank,
                 qPrintable(QString::number(scalars.fileCount())));
        QVERIFY2(scalars.heldBytes() <= TensorBoardScalars::kMaxHeldTotal,
                 qPrintable(QString::number(scalars.heldBytes())));
        // Each excess said once, naming the rank.
        QCOMPARE(mentions(out.problems, QStringLiteral("rank 3 sent more than 256 TensorBoard "
                                                       "event files")),
                 1);
        QCOMPARE(mentions(out.problems, QStringLiteral("rank 3: TensorBoard event files hold "
                                                       "more than 64 MiB")),
                 1);
        QVERIFY2(out.problems.size() <= 4, qPrintable(out.problems.join(u'\n')));

        // Another rank is not held to rank 3's count, and real scalars still come through.
        out = {};
        scalars.feed(4,
                     tfevents(4, QStringLiteral("events.out.tfevents.1"), 0,
                              scalarRecord(0, 1.5f) + scalarRecord(1, 0.5f)),
                     out);
        QCOMPARE(out.points.size(), 2);
        QCOMPARE(out.points.last().value, 0.5);
    }

    void oneRecordLongerThanAReaderHolds()
    {
        TensorBoardScalars scalars;
        TensorBoardScalars::Output out;
        const QString file = QStringLiteral("events.out.tfevents.2");
        const QByteArray mib(1024 * 1024, 'y');
        qint64 offset = 0;
        auto send = [&](const QByteArray &bytes) {
            scalars.feed(5, tfevents(5, file, offset, bytes), out);
            offset += bytes.size();
        };
        send(header(200 * 1024 * 1024));
        for (int i = 0; i < 40; ++i) {
            send(mib);
            QVERIFY2(scalars.heldBytes() <= TensorBoardScalars::kMaxHeldPerFile,
                     qPrintable(QString::number(scalars.heldBytes())));
        }
        QCOMPARE(mentions(out.problems, QStringLiteral("rank 5: a record of TensorBoard event "
                                                       "file events.out.tfevents.2 is longer "
                                                       "than 16 MiB; skipped")),
                 1);
        // The file reads on at its next good record.
        const int before = int(out.points.size());
        send(scalarRecord(7, 2.5f) + scalarRecord(8, 3.5f));
        QVERIFY2(out.points.size() > before, qPrintable(out.problems.join(u'\n')));
        QCOMPARE(out.points.last().step, qint64(8));
    }
};

QTEST_GUILESS_MAIN(TestTensorBoardBounds)
#include "tst_tensorboardbounds.moc"
