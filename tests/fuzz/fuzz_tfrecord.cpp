// SPDX-License-Identifier: GPL-3.0-or-later
//
// TfRecordReader and TensorBoardScalars on the bytes of a TensorBoard event file, as a rank's
// supervisor forwards them: whole, and in chunks of the first byte's size. Promises checked:
// the records do not depend on how the bytes were cut, nor do what is pending and the count of
// corrupt records; every record is returned whole (a framed copy reads back as itself); the
// launcher's path (tfevents events, base64, offsets) gives the points that decoding each record
// gives, and names a damaged file at most once.
// Input: [chunk size, 0: all at once] then the file's bytes.
#include "fuzzinput.h"

#include "stream/tensorboardscalars.h"
#include "stream/workerevent.h"
#include "tensorboard/tfrecord.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace rankdeck;

namespace {

QList<QByteArray> readAll(QByteArrayView bytes, qsizetype chunk,
                          tensorboard::TfRecordReader *reader)
{
    QList<QByteArray> records;
    if (chunk <= 0)
        chunk = qMax<qsizetype>(1, bytes.size());
    for (qsizetype at = 0; at < bytes.size(); at += chunk) {
        reader->feed(bytes.sliced(at, qMin(chunk, bytes.size() - at)).toByteArray());
        records += reader->takeRecords();
    }
    return records;
}

// Equal, NaN included (a diverged loss is a value too).
bool samePoints(const QList<TensorBoardScalars::Point> &a,
                const QList<TensorBoardScalars::Point> &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (a[i].name != b[i].name || a[i].step != b[i].step || a[i].wallTimeUs != b[i].wallTimeUs)
            return false;
        if (!(a[i].value == b[i].value || (qIsNaN(a[i].value) && qIsNaN(b[i].value))))
            return false;
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const qsizetype chunk = in.byte();
    const QByteArrayView file = in.rest();

    tensorboard::TfRecordReader whole;
    const QList<QByteArray> records = readAll(file, 0, &whole);
    tensorboard::TfRecordReader cut;
    FUZZ_CHECK(readAll(file, chunk, &cut) == records);
    FUZZ_CHECK(cut.pendingBytes() == whole.pendingBytes());
    FUZZ_CHECK(cut.corruptRecords() == whole.corruptRecords());

    QList<TensorBoardScalars::Point> expected;
    const QString name = QStringLiteral("runs/x/grad_norm/events.out.tfevents.1.host.2.0");
    for (const QByteArray &record : records) {
        tensorboard::TfRecordReader again;
        again.feed(tensorboard::TfRecord::frame(record));
        FUZZ_CHECK(again.takeRecords() == QList<QByteArray>{record});
        (void)TensorBoardScalars::decode(record, name, &expected);
    }

    // The launcher's side: the same bytes as tfevents events of rank 0.
    TensorBoardScalars scalars;
    TensorBoardScalars::Output out;
    const qsizetype step = chunk > 0 ? chunk : qMax<qsizetype>(1, file.size());
    for (qsizetype at = 0; at < file.size(); at += step) {
        const QByteArrayView piece = file.sliced(at, qMin(step, file.size() - at));
        QJsonObject o{
            {QStringLiteral("t"), QStringLiteral("tfevents")},
            {QStringLiteral("ts"), 1},
            {QStringLiteral("rank"), 0},
            {QStringLiteral("file"), name},
            {QStringLiteral("offset"), at},
            {QStringLiteral("data"), QString::fromLatin1(piece.toByteArray().toBase64())}};
        const std::optional<WorkerEvent> e =
            WorkerEvent::fromJson(QJsonDocument(o).toJson(QJsonDocument::Compact));
        FUZZ_CHECK(e && e->type() == WorkerEvent::Type::TfEvents);
        scalars.feed(0, *e, out);
    }
    scalars.finish(0, out);
    FUZZ_CHECK(samePoints(out.points, expected));
    FUZZ_CHECK(out.problems.size() <= 2); // damaged once, half-written once
    return 0;
}
