// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/filelimit.h"

#include "util/logging.h"
#include "util/translation.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/resource.h>

namespace rankdeck {

bool ensureOpenFileLimit(qint64 needed, QString *error, qint64 *raisedFrom)
{
    if (raisedFrom)
        *raisedFrom = 0;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return true; // nothing known: let the ranks try
    if (limit.rlim_cur == RLIM_INFINITY || rlim_t(needed) <= limit.rlim_cur)
        return true;
    if (limit.rlim_max != RLIM_INFINITY && rlim_t(needed) > limit.rlim_max) {
        *error = tr("this run needs about %1 open files in the launcher, but the system lets "
                    "it open at most %2 (the hard limit, `ulimit -Hn`); raise it (for example "
                    "`nofile` in /etc/security/limits.conf, or LimitNOFILE= for a service) or "
                    "start fewer local ranks")
                     .arg(needed)
                     .arg(qint64(limit.rlim_max));
        return false;
    }
    const rlim_t old = limit.rlim_cur;
    const rlim_t wanted = std::max<rlim_t>(rlim_t(needed), 65536);
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(limit.rlim_max, wanted);
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        *error = tr("this run needs about %1 open files in the launcher; raising the limit from %2 "
                    "failed: %3")
                     .arg(needed)
                     .arg(qint64(old))
                     .arg(QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    }
    if (raisedFrom)
        *raisedFrom = qint64(old);
    return true;
}

bool ensureOpenFilesForLocalRanks(int ranks, QString *error)
{
    qint64 raisedFrom = 0;
    if (!ensureOpenFileLimit(kLauncherBaseFiles + qint64(kFilesPerLocalRank) * ranks, error,
                             &raisedFrom))
        return false;
    if (raisedFrom > 0)
        qCInfo(lcRun) << "raised the open-file limit from" << raisedFrom << "for" << ranks
                      << "local ranks";
    return true;
}

} // namespace rankdeck
