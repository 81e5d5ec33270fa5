// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Logs" tab: a tab per rank plus "All ranks" (merged by time, rank prefixes). The tabs are
// entries of one QTabBar over ONE LogView and ONE LogModel that is re-pointed at the chosen
// rank, so 512 ranks cost no views of their own. Ranks 0-31 always have a tab; with more ranks a
// rank picker (a combo box: type the rank to jump) lists them all and opens a tab for the one
// chosen (the last 8 chosen keep theirs): no one scrolls through 512 tabs. Next to it a search box
// finds ranks by number, range, host or state ("17", "40-41", "node03", "failed", issue 31): its
// popup lists the matching ranks (a RankPickerModel) and choosing one shows its log. A third box
// offers the groups of ranks that are alike ("ranks 40, 41 stopped (hung)", RankGroups): choosing
// one shows "All ranks" with only that group's lines.
// Scrolling to the top reads older lines back from the run record in chunks.
// "All ranks" collapses identical lines of several ranks into one expandable row (a
// CollapsedLogModel over the LogModel; "Collapse identical lines", on by default, in the bar and
// the context menu); a rank's tab shows the LogModel itself, every line as printed.
#pragma once

#include "record/runstate.h"

#include <QList>
#include <QWidget>

class QAbstractItemModel;
class QAction;
class QComboBox;
class QCompleter;
class QLineEdit;
class QTabBar;
class QTimer;

namespace rankdeck {

class CollapsedLogModel;
class LogModel;
class LogStore;
class LogView;
class RankPickerModel;

class LogsPage : public QWidget
{
    Q_OBJECT
public:
    static constexpr int AllRanksTab = -1;

    explicit LogsPage(QWidget *parent = nullptr);
    ~LogsPage() override;

    // Not owned; null empties the page.
    void setLogStore(const LogStore *store);
    // AllRanksTab or a rank; returns false when the rank has no tab (yet).
    bool showRank(int rank);
    // A rank's log at a moment (µs since the epoch, the launcher's clock, as its lines' times):
    // its last line then or before (else the first line held) selected and centred, following
    // paused; timeUs <= 0: its end, followed. False when the rank has no lines.
    bool showRankAt(int rank, qint64 timeUs);
    int shownRank() const;
    int rankTabCount() const; // tabs for ranks, "All ranks" not counted
    int rankCount() const;    // ranks the picker offers (every rank with a line)

    LogView *logView() const { return m_view; }
    // The lines of the shown tab (for every tab, whether collapsed or not).
    LogModel *logModel() const { return m_model; }
    // What the view shows: the collapsed model on "All ranks" with collapsing on, else logModel().
    QAbstractItemModel *shownModel() const;
    CollapsedLogModel *collapsedModel() const { return m_collapsed; }
    QAction *collapseAction() const { return m_collapseAction; }
    void setCollapseIdenticalLines(bool collapse);
    bool collapsesIdenticalLines() const;
    QTabBar *tabBar() const { return m_tabs; }
    QComboBox *rankPicker() const { return m_picker; }
    // The rank search box and the ranks it finds.
    QLineEdit *rankFilter() const { return m_rankFilter; }
    RankPickerModel *rankFinderModel() const { return m_rankModel; }
    // Hosts and states of the ranks, for the search (the log store knows neither).
    void setRankStatuses(const QList<RankStatus> &statuses);
    // The groups of alike ranks "All ranks" can be narrowed to (item 0: every rank).
    QComboBox *rankGroupPicker() const { return m_groupPicker; }

    // Lines read back from the run record per request of the view.
    static constexpr int OlderChunkLines = 500;
    // Reads the next chunk of older lines into the view, keeping the user's place; with a
    // filter, reads on (up to 20 chunks) until something passes it. Returns the rows added.
    int loadOlderLines();

public slots:
    void poll();

protected:
    void showEvent(QShowEvent *event) override;

private:
    void syncTabs();
    void onTabChanged(int index);
    void onPickerChanged(int index);
    int addTab(int rank); // returns the tab's index
    void dropUnopenedTabs();
    int openTab(int rank); // a tab for a rank the user asked for
    void showModelFor(int rank);
    void updateRankFinder();
    // The group picker's entries from the statuses, when they changed; the chosen group stays
    // chosen while a group of the same ranks, or of ranks in the same state ("hung"), is there.
    void updateRankGroups();
    void onGroupChanged(int index);
    // What the merged view is narrowed to (empty: every rank; rank tabs are never narrowed).
    QList<int> mergedRankSet(int modelRank) const;
    void onRankFilterEdited(const QString &text);

    const LogStore *m_store = nullptr;
    QTabBar *m_tabs = nullptr;
    QComboBox *m_picker = nullptr;
    QLineEdit *m_rankFilter = nullptr;
    RankPickerModel *m_rankModel = nullptr;
    QCompleter *m_rankCompleter = nullptr;
    QComboBox *m_groupPicker = nullptr;
    QList<QList<int>> m_groups;   // the ranks of group picker item i + 1
    QList<int> m_groupRanks;      // the chosen group's ranks; empty: every rank
    QList<RankStatus> m_statuses; // as the run view last gave them
    QList<int> m_ranks;           // sorted, every rank with a line (picker item i + 1)
    QList<int> m_tabRanks;        // sorted, the ranks that have a tab (tab i + 1 is m_tabRanks[i])
    QList<int> m_openedRanks;     // ranks opened from the picker, oldest first
    LogView *m_view = nullptr;
    LogModel *m_model = nullptr;
    CollapsedLogModel *m_collapsed = nullptr;
    QAction *m_collapseAction = nullptr;
    QTimer *m_timer = nullptr;
};

} // namespace rankdeck
