// SPDX-License-Identifier: GPL-3.0-or-later
//
// Colours the rank table's state by the one state model's tone (statestyle.h) and gives it the
// state's icon; the root cause's row is bold. Read at paint time, so the colours follow the light
// or dark palette.
#pragma once

#include <QStyledItemDelegate>

namespace rankdeck {

class RankStateDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override;
};

} // namespace rankdeck
