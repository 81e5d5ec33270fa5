// SPDX-License-Identifier: GPL-3.0-or-later
//
// Translatable messages of core code that is not a QObject (QObject subclasses use their own
// tr()). One context, "rankdeck", for all of them: the messages are whole sentences that do not
// need a class to disambiguate them.
#pragma once

#include <QString>

namespace rankdeck {

QString tr(const char *sourceText, const char *disambiguation = nullptr, int n = -1);

} // namespace rankdeck
