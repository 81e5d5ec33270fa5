// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/rankgroups.h"

#include "util/signalname.h"
#include "util/translation.h"

#include <QMap>

#include <algorithm>
#include <tuple>

namespace rankdeck {

namespace {

// Only a rank that ended by itself carries its exit status into its group: a stopped rank's
// SIGTERM is the launcher's doing, not something that sets it apart.
bool endedByItself(RankState state)
{
    return state == RankState::Failed || state == RankState::Lost;
}

using GroupKey = std::tuple<int, bool, bool, bool, int, int>;

GroupKey keyOf(const RankStatus &s)
{
    const bool own = endedByItself(s.state);
    return {int(s.state), s.hung, s.silent, s.rootCause, own ? s.exitCode : 0, own ? s.signal : 0};
}

} // namespace

QString RankGroup::label() const
{
    QString text = rankStateName(state);
    QStringList why;
    // A hung or silent rank still runs as far as its process goes: "hung" is what it is.
    if (hung || silent) {
        const QString mark = hung ? tr("hung") : tr("silent");
        if (state == RankState::Running)
            text = mark;
        else
            why << mark;
    }
    if (signal != 0)
        why << signalName(signal);
    else if (exitCode != 0)
        why << tr("exit %1").arg(exitCode);
    if (rootCause)
        why << tr("root cause");
    if (!why.isEmpty())
        text += QStringLiteral(" (") + why.join(QStringLiteral(", ")) + QLatin1Char(')');
    return text;
}

QString RankGroup::rankText(int maxPieces) const
{
    const QString list = RankGroups::ranges(ranks, maxPieces);
    return ranks.size() == 1 ? tr("rank %1").arg(list) : tr("ranks %1").arg(list);
}

QString RankGroup::text(int maxPieces) const
{
    return rankText(maxPieces) + QLatin1Char(' ') + label();
}

RankGroup RankGroups::groupOf(const RankStatus &s)
{
    RankGroup g;
    g.state = s.state;
    g.hung = s.hung;
    g.silent = s.silent;
    g.rootCause = s.rootCause;
    if (endedByItself(s.state)) {
        g.exitCode = s.exitCode;
        g.signal = s.signal;
    }
    g.ranks << s.rank;
    return g;
}

QList<RankGroup> RankGroups::group(const QList<RankStatus> &ranks)
{
    QMap<GroupKey, RankGroup> byKey;
    for (const RankStatus &s : ranks) {
        RankGroup &g = byKey[keyOf(s)];
        if (g.ranks.isEmpty())
            g = groupOf(s);
        else
            g.ranks << s.rank;
    }
    QList<RankGroup> groups;
    groups.reserve(byKey.size());
    for (RankGroup &g : byKey) {
        std::sort(g.ranks.begin(), g.ranks.end());
        g.ranks.resize(std::unique(g.ranks.begin(), g.ranks.end()) - g.ranks.begin());
        groups << std::move(g);
    }
    std::sort(groups.begin(), groups.end(), [](const RankGroup &a, const RankGroup &b) {
        if (a.ranks.size() != b.ranks.size())
            return a.ranks.size() > b.ranks.size();
        return a.ranks.constFirst() < b.ranks.constFirst();
    });
    return groups;
}

QString RankGroups::summary(const QList<RankGroup> &groups, int maxPieces)
{
    QStringList parts;
    parts.reserve(groups.size());
    for (const RankGroup &g : groups)
        parts << g.text(maxPieces);
    return parts.join(QStringLiteral("; "));
}

QString RankGroups::ranges(QList<int> ranks, int maxPieces)
{
    std::sort(ranks.begin(), ranks.end());
    ranks.resize(std::unique(ranks.begin(), ranks.end()) - ranks.begin());
    QStringList pieces;
    for (qsizetype i = 0; i < ranks.size();) {
        qsizetype j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (maxPieces > 0 && pieces.size() == maxPieces) {
            // Every rank is counted, so that a cut list does not read as the whole group.
            return pieces.join(QStringLiteral(", ")) + tr(", … (%1 ranks)").arg(ranks.size());
        }
        if (j == i + 1) {
            // Two neighbours read better as "40, 41" than as a range.
            j = i;
        }
        pieces << (j == i ? QString::number(ranks[i])
                          : QString::number(ranks[i]) + QChar(0x2013) + QString::number(ranks[j]));
        i = j + 1;
    }
    return pieces.join(QStringLiteral(", "));
}

} // namespace rankdeck
