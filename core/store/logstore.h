// SPDX-License-Identifier: GPL-3.0-or-later
//
// Every log line of a run. Thread-safe: the run controller appends from wherever it lives,
// views poll from the GUI thread. Lines are written to the run directory FIRST (byte-exact, one
// file per rank, flushed to the OS after each append so a launcher crash loses nothing already
// received), then kept in a bounded in-memory window per rank and one for the merged all-ranks
// view. Older lines are read back from disk on demand, so memory stays bounded however long the
// run, and nothing is ever lost whatever the window sizes.
//
// Files in the directory (all appended, never rewritten):
//   rank-<R>.log          the rank's lines as received (stdout and stderr interleaved in arrival
//                         order), each followed by '\n'
//   rank-<R>.idx          one 24-byte record per line: offset (int64), arrival time µs (int64),
//                         length (uint32, saturated), stream (uint8: 0 stdout, 1 stderr), flags
//                         (uint8: 1 cut for display, 2 overdrawn: a terminal draws over it, see
//                         LogLine::overdrawn), 2 reserved bytes; little-endian
//   all.idx               merged order: one uint64 per line, rank << 40 | line number
//   rank-<R>.events.jsonl the rank's worker events, one JSON payload per line, as received
//   <file>.<start>-<end>.zst  bytes [start, end) of any of these files, once compacted
//                         (CompactedFile): the writer compresses a rank's oldest lines when more
//                         than twice Options::compactLines (or compactBytes of text) are
//                         uncompressed, so the newest half stays plain, and frees their blocks
//                         in the file, which keeps its length and every offset; the events go
//                         by compactBytes, all.idx by compactAllEntries.
#pragma once

#include "store/compactedfile.h"
#include "stream/rankstream.h"

#include <QFile>
#include <QHash>
#include <QList>
#include <QMap>
#include <QMutex>
#include <QString>

#include <atomic>
#include <climits>
#include <deque>
#include <memory>

class QThreadPool;

namespace rankdeck {

class LogStore
{
public:
    static constexpr int AllRanks = -1;

    struct Options
    {
        int windowPerRank = 2000; // lines kept in memory per rank...
        // ...but at most this many over all ranks' windows together, so that 512 ranks cost no
        // more memory than 64 (each window shrinks, to no fewer than 100 lines).
        qint64 maxLinesInMemory = 250000;
        int windowAll = 20000; // lines kept in memory for the merged view
        qsizetype maxDisplayBytes = LineSplitter::kDefaultMaxDisplayBytes; // for lines read back
        // Compaction (0: never). A segment holds at most compactLines lines of a rank or
        // compactBytes of its text, whichever comes first; all.idx goes by compactAllEntries.
        qint64 compactLines = 16384;
        qint64 compactBytes = qint64{1024} * 1024;
        qint64 compactAllEntries = 131072;
    };

    LogStore();
    explicit LogStore(const Options &options);
    ~LogStore();
    LogStore(const LogStore &) = delete;
    LogStore &operator=(const LogStore &) = delete;

    // Directory of the run record (created, mode 0700, if missing). Existing files are reopened
    // for reading and appending, so a reopened run shows its old lines. Until open() succeeds
    // the store keeps lines in memory only. Raises the soft open-file limit (up to 65536, within
    // the hard limit): a rank costs up to five open files here.
    bool open(const QString &directory, QString *errorMessage = nullptr);
    QString directory() const;
    bool isOpen() const;

    // Appends lines as RankStream produced them (partial pieces included; their bytes go to
    // disk, the line appears when its last piece arrives). Sets number and sequence.
    void append(const QList<LogLine> &lines);
    void append(const LogLine &line);
    void appendEvents(int rank, const QList<WorkerEvent> &events);
    // What the rows of unfinished lines that redraw themselves (progress bars) show now, one per
    // rank and stream; an empty text removes the row. Memory only: the record gets the line,
    // every redraw in it, when it ends.
    void setLive(const QList<RankStream::Live> &live);
    // Those rows of a rank (AllRanks: of every rank, by rank then stream), as LogLines with
    // `live` set; empty when none.
    QList<LogLine> liveLines(int rank) const;
    // Finishes the files (fsync is not needed for launcher crashes; the OS has the bytes).
    void close();
    // For a store opened on a record that another process writes (a run followed from the run
    // list): takes in the lines it appended since open() or the last call, as far as the files
    // hold them whole. false when there were none. O(new lines); a poll with nothing new costs
    // one stat of all.idx.
    bool readAppended();

    // Bumps on every change; views poll it on a timer and refetch only when it moved.
    quint64 generation() const { return m_generation.load(std::memory_order_acquire); }

    QList<int> ranks() const;
    // Lines held in total (on disk, or in memory when no directory is open). AllRanks: merged.
    qint64 lineCount(int rank) const;
    // Number (or sequence, for AllRanks) of the oldest line still in memory: this many older
    // lines are elided from memory and can be read back with readLines().
    qint64 firstInMemory(int rank) const;
    // The same number under the name views use: lines not held in memory (all still on disk).
    qint64 elidedLines(int rank) const { return firstInMemory(rank); }

    // Lines from memory with number (sequence for AllRanks) >= from, at most maxCount, oldest
    // first. Starts at firstInMemory() when `from` is older than that.
    QList<LogLine> recentLines(int rank, qint64 from, int maxCount = INT_MAX) const;
    // Lines [first, first + count) from memory or disk, oldest first; text as displayText().
    // Returns fewer when the range ends early or the files cannot be read (*errorMessage says).
    QList<LogLine> readLines(int rank, qint64 first, int count,
                             QString *errorMessage = nullptr) const;
    // The whole line as received (bytes, '\r' and all), read from disk; empty when unknown.
    QByteArray readRawLine(int rank, qint64 number, QString *errorMessage = nullptr) const;

    QString logFilePath(int rank) const;
    QString eventsFilePath(int rank) const;
    // Last disk error (disk full, permissions), empty when none. Lines are still kept in
    // memory when the disk fails.
    QString lastError() const;
    // A write to the record failed (a full disk): the files were rolled back to the last batch
    // that was written whole and nothing more is written to them. missingBytes(rank) is what
    // the record lacks of that rank's output since (newlines included), missingLines() the
    // complete lines among it.
    bool diskFailed() const;
    // Why old lines are no longer compressed (a full disk, a filesystem that cannot free
    // blocks), empty while they are; the record stays whole either way.
    QString compactionError() const;
    // Compaction runs on a thread of the store's own: this returns once what was due is done
    // (close() waits for it too).
    void waitForCompaction() const;
    QString diskError() const;
    qint64 missingBytes(int rank) const;
    qint64 missingLines(int rank) const;

private:
    struct RankFiles;
    RankFiles *rankFiles(int rank);                                     // m_mutex held
    bool openRankFiles(RankFiles &rf, int rank, QString *errorMessage); // m_mutex held
    void loadExisting();                                                // m_mutex held
    qint64 readAppendedLocked(RankFiles &rf);                           // m_mutex held
    bool readLineLocked(int rank, qint64 number, LogLine *line, QByteArray *raw,
                        QString *errorMessage) const;
    bool openReadHandlesLocked(const RankFiles &rf, QString *errorMessage) const;
    bool readRankRangeLocked(int rank, qint64 first, qint64 count, QList<LogLine> *out,
                             QString *errorMessage) const;
    bool readMergedRangeLocked(qint64 first, qint64 count, QList<LogLine> *out,
                               QString *errorMessage) const;
    bool readAllIndexLocked(qint64 sequence, int *rank, qint64 *number,
                            QString *errorMessage) const;
    void compactLocked(RankFiles &rf);                                      // m_mutex held
    void compactAllLocked();                                                // m_mutex held
    void compactLaterLocked(const QString &path, qint64 start, qint64 end); // m_mutex held
    void setError(const QString &message);
    void failDiskLocked(const QString &message);
    qsizetype rankWindow() const; // m_mutex held

    Options m_options;
    mutable QMutex m_mutex;
    QString m_directory;
    QHash<int, std::shared_ptr<RankFiles>> m_ranks;
    std::deque<LogLine> m_all;
    QMap<QPair<int, int>, LogLine> m_live; // (rank, stream) → its live row
    qint64 m_allCount = 0;
    qint64 m_allRecordedCount = 0;
    QString m_diskError;
    std::unique_ptr<QFile> m_allIndex;
    mutable std::unique_ptr<CompactedFile> m_allIndexRead;
    qint64 m_allCompacted = 0;              // entries of all.idx in segments (or due to be)
    QHash<QString, qint64> m_compactedEnds; // of the files as open() found them
    QString m_compactionError;
    std::atomic<bool> m_compactionFailed{false};
    // Last: destroyed first, after close() waited for its jobs.
    std::unique_ptr<QThreadPool> m_compactor;
    std::atomic<quint64> m_generation{0};
    QString m_lastError;
};

} // namespace rankdeck
