// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankoutput.h"

#include "cliutil.h"
#include "record/rankgroups.h"
#include "util/printabletext.h"

#include <QHash>
#include <QSet>

#include <algorithm>

namespace rankdeck::cli {

void RankOutput::printEach(QTextStream &out, const QList<RankStatus> &ranks, RunState runState,
                           const RunVerdictFacts &facts)
{
    for (const RankStatus &s : ranks) {
        QString line = QStringLiteral("  rank %1  %2  pid %3  %4")
                           .arg(s.rank, 3)
                           .arg(s.host, -12)
                           .arg(s.pid, -8)
                           .arg(shownRankText(s, runState, facts), -10);
        if (s.shownStep() >= 0)
            line += QStringLiteral("  ") + CliUtil::formatStep(s.shownStep(), s.totalSteps);
        if (!qIsNaN(s.loss))
            line += CliUtil::tr("  loss %1").arg(s.loss, 0, 'g', 6);
        if (s.startTimeUs > 0 && s.endTimeUs > 0)
            line += QStringLiteral("  ") + CliUtil::formatDuration(s.endTimeUs - s.startTimeUs);
        if (!s.detail.isEmpty())
            line += QStringLiteral("  (") + printableLabel(s.detail, 1000) + QLatin1Char(')');
        if (!s.inCollective.isEmpty())
            line += CliUtil::tr("  in collective %1").arg(printableLabel(s.inCollective, 200));
        if (s.rootCause)
            line += CliUtil::tr("  <- root cause");
        out << line << '\n';
    }
}

void RankOutput::printGrouped(QTextStream &out, const QList<RankStatus> &ranks)
{
    QHash<int, const RankStatus *> byRank;
    byRank.reserve(ranks.size());
    for (const RankStatus &s : ranks)
        byRank.insert(s.rank, &s);
    const QList<RankGroup> groups = RankGroups::group(ranks);
    QStringList rankTexts;
    qsizetype width = 0;
    for (const RankGroup &g : groups) {
        rankTexts << g.rankText();
        width = std::max(width, rankTexts.constLast().size());
    }
    // Columns line up as long as the ranges are short; a long list just pushes its line out.
    width = std::min<qsizetype>(width, 40);
    for (qsizetype i = 0; i < groups.size(); ++i) {
        const RankGroup &g = groups[i];
        qint64 minStep = -1, maxStep = -1, total = 0;
        QSet<QString> hosts, details, collectives;
        for (int r : g.ranks) {
            const RankStatus &s = *byRank.value(r);
            if (s.shownStep() >= 0) {
                minStep = minStep < 0 ? s.shownStep() : std::min(minStep, s.shownStep());
                maxStep = std::max(maxStep, s.shownStep());
            }
            total = std::max(total, s.totalSteps);
            hosts.insert(s.host);
            details.insert(s.detail);
            collectives.insert(s.inCollective);
        }
        QString line = QStringLiteral("  %1  %2").arg(rankTexts[i], -int(width)).arg(g.label());
        if (minStep >= 0 && minStep == maxStep)
            line += QStringLiteral("  ") + CliUtil::formatStep(minStep, total);
        else if (minStep >= 0)
            line += total > 0 ? CliUtil::tr("  steps %1–%2/%3").arg(minStep).arg(maxStep).arg(total)
                              : CliUtil::tr("  steps %1–%2").arg(minStep).arg(maxStep);
        if (hosts.size() == 1)
            line += CliUtil::tr("  on %1").arg(printableLabel(*hosts.cbegin(), 200));
        else
            line += CliUtil::tr("  on %1 hosts").arg(hosts.size());
        // What the ranks were told or wait in, when they share it; else `--all-ranks` has it.
        if (details.size() == 1 && !details.cbegin()->isEmpty())
            line +=
                QStringLiteral("  (") + printableLabel(*details.cbegin(), 1000) + QLatin1Char(')');
        if (collectives.size() == 1 && !collectives.cbegin()->isEmpty())
            line +=
                CliUtil::tr("  in collective %1").arg(printableLabel(*collectives.cbegin(), 200));
        out << line << '\n';
    }
    out << CliUtil::tr("  (%1 ranks in %2 group(s); show --all-ranks prints each rank)")
               .arg(ranks.size())
               .arg(groups.size())
        << '\n';
}

} // namespace rankdeck::cli
