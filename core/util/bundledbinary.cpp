// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/bundledbinary.h"

#include <QCoreApplication>

namespace rankdeck {

QString bundledBinary(const char *environmentVariable, const QString &name)
{
    const QString env = qEnvironmentVariable(environmentVariable);
    if (!env.isEmpty())
        return env;
    return QCoreApplication::applicationDirPath() + QLatin1Char('/') + name;
}

} // namespace rankdeck
