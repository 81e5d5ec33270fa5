// SPDX-License-Identifier: GPL-3.0-or-later
//
// An append-only file of the run record whose old bytes live in zstd segments beside it, so
// that a run that prints for days costs a fraction of its output on disk, while every byte
// keeps the offset it was written at (the indexes point into the file by offset, and readers in
// other processes follow it by offset).
//
// A segment is a standard zstd frame of the bytes [start, end) of the file, named
// `<file>.<start>-<end>.zst` (`zstdcat rank-3.log.*.zst` gives the oldest text as written; the
// file itself then reads as zeros up to where its blocks were freed). The writer first writes
// the segment whole (synced, then renamed into place), then frees the file's blocks below it
// with FALLOC_FL_PUNCH_HOLE, so the freed part is always a prefix of the file and every freed
// byte is in a segment before it is freed. A reader therefore reads the file first and only
// then, where that read met the freed prefix (lseek SEEK_DATA), takes those bytes from the
// segments: whatever was freed before its read has its segment on disk by then. No lock is
// shared with the writer.
//
// On a filesystem without hole punching nothing is compacted (compact() says why, once).
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>

namespace rankdeck {

class CompactedFile
{
public:
    struct Segment
    {
        qint64 start = 0;
        qint64 end = 0;
        QString path;
    };

    explicit CompactedFile(QString path);
    ~CompactedFile();
    CompactedFile(const CompactedFile &) = delete;
    CompactedFile &operator=(const CompactedFile &) = delete;

    QString fileName() const { return m_path; }
    bool open(QString *errorMessage = nullptr);
    bool isOpen() const { return m_fd >= 0; }
    // The file's length, the compressed part included.
    qint64 size() const;
    // Bytes [offset, offset + length) of the file, fewer where it ends, from the file or from
    // its segments. Empty with *errorMessage set when freed bytes are in no readable segment
    // (below the end of a later one: one went missing). A hole above every segment is the
    // file's own (a sparse file) and reads as the zeros it holds.
    QByteArray read(qint64 offset, qint64 length, QString *errorMessage = nullptr) const;

    // The whole file, segments included (tests, benchmarks, small files).
    static QByteArray readAll(const QString &path, QString *errorMessage = nullptr);
    // The file's segments, by start.
    static QList<Segment> segments(const QString &path);
    // For each file of `directory` with segments: where the bytes its segments hold from the
    // start of the file end. One listing of the directory, however many files.
    static QHash<QString, qint64> compactedEnds(const QString &directory);
    static QString segmentPath(const QString &path, qint64 start, qint64 end);
    // Whether a file name is a segment's (`<file>.<start>-<end>.zst`), and its parts.
    static bool parseSegmentName(const QString &name, QString *file = nullptr,
                                 qint64 *start = nullptr, qint64 *end = nullptr);
    // Writer: puts bytes [start, end) of the file into a segment, then frees the file's whole
    // blocks below `end`. The bytes must be written and flushed already. false with a message
    // (nothing is freed then) when the segment cannot be written or the filesystem cannot free
    // blocks; the file is whole either way.
    static bool compact(const QString &path, qint64 start, qint64 end,
                        QString *errorMessage = nullptr);

private:
    bool fillFromSegments(QByteArray &data, qint64 offset, qint64 holeEnd,
                          QString *errorMessage) const;

    QString m_path;
    int m_fd = -1;
    mutable QList<Segment> m_segments; // known so far; only ever added to
};

} // namespace rankdeck
