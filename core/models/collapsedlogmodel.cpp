// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/collapsedlogmodel.h"

#include "models/logmodel.h"

#include <QDateTime>
#include <QMetaEnum>

#include <algorithm>
#include <climits>
#include <limits>

namespace rankdeck {

namespace {
QString clockTime(qint64 timeUs)
{
    return QDateTime::fromMSecsSinceEpoch(timeUs / 1000).toString(QStringLiteral("HH:mm:ss.zzz"));
}
} // namespace

CollapsedLogModel::CollapsedLogModel(QObject *parent) : QAbstractListModel(parent) {}

CollapsedLogModel::~CollapsedLogModel() = default;

void CollapsedLogModel::setSourceModel(LogModel *source)
{
    if (m_source)
        disconnect(m_source, nullptr, this, nullptr);
    m_source = source;
    if (source) {
        connect(source, &QAbstractItemModel::modelAboutToBeReset, this,
                &CollapsedLogModel::beginResetModel);
        connect(source, &QAbstractItemModel::modelReset, this, [this] {
            rebuild();
            endResetModel();
        });
        connect(source, &QAbstractItemModel::rowsInserted, this,
                &CollapsedLogModel::onRowsInserted);
        connect(source, &QAbstractItemModel::rowsAboutToBeRemoved, this,
                &CollapsedLogModel::onRowsAboutToBeRemoved);
        connect(source, &QAbstractItemModel::rowsRemoved, this, &CollapsedLogModel::onRowsRemoved);
        connect(source, &QAbstractItemModel::dataChanged, this, &CollapsedLogModel::onDataChanged);
        connect(source, &QObject::destroyed, this, [this] {
            beginResetModel();
            m_source = nullptr;
            rebuild();
            endResetModel();
        });
    }
    beginResetModel();
    rebuild();
    endResetModel();
}

void CollapsedLogModel::setOptions(const LogLineGroups::Options &options)
{
    beginResetModel();
    m_groups.setOptions(options);
    rebuild();
    endResetModel();
}

void CollapsedLogModel::rebuild()
{
    m_groups.clear();
    m_rows = 0;
    m_live = 0;
    m_lines = 0;
    m_pending = 0;
    m_expanded = 0;
    m_marker = false;
    invalidateOffsets();
    if (!m_source)
        return;
    m_marker = m_source->hasMarkerRow();
    m_live = m_source->liveRowCount();
    const int lines = m_source->lineRowCount();
    for (int i = 0; i < lines; ++i)
        m_groups.add(m_source->lineAt(i));
    m_lines = lines;
    // What the user had open stays open across a filter change; what is gone is forgotten.
    QSet<qint64> stillOpen;
    for (int e = 0; e < m_groups.size(); ++e) {
        LogLineGroups::Group &g = m_groups.at(e);
        if (g.isGroup() && m_expandedFirsts.contains(g.first().sequence)) {
            g.expanded = true;
            ++m_expanded;
            stillOpen.insert(g.first().sequence);
        }
        m_rows += g.rows();
    }
    m_expandedFirsts = stillOpen;
}

void CollapsedLogModel::invalidateOffsets()
{
    m_offsetsValid = false;
}

CollapsedLogModel::Place CollapsedLogModel::locate(int row) const
{
    if (m_expanded == 0)
        return {row, -1};
    if (!m_offsetsValid) {
        m_offsets.resize(size_t(m_groups.size()));
        int at = 0;
        for (int e = 0; e < m_groups.size(); ++e) {
            m_offsets[size_t(e)] = at;
            at += m_groups.at(e).rows();
        }
        m_offsetsValid = true;
    }
    const auto it = std::upper_bound(m_offsets.begin(), m_offsets.end(), row);
    const int entry = int(it - m_offsets.begin()) - 1;
    return {entry, row - m_offsets[size_t(entry)] - 1};
}

int CollapsedLogModel::rowOfEntry(int entry) const
{
    if (m_expanded == 0)
        return entry;
    locate(0); // brings the offsets up to date
    return m_offsets[size_t(entry)];
}

int CollapsedLogModel::groupCount() const
{
    int n = 0;
    for (int e = 0; e < m_groups.size(); ++e)
        n += m_groups.at(e).isGroup() ? 1 : 0;
    return n;
}

int CollapsedLogModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid())
        return 0;
    return markerRows() + m_rows + m_live;
}

bool CollapsedLogModel::isSourceLive(int sourceRow) const
{
    return m_source && sourceRow >= m_source->firstLiveRow();
}

QString CollapsedLogModel::entryText(const LogLineGroups::Group &g) const
{
    if (!g.isGroup())
        return QStringLiteral("[r%1] ").arg(g.first().rank) + g.text;
    return QStringLiteral("[%1 \u00d7%2] ")
               .arg(LogLineGroups::rankRanges(g.ranks))
               .arg(g.members.size()) +
           g.text;
}

QString CollapsedLogModel::memberText(const LogLineGroups::Group &g, int member) const
{
    return QStringLiteral("[r%1] ").arg(g.members.at(member).rank) + g.text;
}

QString CollapsedLogModel::toolTip(const LogLineGroups::Group &g) const
{
    qint64 last = g.first().timeUs;
    for (const LogLineGroups::Member &m : g.members)
        last = qMax(last, m.timeUs);
    return tr("%n rank(s) printed this line within %1 ms, the first at %2: %3.\n"
              "Enter, a double-click or the arrow shows each line.",
              nullptr, int(g.members.size()))
        .arg((last - g.first().timeUs) / 1000.0, 0, 'f', 1)
        .arg(clockTime(g.first().timeUs), LogLineGroups::rankRanges(g.ranks, 64));
}

QVariant CollapsedLogModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.parent().isValid() || index.column() != 0 || index.row() < 0 ||
        index.row() >= rowCount())
        return {};
    if (index.row() < markerRows()) {
        if (!m_source || !m_source->hasMarkerRow())
            return {};
        return m_source->data(m_source->index(0), role);
    }
    if (index.row() >= firstLiveRow()) {
        if (!m_source)
            return {};
        return m_source->data(
            m_source->index(m_source->firstLiveRow() + index.row() - firstLiveRow()), role);
    }
    const Place place = locate(index.row() - markerRows());
    const LogLineGroups::Group &g = m_groups.at(place.entry);
    const bool member = place.member >= 0;
    const LogLineGroups::Member &m = member ? g.members.at(place.member) : g.first();
    switch (role) {
    case Qt::DisplayRole:
        return member ? memberText(g, place.member) : entryText(g);
    case Qt::ToolTipRole:
        if (!member && g.isGroup())
            return toolTip(g);
        if (m.truncated)
            return tr("Line cut to its first characters: %1 bytes in full, kept in the run record")
                .arg(m.byteLength);
        return member ? QVariant(clockTime(m.timeUs)) : QVariant();
    case LogModel::TextRole:
        return g.text;
    case LogModel::RankRole:
        return m.rank;
    case LogModel::StreamRole:
        return g.stream == StreamKind::Stderr ? 1 : 0;
    case LogModel::TimeRole:
        return m.timeUs;
    case LogModel::LineNumberRole:
        return m.number;
    case LogModel::SequenceRole:
        return m.sequence;
    case LogModel::TruncatedRole:
        return m.truncated;
    case LogModel::IsMarkerRole:
        return false;
    case LogModel::ElidedCountRole:
        return qint64(0);
    case LogModel::GroupSizeRole:
        return member ? 1 : int(g.members.size());
    case LogModel::RanksRole:
        return member || !g.isGroup() ? QStringLiteral("r%1").arg(m.rank)
                                      : LogLineGroups::rankRanges(g.ranks, INT_MAX);
    case LogModel::IsGroupRole:
        return !member && g.isGroup();
    case LogModel::ExpandedRole:
        return !member && g.expanded;
    case LogModel::IsGroupMemberRole:
        return member;
    case LogModel::IsLiveRole:
        return false;
    case LogModel::CopyTextRole: {
        if (member)
            return memberText(g, place.member);
        if (!g.expanded)
            return entryText(g);
        QStringList lines;
        lines.reserve(g.members.size());
        for (int i = 0; i < g.members.size(); ++i)
            lines << memberText(g, i);
        return lines.join(QLatin1Char('\n'));
    }
    default:
        return {};
    }
}

bool CollapsedLogModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != LogModel::ExpandedRole || !index.isValid() || index.parent().isValid())
        return false;
    return setExpanded(index.row(), value.toBool());
}

bool CollapsedLogModel::setExpanded(int row, bool expanded)
{
    if (row < markerRows() || row >= firstLiveRow())
        return false;
    const Place place = locate(row - markerRows());
    LogLineGroups::Group &g = m_groups.at(place.entry);
    if (place.member >= 0 || !g.isGroup())
        return false;
    if (g.expanded == expanded)
        return true;
    const int n = int(g.members.size());
    if (expanded) {
        beginInsertRows(QModelIndex(), row + 1, row + n);
        g.expanded = true;
        ++m_expanded;
        m_rows += n;
        m_expandedFirsts.insert(g.first().sequence);
        invalidateOffsets();
        endInsertRows();
    } else {
        beginRemoveRows(QModelIndex(), row + 1, row + n);
        g.expanded = false;
        --m_expanded;
        m_rows -= n;
        m_expandedFirsts.remove(g.first().sequence);
        invalidateOffsets();
        endRemoveRows();
    }
    emit dataChanged(index(row), index(row));
    return true;
}

Qt::ItemFlags CollapsedLogModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

QHash<int, QByteArray> CollapsedLogModel::roleNames() const
{
    // The source's role names ("rank", "isMarker", …) from its Role enum, so the two never drift.
    QHash<int, QByteArray> roles = QAbstractListModel::roleNames();
    const QMetaEnum e = QMetaEnum::fromType<LogModel::Role>();
    for (int i = 0; i < e.keyCount(); ++i) {
        QByteArray name = e.key(i);
        name.chop(4); // "Role"
        roles.insert(e.value(i), name.left(1).toLower() + name.mid(1));
    }
    return roles;
}

void CollapsedLogModel::onRowsInserted(const QModelIndex &parent, int first, int last)
{
    if (parent.isValid() || !m_source)
        return;
    if (!m_marker && m_source->hasMarkerRow()) {
        // The source's marker row arrived (it comes alone, always at the top).
        beginInsertRows(QModelIndex(), 0, 0);
        m_marker = true;
        endInsertRows();
        return;
    }
    if (isSourceLive(first)) {
        // Live rows (they come alone, after the lines).
        const int at = firstLiveRow() + first - m_source->firstLiveRow();
        beginInsertRows(QModelIndex(), at, at + last - first);
        m_live += last - first + 1;
        endInsertRows();
        return;
    }
    const int marker = m_source->hasMarkerRow() ? 1 : 0;
    const int firstLine = first - marker;
    const int lastLine = last - marker;
    const int count = lastLine - firstLine + 1;
    if (firstLine == 0 && m_source->lineRowCount() > count) {
        // Older lines read back above the others.
        QList<LogLine> older;
        older.reserve(count);
        for (int i = firstLine; i <= lastLine; ++i)
            older.append(m_source->lineAt(i));
        LogLineGroups front = m_groups.grouped(older);
        const int rows = front.size();
        beginInsertRows(QModelIndex(), markerRows(), markerRows() + rows - 1);
        m_groups.prepend(std::move(front));
        m_rows += rows;
        m_lines += count;
        invalidateOffsets();
        endInsertRows();
        return;
    }
    appendLines(firstLine, lastLine);
}

void CollapsedLogModel::appendLines(int firstLineRow, int lastLineRow)
{
    // Entries, not rows: a later line joining an open group above moves the rows below it.
    int changedFirst = INT_MAX;
    int changedLast = -1;
    m_lines += lastLineRow - firstLineRow + 1;
    for (int i = firstLineRow; i <= lastLineRow; ++i) {
        const LogLine &line = m_source->lineAt(i);
        const int entry = m_groups.joinableGroup(line);
        if (entry < 0) {
            m_groups.append(line);
            ++m_pending;
            continue;
        }
        // An entry of this batch that no view knows of yet: nothing to announce.
        if (entry >= m_groups.size() - m_pending) {
            m_groups.join(entry, line);
            continue;
        }
        LogLineGroups::Group &g = m_groups.at(entry);
        if (g.expanded) {
            // Its lines are shown: the new one appears as a row of its own below them.
            const int at = markerRows() + rowOfEntry(entry) + 1 + int(g.members.size());
            beginInsertRows(QModelIndex(), at, at);
            m_groups.join(entry, line);
            ++m_rows;
            invalidateOffsets();
            endInsertRows();
        } else {
            m_groups.join(entry, line);
        }
        changedFirst = qMin(changedFirst, entry);
        changedLast = qMax(changedLast, entry);
    }
    flushPending();
    if (changedLast >= 0)
        emit dataChanged(index(markerRows() + rowOfEntry(changedFirst)),
                         index(markerRows() + rowOfEntry(changedLast)));
}

void CollapsedLogModel::flushPending()
{
    if (m_pending == 0)
        return;
    // New entries are never expanded: one row each.
    const int first = markerRows() + m_rows;
    beginInsertRows(QModelIndex(), first, first + m_pending - 1);
    m_rows += m_pending;
    m_pending = 0;
    invalidateOffsets();
    endInsertRows();
}

void CollapsedLogModel::onRowsAboutToBeRemoved(const QModelIndex &parent, int first, int last)
{
    if (parent.isValid() || !m_source)
        return;
    m_dropBefore = -1;
    m_dropLive = false;
    if (isSourceLive(first)) {
        // Live rows go (alone): ours with them.
        const int at = firstLiveRow() + first - m_source->firstLiveRow();
        m_dropLive = true;
        beginRemoveRows(QModelIndex(), at, at + last - first);
        m_live -= last - first + 1;
        return;
    }
    const int marker = m_source->hasMarkerRow() ? 1 : 0;
    if (marker && first == 0)
        return; // the marker row (it goes alone)
    // The source only ever drops its oldest lines: entries whose first line goes, go.
    const int nextLine = last + 1 - marker;
    m_dropBefore = nextLine < m_source->lineRowCount() ? m_source->lineAt(nextLine).sequence
                                                       : std::numeric_limits<qint64>::max();
}

void CollapsedLogModel::onRowsRemoved(const QModelIndex &parent, int first, int last)
{
    Q_UNUSED(last);
    if (parent.isValid() || !m_source)
        return;
    if (m_dropLive) {
        m_dropLive = false;
        endRemoveRows();
        return;
    }
    if (m_dropBefore < 0) {
        if (m_marker && first == 0 && !m_source->hasMarkerRow()) {
            beginRemoveRows(QModelIndex(), 0, 0);
            m_marker = false;
            endRemoveRows();
        }
        return;
    }
    const int entries = m_groups.countFirstBefore(m_dropBefore);
    m_dropBefore = -1;
    if (entries == 0)
        return;
    int rows = 0;
    int expanded = 0;
    for (int e = 0; e < entries; ++e) {
        const LogLineGroups::Group &g = m_groups.at(e);
        rows += g.rows();
        m_lines -= g.members.size();
        if (g.expanded) {
            ++expanded;
            m_expandedFirsts.remove(g.first().sequence);
        }
    }
    beginRemoveRows(QModelIndex(), markerRows(), markerRows() + rows - 1);
    m_groups.removeFirst(entries);
    m_rows -= rows;
    m_expanded -= expanded;
    invalidateOffsets();
    endRemoveRows();
}

void CollapsedLogModel::onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight)
{
    // The rows the source changes in place: its marker (the count of elided lines) and its
    // live rows (progress bars redrawn).
    if (m_marker && topLeft.row() == 0) {
        emit dataChanged(index(0), index(0));
    } else if (isSourceLive(topLeft.row())) {
        const int offset = firstLiveRow() - m_source->firstLiveRow();
        emit dataChanged(index(topLeft.row() + offset), index(bottomRight.row() + offset));
    }
}

} // namespace rankdeck
