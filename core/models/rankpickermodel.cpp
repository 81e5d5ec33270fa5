// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/rankpickermodel.h"

#include "record/rankgroups.h"

#include <QRegularExpression>

namespace rankdeck {

RankPickerModel::RankPickerModel(QObject *parent) : QAbstractListModel(parent) {}

QString RankPickerModel::labelOf(const RankStatus &status)
{
    return RankGroups::groupOf(status).label();
}

bool RankPickerModel::parseRanks(const QString &word, QList<QPair<int, int>> *ranges)
{
    static const QRegularExpression piece(
        QStringLiteral(R"(^\s*(\d{1,7})\s*(?:[-–]\s*(\d{1,7}))?\s*$)"));
    QList<QPair<int, int>> out;
    for (const QString &part : word.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QRegularExpressionMatch m = piece.match(part);
        if (!m.hasMatch())
            return false;
        const int from = m.captured(1).toInt();
        const int to = m.captured(2).isEmpty() ? from : m.captured(2).toInt();
        out.append({std::min(from, to), std::max(from, to)});
    }
    if (out.isEmpty())
        return false;
    *ranges = out;
    return true;
}

void RankPickerModel::setFilter(const QString &text)
{
    if (text == m_filter)
        return;
    m_filter = text;
    m_terms.clear();
    // "3, 7-9" and "40 - 41" are one rank word each: spaces around commas and dashes join.
    static const QRegularExpression joins(QStringLiteral(R"(\s*([,–-])\s*)"));
    QString normal = text.trimmed();
    normal.replace(joins, QStringLiteral("\\1"));
    for (const QString &word : normal.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        Term t;
        if (!parseRanks(word, &t.ranges))
            t.text = word.toLower();
        m_terms.append(t);
    }
    beginResetModel();
    m_rows = rowsFor();
    endResetModel();
}

bool RankPickerModel::matches(const RankStatus &s) const
{
    for (const Term &t : m_terms) {
        if (!t.ranges.isEmpty()) {
            if (std::none_of(t.ranges.cbegin(), t.ranges.cend(), [&](const QPair<int, int> &r) {
                    return s.rank >= r.first && s.rank <= r.second;
                }))
                return false;
            continue;
        }
        const QString label = labelOf(s);
        if (!s.host.contains(t.text, Qt::CaseInsensitive) &&
            !label.startsWith(t.text, Qt::CaseInsensitive) &&
            !rankStateName(s.state).startsWith(t.text, Qt::CaseInsensitive))
            return false;
    }
    return true;
}

QList<int> RankPickerModel::rowsFor() const
{
    QList<int> rows;
    rows.reserve(m_all.size());
    for (int i = 0; i < m_all.size(); ++i)
        if (matches(m_all[i]))
            rows.append(i);
    return rows;
}

void RankPickerModel::setRanks(const QList<RankStatus> &ranks)
{
    QList<RankStatus> sorted = ranks;
    std::sort(sorted.begin(), sorted.end(),
              [](const RankStatus &a, const RankStatus &b) { return a.rank < b.rank; });
    bool sameRanks = sorted.size() == m_all.size();
    for (qsizetype i = 0; sameRanks && i < sorted.size(); ++i)
        sameRanks = sorted[i].rank == m_all[i].rank;
    const QList<RankStatus> previous = std::exchange(m_all, sorted);
    const QList<int> rows = rowsFor();
    if (!sameRanks || rows != m_rows) {
        // Ranks joined, or a state change moved ranks in or out of the filter: the rows are
        // recomputed (a reset: the view keeps its current rank by rowOfRank()).
        beginResetModel();
        m_rows = rows;
        endResetModel();
        return;
    }
    // The same rows: only those whose status changed are repainted.
    for (int row = 0; row < m_rows.size(); ++row) {
        const RankStatus &a = previous[m_rows[row]];
        const RankStatus &b = m_all[m_rows[row]];
        if (a.host != b.host || a.state != b.state || a.hung != b.hung || a.silent != b.silent ||
            a.exitCode != b.exitCode || a.signal != b.signal || a.rootCause != b.rootCause)
            emit dataChanged(index(row), index(row));
    }
}

int RankPickerModel::rankAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_all[m_rows[row]].rank : -1;
}

int RankPickerModel::rowOfRank(int rank) const
{
    const auto it = std::lower_bound(m_rows.cbegin(), m_rows.cend(), rank,
                                     [this](int i, int r) { return m_all[i].rank < r; });
    return it != m_rows.cend() && m_all[*it].rank == rank ? int(it - m_rows.cbegin()) : -1;
}

int RankPickerModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant RankPickerModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RankStatus &s = m_all[m_rows[index.row()]];
    switch (role) {
    case Qt::DisplayRole:
        return s.host.isEmpty() ? tr("Rank %1  %2").arg(s.rank).arg(labelOf(s))
                                : tr("Rank %1  %2  %3").arg(s.rank).arg(s.host, labelOf(s));
    case RankRole:
        return s.rank;
    case HostRole:
        return s.host;
    case StateRole:
        return int(s.state);
    case LabelRole:
        return labelOf(s);
    default:
        return {};
    }
}

} // namespace rankdeck
