// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankfilter.h"

#include <QRegularExpression>

#include <algorithm>
#include <utility>

namespace rankdeck {

RankFilter::RankFilter(const QString &text) : m_text(text.trimmed())
{
    if (m_text.isEmpty())
        return;
    static const QRegularExpression range(
        QStringLiteral("^\\s*(\\d{1,9})\\s*(?:-\\s*(\\d{1,9}))?\\s*$"));
    QList<QPair<int, int>> ranges;
    for (const QString &part : m_text.split(u',', Qt::SkipEmptyParts)) {
        const QRegularExpressionMatch m = range.match(part);
        if (!m.hasMatch())
            return; // not a rank list: a name filter
        int lo = m.captured(1).toInt();
        int hi = m.captured(2).isEmpty() ? lo : m.captured(2).toInt();
        if (lo > hi)
            std::swap(lo, hi);
        ranges.append({lo, hi});
    }
    m_ranges = ranges;
}

bool RankFilter::matches(int rank, const QString &name) const
{
    if (m_ranges.isEmpty())
        return matchesName(name);
    return std::ranges::any_of(m_ranges, [rank](const auto &range) {
        return rank >= range.first && rank <= range.second;
    });
}

bool RankFilter::matchesName(const QString &name) const
{
    return m_text.isEmpty() || name.contains(m_text, Qt::CaseInsensitive);
}

} // namespace rankdeck
