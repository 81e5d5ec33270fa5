// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/signalname.h"

#include <cstring>

namespace rankdeck {

QString signalName(int sig)
{
    if (sig <= 0)
        return QString();
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char *abbrev = sigabbrev_np(sig))
        return QStringLiteral("SIG") + QString::fromLatin1(abbrev);
#endif
    return QStringLiteral("signal %1").arg(sig);
}

} // namespace rankdeck
