// SPDX-License-Identifier: GPL-3.0-or-later
//
// TFRecord framing, the container of TensorBoard's event files. Each record is
//     uint64 length (little endian), uint32 masked_crc32c(length bytes), data,
//     uint32 masked_crc32c(data)
// The reader takes bytes as they arrive from a file another process is still writing
// (SummaryWriter flushes every 120 s, so a record may be cut anywhere): a partial record stays
// pending until its rest arrives, never an error. A record whose CRC is wrong is reported and
// skipped, and the reader goes on at the next record boundary it can trust.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace rankdeck::tensorboard {

class TfRecord
{
public:
    // One framed record holding `data`.
    static QByteArray frame(const QByteArray &data);
};

class TfRecordReader
{
public:
    // Appends bytes; complete records are returned by takeRecords().
    void feed(const QByteArray &bytes);
    QList<QByteArray> takeRecords();
    // Bytes held for a record that is not complete yet.
    qsizetype pendingBytes() const { return m_buffer.size() - m_pos; }
    // Records dropped for a bad CRC so far (a stretch of lost framing counts once, however the
    // bytes were cut), and why the last was.
    int corruptRecords() const { return m_corrupt; }
    QString lastError() const { return m_lastError; }

private:
    QByteArray m_buffer;
    qsizetype m_pos = 0;
    qint64 m_dropped = 0; // bytes removed from m_buffer's front: m_pos + this is the file offset
    bool m_lostFraming = false; // looking for the next good header
    QList<QByteArray> m_records;
    int m_corrupt = 0;
    QString m_lastError;
};

} // namespace rankdeck::tensorboard
