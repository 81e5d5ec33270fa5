// SPDX-License-Identifier: GPL-3.0-or-later
//
// Colours the rank table by state (running green, failed red, root cause bold, hung amber),
// from core's RankStateRole, so that the colours follow the light or dark palette.
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
