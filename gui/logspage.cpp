// SPDX-License-Identifier: GPL-3.0-or-later
#include "logspage.h"

#include "loglinedelegate.h"
#include "logview.h"
#include "models/collapsedlogmodel.h"
#include "models/logmodel.h"
#include "models/rankpickermodel.h"
#include "record/rankgroups.h"
#include "store/logstore.h"

#include <QAction>
#include <QComboBox>
#include <QCompleter>
#include <QHBoxLayout>
#include <QHash>
#include <QLineEdit>
#include <QListView>
#include <QTabBar>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace rankdeck {

namespace {
constexpr int PollIntervalMs = 40;
// What showing the page fetches at most of what came while it was hidden (see showEvent).
constexpr int ShowBacklogLines = 2000;
// Up to this many ranks each has a tab; beyond it the picker (search by rank, host or state,
// groups of ranks alike) replaces them, and a tab is only a rank the user opened (a QTabBar lays
// out every tab's text on each change: 512 tabs cost ~25 ms a layout here, and nobody reads
// 512 tabs).
constexpr int PickerThreshold = 8;
// Ranks opened from the picker keep a tab, the most recent this many; the oldest gives way.
constexpr int MaxOpenedTabs = 8;
// Raw lines read back per request at most, when a filter rejects most of them.
constexpr int MaxChunksPerRequest = 20;
} // namespace

LogsPage::LogsPage(QWidget *parent) : QWidget(parent)
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

    m_groupPicker = new QComboBox(this);
    m_groupPicker->setObjectName(QStringLiteral("logRankGroupPicker"));
    m_groupPicker->setToolTip(
        tr("Show in “All ranks” only the lines of ranks that are alike (“ranks 40, 41 hung”)"));
    m_groupPicker->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_groupPicker->setMinimumContentsLength(16);
    m_groupPicker->addItem(tr("Every rank"));
    m_groupPicker->setVisible(false);
    connect(m_groupPicker, &QComboBox::currentIndexChanged, this, &LogsPage::onGroupChanged);

    m_rankFilter = new QLineEdit(this);
    m_rankFilter->setObjectName(QStringLiteral("logRankFilter"));
    m_rankFilter->setPlaceholderText(tr("Find ranks"));
    m_rankFilter->setToolTip(
        tr("Find ranks by number (17), range (40-41, 3, 7–9), host (node03) or state (failed, "
           "hung); words combine (\"node03 failed\"). Choose one to show its log."));
    m_rankFilter->setClearButtonEnabled(true);
    m_rankFilter->setVisible(false);
    m_rankModel = new RankPickerModel(this);
    // The model filters by its own rules (ranges, hosts, states); the completer only shows it.
    m_rankCompleter = new QCompleter(m_rankModel, this);
    m_rankCompleter->setCompletionMode(QCompleter::UnfilteredPopupCompletion);
    m_rankCompleter->setMaxVisibleItems(20);
    m_rankCompleter->setWidget(m_rankFilter);
    connect(m_rankFilter, &QLineEdit::textEdited, this, &LogsPage::onRankFilterEdited);
    connect(m_rankCompleter, qOverload<const QModelIndex &>(&QCompleter::activated), this,
            [this](const QModelIndex &index) {
                showRank(index.data(RankPickerModel::RankRole).toInt());
            });
    connect(m_rankFilter, &QLineEdit::returnPressed, this, [this] {
        // Enter takes the first rank found: "17⏎" jumps to rank 17.
        if (m_rankModel->rowCount() > 0)
            showRank(m_rankModel->rankAt(0));
    });

    m_view = new LogView(this);
    m_view->listView()->setItemDelegate(new LogLineDelegate(m_view->listView()));
    m_model = new LogModel(nullptr, LogStore::AllRanks, this);
    // The page's timer drives the model, so that one timer per page does all the polling.
    m_model->setPollInterval(0);
    m_collapsed = new CollapsedLogModel(this);
    m_collapseAction = new QAction(tr("Collapse identical lines"), this);
    m_collapseAction->setObjectName(QStringLiteral("logCollapseAction"));
    m_collapseAction->setCheckable(true);
    m_collapseAction->setChecked(true);
    m_collapseAction->setToolTip(
        tr("In \"All ranks\", show a line that several ranks printed within 2 s as one row, "
           "e.g. [r0–7 ×8]; Enter or its arrow shows each rank's line. Rank tabs and the run "
           "record keep every line."));
    connect(m_collapseAction, &QAction::toggled, this, [this] { showModelFor(m_model->rank()); });
    m_view->addContextMenuAction(m_collapseAction);
    auto *collapseButton = new QToolButton(this);
    collapseButton->setObjectName(QStringLiteral("logCollapseButton"));
    // The button's short text (the action's iconText), kept when the action changes.
    m_collapseAction->setIconText(tr("Collapse identical"));
    collapseButton->setDefaultAction(m_collapseAction);
    collapseButton->setAutoRaise(true);
    showModelFor(LogStore::AllRanks);
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
    top->addWidget(m_rankFilter);
    top->addWidget(m_groupPicker);
    top->addWidget(m_picker);
    top->addWidget(collapseButton);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);

    m_timer = new QTimer(this);
    m_timer->setInterval(PollIntervalMs);
    // Only while the page is on screen (or its window was never shown: a test, a tour): at 512
    // ranks the merged model's poll took 6.5 ms every 40 ms, 17 % of the GUI thread, for a page
    // nobody looked at. The store keeps the lines meanwhile; showing the page polls at once
    // (docs/benchmarks.md, 512 ranks).
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (isVisibleTo(window()))
            poll();
    });
}

void LogsPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    // A view that follows the newest lines shows the last screenfuls at once, not the seconds
    // of lines that came while the page was hidden (at 512 ranks 10,000 a second; showing the
    // page took up to 49 ms); scrolling up loads the rest. A reader scrolled up keeps the place.
    if (m_view->isFollowing())
        m_model->skipBacklog(ShowBacklogLines);
    poll();
}

LogsPage::~LogsPage()
{
    m_collapsed->setSourceModel(nullptr);
    m_model->setStore(nullptr, LogStore::AllRanks);
}

QAbstractItemModel *LogsPage::shownModel() const
{
    return m_view->model();
}

void LogsPage::setCollapseIdenticalLines(bool collapse)
{
    m_collapseAction->setChecked(collapse);
}

bool LogsPage::collapsesIdenticalLines() const
{
    return m_collapseAction->isChecked();
}

void LogsPage::showModelFor(int rank)
{
    // Attached only while shown: a rank's tab costs no grouping work.
    const bool collapse = m_collapseAction->isChecked() && rank == LogStore::AllRanks;
    m_collapseAction->setEnabled(rank == LogStore::AllRanks);
    LogModel *source = collapse ? m_model : nullptr;
    if (m_collapsed->sourceModel() != source)
        m_collapsed->setSourceModel(source);
    QAbstractItemModel *shown = collapse ? static_cast<QAbstractItemModel *>(m_collapsed)
                                         : static_cast<QAbstractItemModel *>(m_model);
    if (m_view->model() != shown)
        m_view->setModel(shown);
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
        const QSignalBlocker groupBlocker(m_groupPicker);
        while (m_groupPicker->count() > 1)
            m_groupPicker->removeItem(m_groupPicker->count() - 1);
        m_groupPicker->setVisible(false);
        m_rankFilter->setVisible(false);
        m_rankFilter->clear();
        m_rankModel->setFilter(QString());
    }
    m_statuses.clear();
    m_groups.clear();
    m_groupRanks.clear();
    m_model->setRankSet({});
    m_tabRanks.clear();
    m_ranks.clear();
    m_openedRanks.clear();
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
    if (ranks.size() == m_ranks.size())
        return;
    const QSignalBlocker pickerBlocker(m_picker);
    // Ranks appear in any order (rank 3's first line may come before rank 0's): keep the picker
    // and the tabs sorted, with a binary search per new rank.
    for (int rank : ranks) {
        const auto it = std::lower_bound(m_ranks.begin(), m_ranks.end(), rank);
        if (it != m_ranks.end() && *it == rank)
            continue;
        const int at = int(it - m_ranks.begin());
        m_ranks.insert(at, rank);
        m_picker->insertItem(at + 1, tr("Rank %1").arg(rank), rank);
        if (m_ranks.size() <= PickerThreshold)
            addTab(rank);
    }
    if (m_ranks.size() > PickerThreshold)
        dropUnopenedTabs();
    m_picker->setVisible(m_ranks.size() > PickerThreshold);
    m_rankFilter->setVisible(m_picker->isVisibleTo(this));
    updateRankFinder();
    updateRankGroups();
}

void LogsPage::setRankStatuses(const QList<RankStatus> &statuses)
{
    m_statuses = statuses;
    // The run view calls this every 50 ms: only the page on screen with its search offered (more
    // than a few ranks) refreshes the finder; a search typed later reads the statuses first.
    if (isVisible() && m_rankFilter->isVisibleTo(this)) {
        updateRankFinder();
        updateRankGroups();
    }
}

void LogsPage::updateRankGroups()
{
    QList<QList<int>> groups;
    QStringList texts; // "ranks 40, 41 hung"
    QStringList kinds; // "hung": what the ranks are, whichever they are
    if (m_picker->isVisibleTo(this)) {
        const QList<RankGroup> found = RankGroups::group(m_statuses);
        if (found.size() > 1) {
            for (const RankGroup &g : found) {
                groups << g.ranks;
                texts << g.text(4);
                kinds << g.label();
            }
        }
    }
    QStringList shown;
    for (int i = 1; i < m_groupPicker->count(); ++i)
        shown << m_groupPicker->itemText(i);
    if (texts == shown && groups == m_groups)
        return;
    const QString chosenKind =
        m_groupPicker->currentIndex() > 0 ? m_groupPicker->currentData().toString() : QString();
    qsizetype chosen = m_groupRanks.isEmpty() ? -1 : groups.indexOf(m_groupRanks);
    if (chosen < 0 && !chosenKind.isEmpty())
        chosen = kinds.indexOf(chosenKind);
    {
        const QSignalBlocker blocker(m_groupPicker);
        while (m_groupPicker->count() > 1)
            m_groupPicker->removeItem(m_groupPicker->count() - 1);
        for (qsizetype i = 0; i < texts.size(); ++i)
            m_groupPicker->addItem(texts[i], kinds[i]);
        m_groupPicker->setCurrentIndex(int(chosen + 1));
    }
    m_groups = groups;
    m_groupPicker->setVisible(!groups.isEmpty());
    // The chosen group's ranks as they are now; gone, every rank again.
    m_groupRanks = chosen >= 0 ? groups[chosen] : QList<int>{};
    m_model->setRankSet(mergedRankSet(m_model->rank()));
}

void LogsPage::onGroupChanged(int index)
{
    m_groupRanks = index > 0 && index <= m_groups.size() ? m_groups[index - 1] : QList<int>{};
    if (m_groupRanks.isEmpty() || shownRank() == AllRanksTab)
        m_model->setRankSet(mergedRankSet(m_model->rank()));
    else
        showRank(AllRanksTab);
    m_view->setFollowing(true);
}

QList<int> LogsPage::mergedRankSet(int modelRank) const
{
    return modelRank == LogStore::AllRanks ? m_groupRanks : QList<int>{};
}

void LogsPage::updateRankFinder()
{
    // Every rank with a line, with its host and state where the run view gave them.
    QHash<int, const RankStatus *> byRank; // no search per rank: 512 ranks are 512 look-ups
    byRank.reserve(m_statuses.size());
    for (const RankStatus &s : std::as_const(m_statuses))
        byRank.insert(s.rank, &s);
    QList<RankStatus> ranks;
    ranks.reserve(m_ranks.size());
    for (int rank : std::as_const(m_ranks)) {
        if (const RankStatus *known = byRank.value(rank)) {
            ranks.append(*known);
        } else {
            RankStatus s;
            s.rank = rank;
            ranks.append(s);
        }
    }
    m_rankModel->setRanks(ranks);
}

void LogsPage::onRankFilterEdited(const QString &text)
{
    updateRankFinder();
    m_rankModel->setFilter(text);
    if (!text.trimmed().isEmpty())
        m_rankCompleter->complete();
}

int LogsPage::addTab(int rank)
{
    const auto it = std::lower_bound(m_tabRanks.begin(), m_tabRanks.end(), rank);
    const int at = int(it - m_tabRanks.begin());
    if (it != m_tabRanks.end() && *it == rank)
        return at + 1;
    const QSignalBlocker blocker(m_tabs);
    m_tabRanks.insert(at, rank);
    const int index = m_tabs->insertTab(at + 1, tr("Rank %1").arg(rank));
    m_tabs->setTabData(index, rank);
    return index;
}

void LogsPage::dropUnopenedTabs()
{
    // The tabs a small run's ranks got as they came, now that the picker takes over: only the
    // one shown stays, as if opened from the picker.
    const int shown = shownRank();
    if (shown != AllRanksTab && !m_openedRanks.contains(shown))
        m_openedRanks.append(shown);
    const QSignalBlocker blocker(m_tabs);
    for (qsizetype i = m_tabRanks.size() - 1; i >= 0; --i) {
        if (!m_openedRanks.contains(m_tabRanks.at(i))) {
            m_tabs->removeTab(int(i) + 1);
            m_tabRanks.removeAt(i);
        }
    }
}

int LogsPage::openTab(int rank)
{
    if (rank == AllRanksTab)
        return 0;
    if (m_ranks.size() > PickerThreshold) {
        m_openedRanks.removeAll(rank);
        m_openedRanks.append(rank);
        if (m_openedRanks.size() > MaxOpenedTabs) {
            const int old = m_openedRanks.takeFirst();
            const int oldAt = int(m_tabRanks.indexOf(old));
            if (oldAt >= 0 && oldAt + 1 != m_tabs->currentIndex()) {
                const QSignalBlocker blocker(m_tabs);
                m_tabRanks.removeAt(oldAt);
                m_tabs->removeTab(oldAt + 1);
            }
        }
    }
    return addTab(rank);
}

int LogsPage::rankCount() const
{
    return int(m_ranks.size());
}

bool LogsPage::showRank(int rank)
{
    if (m_store)
        syncTabs();
    if (rank != AllRanksTab && !std::binary_search(m_ranks.begin(), m_ranks.end(), rank))
        return false;
    m_tabs->setCurrentIndex(openTab(rank));
    return true;
}

bool LogsPage::showRankAt(int rank, qint64 timeUs)
{
    if (!showRank(rank))
        return false;
    QAbstractItemModel *model = shownModel();
    QModelIndex at;
    // The failure is near the end of what the view holds: searched from there.
    for (int row = model->rowCount() - 1; timeUs > 0 && row >= 0; --row) {
        const QModelIndex index = model->index(row, 0);
        if (index.data(LogModel::IsMarkerRole).toBool())
            continue;
        at = index;
        if (index.data(LogModel::TimeRole).toLongLong() <= timeUs)
            break;
    }
    if (!at.isValid()) {
        m_view->setFollowing(true);
        return true;
    }
    m_view->setFollowing(false);
    m_view->listView()->setCurrentIndex(at);
    m_view->listView()->scrollTo(at, QAbstractItemView::PositionAtCenter);
    return true;
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
        m_picker->setCurrentIndex(qMax(0, m_picker->findData(rank)));
    }
    const int modelRank = rank == AllRanksTab ? LogStore::AllRanks : rank;
    // The collapsed view lets go before a rank's lines come and takes all ranks' once they are
    // there: it groups each set of lines once.
    if (modelRank != LogStore::AllRanks)
        showModelFor(modelRank);
    m_model->setRankSet(mergedRankSet(modelRank));
    m_model->setStore(m_store, modelRank);
    if (modelRank == LogStore::AllRanks)
        showModelFor(modelRank);
    m_model->poll();
    m_view->setFollowing(true);
}

void LogsPage::onPickerChanged(int index)
{
    if (index >= 0)
        showRank(m_picker->itemData(index).toInt());
}

int LogsPage::loadOlderLines()
{
    if (!m_store || !m_model->hasMarkerRow())
        return 0;
    int added = 0;
    m_view->keepTopRowWhile([this, &added] {
        for (int chunk = 0; chunk < MaxChunksPerRequest && added == 0 && m_model->hasMarkerRow();
             ++chunk) {
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
