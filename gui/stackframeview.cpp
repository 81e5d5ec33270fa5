// SPDX-License-Identifier: GPL-3.0-or-later
#include "stackframeview.h"

#include <QAction>
#include <QClipboard>
#include <QEvent>
#include <QGuiApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QScopedValueRollback>
#include <QStyledItemDelegate>

namespace rankdeck {

namespace {

// The view's elision is one mode for all columns; a path keeps its file name and its root.
class MiddleElideDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideMiddle;
    }
};

} // namespace

StackFrameView::StackFrameView(QWidget *parent) : QTreeView(parent)
{
    setObjectName(QStringLiteral("stackFrameView"));
    setAccessibleName(tr("Stack frames"));
    m_model = new StackFrameModel(this);
    m_model->setPalette(palette());
    setModel(m_model);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setAllColumnsShowFocus(true);
    setUniformRowHeights(true);
    setItemDelegateForColumn(StackFrameModel::LocationColumn, new MiddleElideDelegate(this));
    header()->setSectionResizeMode(QHeaderView::Interactive);
    header()->setStretchLastSection(true);
    header()->setSectionsMovable(false);
    // Columns the user sized stay so from entry to entry; until then each entry's fit its text.
    // (The last column stretches with the view: only the others are the user's doing.)
    connect(header(), &QHeaderView::sectionResized, this, [this](int column) {
        if (!m_fitting && column != StackFrameModel::ColumnCount - 1)
            m_userSized = true;
    });

    m_copyAction = new QAction(tr("&Copy frames"), this);
    m_copyAction->setObjectName(QStringLiteral("copyFramesAction"));
    m_copyAction->setShortcut(QKeySequence::Copy);
    // Only while the view has the focus: elsewhere on the page Ctrl+C copies what is there.
    m_copyAction->setShortcutContext(Qt::WidgetShortcut);
    connect(m_copyAction, &QAction::triggered, this, &StackFrameView::copySelection);
    addAction(m_copyAction);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

void StackFrameView::setSections(const QList<StackSection> &sections)
{
    m_model->setSections(sections);
    // Headings and notes are one line of text, not cells: across the whole row.
    for (int s = 0; s < m_model->rowCount(); ++s) {
        const QModelIndex heading = m_model->index(s, 0);
        setFirstColumnSpanned(s, QModelIndex(), true);
        for (int f = 0; f < m_model->rowCount(heading); ++f)
            setFirstColumnSpanned(f, heading,
                                  sections[s].frames[f].kind == StackFrameRow::Kind::Note);
    }
    expandAll();
    m_fitPending = true;
    fitColumns();
}

void StackFrameView::resizeEvent(QResizeEvent *event)
{
    QTreeView::resizeEvent(event);
    // A view not laid out yet has no width to share: its columns are fitted once it has one.
    fitColumns();
}

void StackFrameView::fitColumns()
{
    if (!m_fitPending || m_userSized || m_model->rowCount() == 0 || !isVisible() ||
        viewport()->width() < 100)
        return;
    m_fitPending = false;
    // Measured from the model, every row: the view's own measure reads only the rows on screen,
    // and none while it is being laid out.
    QList<int> widths(StackFrameModel::ColumnCount, 0);
    QStyleOptionViewItem option;
    initViewItemOption(&option);
    for (int s = 0; s < m_model->rowCount(); ++s) {
        const QModelIndex heading = m_model->index(s, 0);
        for (int f = 0; f < m_model->rowCount(heading); ++f) {
            if (isFirstColumnSpanned(f, heading))
                continue; // a note, across the row
            for (int c = 0; c < StackFrameModel::ColumnCount; ++c) {
                const QModelIndex cell = m_model->index(f, c, heading);
                widths[c] =
                    qMax(widths[c], itemDelegateForIndex(cell)->sizeHint(option, cell).width());
            }
        }
    }
    // The frames are the headings' children, drawn after the headings' branch and their own.
    widths[0] += indentation() * (rootIsDecorated() ? 2 : 1);
    // As wide as their text, but no column takes the view: a 300-character template name or
    // path is read in its tooltip.
    const int most = qMax(160, viewport()->width() * 38 / 100);
    const QScopedValueRollback<bool> fitting(m_fitting, true);
    for (int c = 0; c < StackFrameModel::ColumnCount - 1; ++c)
        setColumnWidth(c, qMin(qMax(header()->sectionSizeHint(c), widths[c]), most));
}

void StackFrameView::copySelection()
{
    QModelIndexList rows = selectionModel()->selectedIndexes();
    if (rows.isEmpty() && currentIndex().isValid())
        rows << currentIndex();
    const QString text = m_model->copyText(rows);
    if (!text.isEmpty())
        QGuiApplication::clipboard()->setText(text);
}

void StackFrameView::keyPressEvent(QKeyEvent *event)
{
    // QAbstractItemView would copy the current cell's text only.
    if (event->matches(QKeySequence::Copy)) {
        copySelection();
        event->accept();
        return;
    }
    QTreeView::keyPressEvent(event);
}

void StackFrameView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        m_model->setPalette(palette());
    QTreeView::changeEvent(event);
}

} // namespace rankdeck
