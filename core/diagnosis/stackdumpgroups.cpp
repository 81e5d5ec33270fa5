// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/stackdumpgroups.h"

#include "diagnosis/rankstackdump.h"

#include <QRegularExpression>

#include <algorithm>

namespace rankdeck {

QString StackDumpGroups::lastDump(const QString &stacks)
{
    // RunRecord::appendStacks() puts each dump under a line of its own starting "=== ".
    qsizetype at = stacks.startsWith(QLatin1String("=== ")) ? 0 : -1;
    const qsizetype later = stacks.lastIndexOf(QLatin1String("\n=== "));
    if (later >= 0)
        at = later + 1;
    if (at < 0)
        return stacks;
    const qsizetype body = stacks.indexOf(QLatin1Char('\n'), at);
    return body < 0 ? QString() : stacks.mid(body + 1);
}

QString StackDumpGroups::signature(const QStringList &waits)
{
    // "thread 4242 (main) …", "python thread 0x7f3a… (current): …": the ids differ between
    // ranks that are alike.
    static const QRegularExpression threadId(
        QStringLiteral("^((?:python )?thread )(?:0x[0-9a-fA-F]+|\\d+)"));
    QString key;
    for (QString line : waits)
        key += line.replace(threadId, QStringLiteral("\\1")) + QChar(0x1f);
    return key;
}

QList<StackDumpGroup> StackDumpGroups::group(const QHash<int, QString> &dumps)
{
    QList<int> ranks = dumps.keys();
    std::sort(ranks.begin(), ranks.end());
    QList<StackDumpGroup> out;
    QHash<QString, qsizetype> index; // signature → group
    for (int rank : std::as_const(ranks)) {
        const QStringList waits = whereRankWaits(RankStackDump::split(lastDump(dumps.value(rank))));
        const QString key = signature(waits);
        const auto it = index.constFind(key);
        if (it != index.cend()) {
            out[*it].ranks << rank;
            continue;
        }
        index.insert(key, out.size());
        out << StackDumpGroup{{rank}, rank, waits};
    }
    std::stable_sort(out.begin(), out.end(), [](const StackDumpGroup &a, const StackDumpGroup &b) {
        return a.ranks.size() < b.ranks.size();
    });
    return out;
}

} // namespace rankdeck
