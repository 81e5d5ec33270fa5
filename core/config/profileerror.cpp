// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/profileerror.h"

namespace rankdeck {

QString ProfileError::toString() const
{
    QString s = file;
    if (line > 0)
        s += QLatin1Char(':') + QString::number(line);
    s += QStringLiteral(": ");
    if (!field.isEmpty())
        s += field + QStringLiteral(": ");
    return s + message;
}

} // namespace rankdeck
