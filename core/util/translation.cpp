// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/translation.h"

#include <QCoreApplication>

namespace rankdeck {

QString tr(const char *sourceText, const char *disambiguation, int n)
{
    return QCoreApplication::translate("rankdeck", sourceText, disambiguation, n);
}

} // namespace rankdeck
