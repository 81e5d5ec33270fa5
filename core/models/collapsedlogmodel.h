// SPDX-License-Identifier: GPL-3.0-or-later
//
// The merged view with identical lines of several ranks collapsed into one row: over a
// LogModel of all ranks, a list model whose rows are LogLineGroups' entries. A group reads
// "[r0–7 ×8] NCCL INFO …" (the compact ranks, then the text), carries the time, stream and line
// numbers of its first line, and expands in place into its lines ("[r3] NCCL INFO …", each with
// its own time) when ExpandedRole is set through setData(); setting it false collapses it again.
//
// Why a model of its own and not a proxy of rows: a group stands for lines scattered over the
// source's rows, so each group keeps a copy of its lines' metadata (O(ranks), the text once),
// and the source's rows are only read when they arrive. The source stays the one that polls
// the store, bounds the rows (its maxRows, its marker row, fetchOlder()) and filters; this model
// follows its signals:
//   - lines appended at the bottom join the open group they belong to (dataChanged of that
//     row, or one inserted row when the group is expanded) or become new rows, inserted in one
//     batch;
//   - lines dropped at the top take the entries whose first line they were with them (the rest
//     of such a group, at most maxDistance entries below, goes too: the top edge of a long view);
//   - older lines read back at the top are grouped among themselves and inserted above;
//   - the marker row ("N earlier lines not shown") is the source's, passed through, and so are
//     its live rows (progress bars being redrawn), after the entries, never grouped;
//   - a reset (filter, store or rank change) regroups everything and re-expands the groups the
//     user had open.
// Per-rank views do not use it: a rank's own log keeps every line as it is.
#pragma once

#include "models/loglinegroups.h"

#include <QAbstractListModel>
#include <QPointer>
#include <QSet>

#include <vector>

namespace rankdeck {

class LogModel;

class CollapsedLogModel : public QAbstractListModel
{
    Q_OBJECT
public:
    explicit CollapsedLogModel(QObject *parent = nullptr);
    ~CollapsedLogModel() override;

    // Not owned; null detaches (no rows, no work). Usually a LogModel of LogStore::AllRanks.
    void setSourceModel(LogModel *source);
    LogModel *sourceModel() const { return m_source; }

    // Regroups what the source holds.
    void setOptions(const LogLineGroups::Options &options);
    const LogLineGroups::Options &options() const { return m_groups.options(); }

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    // ExpandedRole on a group's row expands or collapses it.
    bool setData(const QModelIndex &index, const QVariant &value, int role) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool setExpanded(int row, bool expanded);
    // Entries (collapsed groups and single lines), without the marker and expanded lines.
    int entryCount() const { return m_groups.size(); }
    int groupCount() const; // entries that stand for more than one line
    qint64 joinedLines() const { return m_groups.joinedLines(); }
    bool hasMarkerRow() const { return m_marker; }
    int liveRowCount() const { return m_live; }
    // Lines the rows stand for (the marker's not counted).
    qint64 lineCount() const { return m_lines; }

private:
    struct Place
    {
        int entry = -1;
        int member = -1; // -1: the entry's own row; otherwise the line of an expanded group
    };
    Place locate(int row) const;
    int rowOfEntry(int entry) const;
    void invalidateOffsets();
    void rebuild();
    void onRowsInserted(const QModelIndex &parent, int first, int last);
    void onRowsAboutToBeRemoved(const QModelIndex &parent, int first, int last);
    void onRowsRemoved(const QModelIndex &parent, int first, int last);
    void onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight);
    void appendLines(int firstLineRow, int lastLineRow);
    void flushPending();
    QString entryText(const LogLineGroups::Group &g) const;
    QString memberText(const LogLineGroups::Group &g, int member) const;
    QString toolTip(const LogLineGroups::Group &g) const;
    int markerRows() const { return m_marker ? 1 : 0; }
    // Whether source rows [first, …] are its live rows, and the first of ours for them.
    bool isSourceLive(int sourceRow) const;
    int firstLiveRow() const { return markerRows() + m_rows; }

    QPointer<LogModel> m_source;
    LogLineGroups m_groups;
    bool m_marker = false;
    int m_rows = 0;     // announced rows without the marker and the live rows
    int m_live = 0;     // the source's live rows, announced after ours
    qint64 m_lines = 0; // lines in the entries
    int m_pending = 0;  // entries appended to m_groups but not announced yet
    int m_expanded = 0; // expanded entries: none means row == entry (the usual case)
    mutable std::vector<int> m_offsets; // first row of each entry, when some are expanded
    mutable bool m_offsetsValid = false;
    QSet<qint64> m_expandedFirsts; // first-line sequences of expanded groups, kept over resets
    qint64 m_dropBefore = -1;      // sequence below which the source is dropping lines
    bool m_dropLive = false;       // the source is removing live rows
};

} // namespace rankdeck
