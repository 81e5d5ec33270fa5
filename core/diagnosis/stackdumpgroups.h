// SPDX-License-Identifier: GPL-3.0-or-later
//
// Ranks whose stack dumps say they wait in the same places, as one group (issue 31). A hang
// asks every running rank for its stacks: at 512 ranks that was 512 entries on the Failures
// page, where the reader looks for the three that are not where the rest wait. Two dumps are
// alike when whereRankWaits() says the same of them but for thread ids: each native thread
// worth showing and where it waits, each Python thread's frame (file, line, function).
#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct StackDumpGroup
{
    QList<int> ranks;        // ascending
    int representative = -1; // the group's first rank: its dump stands for the group's
    QStringList waits;       // whereRankWaits() of the representative's dump
};

class StackDumpGroups
{
public:
    // dumps: a rank's stacks as the run keeps them (one dump, or a stacks-rank-<R>.txt with
    // several under "=== <time> (<reason>)" lines: the last one counts). The smallest groups
    // first (the ranks that stand out), then by first rank. O(ranks · dump size).
    static QList<StackDumpGroup> group(const QHash<int, QString> &dumps);
    // The last dump of such a text.
    static QString lastDump(const QString &stacks);
    // What two alike dumps share.
    static QString signature(const QStringList &waits);
};

} // namespace rankdeck
