// SPDX-License-Identifier: GPL-3.0-or-later
#include "logspage.h"

#include "loglinedelegate.h"
#include "logmodel.h"
#include "logstore.h"
#include "logview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QListView>
#include <QTabBar>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace rankdeck {

namespace {
constexpr int PollIntervalMs = 40;
// Beyond this many ranks the picker is shown: tabs alone are a chore to scroll through.
constexpr int PickerThreshold = 8;
// Raw lines read back per request at most, when a filter rejects most of them.
constexpr int MaxChunksPerRequest = 20;
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

    m_picker = new QComboBox(this);
    m_picker->setObjectName(QStringLiteral("logRankPicker"));
    m_picker->setToolTip(tr("Show one rank's log (type its number to jump)"));
    m_picker->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_picker->setMinimumContentsLength(10);
    m_picker->setMaxVisibleItems(24);
    m_picker->addItem(tr("All ranks"), AllRanksTab);
    m_picker->setVisible(false);
    connect(m_picker, &QComboBox::currentIndexChanged, this, &LogsPage::onPickerChanged);

    m_view = new LogView(this);
    m_view->listView()->setItemDelegate(new LogLineDelegate(m_view->listView()));
    m_model = new LogModel(nullptr, LogStore::AllRanks, this);
    // The page's timer drives the model, so that one timer per page does all the polling.
    m_model->setPollInterval(0);
    m_view->setModel(m_model);
    connect(m_view, &LogView::olderLinesWanted, this, &LogsPage::loadOlderLines);
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
    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_tabs, 1);
    top->addWidget(m_picker);
    layout->addLayout(top);
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
        const QSignalBlocker pickerBlocker(m_picker);
        while (m_tabs->count() > 1)
            m_tabs->removeTab(m_tabs->count() - 1);
        m_tabs->setCurrentIndex(0);
        while (m_picker->count() > 1)
            m_picker->removeItem(m_picker->count() - 1);
        m_picker->setCurrentIndex(0);
        m_picker->setVisible(false);
    }
    m_tabRanks.clear();
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
    if (ranks.size() == m_tabRanks.size())
        return;
    const QSignalBlocker blocker(m_tabs);
    const QSignalBlocker pickerBlocker(m_picker);
    // Ranks appear in any order (rank 3's first line may come before rank 0's): keep tabs
    // sorted. A binary search per new rank, so that 512 ranks arriving one by one stay cheap.
    for (int rank : ranks) {
        const auto it = std::lower_bound(m_tabRanks.begin(), m_tabRanks.end(), rank);
        if (it != m_tabRanks.end() && *it == rank)
            continue;
        const int at = int(it - m_tabRanks.begin());
        m_tabRanks.insert(at, rank);
        const QString label = tr("Rank %1").arg(rank);
        const int index = m_tabs->insertTab(at + 1, label);
        m_tabs->setTabData(index, rank);
        m_picker->insertItem(at + 1, label, rank);
    }
    m_picker->setVisible(m_tabRanks.size() > PickerThreshold);
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
    {
        const QSignalBlocker blocker(m_picker);
        m_picker->setCurrentIndex(index);
    }
    m_model->setStore(m_store, rank == AllRanksTab ? LogStore::AllRanks : rank);
    m_model->poll();
    m_view->setFollowing(true);
}

void LogsPage::onPickerChanged(int index)
{
    // The picker lists the same ranks as the tabs, in the same order.
    if (index >= 0 && index < m_tabs->count())
        m_tabs->setCurrentIndex(index);
}

int LogsPage::loadOlderLines()
{
    if (!m_store || !m_model->hasMarkerRow())
        return 0;
    int added = 0;
    m_view->keepTopRowWhile([this, &added] {
        for (int chunk = 0; chunk < MaxChunksPerRequest && added == 0 && m_model->hasMarkerRow(); ++chunk) {
            const qint64 before = m_model->elidedCount();
            added += m_model->fetchOlder(OlderChunkLines);
            // Nothing more could be read (a damaged or missing record): do not spin.
            if (m_model->elidedCount() == before)
                break;
        }
    });
    return added;
}

void LogsPage::poll()
{
    if (!m_store)
        return;
    syncTabs();
    m_model->poll();
}

} // namespace rankdeck
