// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/streamoffsetsfile.h"

#include <QtEndian>

namespace rankdeck {

namespace {

constexpr qint64 kRecord = 3 * sizeof(qint64);

} // namespace

bool StreamOffsetsFile::open(const QString &runDirectory)
{
    m_file.setFileName(runDirectory + QLatin1Char('/') + fileName());
    // Unbuffered: each record reaches the kernel at once, so a SIGKILL right after loses none.
    return m_file.open(QIODevice::ReadWrite | QIODevice::Unbuffered);
}

void StreamOffsetsFile::write(int rank, const StreamOffsets &o)
{
    if (!m_file.isOpen() || rank < 0)
        return;
    qint64 record[3] = {qToLittleEndian(qint64(o.attempt)),
                        qToLittleEndian(o.committed(StreamKind::Stdout)),
                        qToLittleEndian(o.committed(StreamKind::Stderr))};
    if (m_file.seek(rank * kRecord))
        m_file.write(reinterpret_cast<const char *>(record), kRecord);
}

QList<StreamOffsets> StreamOffsetsFile::read(const QString &runDirectory, int ranks)
{
    QList<StreamOffsets> out(ranks);
    QFile f(runDirectory + QLatin1Char('/') + fileName());
    if (!f.open(QIODevice::ReadOnly))
        return out;
    const QByteArray data = f.read(ranks * kRecord);
    for (int r = 0; r < ranks && (r + 1) * kRecord <= data.size(); ++r) {
        const char *p = data.constData() + r * kRecord;
        out[r].attempt = int(qFromLittleEndian<qint64>(p));
        out[r].received[0] = qFromLittleEndian<qint64>(p + sizeof(qint64));
        out[r].received[1] = qFromLittleEndian<qint64>(p + 2 * sizeof(qint64));
    }
    return out;
}

void StreamOffsetsFile::takeNewer(QList<StreamOffsets> *fromState,
                                  const QList<StreamOffsets> &fromFile)
{
    for (int r = 0; r < fromState->size() && r < fromFile.size(); ++r) {
        const StreamOffsets &f = fromFile[r];
        StreamOffsets &s = (*fromState)[r];
        const bool later = f.attempt > s.attempt;
        const bool further = f.attempt == s.attempt &&
                             (f.committed(StreamKind::Stdout) > s.committed(StreamKind::Stdout) ||
                              f.committed(StreamKind::Stderr) > s.committed(StreamKind::Stderr));
        if (later || further)
            s = f;
    }
}

} // namespace rankdeck
