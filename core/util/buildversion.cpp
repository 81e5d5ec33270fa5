// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/buildversion.h"

#include "rankdeckcommit.h" // generated at build time (cmake/RankDeckGitCommit.cmake)

namespace rankdeck::BuildVersion {

namespace {
bool known(const QString &commit)
{
    return !commit.isEmpty() && commit != QLatin1String("unknown");
}
} // namespace

QString version()
{
    return QStringLiteral(RANKDECK_VERSION);
}

QString commit()
{
    return QStringLiteral(RANKDECK_GIT_COMMIT);
}

QString describe()
{
    return describe(version(), commit());
}

QString describe(const QString &version, const QString &commit)
{
    const QString v = version.isEmpty() ? QStringLiteral("(unknown version)") : version;
    return known(commit) ? QStringLiteral("%1 (git %2)").arg(v, commit) : v;
}

bool isOther(const QString &recordedVersion, const QString &recordedCommit)
{
    if (recordedVersion != version())
        return true;
    return known(recordedCommit) && known(commit()) && recordedCommit != commit();
}

} // namespace rankdeck::BuildVersion
