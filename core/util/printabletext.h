// SPDX-License-Identifier: GPL-3.0-or-later
//
// Text from outside (a rank's output, a run's name, a host in a profile) made safe to print in
// a table, a terminal or a view: ANSI escape sequences (and the strings of OSC, DCS, APC, PM
// and SOS) removed, invalid UTF-8 replaced by U+FFFD, NUL, newlines and other C0 controls shown
// as visible symbols (U+2400 block), C1 controls (U+0080-U+009F: a terminal may take U+009B as
// CSI) and the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069: they
// reorder what follows, so a line can show other text than it holds) shown as U+FFFD, and at
// most maxBytes of it (cut at a character boundary; *cut says whether it was). One rule
// for everything RankDeck prints of others' bytes.
#pragma once

#include <QByteArrayView>
#include <QString>

namespace rankdeck {

// maxBytes <= 0: no limit. keepTabs: a tab stays a tab (log lines); otherwise it shows as ␉.
QString printableText(QByteArrayView line, qsizetype maxBytes = 0, bool *cut = nullptr,
                      bool keepTabs = true);
// For a short label in a table row or a message (a name, a host): one line, no tab, at most
// maxBytes, "…" at the end when cut.
QString printableLabel(const QString &text, qsizetype maxBytes = 200);
// For a block of several lines from outside (a failure report, a stack dump): each line as
// printableText (tabs kept), the newlines between them kept, at most maxBytes in all.
QString printableLines(const QString &text, qsizetype maxBytes = 0);

} // namespace rankdeck
