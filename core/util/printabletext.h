// SPDX-License-Identifier: GPL-3.0-or-later
//
// Text from outside (a rank's output, a run's name, a host in a profile) made safe to print in
// a table, a terminal or a view: ANSI escape sequences removed, invalid UTF-8 replaced by
// U+FFFD, NUL, newlines and other control characters shown as visible symbols (U+2400 block),
// and at most maxBytes of it (cut at a character boundary; *cut says whether it was). One rule
// for everything RankDeck prints of others' bytes.
#pragma once

#include <QByteArrayView>
#include <QString>

namespace rankdeck {

// maxBytes <= 0: no limit. keepTabs: a tab stays a tab (log lines); otherwise it shows as ␉.
QString printableText(QByteArrayView bytes, qsizetype maxBytes = 0, bool *cut = nullptr,
                      bool keepTabs = true);
// For a short label in a table row or a message (a name, a host): one line, no tab, at most
// maxBytes, "…" at the end when cut.
QString printableLabel(const QString &text, qsizetype maxBytes = 200);

} // namespace rankdeck
