// SPDX-License-Identifier: GPL-3.0-or-later
//
// A list model over a LogStore for one rank or all ranks, for a QListView with uniform item
// sizes (scales to any run length, unlike a text edit). It polls the store's generation on a
// timer (never one update per line), keeps at most maxRows rows, and shows one marker row at the
// top saying how many older lines are not shown (they stay in the run record; fetchOlder()
// brings some back from disk). Filters: a regular expression on the text and a stream mask.
// Lives on the GUI thread; the store may be fed from any thread.
//
// It shows what a terminal would: a line that a terminal draws over (LogLine::overdrawn: a
// nested progress bar's redraw, a bar cleared to blank) is left out, and below the lines come
// the live rows, one per rank and stream whose line is still being redrawn (a progress bar),
// updated in place (dataChanged) until the line ends and takes its place among the lines. The
// rows are [marker][lines…][live…]; lineRowCount() and liveRowCount() count the two parts.
#pragma once

#include "store/logstore.h"

#include <QAbstractListModel>
#include <QRegularExpression>
#include <QSet>
#include <QTimer>

namespace rankdeck {

class LogModel : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role
    {
        RankRole = Qt::UserRole + 1, // int
        StreamRole,                  // int: 0 stdout, 1 stderr
        TimeRole,                    // qint64 µs since the epoch
        LineNumberRole,              // qint64 number within the rank (-1 for the marker row)
        SequenceRole,                // qint64 merged order
        TruncatedRole,               // bool
        IsMarkerRole,                // bool: the "N lines elided" row
        ElidedCountRole,             // qint64 on the marker row
        TextRole,                    // QString without the rank prefix
        // Roles of the merged view's collapsed rows (CollapsedLogModel); a plain line answers
        // 1, "", false, false, false and its DisplayRole.
        GroupSizeRole,     // int: lines this row stands for (a group of identical lines: > 1)
        RanksRole,         // QString: the ranks of those lines, compact ("r0–3,5,7–9")
        IsGroupRole,       // bool: the row stands for identical lines of several ranks
        ExpandedRole,      // bool: the group's lines are shown below it (settable with setData)
        IsGroupMemberRole, // bool: one line of an expanded group
        CopyTextRole,      // QString: what copying the row yields (an expanded group: every line)
        IsLiveRole,        // bool: the row of a line still being redrawn (a progress bar)
    };
    Q_ENUM(Role)

    enum StreamFilter
    {
        StdoutLines = 1,
        StderrLines = 2,
        AllStreams = 3
    };

    // rank: a rank, or LogStore::AllRanks (lines get a "[rN] " prefix). The store must outlive
    // the model (or call setStore(nullptr) first).
    explicit LogModel(const LogStore *store, int rank, QObject *parent = nullptr);
    ~LogModel() override;

    void setStore(const LogStore *store, int rank);
    const LogStore *store() const { return m_store; }
    int rank() const { return m_rank; }

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // An invalid or empty pattern shows everything; patternError() says what is wrong.
    void setFilterPattern(const QString &pattern, bool caseSensitive = false);
    QString filterPattern() const { return m_pattern; }
    QString patternError() const { return m_patternError; }
    void setStreamFilter(int streams);
    int streamFilter() const { return m_streams; }
    // Only these ranks' lines (a group of ranks in the merged view: "ranks 40, 41 hung");
    // empty: every rank.
    void setRankSet(const QList<int> &ranks);
    QList<int> rankSet() const;

    // Default 20,000. Rows that fetchOlder() brought back come on top (up to 10 times this),
    // so that reading older lines survives new lines arriving; reload() drops them.
    void setMaxRows(int maxRows);
    int maxRows() const { return m_maxRows; }
    void setPollInterval(int ms); // default 50 ms; 0 stops polling (call poll() yourself)

    // Lines (before filtering) that are neither in the model nor shown: the marker row's count.
    qint64 elidedCount() const { return m_elided; }
    bool hasMarkerRow() const { return m_elided > 0; }
    // Number of log rows (without the marker).
    int lineRowCount() const { return int(m_rows.size()); }
    // Log row `lineRow` (0 is the first row after the marker), for models built on this one.
    const LogLine &lineAt(int lineRow) const { return m_rows.at(lineRow); }
    // The live rows after the lines.
    int liveRowCount() const { return int(m_live.size()); }
    const LogLine &liveAt(int liveRow) const { return m_live.at(liveRow); }
    // Model row of the first live row.
    int firstLiveRow() const { return markerRows() + int(m_rows.size()); }

    // Reads up to `count` older lines (before the first row) back from the store (disk if
    // needed), filtered, and inserts them at the top. Returns how many rows were added.
    int fetchOlder(int count);

public slots:
    // Takes what the store gained since the last poll. Cheap when nothing changed.
    void poll();
    // When more than `keep` lines came since the model last looked, lets go of what it holds and
    // starts `keep` lines before the newest, the older ones elided (the marker row; scrolling up
    // loads them). A view that was hidden then costs a screenful to show, not its backlog.
    void skipBacklog(qint64 keep);
    // Rebuilds from the store's memory window (after a filter change).
    void reload();

signals:
    // New rows arrived at the bottom (views in follow mode scroll then).
    void linesAppended(int count);

private:
    bool accepts(const LogLine &line) const;
    void syncLive();
    QString displayText(const LogLine &line) const;
    int markerRows() const { return m_elided > 0 ? 1 : 0; }
    void trimFront();
    void setElided(qint64 firstKey);
    // Lets go of every row and starts over at `key`, everything before it elided (a burst past
    // the store's window, or skipBacklog()).
    void restartAt(qint64 key);
    qsizetype rowCap() const
    {
        return qsizetype(qMin<qint64>(INT_MAX - 1, m_maxRows + m_fetchedRows));
    }

    const LogStore *m_store = nullptr;
    int m_rank = LogStore::AllRanks;
    QList<LogLine> m_rows;
    QList<LogLine> m_live;
    qint64 m_next = 0;     // next number/sequence to fetch from the store
    qint64 m_firstKey = 0; // number/sequence of the oldest line the model has looked at
    qint64 m_elided = 0;
    quint64 m_seenGeneration = ~quint64(0);
    QString m_pattern;
    QString m_patternError;
    QRegularExpression m_regex;
    int m_streams = AllStreams;
    QSet<int> m_rankSet; // empty: every rank
    int m_maxRows = 20000;
    qint64 m_fetchedRows = 0; // rows fetchOlder() added on top of m_maxRows
    static constexpr int kMaxFetchedFactor = 10;
    QTimer m_timer;
};

} // namespace rankdeck
