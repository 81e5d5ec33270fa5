// SPDX-License-Identifier: GPL-3.0-or-later
#include "logview.h"

#include "loglinedelegate.h"
#include "models/collapsedlogmodel.h"
#include "models/logmodel.h"
#include "steadylabel.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QMouseEvent>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

namespace rankdeck {

LogView::LogView(QWidget *parent) : QWidget(parent)
{
    m_view = new QListView(this);
    m_view->setObjectName(QStringLiteral("logListView"));
    m_view->setAccessibleName(tr("Log lines"));
    m_view->setUniformItemSizes(true);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideNone);
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

    m_filterEdit = new QLineEdit(this);
    m_filterEdit->setObjectName(QStringLiteral("logFilterEdit"));
    m_filterEdit->setAccessibleName(tr("Filter log lines"));
    m_filterEdit->setPlaceholderText(tr("Filter (regular expression)"));
    m_filterEdit->setClearButtonEnabled(true);
    connect(m_filterEdit, &QLineEdit::textChanged, this, &LogView::onFilterEdited);

    m_streamCombo = new QComboBox(this);
    m_streamCombo->setObjectName(QStringLiteral("logStreamCombo"));
    m_streamCombo->setAccessibleName(tr("Streams shown"));
    m_streamCombo->addItem(tr("stdout + stderr"), int(StreamFilter::All));
    m_streamCombo->addItem(tr("stdout only"), int(StreamFilter::Stdout));
    m_streamCombo->addItem(tr("stderr only"), int(StreamFilter::Stderr));
    connect(m_streamCombo, &QComboBox::currentIndexChanged, this, &LogView::onFilterEdited);

    m_searchEdit = new QLineEdit(this);
    m_searchEdit->setObjectName(QStringLiteral("logSearchEdit"));
    m_searchEdit->setAccessibleName(tr("Search the log"));
    m_searchEdit->setPlaceholderText(tr("Search (Enter: next, Shift+Enter: previous)"));
    m_searchEdit->setClearButtonEnabled(true);
    connect(m_searchEdit, &QLineEdit::returnPressed, this, [this] {
        if (QApplication::keyboardModifiers() & Qt::ShiftModifier)
            findPrevious();
        else
            findNext();
    });

    m_followButton = new QToolButton(this);
    m_followButton->setObjectName(QStringLiteral("logFollowButton"));
    m_followButton->setText(tr("Follow"));
    m_followButton->setCheckable(true);
    m_followButton->setChecked(true);
    m_followButton->setToolTip(tr("Keep showing the newest lines (End). Scrolling up pauses it."));
    connect(m_followButton, &QToolButton::toggled, this, &LogView::setFollowing);

    m_wrapButton = new QToolButton(this);
    m_wrapButton->setObjectName(QStringLiteral("logWrapButton"));
    m_wrapButton->setText(tr("Wrap"));
    m_wrapButton->setCheckable(true);
    m_wrapButton->setToolTip(tr("Wrap long lines at the view's width (off: hover a cut line to "
                                "read it whole)"));
    connect(m_wrapButton, &QToolButton::toggled, this, [this](bool on) {
        setWrapLines(on);
        QSettings().setValue(QStringLiteral("logs/wrap"), on);
    });

    auto *status = new QLabel;
    status->setObjectName(QStringLiteral("logStatusLabel"));
    // Its count changes with every batch of lines: not a relayout of the page each time.
    m_statusLabel = new SteadyLabel(status, this);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_filterEdit, 2);
    bar->addWidget(m_streamCombo);
    bar->addWidget(m_searchEdit, 2);
    bar->addWidget(m_wrapButton);
    bar->addWidget(m_followButton);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_statusLabel);

    // A user who scrolls away from the bottom wants to read: stop following until they come back.
    connect(m_view->verticalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        if (m_scrolling)
            return;
        QScrollBar *scrollBar = m_view->verticalScrollBar();
        const bool atBottom = value >= scrollBar->maximum();
        if (atBottom != m_follow)
            setFollowing(atBottom);
        if (value <= scrollBar->minimum() && scrollBar->maximum() > scrollBar->minimum())
            requestOlderLines();
    });
    // Scrolling never moves a view whose lines all fit, and a view at the top does not move
    // further: a wheel turn upwards there still means "show me what came before".
    m_view->viewport()->installEventFilter(this);
    connect(m_view, &QListView::activated, this, [this](const QModelIndex &index) {
        if (index.data(LogModel::IsMarkerRole).toBool())
            requestOlderLines();
        else if (index.data(LogModel::IsGroupRole).toBool())
            toggleGroup(index);
    });
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, &LogView::showContextMenu);

    auto addShortcut = [this](const QKeySequence &key, auto slot) {
        auto *s = new QShortcut(key, this, slot);
        s->setContext(Qt::WidgetWithChildrenShortcut);
    };
    addShortcut(QKeySequence::FindNext, [this] { findNext(); });
    addShortcut(QKeySequence::FindPrevious, [this] { findPrevious(); });
    // End in the list means "take me to the newest line and keep me there".
    m_view->installEventFilter(this);
    addShortcut(QKeySequence::Copy, [this] { copySelection(); });
    setWrapLines(QSettings().value(QStringLiteral("logs/wrap"), false).toBool());
}

void LogView::setWrapLines(bool wrap)
{
    const QSignalBlocker blocker(m_wrapButton);
    m_wrapButton->setChecked(wrap);
    // Wrapped rows differ in height, so the view measures each row (the log's window is
    // bounded, so that stays affordable), in one pass: scrolling to the top for older lines
    // needs the scroll range whole.
    m_view->setUniformItemSizes(!wrap);
    m_view->setWordWrap(wrap);
    m_view->setHorizontalScrollBarPolicy(wrap ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
    scrollToEndIfFollowing();
}

bool LogView::wrapsLines() const
{
    return m_view->wordWrap();
}

bool LogView::showCutLine(const QPoint &pos, const QPoint &globalPos)
{
    const QModelIndex index = m_view->indexAt(pos);
    const QString text = index.data(Qt::DisplayRole).toString();
    const int room = m_view->viewport()->width() - 2 * LogLineDelegate::kTextMargin;
    if (!index.isValid() || wrapsLines() || m_view->fontMetrics().horizontalAdvance(text) <= room) {
        QToolTip::hideText();
        return false;
    }
    // Rich text, so that the tooltip wraps the line instead of running off the screen.
    QToolTip::showText(
        globalPos,
        QStringLiteral("<p style=\"white-space:pre-wrap\">%1</p>").arg(text.toHtmlEscaped()),
        m_view->viewport(), m_view->visualRect(index));
    return true;
}

bool LogView::eventFilter(QObject *watched, QEvent *event)
{
    // The arrow of a group row opens and closes it; a double-click there counts as two clicks.
    if (watched == m_view->viewport() && (event->type() == QEvent::MouseButtonPress ||
                                          event->type() == QEvent::MouseButtonDblClick)) {
        const auto *mouse = static_cast<QMouseEvent *>(event);
        const QModelIndex index = m_view->indexAt(mouse->position().toPoint());
        if (mouse->button() == Qt::LeftButton && onDisclosure(index, mouse->position().toPoint())) {
            m_view->setCurrentIndex(index);
            toggleGroup(index);
            return true;
        }
    }
    if (watched == m_view->viewport() && event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        showCutLine(help->pos(), help->globalPos());
        return true;
    }
    if (watched == m_view->viewport() && event->type() == QEvent::Wheel) {
        const auto *wheel = static_cast<QWheelEvent *>(event);
        QScrollBar *bar = m_view->verticalScrollBar();
        if (wheel->angleDelta().y() > 0 && bar->value() <= bar->minimum()) {
            setFollowing(false);
            requestOlderLines();
        }
    }
    if (watched == m_view && event->type() == QEvent::KeyPress) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_End && !(key->modifiers() & Qt::ShiftModifier)) {
            setFollowing(true);
            return true;
        }
        // Right opens a group, Left closes it (from any of its lines), as in a tree.
        const QModelIndex current = m_view->currentIndex();
        if (key->key() == Qt::Key_Right && key->modifiers() == Qt::NoModifier &&
            current.data(LogModel::IsGroupRole).toBool() &&
            !current.data(LogModel::ExpandedRole).toBool()) {
            toggleGroup(current);
            return true;
        }
        if (key->key() == Qt::Key_Left && key->modifiers() == Qt::NoModifier) {
            const QModelIndex group = groupRowOf(current);
            if (group.isValid() && group.data(LogModel::ExpandedRole).toBool()) {
                toggleGroup(group);
                return true;
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

void LogView::setModel(QAbstractItemModel *model)
{
    if (QAbstractItemModel *old = m_view->model())
        disconnect(old, nullptr, this, nullptr);
    // The view does not delete the selection model it made for the old model.
    QItemSelectionModel *oldSelection = m_view->selectionModel();
    m_view->setModel(model);
    if (oldSelection && oldSelection != m_view->selectionModel())
        oldSelection->deleteLater();
    if (model) {
        connect(model, &QAbstractItemModel::rowsInserted, this, &LogView::onRowsChanged);
        connect(model, &QAbstractItemModel::rowsRemoved, this, &LogView::onRowsChanged);
        connect(model, &QAbstractItemModel::modelReset, this, &LogView::onRowsChanged);
        connect(model, &QAbstractItemModel::layoutChanged, this, &LogView::onRowsChanged);
        connect(model, &QAbstractItemModel::dataChanged, this, &LogView::onRowsChanged);
    }
    onRowsChanged();
}

QAbstractItemModel *LogView::model() const
{
    return m_view->model();
}

LogView::StreamFilter LogView::streamFilter() const
{
    return StreamFilter(m_streamCombo->currentData().toInt());
}

void LogView::setFollowing(bool follow)
{
    if (follow != m_follow) {
        m_follow = follow;
        const QSignalBlocker blocker(m_followButton);
        m_followButton->setChecked(follow);
        emit followingChanged(follow);
    }
    scrollToEndIfFollowing();
}

void LogView::scrollToEndIfFollowing()
{
    if (!m_follow)
        return;
    m_scrolling = true;
    m_view->scrollToBottom();
    m_scrolling = false;
}

void LogView::requestOlderLines()
{
    if (m_olderRequested)
        return;
    m_olderRequested = true;
    // Not from inside the scroll bar's signal: the owner changes the model and the scroll
    // position, which must not happen while the scroll bar is still delivering the old value.
    QTimer::singleShot(0, this, [this] {
        m_olderRequested = false;
        emit olderLinesWanted();
    });
}

void LogView::keepTopRowWhile(const std::function<void()> &change)
{
    QAbstractItemModel *model = m_view->model();
    if (!model) {
        change();
        return;
    }
    const int rowsBefore = model->rowCount();
    const QModelIndex top = m_view->indexAt(QPoint(1, 1));
    const int topRow = top.isValid() ? top.row() : 0;
    const int topOffset = top.isValid() ? m_view->visualRect(top).top() : 0;
    m_scrolling = true;
    change();
    // Rows only changed above the top row: it moved down by exactly the difference.
    const int row = topRow + model->rowCount() - rowsBefore;
    if (row >= 0 && row < model->rowCount() && !m_follow) {
        m_view->doItemsLayout();
        const QModelIndex index = model->index(row, 0);
        m_view->scrollTo(index, QAbstractItemView::PositionAtTop);
        // Per-pixel scrolling: restore the partly hidden top row too.
        if (m_view->verticalScrollMode() == QAbstractItemView::ScrollPerPixel)
            m_view->verticalScrollBar()->setValue(m_view->verticalScrollBar()->value() - topOffset);
    }
    m_scrolling = false;
}

void LogView::onRowsChanged()
{
    const QAbstractItemModel *model = m_view->model();
    if (const auto *collapsed = qobject_cast<const CollapsedLogModel *>(model)) {
        // Rows and lines differ there; a line joining a row changes only the second number.
        m_statusLabel->setText(tr("%n row(s) shown for %1 line(s)", nullptr, collapsed->rowCount())
                                   .arg(collapsed->lineCount()));
    } else {
        m_statusLabel->setText(model ? tr("%n line(s) shown", nullptr, model->rowCount())
                                     : QString());
    }
    scrollToEndIfFollowing();
}

void LogView::onFilterEdited()
{
    const QRegularExpression expression(m_filterEdit->text(),
                                        QRegularExpression::CaseInsensitiveOption);
    if (!expression.isValid()) {
        m_filterEdit->setToolTip(
            tr("Invalid regular expression: %1").arg(expression.errorString()));
        QPalette pal = m_filterEdit->palette();
        pal.setColor(QPalette::Text, Qt::red);
        m_filterEdit->setPalette(pal);
        return;
    }
    m_filterEdit->setPalette(QPalette());
    m_filterEdit->setToolTip(QString());
    m_filterExpression = expression;
    emit filterChanged(m_filterExpression, streamFilter());
}

bool LogView::findNext()
{
    return find(true);
}

bool LogView::findPrevious()
{
    return find(false);
}

bool LogView::find(bool forward)
{
    QAbstractItemModel *model = m_view->model();
    const QString needle = m_searchEdit->text();
    if (!model || needle.isEmpty())
        return false;
    const int rows = model->rowCount();
    if (rows == 0)
        return false;
    const int current =
        m_view->currentIndex().isValid() ? m_view->currentIndex().row() : (forward ? -1 : rows);
    for (int i = 1; i <= rows; ++i) {
        const int row = ((forward ? current + i : current - i) % rows + rows) % rows;
        const QModelIndex index = model->index(row, 0);
        if (index.data(Qt::DisplayRole).toString().contains(needle, Qt::CaseInsensitive)) {
            setFollowing(false);
            m_view->setCurrentIndex(index);
            m_view->scrollTo(index, QAbstractItemView::PositionAtCenter);
            m_statusLabel->setText(tr("Found on line %1 of %2").arg(row + 1).arg(rows));
            return true;
        }
    }
    m_statusLabel->setText(tr("\"%1\" not found").arg(needle));
    return false;
}

void LogView::focusSearch()
{
    m_searchEdit->setFocus();
    m_searchEdit->selectAll();
}

void LogView::focusFilter()
{
    m_filterEdit->setFocus();
    m_filterEdit->selectAll();
}

void LogView::copySelection()
{
    QModelIndexList rows =
        m_view->selectionModel() ? m_view->selectionModel()->selectedRows() : QModelIndexList();
    std::sort(rows.begin(), rows.end());
    QStringList lines;
    int coveredUntil = -1; // the lines of an expanded group whose row was copied already
    for (const QModelIndex &index : std::as_const(rows)) {
        if (index.row() <= coveredUntil)
            continue;
        // A group copies as its line with the ranks note, an expanded one as all its lines.
        const QVariant copy = index.data(LogModel::CopyTextRole);
        lines << (copy.isValid() ? copy : index.data(Qt::DisplayRole)).toString();
        if (index.data(LogModel::ExpandedRole).toBool())
            coveredUntil = index.row() + index.data(LogModel::GroupSizeRole).toInt();
    }
    if (!lines.isEmpty())
        QGuiApplication::clipboard()->setText(lines.join(QLatin1Char('\n')));
}

QModelIndex LogView::groupRowOf(const QModelIndex &index) const
{
    if (!index.isValid() || index.data(LogModel::IsGroupRole).toBool())
        return index;
    if (!index.data(LogModel::IsGroupMemberRole).toBool())
        return {};
    // A group's lines follow its row.
    for (int row = index.row() - 1; row >= 0; --row) {
        const QModelIndex above = index.siblingAtRow(row);
        if (above.data(LogModel::IsGroupRole).toBool())
            return above;
        if (!above.data(LogModel::IsGroupMemberRole).toBool())
            break;
    }
    return {};
}

bool LogView::toggleGroup(const QModelIndex &index)
{
    const QModelIndex group = groupRowOf(index);
    QAbstractItemModel *model = m_view->model();
    if (!group.isValid() || !model || !group.data(LogModel::IsGroupRole).toBool())
        return false;
    const bool expand = !group.data(LogModel::ExpandedRole).toBool();
    // Lines opening in the middle of the view must not scroll what the user clicked away: stop
    // following unless the group is the newest row (then its lines are the newest too).
    if (expand && group.row() < model->rowCount() - 1)
        setFollowing(false);
    const QPersistentModelIndex keep(group);
    if (!model->setData(group, expand, LogModel::ExpandedRole))
        return false;
    if (!expand)
        m_view->setCurrentIndex(keep);
    m_view->scrollTo(keep);
    return true;
}

bool LogView::onDisclosure(const QModelIndex &index, const QPoint &pos) const
{
    if (!index.data(LogModel::IsGroupRole).toBool())
        return false;
    const QRect rect = m_view->visualRect(index);
    const int width = m_view->fontMetrics().horizontalAdvance(LogLineDelegate::disclosure(false));
    return pos.x() < rect.left() + width + 2 * LogLineDelegate::kTextMargin;
}

void LogView::addContextMenuAction(QAction *action)
{
    m_contextActions.append(action);
}

void LogView::showContextMenu(const QPoint &pos)
{
    QMenu menu(this);
    const QModelIndex group = groupRowOf(m_view->indexAt(pos));
    if (group.isValid()) {
        const bool expanded = group.data(LogModel::ExpandedRole).toBool();
        const QPersistentModelIndex keep(group);
        menu.addAction(expanded ? tr("Collapse the %n line(s)", nullptr,
                                     group.data(LogModel::GroupSizeRole).toInt())
                                : tr("Expand into %n line(s)", nullptr,
                                     group.data(LogModel::GroupSizeRole).toInt()),
                       this, [this, keep] { toggleGroup(keep); });
    }
    QAction *copy = menu.addAction(tr("Copy"), this, &LogView::copySelection);
    copy->setShortcut(QKeySequence::Copy);
    copy->setEnabled(m_view->selectionModel() && m_view->selectionModel()->hasSelection());
    if (!m_contextActions.isEmpty()) {
        menu.addSeparator();
        menu.addActions(m_contextActions);
    }
    menu.exec(m_view->viewport()->mapToGlobal(pos));
}

} // namespace rankdeck
