// SPDX-License-Identifier: GPL-3.0-or-later
//
// A QLabel whose text changes several times a second (the ETA, the straggler analysis, the log
// view's line count) without laying out the page again each time. QLabel::setText() has its
// parent's layout invalidated, and the window's layout redone, on every change of text whatever
// its size: in a 64-rank bench_scale run these labels made most of the GUI's updateGeometry()
// calls (gdb), and at 512 ranks a relayout of the run page took up to 7 ms. Here the label sits
// in a box without a layout, which says its size itself, and only when the text needs more or
// less room than before (another line, or 8 more characters) does the page see a change.
#pragma once

#include <QWidget>

class QLabel;

namespace rankdeck {

class SteadyLabel : public QWidget
{
    Q_OBJECT
public:
    // The label keeps its name and its settings (word wrap, text format, interaction), so that
    // it is found and read as before.
    explicit SteadyLabel(QLabel *label, QWidget *parent = nullptr);

    QLabel *label() const { return m_label; }
    void setText(const QString &text);

    QSize sizeHint() const override { return m_hint; }
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    // The size the text needs now, widths in steps of 8 characters; a different one than before
    // tells the layout.
    void fitHint();

    QLabel *m_label;
    QSize m_hint;
};

} // namespace rankdeck
