// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runprune.h"

#include <QCoreApplication>
#include <QFile>
#include <QRegularExpression>

#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rankdeck::RunPrune {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("rankdeck::RunPrune", text);
}

} // namespace

bool mayStillRun(const RunInfo &run)
{
    return !isTerminal(run.state) && (!run.launcherGone || run.detached || run.detachable);
}

namespace {

// Bytes the files under the open directory dirFd take on disk (their blocks: a long run's
// compressed log parts are freed inside the files, which keep their length); closes dirFd.
// openat/fstatat on the directory's own descriptor: `runs` sizes every run of a thousand-run folder
// (some 25,000 files), where a QDirIterator and a QFileInfo per file cost twice the time of the
// listing.
qint64 bytesUnder(int dirFd)
{
    DIR *dir = ::fdopendir(dirFd);
    if (!dir) {
        ::close(dirFd);
        return 0;
    }
    qint64 bytes = 0;
    while (const dirent *e = ::readdir(dir)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; // gone between the listing and the look
        if (S_ISDIR(st.st_mode)) {
            const int sub =
                ::openat(::dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                bytes += bytesUnder(sub);
        } else if (!S_ISLNK(st.st_mode)) {
            bytes += qint64(st.st_blocks) * 512; // as du counts: freed parts are not used
        }
    }
    ::closedir(dir);
    return bytes;
}

} // namespace

qint64 diskBytes(const QString &directory)
{
    const int fd =
        ::open(QFile::encodeName(directory).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? 0 : bytesUnder(fd);
}

QList<Choice> choose(const QList<RunInfo> &runs, qint64 nowUs, qint64 olderThanUs, int keep)
{
    QList<Choice> out;
    out.reserve(runs.size());
    int kept = 0;
    for (const RunInfo &run : runs) {
        Choice c{run, {}, false};
        const bool old = olderThanUs > 0 && nowUs - run.createdUs > olderThanUs;
        const bool beyond = keep >= 0 && kept >= keep;
        if (mayStillRun(run)) {
            c.reason = tr("still running: stop it first");
        } else if (old || beyond) {
            c.remove = true;
            c.reason = old ? tr("older than asked") : tr("beyond the newest %1").arg(keep);
        } else {
            c.reason = keep >= 0 ? tr("among the newest %1").arg(keep) : tr("recent enough");
        }
        // A run that may still go counts among those kept: it is kept, whatever its age.
        if (!c.remove)
            ++kept;
        out << c;
    }
    return out;
}

bool parseAge(const QString &text, qint64 *us)
{
    static const QRegularExpression re(QStringLiteral("^\\s*(\\d+(?:\\.\\d+)?)\\s*([dhms]?)\\s*$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return false;
    const double n = m.captured(1).toDouble();
    const QString unit = m.captured(2);
    const double seconds = unit == QLatin1String("h")   ? 3600.0
                           : unit == QLatin1String("m") ? 60.0
                           : unit == QLatin1String("s") ? 1.0
                                                        : 86400.0;
    const double value = n * seconds * 1e6;
    if (value > 9.0e18)
        return false;
    *us = qint64(value);
    return true;
}

} // namespace rankdeck::RunPrune
