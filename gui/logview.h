// SPDX-License-Identifier: GPL-3.0-or-later
//
// A log pane over any list model (core's LogModel in the app): a QListView with uniform item
// sizes and no wrapping by default (a text edit does not scale to long logs, and wrapping costs
// a layout of every row), a line cut by the view's width read whole in its tooltip or with
// "Wrap" on,
// follow mode that scrolls only while the user is at the bottom, regex/stream filter controls
// and incremental search. Filtering itself is the model's job; this widget only reports what
// the user asked for. Reading back older lines is the owner's job too: the view asks for them
// (olderLinesWanted) when the user scrolls against the top, and keepTopRowWhile() lets the owner
// insert them without moving what the user is reading.
// Rows that stand for a group of identical lines (CollapsedLogModel) expand and collapse in place
// with Enter, a double-click, a click on their arrow, Right/Left or the context menu; the view
// only asks the model (ExpandedRole), it never groups anything itself.
#pragma once

#include <QRegularExpression>
#include <QWidget>

#include <functional>

class QAbstractItemModel;
class QComboBox;
class QLabel;
class QAction;
class QLineEdit;
class QListView;
class QToolButton;

namespace rankdeck {

class SteadyLabel;

class LogView : public QWidget
{
    Q_OBJECT
public:
    enum class StreamFilter
    {
        All,
        Stdout,
        Stderr
    };
    Q_ENUM(StreamFilter)

    explicit LogView(QWidget *parent = nullptr);

    void setModel(QAbstractItemModel *model);
    QAbstractItemModel *model() const;
    QListView *listView() const { return m_view; }

    bool isFollowing() const { return m_follow; }
    bool wrapsLines() const;
    QRegularExpression filterExpression() const { return m_filterExpression; }
    StreamFilter streamFilter() const;

public slots:
    void setFollowing(bool follow);
    // Long lines wrap at the view's width (every log pane alike; remembered).
    void setWrapLines(bool wrap);
    // Searches forward (or backward) from the current row for the search text; wraps around.
    bool findNext();
    bool findPrevious();
    void focusSearch();
    void focusFilter();
    void copySelection();
    // Expands a collapsed group row or collapses an expanded one (or the one a line belongs
    // to); false when the row is neither.
    bool toggleGroup(const QModelIndex &index);

public:
    // Added to the list's context menu, after the view's own entries (not owned).
    void addContextMenuAction(QAction *action);
    // Runs `change` (which may insert or remove rows above the top visible row, the elision
    // marker included) and scrolls so that the row the user was reading stays where it was.
    // Rows below the top visible row must not change.
    void keepTopRowWhile(const std::function<void()> &change);

signals:
    // The user scrolled (or wheeled, or activated the elision marker) at the very top: the
    // owner may bring older lines back. Sent at most once per event-loop turn.
    void olderLinesWanted();
    // The filter controls changed; an invalid regular expression is not reported.
    void filterChanged(const QRegularExpression &expression,
                       rankdeck::LogView::StreamFilter stream);
    void followingChanged(bool following);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    bool find(bool forward);
    void onRowsChanged();
    void onFilterEdited();
    void scrollToEndIfFollowing();
    void requestOlderLines();
    void showContextMenu(const QPoint &pos);
    QModelIndex groupRowOf(const QModelIndex &index) const;
    bool onDisclosure(const QModelIndex &index, const QPoint &pos) const;
    // The whole line under pos as a tooltip, when the view cuts it.
    bool showCutLine(const QPoint &pos, const QPoint &globalPos);

    QListView *m_view = nullptr;
    QLineEdit *m_filterEdit = nullptr;
    QComboBox *m_streamCombo = nullptr;
    QLineEdit *m_searchEdit = nullptr;
    QToolButton *m_followButton = nullptr;
    QToolButton *m_wrapButton = nullptr;
    SteadyLabel *m_statusLabel = nullptr;
    QList<QAction *> m_contextActions;
    QRegularExpression m_filterExpression;
    bool m_follow = true;
    bool m_scrolling = false;
    bool m_olderRequested = false;
};

} // namespace rankdeck
