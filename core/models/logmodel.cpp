// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/logmodel.h"

#include <algorithm>
#include <climits>

namespace rankdeck {

LogModel::LogModel(const LogStore *store, int rank, QObject *parent) : QAbstractListModel(parent)
{
    connect(&m_timer, &QTimer::timeout, this, &LogModel::poll);
    m_timer.setInterval(50);
    setStore(store, rank);
    m_timer.start();
}

LogModel::~LogModel() = default;

void LogModel::setStore(const LogStore *store, int rank)
{
    m_store = store;
    m_rank = rank;
    reload();
}

void LogModel::setPollInterval(int ms)
{
    if (ms <= 0) {
        m_timer.stop();
        return;
    }
    m_timer.setInterval(ms);
    m_timer.start();
}

void LogModel::setMaxRows(int maxRows)
{
    m_maxRows = qMax(1, maxRows);
    if (m_rows.size() > rowCap())
        trimFront();
}

void LogModel::setFilterPattern(const QString &pattern, bool caseSensitive)
{
    m_pattern = pattern;
    m_patternError.clear();
    m_regex = QRegularExpression();
    if (!pattern.isEmpty()) {
        QRegularExpression re(pattern, caseSensitive ? QRegularExpression::NoPatternOption
                                                     : QRegularExpression::CaseInsensitiveOption);
        if (re.isValid()) {
            re.optimize();
            m_regex = re;
        } else {
            m_patternError = tr("invalid regular expression at offset %1: %2")
                                 .arg(re.patternErrorOffset())
                                 .arg(re.errorString());
        }
    }
    reload();
}

void LogModel::setStreamFilter(int streams)
{
    m_streams = streams & AllStreams;
    reload();
}

void LogModel::setRankSet(const QList<int> &ranks)
{
    const QSet<int> set(ranks.cbegin(), ranks.cend());
    if (set == m_rankSet)
        return;
    m_rankSet = set;
    reload();
}

QList<int> LogModel::rankSet() const
{
    QList<int> ranks(m_rankSet.cbegin(), m_rankSet.cend());
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

bool LogModel::accepts(const LogLine &line) const
{
    if (line.overdrawn)
        return false; // a terminal draws over it: not what one would see
    if (!m_rankSet.isEmpty() && !m_rankSet.contains(line.rank))
        return false;
    const int bit = line.stream == StreamKind::Stderr ? StderrLines : StdoutLines;
    if (!(m_streams & bit))
        return false;
    return m_regex.pattern().isEmpty() || m_regex.match(line.text).hasMatch();
}

QString LogModel::displayText(const LogLine &line) const
{
    if (m_rank == LogStore::AllRanks)
        return QStringLiteral("[r%1] ").arg(line.rank) + line.text;
    return line.text;
}

int LogModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid())
        return 0;
    return markerRows() + int(m_rows.size()) + int(m_live.size());
}

QVariant LogModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.parent().isValid() || index.column() != 0 || index.row() < 0 ||
        index.row() >= rowCount())
        return {};
    if (index.row() < markerRows()) {
        switch (role) {
        case Qt::DisplayRole:
        case TextRole:
            return tr(
                "… %n earlier line(s) not shown: scroll up to read them back from the run record",
                nullptr, int(qMin<qint64>(m_elided, INT_MAX)));
        case IsMarkerRole:
            return true;
        case ElidedCountRole:
            return m_elided;
        case RankRole:
            return m_rank;
        case LineNumberRole:
        case SequenceRole:
            return qint64(-1);
        case TruncatedRole:
        case IsLiveRole:
            return false;
        default:
            return {};
        }
    }
    const int lineRow = index.row() - markerRows();
    const bool live = lineRow >= m_rows.size();
    const LogLine &line = live ? m_live[lineRow - m_rows.size()] : m_rows[lineRow];
    switch (role) {
    case Qt::DisplayRole:
        return displayText(line);
    case Qt::ToolTipRole:
        if (live)
            return tr("Redrawn in place (a progress bar): the run record keeps every state, as "
                      "one line once it ends");
        return line.truncated ? tr("Line cut to its first characters: %1 bytes in full, kept in "
                                   "the run record")
                                    .arg(line.byteLength)
                              : QVariant();
    case IsLiveRole:
        return live;
    case TextRole:
        return line.text;
    case RankRole:
        return line.rank;
    case StreamRole:
        return line.stream == StreamKind::Stderr ? 1 : 0;
    case TimeRole:
        return line.timeUs;
    case LineNumberRole:
        return line.number;
    case SequenceRole:
        return line.sequence;
    case TruncatedRole:
        return line.truncated;
    case IsMarkerRole:
        return false;
    case ElidedCountRole:
        return qint64(0);
    case GroupSizeRole:
        return 1;
    case RanksRole:
        return QString();
    case IsGroupRole:
    case ExpandedRole:
    case IsGroupMemberRole:
        return false;
    case CopyTextRole:
        return displayText(line);
    default:
        return {};
    }
}

QHash<int, QByteArray> LogModel::roleNames() const
{
    QHash<int, QByteArray> roles = QAbstractListModel::roleNames();
    roles.insert(RankRole, "rank");
    roles.insert(StreamRole, "stream");
    roles.insert(TimeRole, "time");
    roles.insert(LineNumberRole, "lineNumber");
    roles.insert(SequenceRole, "sequence");
    roles.insert(TruncatedRole, "truncated");
    roles.insert(IsMarkerRole, "isMarker");
    roles.insert(ElidedCountRole, "elidedCount");
    roles.insert(TextRole, "text");
    roles.insert(GroupSizeRole, "groupSize");
    roles.insert(RanksRole, "ranks");
    roles.insert(IsGroupRole, "isGroup");
    roles.insert(ExpandedRole, "expanded");
    roles.insert(IsGroupMemberRole, "isGroupMember");
    roles.insert(CopyTextRole, "copyText");
    roles.insert(IsLiveRole, "isLive");
    return roles;
}

void LogModel::reload()
{
    beginResetModel();
    m_rows.clear();
    m_live.clear();
    m_fetchedRows = 0;
    m_elided = 0;
    m_firstKey = 0;
    m_next = 0;
    m_seenGeneration = ~quint64(0);
    if (m_store) {
        m_seenGeneration = m_store->generation();
        m_firstKey = m_store->firstInMemory(m_rank);
        const QList<LogLine> lines = m_store->recentLines(m_rank, m_firstKey);
        for (const LogLine &l : lines) {
            if (accepts(l))
                m_rows.append(l);
        }
        m_next =
            lines.isEmpty()
                ? m_firstKey
                : (m_rank == LogStore::AllRanks ? lines.last().sequence : lines.last().number) + 1;
        if (m_rows.size() > m_maxRows) {
            const qsizetype drop = m_rows.size() - m_maxRows;
            m_rows.remove(0, drop);
        }
        if (!m_rows.isEmpty() && m_rows.size() >= m_maxRows)
            m_firstKey =
                m_rank == LogStore::AllRanks ? m_rows.first().sequence : m_rows.first().number;
        m_elided = m_firstKey;
        for (const LogLine &l : m_store->liveLines(m_rank)) {
            if (accepts(l))
                m_live.append(l);
        }
    }
    endResetModel();
}

void LogModel::syncLive()
{
    QList<LogLine> now;
    if (m_store) {
        for (LogLine &l : m_store->liveLines(m_rank)) {
            if (accepts(l))
                now.append(std::move(l));
        }
    }
    auto sameRows = [&] {
        if (now.size() != m_live.size())
            return false;
        for (qsizetype i = 0; i < now.size(); ++i) {
            if (now[i].rank != m_live[i].rank || now[i].stream != m_live[i].stream)
                return false;
        }
        return true;
    };
    const int first = firstLiveRow();
    if (sameRows()) {
        // The bars moved on: the same rows, new text (the usual case, several times a second).
        int lo = INT_MAX, hi = -1;
        for (qsizetype i = 0; i < now.size(); ++i) {
            if (now[i].text != m_live[i].text || now[i].timeUs != m_live[i].timeUs) {
                lo = qMin(lo, int(i));
                hi = qMax(hi, int(i));
            }
        }
        m_live = std::move(now);
        if (hi >= 0)
            emit dataChanged(index(first + lo), index(first + hi));
        return;
    }
    if (!m_live.isEmpty()) {
        beginRemoveRows(QModelIndex(), first, first + int(m_live.size()) - 1);
        m_live.clear();
        endRemoveRows();
    }
    if (!now.isEmpty()) {
        beginInsertRows(QModelIndex(), first, first + int(now.size()) - 1);
        m_live = std::move(now);
        endInsertRows();
    }
}

void LogModel::trimFront()
{
    const qsizetype drop = m_rows.size() - rowCap();
    if (drop <= 0)
        return;
    const int marker = markerRows();
    beginRemoveRows(QModelIndex(), marker, marker + int(drop) - 1);
    m_rows.remove(0, drop);
    endRemoveRows();
    const qint64 newFirst =
        m_rows.isEmpty()
            ? m_next
            : (m_rank == LogStore::AllRanks ? m_rows.first().sequence : m_rows.first().number);
    setElided(newFirst);
}

void LogModel::setElided(qint64 firstKey)
{
    // The marker row exists while m_elided > 0: announce its arrival or departure around the
    // change, as the model contract requires.
    const bool had = m_elided > 0;
    const bool will = firstKey > 0;
    if (!had && will) {
        beginInsertRows(QModelIndex(), 0, 0);
        m_firstKey = firstKey;
        m_elided = firstKey;
        endInsertRows();
    } else if (had && !will) {
        beginRemoveRows(QModelIndex(), 0, 0);
        m_firstKey = firstKey;
        m_elided = firstKey;
        endRemoveRows();
    } else {
        const bool changed = m_elided != firstKey;
        m_firstKey = firstKey;
        m_elided = firstKey;
        if (had && changed)
            emit dataChanged(index(0), index(0));
    }
}

void LogModel::skipBacklog(qint64 keep)
{
    if (!m_store)
        return;
    const qint64 from = m_store->lineCount(m_rank) - std::max<qint64>(0, keep);
    if (from <= m_next)
        return;
    m_fetchedRows = 0;
    restartAt(from);
}

void LogModel::restartAt(qint64 key)
{
    beginResetModel();
    m_rows.clear();
    m_live.clear();
    m_firstKey = key;
    m_elided = key;
    m_next = key;
    endResetModel();
}

void LogModel::poll()
{
    if (!m_store)
        return;
    const quint64 gen = m_store->generation();
    if (gen == m_seenGeneration)
        return;
    m_seenGeneration = gen;
    const bool all = m_rank == LogStore::AllRanks;
    const qint64 firstMem = m_store->firstInMemory(m_rank);
    if (firstMem > m_next) {
        // The store's window moved past lines this model never saw (a burst between two polls):
        // they are elided, and nothing older than them can stay visible above the gap.
        restartAt(firstMem);
    }
    QList<LogLine> lines = m_store->recentLines(m_rank, m_next);
    if (lines.isEmpty()) {
        syncLive();
        return;
    }
    m_next = (all ? lines.last().sequence : lines.last().number) + 1;
    QList<LogLine> accepted;
    accepted.reserve(lines.size());
    for (LogLine &l : lines) {
        if (accepts(l))
            accepted.append(std::move(l));
    }
    if (accepted.isEmpty()) {
        syncLive();
        return;
    }
    if (accepted.size() > m_maxRows) {
        // A batch larger than the model only needs its tail. What the model held would sit
        // above lines it never showed, so it goes too, and the marker counts all of them.
        accepted.remove(0, accepted.size() - m_maxRows);
        beginResetModel();
        m_rows = std::move(accepted);
        m_fetchedRows = 0;
        m_firstKey = all ? m_rows.first().sequence : m_rows.first().number;
        m_elided = m_firstKey;
        m_live.clear();
        endResetModel();
        syncLive();
        emit linesAppended(int(m_rows.size()));
        return;
    }
    // New lines go below the others, above the live rows (a bar that ended is among them now).
    const int first = firstLiveRow();
    beginInsertRows(QModelIndex(), first, first + int(accepted.size()) - 1);
    m_rows.append(accepted);
    endInsertRows();
    trimFront();
    syncLive();
    emit linesAppended(int(accepted.size()));
}

int LogModel::fetchOlder(int count)
{
    if (!m_store || count <= 0 || m_firstKey <= 0)
        return 0;
    const qint64 from = qMax<qint64>(0, m_firstKey - count);
    QString error;
    const QList<LogLine> lines = m_store->readLines(m_rank, from, int(m_firstKey - from), &error);
    if (lines.isEmpty())
        return 0;
    QList<LogLine> accepted;
    for (const LogLine &l : lines) {
        if (accepts(l))
            accepted.append(l);
    }
    const bool all = m_rank == LogStore::AllRanks;
    const qint64 newFirst = all ? lines.first().sequence : lines.first().number;
    // Rows brought back on request stay while new lines arrive (up to kMaxFetchedFactor times
    // the normal size, so memory stays bounded).
    m_fetchedRows =
        qMin<qint64>(m_fetchedRows + accepted.size(), qint64(m_maxRows) * kMaxFetchedFactor);
    if (!accepted.isEmpty()) {
        const int at = markerRows();
        beginInsertRows(QModelIndex(), at, at + int(accepted.size()) - 1);
        m_rows = accepted + m_rows;
        endInsertRows();
    }
    setElided(newFirst);
    return int(accepted.size());
}

} // namespace rankdeck
