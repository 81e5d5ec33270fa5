// SPDX-License-Identifier: GPL-3.0-or-later
#include "sidepanel.h"

#include "profile.h"
#include "runlistmodel.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QHeaderView>
#include <QListWidget>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace rankdeck {

SidePanel::SidePanel(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("sidePanel"));
    m_profiles = new QListWidget(this);
    m_profiles->setObjectName(QStringLiteral("profileList"));
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
    connect(launch, &QToolButton::clicked, this, [this] { emit launchRequested(currentProfile()); });
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
    m_runs->setAllColumnsShowFocus(true);
    m_runs->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_runs->setSelectionMode(QAbstractItemView::SingleSelection);

    auto *profileButtons = new QHBoxLayout;
    profileButtons->addWidget(add);
    profileButtons->addWidget(m_edit);
    profileButtons->addWidget(m_delete);
    profileButtons->addStretch();
    profileButtons->addWidget(launch);

    auto *profilesLabel = new QLabel(tr("&Profiles"), this);
    profilesLabel->setBuddy(m_profiles);
    auto *runsLabel = new QLabel(tr("&Runs"), this);
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

void SidePanel::setRunModel(QAbstractItemModel *model)
{
    m_runs->setModel(model);
    if (model) {
        // Name, state and start time fit a side panel; the rest is in the tooltip and the pages.
        for (int c = 0; c < model->columnCount(); ++c)
            m_runs->setColumnHidden(c, c != RunListModel::NameColumn && c != RunListModel::StateColumn
                                           && c != RunListModel::StartedColumn);
        m_runs->header()->setSectionResizeMode(0, QHeaderView::Stretch);
        connect(m_runs->selectionModel(), &QItemSelectionModel::currentChanged, this,
                [this](const QModelIndex &current) {
                    if (current.isValid())
                        emit runSelected(current);
                });
    }
}

void SidePanel::selectRunRow(int row)
{
    if (!m_runs->model())
        return;
    m_runs->setCurrentIndex(m_runs->model()->index(row, 0));
}

} // namespace rankdeck
