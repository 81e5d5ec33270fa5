// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankstatedelegate.h"

#include "models/ranktablemodel.h"
#include "record/runstate.h"
#include "run/runcontroller.h" // ranktablemodel.h holds a QPointer<RunController>

namespace rankdeck {

void RankStateDelegate::initStyleOption(QStyleOptionViewItem *option,
                                        const QModelIndex &index) const
{
    QStyledItemDelegate::initStyleOption(option, index);
    const QVariant stateValue = index.data(RankTableModel::RankStateRole);
    if (!stateValue.isValid())
        return;
    const bool dark = option->palette.color(QPalette::Base).lightness() < 128;
    const auto state = RankState(stateValue.toInt());
    QColor color;
    switch (state) {
    case RankState::Running:
        color = dark ? QColor(0x7e, 0xe7, 0x87) : QColor(0x1a, 0x7f, 0x37);
        break;
    case RankState::Finished:
        color = dark ? QColor(0x79, 0xc0, 0xff) : QColor(0x09, 0x69, 0xda);
        break;
    case RankState::Failed:
    case RankState::Lost:
        color = dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xcf, 0x22, 0x2e);
        break;
    case RankState::Stopped:
        color = option->palette.color(QPalette::PlaceholderText);
        break;
    default:
        break;
    }
    if (index.data(RankTableModel::HungRole).toBool())
        color = dark ? QColor(0xe3, 0xb3, 0x41) : QColor(0x9a, 0x67, 0x00);
    if (color.isValid() && index.column() == RankTableModel::StateColumn)
        option->palette.setColor(QPalette::Text, color);
    if (index.data(RankTableModel::RootCauseRole).toBool())
        option->font.setBold(true);
}

} // namespace rankdeck
