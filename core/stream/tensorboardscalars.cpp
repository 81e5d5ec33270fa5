// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/tensorboardscalars.h"

#include "util/printabletext.h"
#include "util/translation.h"
#include "wire/wireprotocol.h"

#include <tensorboard.pb.h>

#include <QDir>
#include <QFileInfo>
#include <QtEndian>

#include <cmath>
#include <cstring>
#include <optional>

namespace rankdeck {

namespace {

// The one value of a tensor's repeated field, or else of its raw little-endian content.
template <typename T, typename Repeated>
std::optional<double> single(const Repeated &values, const std::string &content)
{
    if (values.size() == 1)
        return double(values.Get(0));
    if (values.empty() && content.size() == sizeof(T))
        return double(qFromLittleEndian<T>(content.data()));
    return std::nullopt;
}

// The one number of a scalar tensor (new_style summaries, TF 2's tf.summary.scalar).
std::optional<double> tensorScalar(const ::tensorboard::TensorProto &t)
{
    for (const auto &dim : t.tensor_shape().dim()) {
        if (dim.size() != 1)
            return std::nullopt;
    }
    switch (t.dtype()) {
    case ::tensorboard::DT_FLOAT:
        return single<float>(t.float_val(), t.tensor_content());
    case ::tensorboard::DT_DOUBLE:
        return single<double>(t.double_val(), t.tensor_content());
    case ::tensorboard::DT_INT32:
        return single<qint32>(t.int_val(), t.tensor_content());
    case ::tensorboard::DT_INT64:
        return single<qint64>(t.int64_val(), t.tensor_content());
    default:
        return std::nullopt;
    }
}

// add_scalars(main_tag, {sub: value}) writes tag `main_tag` into <log_dir>/<main_tag>_<sub>/
// (main_tag's '/' as '_'): the directory tells the curves apart.
QString scalarName(const QString &tag, const QString &fileName)
{
    const QString dir = QFileInfo(fileName).dir().dirName();
    QString prefix = tag;
    prefix.replace(u'/', u'_');
    prefix += u'_';
    if (dir.size() > prefix.size() && dir.startsWith(prefix))
        return tag + u'/' + dir.mid(prefix.size());
    return tag;
}

} // namespace

bool TensorBoardScalars::decode(const QByteArray &record, const QString &fileName,
                                QList<Point> *points)
{
    ::tensorboard::Event event;
    if (!event.ParseFromArray(record.constData(), int(record.size())))
        return false;
    if (!event.has_summary())
        return true; // file_version, graphs, session logs: no curve
    const double wall = event.wall_time();
    const qint64 wallUs =
        std::isfinite(wall) && std::fabs(wall) < 9.0e12 ? qint64(std::llround(wall * 1e6)) : 0;
    for (const ::tensorboard::Summary::Value &v : event.summary().value()) {
        std::optional<double> value;
        if (v.value_case() == ::tensorboard::Summary::Value::kSimpleValue) {
            value = double(v.simple_value());
        } else if (v.value_case() == ::tensorboard::Summary::Value::kTensor) {
            const std::string &plugin = v.metadata().plugin_data().plugin_name();
            if (plugin.empty() || plugin == "scalars")
                value = tensorScalar(v.tensor());
        }
        const std::string &tag = v.tag().empty() ? v.node_name() : v.tag();
        if (!value || tag.empty())
            continue;
        const QString name =
            scalarName(QString::fromUtf8(tag.data(), qsizetype(tag.size())), fileName);
        points->append(Point{kNamePrefix + name, qint64(event.step()), wallUs, *value, name});
    }
    return true;
}

void TensorBoardScalars::feed(int rank, const WorkerEvent &event, Output &out)
{
    if (event.type() != WorkerEvent::Type::TfEvents)
        return;
    const QString name = event.string(wire::field::File);
    const qint64 offset = event.integer(wire::field::Offset, -1);
    const QByteArray data = QByteArray::fromBase64(event.string(wire::field::Data).toLatin1(),
                                                   QByteArray::AbortOnBase64DecodingErrors);
    const QString shown = printableLabel(name, 300);
    if (name.isEmpty() || offset < 0) {
        out.problems
            << tr("rank %1 sent a tfevents event without a file or offset; ignored").arg(rank);
        return;
    }
    auto found = m_files.find({rank, name});
    if (found == m_files.end()) {
        int &count = m_filesPerRank[rank];
        if (count >= kMaxFilesPerRank) {
            if (!(m_noted[rank] & 1)) {
                m_noted[rank] |= 1;
                out.problems << tr("rank %1 sent more than %2 TensorBoard event files; the "
                                   "others (first %3) are ignored")
                                    .arg(rank)
                                    .arg(kMaxFilesPerRank)
                                    .arg(shown);
            }
            return;
        }
        ++count;
        found = m_files.insert({rank, name}, File());
    }
    File &file = *found;
    if (file.nextOffset < 0) {
        // The first bytes of it to come. Past 0 only for a launcher that re-attached to a
        // running rank: the earlier ones went to the launcher before it.
        file.nextOffset = offset;
        file.resync = offset > 0;
    } else if (offset != file.nextOffset) {
        if (offset < file.nextOffset) {
            out.problems << tr("rank %1: TensorBoard event file %2 shrank to %3 bytes; following "
                               "it from there")
                                .arg(rank)
                                .arg(shown)
                                .arg(offset);
        } else if (!file.gapNoted) {
            file.gapNoted = true;
            out.problems << tr("rank %1: bytes %2 to %3 of TensorBoard event file %4 did not "
                               "arrive; reading on at its next record")
                                .arg(rank)
                                .arg(file.nextOffset)
                                .arg(offset)
                                .arg(shown);
        }
        // A fresh reader: it finds the next record whose header checks out.
        dropHeld(file);
        file.nextOffset = offset;
    }
    const qsizetype before = file.reader.pendingBytes();
    file.reader.feed(data);
    file.nextOffset += data.size();
    takeRecords(rank, name, file, out);
    m_held += file.reader.pendingBytes() - before;
    // Bounded whatever the rank sends: a record that claims more than a reader may hold, or
    // more bytes held across the files than all may, is skipped.
    const bool tooLong = file.reader.pendingBytes() > kMaxHeldPerFile;
    if (tooLong || m_held > kMaxHeldTotal) {
        const int bit = tooLong ? 2 : 4;
        if (!(m_noted[rank] & bit)) {
            m_noted[rank] |= bit;
            out.problems << (tooLong ? tr("rank %1: a record of TensorBoard event file %2 is "
                                          "longer than %3 MiB; skipped")
                                           .arg(rank)
                                           .arg(shown)
                                           .arg(kMaxHeldPerFile / (qint64{1024} * 1024))
                                     : tr("rank %1: TensorBoard event files hold more than %2 "
                                          "MiB of unfinished records; a record of %3 is skipped")
                                           .arg(rank)
                                           .arg(kMaxHeldTotal / (qint64{1024} * 1024))
                                           .arg(shown));
        }
        dropHeld(file);
    }
}

qsizetype TensorBoardScalars::heldBytes() const
{
    qsizetype held = 0;
    for (const File &f : m_files)
        held += f.reader.pendingBytes();
    return held;
}

void TensorBoardScalars::dropHeld(File &file)
{
    m_held -= file.reader.pendingBytes();
    file.reader = tensorboard::TfRecordReader();
    file.corruptSeen = 0;
    file.resync = true;
}

void TensorBoardScalars::takeRecords(int rank, const QString &name, File &file, Output &out)
{
    QString undecodable;
    const QList<QByteArray> records = file.reader.takeRecords();
    for (const QByteArray &record : records) {
        ++m_records;
        if (!decode(record, name, &out.points) && undecodable.isEmpty())
            undecodable = tr("a record of %1 bytes is no TensorBoard event").arg(record.size());
    }
    if (file.resync) {
        // What was skipped to get here was the rest of a record cut off by the gap.
        if (!records.isEmpty())
            file.resync = false;
        file.corruptSeen = file.reader.corruptRecords();
    }
    const bool damaged = file.reader.corruptRecords() > file.corruptSeen;
    file.corruptSeen = file.reader.corruptRecords();
    if ((damaged || !undecodable.isEmpty()) && !file.damageNoted) {
        file.damageNoted = true;
        out.problems << tr("rank %1: TensorBoard event file %2 is damaged or no event file (%3); "
                           "what cannot be read is skipped")
                            .arg(rank)
                            .arg(printableLabel(name, 300),
                                 damaged ? file.reader.lastError() : undecodable);
    }
}

void TensorBoardScalars::finish(int rank, Output &out)
{
    for (auto it = m_files.begin(); it != m_files.end(); ++it) {
        if (it.key().first != rank || it->reader.pendingBytes() == 0)
            continue;
        out.problems << tr("rank %1: TensorBoard event file %2 ends in a half-written record "
                           "(%3 bytes); its values are not shown")
                            .arg(rank)
                            .arg(printableLabel(it.key().second, 300))
                            .arg(it->reader.pendingBytes());
        // Said once: a restarted rank writes new files.
        m_held -= it->reader.pendingBytes();
        it->reader = tensorboard::TfRecordReader();
    }
}

} // namespace rankdeck
