// SPDX-License-Identifier: GPL-3.0-or-later
//
// The collapsed-stack format flamegraph.pl, speedscope and inferno read: one line per distinct
// stack, root-first frames joined by ';', a space, the sample count. RankDeck writes a
// profile's every rank in it (profiles/<id>/rank-<R>.collapsed); the app and `profile` read it
// back here. A line that is not one (no count, a count ≤ 0) is skipped, never a failure.
#pragma once

#include <QHash>
#include <QString>

namespace rankdeck {

class CollapsedStacks
{
public:
    using Counts = QHash<QString, qint64>;
    static constexpr qint64 kMaxBytes = qint64(64) * 1024 * 1024;

    // false and *error when the file cannot be read (or exceeds kMaxBytes).
    static bool read(const QString &path, Counts *stacks, QString *error);
    static Counts parse(QByteArrayView text);
    // Each leaf frame's own samples.
    static Counts leaves(const Counts &stacks);
};

} // namespace rankdeck
