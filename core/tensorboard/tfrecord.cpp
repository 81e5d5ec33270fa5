// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensorboard/tfrecord.h"

#include "tensorboard/crc32c.h"
#include "util/translation.h"

#include <QtEndian>

namespace rankdeck::tensorboard {

namespace {
constexpr qsizetype kHeader = 12; // length + its CRC
constexpr qsizetype kFooter = 4;
// A length beyond this is not a scalar event but a corrupt header: do not wait for it.
constexpr quint64 kMaxRecord = quint64{256} * 1024 * 1024;
} // namespace

QByteArray TfRecord::frame(const QByteArray &data)
{
    QByteArray out(kHeader + data.size() + kFooter, Qt::Uninitialized);
    char *p = out.data();
    qToLittleEndian<quint64>(quint64(data.size()), p);
    qToLittleEndian<quint32>(maskCrc(crc32c(p, 8)), p + 8);
    memcpy(p + kHeader, data.constData(), size_t(data.size()));
    qToLittleEndian<quint32>(maskCrc(crc32c(data.constData(), size_t(data.size()))),
                             p + kHeader + data.size());
    return out;
}

void TfRecordReader::feed(const QByteArray &bytes)
{
    if (m_pos > 0 && m_pos == m_buffer.size()) {
        m_dropped += m_pos;
        m_buffer.clear();
        m_pos = 0;
    } else if (m_pos > (1 << 20)) {
        m_dropped += m_pos;
        m_buffer.remove(0, m_pos);
        m_pos = 0;
    }
    m_buffer += bytes;
    for (;;) {
        const qsizetype left = m_buffer.size() - m_pos;
        if (left < kHeader)
            return;
        const char *p = m_buffer.constData() + m_pos;
        const quint64 length = qFromLittleEndian<quint64>(p);
        if (maskCrc(crc32c(p, 8)) != qFromLittleEndian<quint32>(p + 8) || length > kMaxRecord) {
            // The framing is lost: look for the next offset whose header checks out. A search
            // that ran out of bytes goes on here with the next ones: the same stretch, not
            // another corrupt record.
            if (!m_lostFraming) {
                ++m_corrupt;
                m_lastError = tr("bad record header at byte %1").arg(m_dropped + m_pos);
                m_lostFraming = true;
            }
            qsizetype next = m_pos + 1;
            for (; next + kHeader <= m_buffer.size(); ++next) {
                const char *q = m_buffer.constData() + next;
                if (maskCrc(crc32c(q, 8)) == qFromLittleEndian<quint32>(q + 8) &&
                    qFromLittleEndian<quint64>(q) <= kMaxRecord)
                    break;
            }
            m_pos = next;
            continue;
        }
        m_lostFraming = false;
        if (quint64(left) < quint64(kHeader + kFooter) + length)
            return; // the rest is not written yet
        const char *data = p + kHeader;
        const quint32 crc = qFromLittleEndian<quint32>(data + length);
        if (maskCrc(crc32c(data, size_t(length))) == crc) {
            m_records.append(QByteArray(data, qsizetype(length)));
        } else {
            ++m_corrupt;
            m_lastError = tr("bad record data CRC at byte %1").arg(m_dropped + m_pos);
        }
        m_pos += kHeader + qsizetype(length) + kFooter;
    }
}

QList<QByteArray> TfRecordReader::takeRecords()
{
    return std::exchange(m_records, {});
}

} // namespace rankdeck::tensorboard
