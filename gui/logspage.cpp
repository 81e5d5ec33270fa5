// SPDX-License-Identifier: GPL-3.0-or-later
#include "logspage.h"

#include "loglinedelegate.h"
#include "logmodel.h"
#include "logstore.h"
#include "logview.h"

#include <QListView>
#include <QTabBar>
#include <QTimer>
#include <QVBoxLayout>

namespace rankdeck {

namespace {
constexpr int PollIntervalMs = 40;
} // namespace

LogsPage::LogsPage(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("logsPage"));
    m_tabs = new QTabBar(this);
    m_tabs->setObjectName(QStringLiteral("logRankTabs"));
    m_tabs->setUsesScrollButtons(true);
    m_tabs->setExpanding(false);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(tr("All ranks"));
    m_tabs->setTabData(0, AllRanksTab);
    connect(m_tabs, &QTabBar::currentChanged, this, &LogsPage::onTabChanged);

    m_view = new LogView(this);
    m_view->listView()->setItemDelegate(new LogLineDelegate(m_view->listView()));
    m_model = new LogModel(nullptr, LogStore::AllRanks, this);
    // The page's timer drives the model, so that one timer per page does all the polling.
    m_model->setPollInterval(0);
    m_view->setModel(m_model);
    connect(m_view, &LogView::filterChanged, this,
            [this](const QRegularExpression &expression, LogView::StreamFilter stream) {
                int streams = LogModel::AllStreams;
                if (stream == LogView::StreamFilter::Stdout)
                    streams = LogModel::StdoutLines;
                else if (stream == LogView::StreamFilter::Stderr)
                    streams = LogModel::StderrLines;
                m_model->setStreamFilter(streams);
                m_model->setFilterPattern(expression.pattern(), false);
            });

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_tabs);
    layout->addWidget(m_view, 1);

    m_timer = new QTimer(this);
    m_timer->setInterval(PollIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &LogsPage::poll);
}

LogsPage::~LogsPage()
{
    m_model->setStore(nullptr, LogStore::AllRanks);
}

void LogsPage::setLogStore(const LogStore *store)
{
    m_store = store;
    {
        const QSignalBlocker blocker(m_tabs);
        while (m_tabs->count() > 1)
            m_tabs->removeTab(m_tabs->count() - 1);
        m_tabs->setCurrentIndex(0);
    }
    m_knownRanks = 0;
    m_model->setStore(store, LogStore::AllRanks);
    if (store) {
        syncTabs();
        m_timer->start();
    } else {
        m_timer->stop();
    }
    m_view->setFollowing(true);
}

void LogsPage::syncTabs()
{
    const QList<int> ranks = m_store->ranks();
    if (ranks.size() == m_knownRanks)
        return;
    const QSignalBlocker blocker(m_tabs);
    // Ranks appear in any order (rank 3's first line may come before rank 0's): keep tabs sorted.
    for (int rank : ranks) {
        int insertAt = m_tabs->count();
        bool present = false;
        for (int i = 1; i < m_tabs->count(); ++i) {
            const int tabRank = m_tabs->tabData(i).toInt();
            if (tabRank == rank) {
                present = true;
                break;
            }
            if (tabRank > rank) {
                insertAt = i;
                break;
            }
        }
        if (present)
            continue;
        const int index = m_tabs->insertTab(insertAt, tr("Rank %1").arg(rank));
        m_tabs->setTabData(index, rank);
    }
    m_knownRanks = int(ranks.size());
}

bool LogsPage::showRank(int rank)
{
    if (m_store)
        syncTabs();
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (m_tabs->tabData(i).toInt() == rank) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    }
    return false;
}

int LogsPage::shownRank() const
{
    return m_tabs->tabData(m_tabs->currentIndex()).toInt();
}

int LogsPage::rankTabCount() const
{
    return m_tabs->count() - 1;
}

void LogsPage::onTabChanged(int index)
{
    if (index < 0)
        return;
    const int rank = m_tabs->tabData(index).toInt();
    m_model->setStore(m_store, rank == AllRanksTab ? LogStore::AllRanks : rank);
    m_model->poll();
    m_view->setFollowing(true);
}

void LogsPage::poll()
{
    if (!m_store)
        return;
    syncTabs();
    m_model->poll();
}

} // namespace rankdeck
