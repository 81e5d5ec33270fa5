// SPDX-License-Identifier: GPL-3.0-or-later
//
// A log pane over any list model (core's LogModel in the app): a QListView with uniform item
// sizes and no wrapping (a text edit does not scale to long logs, and wrapping freezes views),
// follow mode that scrolls only while the user is at the bottom, regex/stream filter controls
// and incremental search. Filtering itself is the model's job; this widget only reports what
// the user asked for.
#pragma once

#include <QRegularExpression>
#include <QWidget>

class QAbstractItemModel;
class QComboBox;
class QLabel;
class QLineEdit;
class QListView;
class QToolButton;

namespace rankdeck {

class LogView : public QWidget
{
    Q_OBJECT
public:
    enum class StreamFilter { All, Stdout, Stderr };
    Q_ENUM(StreamFilter)

    explicit LogView(QWidget *parent = nullptr);

    void setModel(QAbstractItemModel *model);
    QAbstractItemModel *model() const;
    QListView *listView() const { return m_view; }

    bool isFollowing() const { return m_follow; }
    QRegularExpression filterExpression() const { return m_filterExpression; }
    StreamFilter streamFilter() const;

public slots:
    void setFollowing(bool follow);
    // Searches forward (or backward) from the current row for the search text; wraps around.
    bool findNext();
    bool findPrevious();
    void focusSearch();
    void focusFilter();
    void copySelection();

signals:
    // The filter controls changed; an invalid regular expression is not reported.
    void filterChanged(const QRegularExpression &expression, rankdeck::LogView::StreamFilter stream);
    void followingChanged(bool following);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    bool find(bool forward);
    void onRowsChanged();
    void onFilterEdited();
    void scrollToEndIfFollowing();

    QListView *m_view = nullptr;
    QLineEdit *m_filterEdit = nullptr;
    QComboBox *m_streamCombo = nullptr;
    QLineEdit *m_searchEdit = nullptr;
    QToolButton *m_followButton = nullptr;
    QLabel *m_statusLabel = nullptr;
    QRegularExpression m_filterExpression;
    bool m_follow = true;
    bool m_scrolling = false;
};

} // namespace rankdeck
