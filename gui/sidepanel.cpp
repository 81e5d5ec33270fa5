// SPDX-License-Identifier: GPL-3.0-or-later
#include "sidepanel.h"

#include "config/launchrequest.h"
#include "config/profile.h"
#include "models/runlistmodel.h"
#include "record/runrecord.h"
#include "statestyle.h"
#include "util/shellquote.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIdentityProxyModel>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QToolButton>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace rankdeck {

namespace {

// Marks the runs that go on without a launcher ("Running (detached)") and tells which can be
// re-attached. Only runs not known to have ended are looked up in their record, so the list
// stays cheap however long the history.
class DetachedRunsProxy : public QIdentityProxyModel
{
public:
    static constexpr int ReattachableRole = RunListModel::LauncherGoneRole + 100;

    explicit DetachedRunsProxy(QObject *parent) : QIdentityProxyModel(parent)
    {
        connect(this, &QAbstractItemModel::modelReset, this, &DetachedRunsProxy::rescan);
        connect(this, &QAbstractItemModel::rowsInserted, this, &DetachedRunsProxy::rescan);
        connect(this, &QAbstractItemModel::dataChanged, this, &DetachedRunsProxy::rescan);
    }

    QVariant data(const QModelIndex &index, int role) const override
    {
        if (role == ReattachableRole)
            return m_reattachable.contains(
                QIdentityProxyModel::data(index, RunListModel::RunIdRole).toString());
        QVariant v = QIdentityProxyModel::data(index, role);
        if ((role == Qt::DisplayRole || role == Qt::ToolTipRole) &&
            index.column() == RunListModel::StateColumn &&
            m_reattachable.contains(
                QIdentityProxyModel::data(index, RunListModel::RunIdRole).toString())) {
            const auto state =
                ShownState(QIdentityProxyModel::data(index, RunListModel::ShownStateRole).toInt());
            return tr("%1 (detached)").arg(shownStateWord(state));
        }
        // The state's colour and icon, from the palette and the style at the moment of painting.
        if (index.column() == RunListModel::StateColumn &&
            (role == Qt::DecorationRole || role == Qt::ForegroundRole)) {
            const auto state =
                ShownState(QIdentityProxyModel::data(index, RunListModel::ShownStateRole).toInt());
            if (role == Qt::DecorationRole)
                return stateIcon(state, QApplication::style());
            return toneColor(shownStateTone(state), QApplication::palette());
        }
        return v;
    }

private:
    void rescan()
    {
        QSet<QString> next;
        for (int r = 0; r < rowCount(); ++r) {
            const QModelIndex i = index(r, 0);
            // Runs that are still going: their launcher is gone, or it let them go (detached). A
            // released run counts as detached whatever its recorded launcher pid says: that pid
            // is this very process when the window was closed and a new one opened, or a reused
            // one after a restart.
            if (isTerminal(
                    RunState(QIdentityProxyModel::data(i, RunListModel::RunStateRole).toInt())))
                continue;
            const bool launcherGone =
                QIdentityProxyModel::data(i, RunListModel::LauncherGoneRole).toBool();
            RunRecord record;
            QString error;
            if (!record.open(QIdentityProxyModel::data(i, RunListModel::DirectoryRole).toString(),
                             &error))
                continue;
            const RunInfo info = record.info();
            if (!isTerminal(info.state) && (info.detached || (launcherGone && info.detachable)) &&
                !record.profile().isLocal())
                next.insert(info.id);
        }
        m_reattachable = next;
    }

    QSet<QString> m_reattachable;
};

} // namespace

SidePanel::SidePanel(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("sidePanel"));
    m_profiles = new QListWidget(this);
    m_profiles->setObjectName(QStringLiteral("profileList"));
    m_profiles->setAccessibleName(tr("Profiles"));
    m_profiles->setUniformItemSizes(true);
    m_profiles->setMaximumHeight(160);
    connect(m_profiles, &QListWidget::itemDoubleClicked, this,
            [this](QListWidgetItem *item) { emit launchRequested(item->text()); });

    auto *add = new QToolButton(this);
    add->setObjectName(QStringLiteral("newProfileButton"));
    add->setText(tr("New…"));
    add->setToolTip(tr("Create a cluster profile"));
    connect(add, &QToolButton::clicked, this, &SidePanel::newProfileRequested);
    m_edit = new QToolButton(this);
    m_edit->setObjectName(QStringLiteral("editProfileButton"));
    m_edit->setText(tr("Edit…"));
    connect(m_edit, &QToolButton::clicked, this, [this] {
        if (!currentProfile().isEmpty())
            emit editProfileRequested(currentProfile());
    });
    m_delete = new QToolButton(this);
    m_delete->setText(tr("Delete"));
    connect(m_delete, &QToolButton::clicked, this, [this] {
        if (!currentProfile().isEmpty())
            emit deleteProfileRequested(currentProfile());
    });
    auto *launch = new QToolButton(this);
    launch->setObjectName(QStringLiteral("sideLaunchButton"));
    launch->setText(tr("Launch…"));
    launch->setToolTip(tr("Launch a run on the selected profile (Ctrl+L)"));
    connect(launch, &QToolButton::clicked, this,
            [this] { emit launchRequested(currentProfile()); });
    connect(m_profiles, &QListWidget::currentTextChanged, this, [this](const QString &name) {
        // The built-in profile has no file to edit or delete.
        const bool builtin = name == Profile::builtinLocalName();
        m_edit->setEnabled(!name.isEmpty() && !builtin);
        m_delete->setEnabled(!name.isEmpty() && !builtin);
    });

    m_runs = new QTreeView(this);
    m_runs->setObjectName(QStringLiteral("runList"));
    m_runs->setRootIsDecorated(false);
    m_runs->setUniformRowHeights(true);
    // Runs of one name prefix ("mlp-4-ranks-lr0.1", "mlp-4-ranks-lr0.01") differ at the end.
    m_runs->setTextElideMode(Qt::ElideMiddle);
    m_runs->setAccessibleName(tr("Runs"));
    m_runs->setAllColumnsShowFocus(true);
    m_runs->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Several runs selected are compared on the Loss page.
    m_runs->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_runs->setToolTip(tr("Ctrl- or Shift-click several runs to compare them"));
    m_runs->setContextMenuPolicy(Qt::CustomContextMenu);
    m_reattach = new QAction(tr("&Re-attach"), this);
    m_reattach->setObjectName(QStringLiteral("reattachRunAction"));
    m_reattach->setToolTip(tr("Reconnect to a run left running on its nodes and follow it again"));
    m_reattach->setEnabled(false);
    connect(m_reattach, &QAction::triggered, this, [this] {
        const QModelIndex current = m_runs->currentIndex();
        if (current.isValid() && current.data(DetachedRunsProxy::ReattachableRole).toBool())
            emit reattachRequested(current.data(RunListModel::RunIdRole).toString());
    });
    connect(m_runs, &QWidget::customContextMenuRequested, this, &SidePanel::showRunMenu);
    m_runFilter = new QLineEdit(this);
    m_runFilter->setObjectName(QStringLiteral("runFilterEdit"));
    m_runFilter->setPlaceholderText(tr("Filter runs"));
    m_runFilter->setAccessibleName(tr("Filter runs"));
    m_runFilter->setToolTip(tr("Show the runs whose name, id, profile or state contain this"));
    m_runFilter->setClearButtonEnabled(true);

    auto *profileButtons = new QHBoxLayout;
    profileButtons->addWidget(add);
    profileButtons->addWidget(m_edit);
    profileButtons->addWidget(m_delete);
    profileButtons->addStretch();
    profileButtons->addWidget(launch);

    auto *profilesLabel = new QLabel(tr("&Profiles"), this);
    profilesLabel->setBuddy(m_profiles);
    auto *runsLabel = new QLabel(tr("R&uns"), this);
    runsLabel->setBuddy(m_runs);
    QFont bold = profilesLabel->font();
    bold.setBold(true);
    profilesLabel->setFont(bold);
    runsLabel->setFont(bold);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(profilesLabel);
    layout->addWidget(m_profiles);
    layout->addLayout(profileButtons);
    layout->addWidget(runsLabel);
    layout->addWidget(m_runFilter);
    layout->addWidget(m_runs, 1);
}

void SidePanel::setProfileNames(const QStringList &names)
{
    const QString current = currentProfile();
    m_profiles->clear();
    // The built-in profile first: it is the one that always works.
    m_profiles->addItem(Profile::builtinLocalName());
    for (const QString &name : names) {
        if (name != Profile::builtinLocalName())
            m_profiles->addItem(name);
    }
    setCurrentProfile(current.isEmpty() ? Profile::builtinLocalName() : current);
}

QString SidePanel::currentProfile() const
{
    const QListWidgetItem *item = m_profiles->currentItem();
    return item ? item->text() : QString();
}

void SidePanel::setCurrentProfile(const QString &name)
{
    const QList<QListWidgetItem *> items = m_profiles->findItems(name, Qt::MatchExactly);
    m_profiles->setCurrentItem(items.isEmpty() ? m_profiles->item(0) : items.first());
}

void SidePanel::setRunModel(QAbstractItemModel *source)
{
    delete m_runFilterModel;
    delete m_runModel;
    m_runModel = nullptr;
    m_runFilterModel = nullptr;
    QAbstractItemModel *model = nullptr;
    if (source) {
        auto *proxy = new DetachedRunsProxy(this);
        proxy->setSourceModel(source);
        m_runModel = proxy;
        // Every column counts, the hidden ones (id, profile) too; the order stays the source's.
        m_runFilterModel = new QSortFilterProxyModel(this);
        m_runFilterModel->setFilterKeyColumn(-1);
        m_runFilterModel->setFilterCaseSensitivity(Qt::CaseInsensitive);
        m_runFilterModel->setSourceModel(proxy);
        m_runFilterModel->setFilterFixedString(m_runFilter->text());
        connect(m_runFilter, &QLineEdit::textChanged, m_runFilterModel,
                &QSortFilterProxyModel::setFilterFixedString);
        model = m_runFilterModel;
    }
    m_runs->setModel(model);
    if (model) {
        // Name, state and start time fit a side panel; the rest is in the tooltip and the pages.
        for (int c = 0; c < model->columnCount(); ++c)
            m_runs->setColumnHidden(c, c != RunListModel::NameColumn &&
                                           c != RunListModel::StateColumn &&
                                           c != RunListModel::StartedColumn);
        m_runs->header()->setSectionResizeMode(0, QHeaderView::Stretch);
        m_runs->header()->setSectionResizeMode(RunListModel::StateColumn,
                                               QHeaderView::ResizeToContents);
        m_runs->header()->setSectionResizeMode(RunListModel::StartedColumn,
                                               QHeaderView::ResizeToContents);
        connect(m_runs->selectionModel(), &QItemSelectionModel::currentChanged, this,
                [this](const QModelIndex &current) {
                    m_reattach->setEnabled(
                        current.isValid() &&
                        current.data(DetachedRunsProxy::ReattachableRole).toBool());
                    if (current.isValid() && selectedRunIds().size() < 2)
                        emit runSelected(current);
                });
        connect(m_runs->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
            const QStringList ids = selectedRunIds();
            if (ids.size() >= 2)
                emit runsSelectedForCompare(ids);
            else if (ids.size() == 1 && m_runs->currentIndex().isValid())
                emit runSelected(m_runs->currentIndex());
        });
    }
}

QStringList SidePanel::selectedRunIds() const
{
    QStringList ids;
    if (!m_runs->selectionModel())
        return ids;
    QModelIndexList rows = m_runs->selectionModel()->selectedRows(RunListModel::NameColumn);
    std::sort(rows.begin(), rows.end(),
              [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    for (const QModelIndex &index : std::as_const(rows)) {
        const QString id = index.data(RunListModel::RunIdRole).toString();
        if (!id.isEmpty())
            ids << id;
    }
    return ids;
}

void SidePanel::selectRun(const QString &runId)
{
    if (const QModelIndex index = indexOfRun(runId); index.isValid())
        m_runs->setCurrentIndex(index);
}

QModelIndex SidePanel::indexOfRun(const QString &runId, int column) const
{
    const QAbstractItemModel *model = m_runs->model();
    for (int row = 0; model && row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, column);
        if (index.data(RunListModel::RunIdRole).toString() == runId)
            return index;
    }
    return {};
}

void SidePanel::showRunMenu(const QPoint &pos)
{
    const QModelIndex index = m_runs->indexAt(pos);
    if (!index.isValid())
        return;
    m_runs->setCurrentIndex(index);
    const QString id = index.data(RunListModel::RunIdRole).toString();
    const QString directory = index.data(RunListModel::DirectoryRole).toString();
    const auto state = RunState(index.data(RunListModel::RunStateRole).toInt());
    QMenu menu(this);
    menu.addAction(m_reattach);
    menu.addSeparator();
    QAction *relaunch =
        menu.addAction(tr("Launch &again"), this, [this, id] { emit relaunchRequested(id); });
    relaunch->setObjectName(QStringLiteral("relaunchRunAction"));
    relaunch->setToolTip(tr("Launch a new run with this run's profile and settings"));
    QAction *open = menu.addAction(tr("&Open run folder"), this, [directory] {
        QDesktopServices::openUrl(QUrl::fromLocalFile(directory));
    });
    open->setObjectName(QStringLiteral("openRunFolderAction"));
    const QString command = relaunchCommand(directory);
    QAction *copy = menu.addAction(tr("&Copy CLI command"), this,
                                   [command] { QGuiApplication::clipboard()->setText(command); });
    copy->setObjectName(QStringLiteral("copyRunCommandAction"));
    copy->setToolTip(command);
    copy->setEnabled(!command.isEmpty());
    menu.addSeparator();
    QAction *remove =
        menu.addAction(tr("&Delete…"), this, [this, id] { emit deleteRequested(id); });
    remove->setObjectName(QStringLiteral("deleteRunAction"));
    // A run in progress is stopped first; its record is what the GUI is showing.
    remove->setEnabled(isTerminal(state) || index.data(RunListModel::LauncherGoneRole).toBool());
    menu.exec(m_runs->viewport()->mapToGlobal(pos));
}

QString SidePanel::relaunchCommand(const QString &directory)
{
    RunRecord record;
    QString error;
    if (!record.open(directory, &error))
        return QString();
    const QList<ProfileNode> &nodes = record.profile().nodes;
    const bool even =
        !nodes.isEmpty() && std::all_of(nodes.cbegin(), nodes.cend(), [&](const ProfileNode &n) {
            return n.ranksPerNode == nodes.first().ranksPerNode;
        });
    const QStringList args =
        LaunchRequest::of(record.config())
            .cliArguments(record.profile().name, even ? nodes.first().ranksPerNode : 0);
    return shell::readable(QStringList{QStringLiteral("rankdeck-cli")} + args);
}

} // namespace rankdeck
