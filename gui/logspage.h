// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Logs" tab: a tab per rank plus "All ranks" (merged by time, rank prefixes). The tabs are
// entries of one QTabBar over ONE LogView and ONE LogModel that is re-pointed at the chosen
// rank, so 512 ranks cost 512 tab labels, not 512 views.
#pragma once

#include <QWidget>

class QTabBar;
class QTimer;

namespace rankdeck {

class LogModel;
class LogStore;
class LogView;

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
    int shownRank() const;
    int rankTabCount() const;  // tabs for ranks, "All ranks" not counted

    LogView *logView() const { return m_view; }
    LogModel *logModel() const { return m_model; }
    QTabBar *tabBar() const { return m_tabs; }

public slots:
    void poll();

private:
    void syncTabs();
    void onTabChanged(int index);

    const LogStore *m_store = nullptr;
    QTabBar *m_tabs = nullptr;
    LogView *m_view = nullptr;
    LogModel *m_model = nullptr;
    QTimer *m_timer = nullptr;
    int m_knownRanks = 0;
};

} // namespace rankdeck
