// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/compactedfile.h"

#include "util/translation.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QRegularExpression>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <memory>

namespace rankdeck {

namespace {

// zstd's own default: ~8:1 on training logs at a few ms a segment.
constexpr int kLevel = 3;
constexpr qint64 kBlock = 4096;

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

bool readFully(int fd, char *out, qint64 length, qint64 offset, qint64 *got)
{
    *got = 0;
    while (*got < length) {
        const ssize_t n = ::pread(fd, out + *got, size_t(length - *got), off_t(offset + *got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            break;
        *got += n;
    }
    return true;
}

// Decompressed segments shared by every reader of the process, least recently used first out:
// scrolling back through hundreds of ranks must not hold hundreds of segments.
class SegmentCache
{
public:
    static SegmentCache &instance()
    {
        static SegmentCache cache;
        return cache;
    }

    bool get(const CompactedFile::Segment &segment, QByteArray *out, QString *errorMessage)
    {
        {
            QMutexLocker lock(&m_mutex);
            for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
                if (it->path == segment.path) {
                    m_entries.splice(m_entries.begin(), m_entries, it);
                    *out = m_entries.front().bytes;
                    return true;
                }
            }
        }
        // Decompressed outside the lock: another reader may do the same segment meanwhile,
        // which costs time, never correctness (segments never change once in place).
        if (!decompress(segment, out, errorMessage))
            return false;
        QMutexLocker lock(&m_mutex);
        m_entries.push_front({segment.path, *out});
        m_bytes += out->size();
        while (m_bytes > kBudget && m_entries.size() > 1) {
            m_bytes -= m_entries.back().bytes.size();
            m_entries.pop_back();
        }
        return true;
    }

private:
    static constexpr qint64 kBudget = qint64{16} * 1024 * 1024;

    static bool decompress(const CompactedFile::Segment &segment, QByteArray *out,
                           QString *errorMessage)
    {
        auto fail = [&](const QString &why) {
            if (errorMessage)
                *errorMessage = why;
            return false;
        };
        QFile f(segment.path);
        if (!f.open(QIODevice::ReadOnly))
            return fail(tr("cannot read %1: %2").arg(segment.path, f.errorString()));
        const QByteArray packed = f.readAll();
        const qint64 want = segment.end - segment.start;
        const unsigned long long size =
            ZSTD_getFrameContentSize(packed.constData(), size_t(packed.size()));
        // `zstd` fed from a pipe writes no size in the frame: read it as a stream.
        if (size == ZSTD_CONTENTSIZE_UNKNOWN)
            return decompressStream(segment, packed, want, out, errorMessage);
        if (size != (unsigned long long)want)
            return fail(tr("%1 is damaged: it does not hold the %2 bytes its name says")
                            .arg(segment.path)
                            .arg(want));
        out->resize(qsizetype(want));
        const size_t n =
            ZSTD_decompress(out->data(), size_t(want), packed.constData(), size_t(packed.size()));
        if (ZSTD_isError(n) || qint64(n) != want)
            return fail(
                tr("%1 is damaged: %2")
                    .arg(segment.path, QString::fromLatin1(ZSTD_isError(n) ? ZSTD_getErrorName(n)
                                                                           : "it is short")));
        return true;
    }

    static bool decompressStream(const CompactedFile::Segment &segment, const QByteArray &packed,
                                 qint64 want, QByteArray *out, QString *errorMessage)
    {
        std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx *)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
        out->resize(qsizetype(want));
        ZSTD_inBuffer in{packed.constData(), size_t(packed.size()), 0};
        ZSTD_outBuffer o{out->data(), size_t(want), 0};
        QString why = ctx ? QString() : tr("no memory to read it");
        size_t left = 1;
        while (why.isEmpty() && (in.pos < in.size || left != 0)) {
            const size_t before = in.pos + o.pos;
            left = ZSTD_decompressStream(ctx.get(), &o, &in);
            if (ZSTD_isError(left))
                why = QString::fromLatin1(ZSTD_getErrorName(left));
            else if (o.pos == o.size && (left != 0 || in.pos < in.size))
                why = tr("it holds more than the %1 bytes its name says").arg(want);
            else if (in.pos + o.pos == before)
                why = tr("it is cut short");
        }
        if (why.isEmpty() && qint64(o.pos) != want)
            why = tr("it holds %1 bytes where its name says %2").arg(o.pos).arg(want);
        if (why.isEmpty())
            return true;
        if (errorMessage)
            *errorMessage = tr("%1 is damaged: %2").arg(segment.path, why);
        return false;
    }

    QMutex m_mutex;
    struct Entry
    {
        QString path;
        QByteArray bytes;
    };
    std::list<Entry> m_entries;
    qint64 m_bytes = 0;
};

} // namespace

CompactedFile::CompactedFile(QString path) : m_path(std::move(path)) {}

CompactedFile::~CompactedFile()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

bool CompactedFile::open(QString *errorMessage)
{
    if (m_fd >= 0)
        return true;
    m_fd = ::open(QFile::encodeName(m_path).constData(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0 && errorMessage)
        *errorMessage = tr("cannot read %1: %2").arg(m_path, errnoText());
    return m_fd >= 0;
}

qint64 CompactedFile::size() const
{
    struct stat st
    {
    };
    return m_fd >= 0 && ::fstat(m_fd, &st) == 0 ? qint64(st.st_size) : 0;
}

QByteArray CompactedFile::read(qint64 offset, qint64 length, QString *errorMessage) const
{
    QByteArray data;
    if (m_fd < 0 || offset < 0 || length <= 0)
        return data;
    data.resize(qsizetype(length));
    qint64 got = 0;
    if (!readFully(m_fd, data.data(), length, offset, &got)) {
        if (errorMessage)
            *errorMessage = tr("cannot read %1: %2").arg(m_path, errnoText());
        return QByteArray();
    }
    data.resize(qsizetype(got));
    if (got == 0)
        return data;
    // Asked after the read: a prefix freed before it had its segment in place before that.
    const off_t firstData = ::lseek(m_fd, off_t(offset), SEEK_DATA);
    if (firstData == off_t(offset))
        return data;
    // ENXIO: no data from offset on (all of it freed); anything else: the filesystem cannot
    // say, so the segments decide.
    const qint64 holeEnd = firstData < 0 ? offset + got : qMin<qint64>(firstData, offset + got);
    if (!fillFromSegments(data, offset, holeEnd, errorMessage))
        return QByteArray();
    return data;
}

bool CompactedFile::fillFromSegments(QByteArray &data, qint64 offset, qint64 holeEnd,
                                     QString *errorMessage) const
{
    const qint64 end = offset + data.size();
    auto covered = [&] {
        qint64 at = offset;
        for (const Segment &s : std::as_const(m_segments)) {
            if (s.start <= at && s.end > at)
                at = s.end;
        }
        return at >= holeEnd;
    };
    if (!covered())
        m_segments = segments(m_path);
    qint64 at = offset;
    for (const Segment &s : std::as_const(m_segments)) {
        if (s.end <= offset || s.start >= end)
            continue;
        QByteArray bytes;
        if (!SegmentCache::instance().get(s, &bytes, errorMessage))
            return false;
        const qint64 from = qMax(offset, s.start);
        const qint64 to = qMin(end, s.end);
        std::memcpy(data.data() + (from - offset), bytes.constData() + (from - s.start),
                    size_t(to - from));
        if (from <= at)
            at = qMax(at, to);
    }
    // A hole above every segment is the file's own (a sparse file: it reads as zeros, as it
    // would without RankDeck); one below a segment's end is a segment that went missing.
    qint64 segmentsEnd = 0;
    for (const Segment &s : std::as_const(m_segments))
        segmentsEnd = qMax(segmentsEnd, s.end);
    if (at < holeEnd && at < segmentsEnd) {
        if (errorMessage)
            *errorMessage = tr("%1: bytes %2 to %3 were compressed, and no segment beside it "
                               "holds them (%1.*.zst)")
                                .arg(m_path)
                                .arg(at)
                                .arg(holeEnd);
        return false;
    }
    return true;
}

bool CompactedFile::parseSegmentName(const QString &name, QString *file, qint64 *start, qint64 *end)
{
    static const QRegularExpression re(QStringLiteral("^(.+)\\.(\\d+)-(\\d+)\\.zst\\z"));
    const auto m = re.match(name);
    if (!m.hasMatch())
        return false;
    if (file)
        *file = m.captured(1);
    if (start)
        *start = m.captured(2).toLongLong();
    if (end)
        *end = m.captured(3).toLongLong();
    return true;
}

QHash<QString, qint64> CompactedFile::compactedEnds(const QString &directory)
{
    QHash<QString, QList<std::pair<qint64, qint64>>> ranges;
    for (const QString &n : QDir(directory).entryList({QStringLiteral("*-*.zst")}, QDir::Files)) {
        QString file;
        qint64 start = 0, end = 0;
        if (parseSegmentName(n, &file, &start, &end))
            ranges[file].append({start, end});
    }
    QHash<QString, qint64> out;
    for (auto it = ranges.begin(); it != ranges.end(); ++it) {
        std::sort(it->begin(), it->end());
        qint64 at = 0;
        for (const auto &[start, end] : std::as_const(*it)) {
            if (start <= at && end > at)
                at = end;
        }
        if (at > 0)
            out.insert(it.key(), at);
    }
    return out;
}

QByteArray CompactedFile::readAll(const QString &path, QString *errorMessage)
{
    CompactedFile file(path);
    if (!file.open(errorMessage))
        return QByteArray();
    return file.read(0, file.size(), errorMessage);
}

QList<CompactedFile::Segment> CompactedFile::segments(const QString &path)
{
    const QFileInfo info(path);
    const QString name = info.fileName();
    QList<Segment> out;
    const QStringList names =
        info.dir().entryList({name + QStringLiteral(".*-*.zst")}, QDir::Files);
    for (const QString &n : names) {
        QString file;
        Segment s;
        if (!parseSegmentName(n, &file, &s.start, &s.end) || file != name || s.end <= s.start)
            continue;
        s.path = info.dir().filePath(n);
        out.append(s);
    }
    std::sort(out.begin(), out.end(),
              [](const Segment &a, const Segment &b) { return a.start < b.start; });
    return out;
}

QString CompactedFile::segmentPath(const QString &path, qint64 start, qint64 end)
{
    return path + QStringLiteral(".%1-%2.zst").arg(start).arg(end);
}

bool CompactedFile::compact(const QString &path, qint64 start, qint64 end, QString *errorMessage)
{
    auto fail = [&](const QString &why) {
        if (errorMessage)
            *errorMessage = why;
        return false;
    };
    if (end <= start)
        return true;
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return fail(tr("cannot compress %1: %2").arg(path, errnoText()));
    struct Closer
    {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    QByteArray bytes(qsizetype(end - start), Qt::Uninitialized);
    qint64 got = 0;
    if (!readFully(fd, bytes.data(), end - start, start, &got) || got != end - start)
        return fail(
            tr("cannot compress %1: bytes %2 to %3 are not there").arg(path).arg(start).arg(end));
    QByteArray packed(qsizetype(ZSTD_compressBound(size_t(bytes.size()))), Qt::Uninitialized);
    const size_t n = ZSTD_compress(packed.data(), size_t(packed.size()), bytes.constData(),
                                   size_t(bytes.size()), kLevel);
    if (ZSTD_isError(n))
        return fail(
            tr("cannot compress %1: %2").arg(path, QString::fromLatin1(ZSTD_getErrorName(n))));
    // Whole and synced before its name appears, and in place before a byte of it is freed.
    const QString target = segmentPath(path, start, end);
    const QByteArray temp = QFile::encodeName(target + QStringLiteral(".part"));
    const int out = ::open(temp.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        return fail(tr("cannot write %1: %2").arg(QFile::decodeName(temp), errnoText()));
    bool ok = true;
    for (size_t done = 0; ok && done < n;) {
        const ssize_t w = ::write(out, packed.constData() + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        if (ok)
            done += size_t(w);
    }
    const QString writeError = ok ? QString() : errnoText();
    ok = ok && ::fdatasync(out) == 0;
    const QString syncError = ok || !writeError.isEmpty() ? writeError : errnoText();
    ::close(out);
    if (!ok || ::rename(temp.constData(), QFile::encodeName(target).constData()) != 0) {
        const QString why = ok ? errnoText() : syncError;
        ::unlink(temp.constData());
        return fail(tr("cannot write %1: %2").arg(target, why));
    }
    const qint64 freeEnd = end / kBlock * kBlock;
    if (freeEnd > 0 &&
        ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, off_t(freeEnd)) != 0) {
        const QString why = errnoText();
        ::unlink(QFile::encodeName(target).constData());
        return fail(
            tr("cannot free the compressed part of %1 (%2): it stays as it is").arg(path, why));
    }
    return true;
}

} // namespace rankdeck
