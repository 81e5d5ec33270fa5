// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/bundledbinary.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#ifndef RANKDECK_LIBEXEC_FROM_BIN
#define RANKDECK_LIBEXEC_FROM_BIN "../libexec/rankdeck"
#endif

namespace rankdeck {

QString bundledBinary(const char *environmentVariable, const QString &name)
{
    QString env = qEnvironmentVariable(environmentVariable);
    if (!env.isEmpty())
        return env;
    return bundledBinaryIn(QCoreApplication::applicationDirPath(), name);
}

QString bundledBinaryIn(const QString &applicationDir, const QString &name)
{
    QString installed =
        QDir::cleanPath(applicationDir + QStringLiteral("/" RANKDECK_LIBEXEC_FROM_BIN "/") + name);
    if (QFileInfo(installed).isExecutable())
        return installed;
    // The build tree; also what a missing binary is reported as.
    return applicationDir + QLatin1Char('/') + name;
}

} // namespace rankdeck
