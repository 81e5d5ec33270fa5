// SPDX-License-Identifier: GPL-3.0-or-later
//
// Paints log rows: stderr in the error colour, the "N lines elided" marker dimmed and italic,
// a group of identical lines of several ranks behind a disclosure arrow (▸ collapsed, ▾ open),
// and each line of an open group indented with its own arrival time (the lines of a group differ
// only in rank and time). A delegate (not a model role) so that the colours follow the system
// palette, and so that copying a row never copies the arrow.
#pragma once

#include <QStyledItemDelegate>

namespace rankdeck {

class LogLineDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    // What a group row starts with; LogView takes a click on it as open or close.
    static QString disclosure(bool expanded);
    // Room the style leaves before the text, at least (QStyle::PM_FocusFrameHMargin + 1).
    static constexpr int kTextMargin = 4;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override;
};

} // namespace rankdeck
