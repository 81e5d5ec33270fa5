// SPDX-License-Identifier: GPL-3.0-or-later
//
// Paints log rows: stderr in the error colour, the "N lines elided" marker dimmed and italic.
// A delegate (not a model role) so that the colours follow the system palette.
#pragma once

#include <QStyledItemDelegate>

namespace rankdeck {

class LogLineDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override;
};

} // namespace rankdeck
