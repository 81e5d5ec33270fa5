// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: the disk-first write path, the bounded in-memory windows
// and the read-back from disk share the per-rank files under one mutex; the read side is the
// next cut (a reader class over the .log/.idx files the writer appends).
#include "store/logstore.h"

#include "util/atomicfile.h"

#include "util/translation.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QMutexLocker>
#include <QRegularExpression>
#include <QThreadPool>
#include <QtEndian>

#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace rankdeck {

namespace {

constexpr qint64 kIndexRecord = 24;
constexpr qint64 kAllRecord = 8;
constexpr int kRankShift = 40;
constexpr quint64 kNumberMask = (quint64(1) << kRankShift) - 1;
constexpr quint8 kFlagTruncated = 1;
constexpr quint8 kFlagOverdrawn = 2;
// Lines longer than this are shown from their head when read back from disk.
constexpr qint64 kMaxReadBack = qint64{1024} * 1024;

void encodeIndex(char *out, qint64 offset, qint64 timeUs, qint64 length, StreamKind stream,
                 quint8 flags)
{
    qToLittleEndian<qint64>(offset, out);
    qToLittleEndian<qint64>(timeUs, out + 8);
    qToLittleEndian<quint32>(quint32(qBound<qint64>(0, length, 0xffffffffLL)), out + 16);
    out[20] = stream == StreamKind::Stderr ? 1 : 0;
    out[21] = char(flags);
    out[22] = 0;
    out[23] = 0;
}

// Each rank costs up to five open files (log, index, events, and two readers) besides its
// pipes; at hundreds of ranks the usual soft limit of 1024 is too low. Raised towards the hard
// limit, but capped: children inherit it, and some programs close every descriptor up to it.
void raiseOpenFileLimit()
{
    static std::once_flag once;
    std::call_once(once, [] {
        constexpr rlim_t kWanted = 65536;
        rlimit rl{};
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < kWanted &&
            rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? kWanted : std::min(rl.rlim_max, kWanted);
            setrlimit(RLIMIT_NOFILE, &rl);
        }
    });
}

} // namespace

struct LogStore::RankFiles
{
    int rank = 0;
    std::unique_ptr<QFile> log;
    std::unique_ptr<QFile> index;
    std::unique_ptr<QFile> events;
    mutable std::unique_ptr<CompactedFile> logRead;
    mutable std::unique_ptr<CompactedFile> indexRead;
    qint64 logSize = 0; // bytes received for the log file (all on disk unless it failed)
    qint64 count = 0;   // complete lines
    // What the files hold for certain: complete lines up to here (log bytes, index records).
    // A failed write rolls the files back to it, so the record never points past its bytes.
    qint64 recordedLogSize = 0;
    qint64 recordedCount = 0;
    bool dirty = false;
    qint64 compactedLines = 0;    // lines whose index records are in segments
    qint64 compactedLogBytes = 0; // bytes of the log in segments
    qint64 eventsBytes = 0;       // of rank-R.events.jsonl, and of it in segments
    qint64 compactedEventsBytes = 0;
    bool inLine = false; // pieces of a long line were written
    qint64 lineStart = 0;
    qint64 lineBytes = 0;
    std::deque<LogLine> window;
};

LogStore::LogStore() : LogStore(Options{}) {}

LogStore::LogStore(const Options &options) : m_options(options)
{
    m_options.windowPerRank = qMax(1, m_options.windowPerRank);
    m_options.windowAll = qMax(1, m_options.windowAll);
}

LogStore::~LogStore()
{
    close();
}

bool LogStore::open(const QString &directory, QString *errorMessage)
{
    QMutexLocker lock(&m_mutex);
    auto fail = [&](const QString &why) {
        if (errorMessage)
            *errorMessage = why;
        m_lastError = why;
        return false;
    };
    if (!m_directory.isEmpty())
        return fail(tr("log store is already open on %1").arg(m_directory));
    QDir dir(directory);
    if (!dir.exists()) {
        if (!QDir().mkpath(directory))
            return fail(tr("cannot create log directory %1").arg(directory));
        QFile::setPermissions(directory, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }
    raiseOpenFileLimit();
    m_directory = QDir(directory).absolutePath();
    m_allIndex = std::make_unique<QFile>(m_directory + QStringLiteral("/all.idx"));
    if (!m_allIndex->open(QIODevice::WriteOnly | QIODevice::Append)) {
        const QString why =
            tr("cannot open %1: %2").arg(m_allIndex->fileName(), m_allIndex->errorString());
        m_allIndex.reset();
        m_directory.clear();
        return fail(why);
    }
    loadExisting();
    m_generation.fetch_add(1, std::memory_order_release);
    return true;
}

QString LogStore::directory() const
{
    QMutexLocker lock(&m_mutex);
    return m_directory;
}

bool LogStore::isOpen() const
{
    QMutexLocker lock(&m_mutex);
    return !m_directory.isEmpty();
}

QString LogStore::logFilePath(int rank) const
{
    QMutexLocker lock(&m_mutex);
    return m_directory.isEmpty() ? QString()
                                 : m_directory + QStringLiteral("/rank-%1.log").arg(rank);
}

QString LogStore::eventsFilePath(int rank) const
{
    QMutexLocker lock(&m_mutex);
    return m_directory.isEmpty() ? QString()
                                 : m_directory + QStringLiteral("/rank-%1.events.jsonl").arg(rank);
}

QString LogStore::lastError() const
{
    QMutexLocker lock(&m_mutex);
    return m_lastError;
}

qsizetype LogStore::rankWindow() const
{
    const qint64 ranks = qMax<qint64>(1, m_ranks.size());
    const qint64 share = qMax<qint64>(100, m_options.maxLinesInMemory / ranks);
    return qsizetype(qMin<qint64>(m_options.windowPerRank, share));
}

void LogStore::setError(const QString &message)
{
    m_lastError = message;
}

bool LogStore::openRankFiles(RankFiles &rf, int rank, QString *errorMessage)
{
    const QString base = m_directory + QStringLiteral("/rank-%1").arg(rank);
    rf.log = std::make_unique<QFile>(base + QStringLiteral(".log"));
    rf.index = std::make_unique<QFile>(base + QStringLiteral(".idx"));
    if (!rf.log->open(QIODevice::WriteOnly | QIODevice::Append) ||
        !rf.index->open(QIODevice::WriteOnly | QIODevice::Append)) {
        const QString why = tr("cannot open the log of rank %1 in %2: %3")
                                .arg(rank)
                                .arg(m_directory, rf.log->isOpen() ? rf.index->errorString()
                                                                   : rf.log->errorString());
        rf.log.reset();
        rf.index.reset();
        if (errorMessage)
            *errorMessage = why;
        return false;
    }
    rf.logSize = rf.log->size();
    rf.recordedLogSize = rf.logSize;
    return true;
}

LogStore::RankFiles *LogStore::rankFiles(int rank)
{
    auto it = m_ranks.find(rank);
    if (it != m_ranks.end())
        return it->get();
    auto rf = std::make_shared<RankFiles>();
    rf->rank = rank;
    if (!m_directory.isEmpty() && m_diskError.isEmpty()) {
        QString why;
        if (!openRankFiles(*rf, rank, &why))
            setError(why);
    }
    RankFiles *added = m_ranks.insert(rank, rf)->get();
    // One more rank shares the memory budget: the others' windows shrink now, not on their next
    // line (a rank that went quiet would keep its share otherwise).
    const qsizetype window = rankWindow();
    for (auto &other : m_ranks) {
        while (qsizetype(other->window.size()) > window)
            other->window.pop_front();
    }
    return added;
}

void LogStore::loadExisting()
{
    const QDir dir(m_directory);
    // One listing for every file's segments (at 512 ranks, one per file took seconds).
    m_compactedEnds = CompactedFile::compactedEnds(m_directory);
    static const QRegularExpression re(QStringLiteral("^rank-(\\d+)\\.idx\\z"));
    const QStringList names = dir.entryList({QStringLiteral("rank-*.idx")}, QDir::Files);
    for (const QString &name : names) {
        const auto m = re.match(name);
        if (!m.hasMatch())
            continue;
        const int rank = m.captured(1).toInt();
        RankFiles *rf = rankFiles(rank);
        if (!rf->index)
            continue;
        rf->count = rf->index->size() / kIndexRecord;
        rf->recordedCount = rf->count;
        // A writer that reopens the record compresses on from where the segments end.
        rf->compactedLines =
            m_compactedEnds.value(QStringLiteral("rank-%1.idx").arg(rank)) / kIndexRecord;
        rf->compactedLogBytes = m_compactedEnds.value(QStringLiteral("rank-%1.log").arg(rank));
        const qint64 first = qMax<qint64>(
            0, rf->count - qMin<qint64>(m_options.windowPerRank,
                                        qMax<qint64>(100, m_options.maxLinesInMemory /
                                                              qMax<qsizetype>(1, names.size()))));
        QList<LogLine> lines;
        readRankRangeLocked(rank, first, rf->count - first, &lines, nullptr);
        for (LogLine &l : lines)
            rf->window.push_back(std::move(l));
    }
    m_allCount = m_allIndex->size() / kAllRecord;
    m_allRecordedCount = m_allCount;
    m_allCompacted = m_compactedEnds.value(QStringLiteral("all.idx")) / kAllRecord;
    const qint64 first = qMax<qint64>(0, m_allCount - m_options.windowAll);
    QList<LogLine> lines;
    readMergedRangeLocked(first, m_allCount - first, &lines, nullptr);
    for (LogLine &l : lines)
        m_all.push_back(std::move(l));
}

bool LogStore::readAppended()
{
    QMutexLocker lock(&m_mutex);
    if (m_directory.isEmpty() || !m_allIndex || !m_diskError.isEmpty())
        return false;
    // Every line goes into all.idx after its rank's files: no new entry there, no new line.
    const qint64 allCount = QFileInfo(m_allIndex->fileName()).size() / kAllRecord;
    if (allCount <= m_allCount)
        return false;
    int rank = 0;
    qint64 number = 0;
    if (!readAllIndexLocked(m_allCount, &rank, &number, nullptr))
        return false;
    const QByteArray idx =
        m_allIndexRead->read(m_allCount * kAllRecord, (allCount - m_allCount) * kAllRecord);
    const qint64 n = idx.size() / kAllRecord;
    auto entry = [&](qint64 i) {
        const quint64 v = qFromLittleEndian<quint64>(idx.constData() + i * kAllRecord);
        return std::pair<int, qint64>(int(v >> kRankShift), qint64(v & kNumberMask));
    };
    QHash<int, qint64> held; // lines each rank named there has whole on disk
    bool changed = false;
    for (qint64 i = 0; i < n; ++i) {
        const int r = entry(i).first;
        if (held.contains(r))
            continue;
        const QString index = m_directory + QStringLiteral("/rank-%1.idx").arg(r);
        if (!m_ranks.contains(r) && !QFileInfo::exists(index)) {
            held.insert(r, 0);
            continue;
        }
        RankFiles *rf = rankFiles(r);
        const qint64 before = rf->count;
        held.insert(r, readAppendedLocked(*rf));
        changed = changed || rf->count != before;
    }
    // The merged order as far as the ranks' files hold its lines; the rest comes next time.
    qint64 whole = 0;
    while (whole < n && entry(whole).second < held.value(entry(whole).first))
        ++whole;
    QList<LogLine> merged;
    readMergedRangeLocked(m_allCount, whole, &merged, nullptr);
    for (LogLine &l : merged)
        m_all.push_back(std::move(l));
    while (qsizetype(m_all.size()) > m_options.windowAll)
        m_all.pop_front();
    m_allCount += merged.size();
    m_allRecordedCount = m_allCount;
    if (changed || !merged.isEmpty())
        m_generation.fetch_add(1, std::memory_order_release);
    return changed || !merged.isEmpty();
}

qint64 LogStore::readAppendedLocked(RankFiles &rf)
{
    const QString base = m_directory + QStringLiteral("/rank-%1").arg(rf.rank);
    const qint64 logSize = QFileInfo(base + QStringLiteral(".log")).size();
    qint64 count = QFileInfo(base + QStringLiteral(".idx")).size() / kIndexRecord;
    if (count <= rf.count || !openReadHandlesLocked(rf, nullptr))
        return rf.count;
    // The writer flushes the log before the index, but a large batch may reach the files in
    // pieces: only lines whose bytes are all there.
    while (count > rf.count) {
        const QByteArray last = rf.indexRead->read((count - 1) * kIndexRecord, kIndexRecord);
        if (last.size() != kIndexRecord)
            return rf.count;
        const char *rec = last.constData();
        const qint64 length = qFromLittleEndian<quint32>(rec + 16);
        if (length == 0xffffffffLL || qFromLittleEndian<qint64>(rec) + length < logSize)
            break;
        --count;
    }
    rf.logSize = qMax(rf.logSize, logSize);
    rf.recordedLogSize = rf.logSize;
    QList<LogLine> lines;
    readRankRangeLocked(rf.rank, rf.count, count - rf.count, &lines, nullptr);
    for (LogLine &l : lines)
        rf.window.push_back(std::move(l));
    const qsizetype window = rankWindow();
    while (qsizetype(rf.window.size()) > window)
        rf.window.pop_front();
    rf.count += lines.size();
    rf.recordedCount = rf.count;
    return rf.count;
}

void LogStore::append(const LogLine &line)
{
    append(QList<LogLine>{line});
}

void LogStore::append(const QList<LogLine> &lines)
{
    if (lines.isEmpty())
        return;
    QMutexLocker lock(&m_mutex);
    QList<RankFiles *> touched;
    QByteArray allRecords;
    for (const LogLine &in : lines) {
        RankFiles *rf = rankFiles(in.rank);
        if (!rf->dirty) {
            rf->dirty = true;
            touched.append(rf);
        }
        if (!rf->inLine) {
            rf->inLine = true;
            rf->lineStart = rf->logSize;
            rf->lineBytes = 0;
        }
        // Disk first: whatever happens to the views, the run record has the bytes. Once the
        // disk failed, nothing more is written (the files stay consistent up to the failure)
        // and missingBytes() counts what the record lacks.
        const bool toDisk = rf->log && m_diskError.isEmpty();
        if (toDisk) {
            bool ok = rf->log->write(in.raw) == in.raw.size();
            if (ok && !in.partial)
                ok = rf->log->putChar('\n');
            if (!ok)
                failDiskLocked(tr("cannot write the log of rank %1: %2")
                                   .arg(in.rank)
                                   .arg(AtomicFile::writeErrorText(*rf->log)));
        }
        rf->logSize += in.raw.size();
        rf->lineBytes += in.raw.size();
        if (in.partial)
            continue;
        rf->logSize += 1;
        rf->inLine = false;

        LogLine line = in;
        line.raw = QByteArray();
        line.partial = false;
        line.byteLength = rf->lineBytes;
        line.number = rf->count++;
        line.sequence = m_allCount++;
        if (rf->index && m_diskError.isEmpty()) {
            char rec[kIndexRecord];
            encodeIndex(rec, rf->lineStart, line.timeUs, rf->lineBytes, line.stream,
                        quint8((line.truncated ? kFlagTruncated : 0) |
                               (line.overdrawn ? kFlagOverdrawn : 0)));
            if (rf->index->write(rec, kIndexRecord) != kIndexRecord)
                failDiskLocked(tr("cannot write the log index of rank %1: %2")
                                   .arg(in.rank)
                                   .arg(AtomicFile::writeErrorText(*rf->index)));
        }
        if (m_allIndex && m_diskError.isEmpty()) {
            char rec[kAllRecord];
            qToLittleEndian<quint64>((quint64(quint32(line.rank)) << kRankShift) |
                                         (quint64(line.number) & kNumberMask),
                                     rec);
            allRecords.append(rec, kAllRecord);
        }
        rf->window.push_back(line);
        const qsizetype window = rankWindow();
        while (qsizetype(rf->window.size()) > window)
            rf->window.pop_front();
        m_all.push_back(std::move(line));
        while (qsizetype(m_all.size()) > m_options.windowAll)
            m_all.pop_front();
    }
    if (m_allIndex && m_diskError.isEmpty() && m_allIndex->write(allRecords) != allRecords.size())
        failDiskLocked(tr("cannot write %1: %2")
                           .arg(m_allIndex->fileName(), AtomicFile::writeErrorText(*m_allIndex)));
    // Hand the bytes to the OS now: a launcher crash then loses nothing already received. The
    // flush is where a full disk shows (QFile buffers), so its result counts.
    for (RankFiles *rf : touched) {
        rf->dirty = false;
        if (!m_diskError.isEmpty())
            continue;
        if (rf->log && !rf->log->flush())
            failDiskLocked(tr("cannot write the log of rank %1: %2")
                               .arg(rf->rank)
                               .arg(AtomicFile::writeErrorText(*rf->log)));
        else if (rf->index && !rf->index->flush())
            failDiskLocked(tr("cannot write the log index of rank %1: %2")
                               .arg(rf->rank)
                               .arg(AtomicFile::writeErrorText(*rf->index)));
    }
    if (m_allIndex && m_diskError.isEmpty() && !m_allIndex->flush())
        failDiskLocked(tr("cannot write %1: %2")
                           .arg(m_allIndex->fileName(), AtomicFile::writeErrorText(*m_allIndex)));
    if (m_diskError.isEmpty()) {
        // All of it is on disk: complete lines up to the start of a line still in pieces.
        for (RankFiles *rf : touched) {
            rf->recordedLogSize = rf->inLine ? rf->lineStart : rf->logSize;
            rf->recordedCount = rf->count;
            compactLocked(*rf);
        }
        m_allRecordedCount = m_allCount;
        compactAllLocked();
    }
    m_generation.fetch_add(1, std::memory_order_release);
}

void LogStore::failDiskLocked(const QString &message)
{
    if (!m_diskError.isEmpty())
        return;
    m_diskError = message;
    setError(message);
    // Back to what was complete before this batch: the index never points past the log's
    // bytes (no false "[line cut …]" when the record is read back), and no line is half there.
    // The write handles go first (QFile::resize() on them would flush the buffer that failed);
    // nothing is written after a failure anyway.
    auto rollBack = [](std::unique_ptr<QFile> &file, qint64 size) {
        if (!file)
            return;
        const QString path = file->fileName();
        file.reset();
        QFile::resize(path, size);
    };
    for (auto &rf : m_ranks) {
        rollBack(rf->log, rf->recordedLogSize);
        rollBack(rf->index, rf->recordedCount * kIndexRecord);
        rf->events.reset();
    }
    rollBack(m_allIndex, m_allRecordedCount * kAllRecord);
}

void LogStore::compactLocked(RankFiles &rf)
{
    if (m_options.compactLines <= 0 || !m_compactionError.isEmpty() || !rf.log || !rf.index)
        return;
    const qint64 lines = rf.recordedCount - rf.compactedLines;
    if (lines < 2 * m_options.compactLines &&
        rf.recordedLogSize - rf.compactedLogBytes < 2 * m_options.compactBytes)
        return;
    if (!openReadHandlesLocked(rf, nullptr))
        return;
    // The oldest uncompressed lines, never the newer half: followers and `tail -f` read plain
    // text, and the newest lines cost no decompression.
    const qint64 most = qMax<qint64>(1, qMin(m_options.compactLines, lines / 2));
    const QByteArray idx =
        rf.indexRead->read(rf.compactedLines * kIndexRecord, (most + 1) * kIndexRecord);
    const qint64 n = idx.size() / kIndexRecord;
    if (n < 2)
        return;
    auto offsetOf = [&](qint64 i) {
        return qFromLittleEndian<qint64>(idx.constData() + i * kIndexRecord);
    };
    qint64 i = 1;
    while (i < n - 1 && offsetOf(i) - rf.compactedLogBytes < m_options.compactBytes)
        ++i;
    const qint64 endLine = rf.compactedLines + i;
    const qint64 endByte = offsetOf(i);
    if (endByte > rf.recordedLogSize) {
        m_compactionError = tr("%1 points past the end of its log").arg(rf.index->fileName());
        return;
    }
    if (endByte > rf.compactedLogBytes)
        compactLaterLocked(rf.log->fileName(), rf.compactedLogBytes, endByte);
    compactLaterLocked(rf.index->fileName(), rf.compactedLines * kIndexRecord,
                       endLine * kIndexRecord);
    rf.compactedLines = endLine;
    rf.compactedLogBytes = qMax(rf.compactedLogBytes, endByte);
}

void LogStore::compactLaterLocked(const QString &path, qint64 start, qint64 end)
{
    // Off the appending thread (the app's GUI thread, when it launched the run): compressing a
    // segment takes milliseconds, and its fdatasync may take many more on a busy disk. One
    // thread, in order; the bytes are flushed already, and readers never need the lock for it.
    if (!m_compactor) {
        m_compactor = std::make_unique<QThreadPool>();
        m_compactor->setMaxThreadCount(1);
    }
    m_compactor->start([this, path, start, end] {
        if (m_compactionFailed.load())
            return;
        QString why;
        if (CompactedFile::compact(path, start, end, &why))
            return;
        m_compactionFailed.store(true);
        QMutexLocker lock(&m_mutex);
        if (m_compactionError.isEmpty())
            m_compactionError = why;
    });
}

void LogStore::waitForCompaction() const
{
    if (m_compactor)
        m_compactor->waitForDone();
}

void LogStore::compactAllLocked()
{
    const qint64 step = m_options.compactAllEntries;
    if (step <= 0 || !m_compactionError.isEmpty() || !m_allIndex ||
        m_allRecordedCount - m_allCompacted < 2 * step)
        return;
    compactLaterLocked(m_allIndex->fileName(), m_allCompacted * kAllRecord,
                       (m_allCompacted + step) * kAllRecord);
    m_allCompacted += step;
}

QString LogStore::compactionError() const
{
    QMutexLocker lock(&m_mutex);
    return m_compactionError;
}

bool LogStore::diskFailed() const
{
    QMutexLocker lock(&m_mutex);
    return !m_diskError.isEmpty();
}

QString LogStore::diskError() const
{
    QMutexLocker lock(&m_mutex);
    return m_diskError;
}

qint64 LogStore::missingBytes(int rank) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_ranks.constFind(rank);
    if (it == m_ranks.cend() || m_diskError.isEmpty())
        return 0;
    return it.value()->logSize - it.value()->recordedLogSize;
}

qint64 LogStore::missingLines(int rank) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_ranks.constFind(rank);
    if (it == m_ranks.cend() || m_diskError.isEmpty())
        return 0;
    return it.value()->count - it.value()->recordedCount;
}

void LogStore::appendEvents(int rank, const QList<WorkerEvent> &events)
{
    if (events.isEmpty())
        return;
    QMutexLocker lock(&m_mutex);
    if (m_directory.isEmpty() || !m_diskError.isEmpty())
        return;
    RankFiles *rf = rankFiles(rank);
    if (!rf->events) {
        rf->events = std::make_unique<QFile>(m_directory +
                                             QStringLiteral("/rank-%1.events.jsonl").arg(rank));
        if (!rf->events->open(QIODevice::WriteOnly | QIODevice::Append)) {
            setError(
                tr("cannot open %1: %2").arg(rf->events->fileName(), rf->events->errorString()));
            rf->events.reset();
            return;
        }
        rf->eventsBytes = rf->events->size();
        rf->compactedEventsBytes =
            m_compactedEnds.value(QStringLiteral("rank-%1.events.jsonl").arg(rank));
    }
    QByteArray buf;
    for (const WorkerEvent &e : events) {
        buf += e.json();
        buf += '\n';
    }
    if (rf->events->write(buf) != buf.size() || !rf->events->flush()) {
        failDiskLocked(tr("cannot write %1: %2")
                           .arg(rf->events->fileName(), AtomicFile::writeErrorText(*rf->events)));
        return;
    }
    rf->eventsBytes += buf.size();
    // Nothing of RankDeck reads the events back (they are for people and their tools), so a
    // segment is a plain run of bytes, its ends wherever compactBytes falls.
    const qint64 step = m_options.compactBytes;
    if (m_options.compactLines > 0 && m_compactionError.isEmpty() &&
        rf->eventsBytes - rf->compactedEventsBytes >= 2 * step) {
        compactLaterLocked(rf->events->fileName(), rf->compactedEventsBytes,
                           rf->compactedEventsBytes + step);
        rf->compactedEventsBytes += step;
    }
}

void LogStore::setLive(const QList<RankStream::Live> &live)
{
    if (live.isEmpty())
        return;
    QMutexLocker lock(&m_mutex);
    for (const RankStream::Live &l : live) {
        const QPair<int, int> key{l.rank, l.stream == StreamKind::Stderr ? 1 : 0};
        if (l.text.isEmpty()) {
            m_live.remove(key);
            continue;
        }
        LogLine line;
        line.rank = l.rank;
        line.stream = l.stream;
        line.timeUs = l.timeUs;
        line.text = l.text;
        line.byteLength = l.text.size();
        line.live = true;
        m_live.insert(key, line);
    }
    m_generation.fetch_add(1, std::memory_order_release);
}

QList<LogLine> LogStore::liveLines(int rank) const
{
    QMutexLocker lock(&m_mutex);
    QList<LogLine> out;
    if (rank == AllRanks) {
        out.reserve(m_live.size());
        for (const LogLine &l : m_live)
            out.append(l);
        return out;
    }
    for (auto it = m_live.lowerBound({rank, 0}); it != m_live.cend() && it.key().first == rank;
         ++it)
        out.append(*it);
    return out;
}

void LogStore::close()
{
    // Before the lock: a compaction that fails takes it to say why.
    waitForCompaction();
    QMutexLocker lock(&m_mutex);
    for (auto &rf : m_ranks) {
        // A long line cut off by the end of the run still ends with a newline on disk.
        if (rf->inLine && rf->log) {
            rf->log->putChar('\n');
        }
        rf->log.reset();
        rf->index.reset();
        rf->events.reset();
        rf->logRead.reset();
        rf->indexRead.reset();
    }
    m_allIndex.reset();
    m_allIndexRead.reset();
}

QList<int> LogStore::ranks() const
{
    QMutexLocker lock(&m_mutex);
    QList<int> out;
    for (auto it = m_ranks.cbegin(); it != m_ranks.cend(); ++it) {
        if (it.value()->count > 0)
            out.append(it.key());
    }
    std::sort(out.begin(), out.end());
    return out;
}

qint64 LogStore::lineCount(int rank) const
{
    QMutexLocker lock(&m_mutex);
    if (rank == AllRanks)
        return m_allCount;
    const auto it = m_ranks.constFind(rank);
    return it == m_ranks.cend() ? 0 : it.value()->count;
}

qint64 LogStore::firstInMemory(int rank) const
{
    QMutexLocker lock(&m_mutex);
    if (rank == AllRanks)
        return m_all.empty() ? m_allCount : m_all.front().sequence;
    const auto it = m_ranks.constFind(rank);
    if (it == m_ranks.cend())
        return 0;
    const RankFiles &rf = *it.value();
    return rf.window.empty() ? rf.count : rf.window.front().number;
}

QList<LogLine> LogStore::recentLines(int rank, qint64 from, int maxCount) const
{
    QMutexLocker lock(&m_mutex);
    QList<LogLine> out;
    const std::deque<LogLine> *window = nullptr;
    if (rank == AllRanks) {
        window = &m_all;
    } else {
        const auto it = m_ranks.constFind(rank);
        if (it == m_ranks.cend())
            return out;
        window = &it.value()->window;
    }
    if (window->empty() || maxCount <= 0)
        return out;
    const qint64 firstKey = rank == AllRanks ? window->front().sequence : window->front().number;
    const qint64 start = qMax<qint64>(0, from - firstKey);
    if (start >= qint64(window->size()))
        return out;
    const qint64 end = qMin<qint64>(qint64(window->size()), start + maxCount);
    out.reserve(end - start);
    for (qint64 i = start; i < end; ++i)
        out.append((*window)[size_t(i)]);
    return out;
}

bool LogStore::readAllIndexLocked(qint64 sequence, int *rank, qint64 *number,
                                  QString *errorMessage) const
{
    if (m_directory.isEmpty()) {
        if (errorMessage)
            *errorMessage = tr("older lines are not kept: the log store has no run directory");
        return false;
    }
    if (!m_allIndexRead) {
        m_allIndexRead = std::make_unique<CompactedFile>(m_directory + QStringLiteral("/all.idx"));
        if (!m_allIndexRead->open(errorMessage)) {
            m_allIndexRead.reset();
            return false;
        }
    }
    QString why;
    const QByteArray rec = m_allIndexRead->read(sequence * kAllRecord, kAllRecord, &why);
    if (rec.size() != kAllRecord) {
        if (errorMessage)
            *errorMessage =
                why.isEmpty() ? tr("%1: no entry %2").arg(m_allIndexRead->fileName()).arg(sequence)
                              : why;
        return false;
    }
    const quint64 v = qFromLittleEndian<quint64>(rec.constData());
    *rank = int(v >> kRankShift);
    *number = qint64(v & kNumberMask);
    return true;
}

bool LogStore::openReadHandlesLocked(const RankFiles &rf, QString *errorMessage) const
{
    if (rf.indexRead)
        return true;
    const QString base = m_directory + QStringLiteral("/rank-%1").arg(rf.rank);
    rf.indexRead = std::make_unique<CompactedFile>(base + QStringLiteral(".idx"));
    rf.logRead = std::make_unique<CompactedFile>(base + QStringLiteral(".log"));
    if (!rf.indexRead->open() || !rf.logRead->open()) {
        if (errorMessage)
            *errorMessage =
                tr("cannot read the log of rank %1 in %2").arg(rf.rank).arg(m_directory);
        rf.indexRead.reset();
        rf.logRead.reset();
        return false;
    }
    return true;
}

bool LogStore::readRankRangeLocked(int rank, qint64 first, qint64 count, QList<LogLine> *out,
                                   QString *errorMessage) const
{
    if (count <= 0)
        return true;
    if (m_directory.isEmpty()) {
        if (errorMessage)
            *errorMessage = tr("older lines are not kept: the log store has no run directory");
        return false;
    }
    const auto it = m_ranks.constFind(rank);
    if (it == m_ranks.cend()) {
        if (errorMessage)
            *errorMessage = tr("no log for rank %1").arg(rank);
        return false;
    }
    const RankFiles &rf = *it.value();
    if (!openReadHandlesLocked(rf, errorMessage))
        return false;
    // One read for the index records and one for the text they point to (reopening a run of
    // hundreds of ranks must not cost two system calls per line).
    QString why;
    const QByteArray idx = rf.indexRead->read(first * kIndexRecord, count * kIndexRecord, &why);
    const qint64 n = idx.size() / kIndexRecord;
    if (n == 0) {
        if (errorMessage)
            *errorMessage = why.isEmpty()
                                ? tr("%1: no line %2").arg(rf.indexRead->fileName()).arg(first + 1)
                                : why;
        return false;
    }
    const char *recs = idx.constData();
    auto offsetOf = [&](qint64 i) { return qFromLittleEndian<qint64>(recs + i * kIndexRecord); };
    auto lengthOf = [&](qint64 i) {
        qint64 length = qFromLittleEndian<quint32>(recs + i * kIndexRecord + 16);
        return length == 0xffffffffLL ? rf.logSize - offsetOf(i) : length;
    };
    const qint64 spanStart = offsetOf(0);
    const qint64 spanEnd = offsetOf(n - 1) + lengthOf(n - 1);
    constexpr qint64 kMaxSpan = qint64{8} * 1024 * 1024;
    QByteArray block;
    const bool bulk = spanEnd - spanStart <= kMaxSpan && spanEnd >= spanStart;
    if (bulk)
        block = rf.logRead->read(spanStart, spanEnd - spanStart);
    for (qint64 i = 0; i < n; ++i) {
        const qint64 offset = offsetOf(i);
        const qint64 length = lengthOf(i);
        LogLine line;
        if (!bulk || offset - spanStart + length > block.size()) {
            if (!readLineLocked(rank, first + i, &line, nullptr, errorMessage))
                return false;
            out->append(std::move(line));
            continue;
        }
        const qint64 want = length <= kMaxReadBack ? length : m_options.maxDisplayBytes + 1;
        const char *rec = recs + i * kIndexRecord;
        line.rank = rank;
        line.stream = rec[20] ? StreamKind::Stderr : StreamKind::Stdout;
        line.timeUs = qFromLittleEndian<qint64>(rec + 8);
        line.byteLength = length;
        line.number = first + i;
        line.overdrawn = (quint8(rec[21]) & kFlagOverdrawn) != 0;
        line.text =
            LineSplitter::displayText(QByteArrayView(block).sliced(offset - spanStart, want),
                                      m_options.maxDisplayBytes, &line.truncated, length);
        out->append(std::move(line));
    }
    if (n < count) {
        if (errorMessage)
            *errorMessage = tr("%1: no line %2").arg(rf.indexRead->fileName()).arg(first + n + 1);
        return false;
    }
    return true;
}

bool LogStore::readMergedRangeLocked(qint64 first, qint64 count, QList<LogLine> *out,
                                     QString *errorMessage) const
{
    if (count <= 0)
        return true;
    int rank = 0;
    qint64 number = 0;
    // Opens the merged index (and reports a missing directory).
    if (!readAllIndexLocked(first, &rank, &number, errorMessage))
        return false;
    const QByteArray idx =
        m_allIndexRead->read(first * kAllRecord, count * kAllRecord, errorMessage);
    const qint64 n = idx.size() / kAllRecord;
    // Within any stretch of the merged order each rank's lines are consecutive: one range read
    // per rank, then interleave.
    struct Range
    {
        qint64 first = -1;
        qint64 last = -1;
        QList<LogLine> lines;
        qsizetype next = 0;
    };
    QHash<int, Range> ranges;
    std::vector<std::pair<int, qint64>> order;
    order.reserve(size_t(n));
    for (qint64 i = 0; i < n; ++i) {
        const quint64 v = qFromLittleEndian<quint64>(idx.constData() + i * kAllRecord);
        const int r = int(v >> kRankShift);
        const qint64 num = qint64(v & kNumberMask);
        order.emplace_back(r, num);
        Range &range = ranges[r];
        if (range.first < 0 || num < range.first)
            range.first = num;
        range.last = qMax(range.last, num);
    }
    for (auto it = ranges.begin(); it != ranges.end(); ++it) {
        if (!readRankRangeLocked(it.key(), it->first, it->last - it->first + 1, &it->lines,
                                 errorMessage))
            return false;
    }
    for (qint64 i = 0; i < n; ++i) {
        Range &range = ranges[order[size_t(i)].first];
        const qsizetype at = qsizetype(order[size_t(i)].second - range.first);
        if (at < 0 || at >= range.lines.size())
            return false;
        LogLine line = range.lines[at];
        line.sequence = first + i;
        out->append(std::move(line));
    }
    if (n < count) {
        if (errorMessage)
            *errorMessage = tr("%1: no entry %2").arg(m_allIndexRead->fileName()).arg(first + n);
        return false;
    }
    return true;
}

bool LogStore::readLineLocked(int rank, qint64 number, LogLine *line, QByteArray *raw,
                              QString *errorMessage) const
{
    auto fail = [&](const QString &why) {
        if (errorMessage)
            *errorMessage = why;
        return false;
    };
    if (m_directory.isEmpty())
        return fail(tr("older lines are not kept: the log store has no run directory"));
    const auto it = m_ranks.constFind(rank);
    if (it == m_ranks.cend())
        return fail(tr("no log for rank %1").arg(rank));
    const RankFiles &rf = *it.value();
    if (!openReadHandlesLocked(rf, errorMessage))
        return false;
    QString why;
    const QByteArray record = rf.indexRead->read(number * kIndexRecord, kIndexRecord, &why);
    if (record.size() != kIndexRecord)
        return fail(why.isEmpty()
                        ? tr("%1: no line %2").arg(rf.indexRead->fileName()).arg(number + 1)
                        : why);
    const char *rec = record.constData();
    const qint64 offset = qFromLittleEndian<qint64>(rec);
    const qint64 timeUs = qFromLittleEndian<qint64>(rec + 8);
    qint64 length = qFromLittleEndian<quint32>(rec + 16);
    if (length == 0xffffffffLL) // saturated: the line runs up to the next newline
        length = rf.logSize - offset;
    const StreamKind stream = rec[20] ? StreamKind::Stderr : StreamKind::Stdout;
    const bool overdrawn = (quint8(rec[21]) & kFlagOverdrawn) != 0;
    if (raw) {
        *raw = rf.logRead->read(offset, length, &why);
        if (raw->size() != length)
            return fail(
                why.isEmpty()
                    ? tr("%1: line %2 is incomplete").arg(rf.logRead->fileName()).arg(number + 1)
                    : why);
    }
    if (line) {
        const qint64 want = length <= kMaxReadBack ? length : m_options.maxDisplayBytes + 1;
        const QByteArray bytes = raw ? raw->left(want) : rf.logRead->read(offset, want, &why);
        if (!why.isEmpty())
            return fail(why);
        if (bytes.size() < want) {
            // The index says more than the file has (a record damaged outside the launcher):
            // say so, never that the line was cut for display.
            line->text = LineSplitter::displayText(bytes, m_options.maxDisplayBytes,
                                                   &line->truncated, bytes.size()) +
                         tr(" … [%1 bytes of this line are missing from the record]")
                             .arg(length - bytes.size());
        }
        line->rank = rank;
        line->stream = stream;
        line->overdrawn = overdrawn;
        line->timeUs = timeUs;
        line->byteLength = length;
        line->number = number;
        line->sequence = -1;
        line->raw.clear();
        line->partial = false;
        if (bytes.size() >= want)
            line->text = LineSplitter::displayText(bytes, m_options.maxDisplayBytes,
                                                   &line->truncated, length);
    }
    return true;
}

QList<LogLine> LogStore::readLines(int rank, qint64 first, int count, QString *errorMessage) const
{
    QMutexLocker lock(&m_mutex);
    QList<LogLine> out;
    if (first < 0) {
        count += int(qMax<qint64>(first, INT_MIN));
        first = 0;
    }
    if (count <= 0)
        return out;
    if (rank == AllRanks) {
        const qint64 end = qMin(m_allCount, first + count);
        const qint64 memFirst = m_all.empty() ? m_allCount : m_all.front().sequence;
        if (first < qMin(end, memFirst)) {
            if (!readMergedRangeLocked(first, qMin(end, memFirst) - first, &out, errorMessage))
                return out;
        }
        for (qint64 s = qMax(first, memFirst); s < end; ++s)
            out.append(m_all[size_t(s - memFirst)]);
        return out;
    }
    const auto it = m_ranks.constFind(rank);
    if (it == m_ranks.cend())
        return out;
    const RankFiles &rf = *it.value();
    const qint64 end = qMin(rf.count, first + count);
    const qint64 memFirst = rf.window.empty() ? rf.count : rf.window.front().number;
    if (first < qMin(end, memFirst)) {
        if (!readRankRangeLocked(rank, first, qMin(end, memFirst) - first, &out, errorMessage))
            return out;
    }
    for (qint64 n = qMax(first, memFirst); n < end; ++n)
        out.append(rf.window[size_t(n - memFirst)]);
    return out;
}

QByteArray LogStore::readRawLine(int rank, qint64 number, QString *errorMessage) const
{
    QMutexLocker lock(&m_mutex);
    QByteArray raw;
    if (!readLineLocked(rank, number, nullptr, &raw, errorMessage))
        return QByteArray();
    return raw;
}

} // namespace rankdeck
