// SPDX-License-Identifier: GPL-3.0-or-later
//
// The stacks of a Failures entry as a tree (StackFrameModel): a stack per parent row, a frame
// per child row, columns resizable. A row is one line whatever the page's Wrap (a tree view
// does not grow a row for wrapped text, it cuts it): a file path is elided in its middle, where
// a long path is least telling, and every cell reads whole in its tooltip. Ctrl+C (and the context
// menu's Copy) copies the selected rows as the rank printed them; Enter or a double-click activates
// a frame (QAbstractItemView::activated), which the page turns into "open it".
#pragma once

#include "stackframemodel.h"

#include <QTreeView>

class QAction;

namespace rankdeck {

class StackFrameView : public QTreeView
{
    Q_OBJECT
public:
    explicit StackFrameView(QWidget *parent = nullptr);

    StackFrameModel *frameModel() const { return m_model; }
    // Shows the stacks, all expanded; the columns fit their text (no wider than about 2/5 of the
    // view) until the user sizes one.
    void setSections(const QList<StackSection> &sections);
    QAction *copyAction() const { return m_copyAction; }

public slots:
    void copySelection();

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void fitColumns();

    StackFrameModel *m_model = nullptr;
    QAction *m_copyAction = nullptr;
    bool m_fitPending = false; // the stacks shown were not measured yet
    bool m_fitting = false;
    bool m_userSized = false;
};

} // namespace rankdeck
