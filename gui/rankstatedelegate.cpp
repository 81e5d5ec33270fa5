// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankstatedelegate.h"

#include "models/ranktablemodel.h"
#include "record/runstate.h"
#include "run/runcontroller.h" // ranktablemodel.h holds a QPointer<RunController>
#include "statestyle.h"

#include <QWidget>

namespace rankdeck {

void RankStateDelegate::initStyleOption(QStyleOptionViewItem *option,
                                        const QModelIndex &index) const
{
    QStyledItemDelegate::initStyleOption(option, index);
    const QVariant shown = index.data(RankTableModel::ShownStateRole);
    if (!shown.isValid())
        return;
    if (index.column() == RankTableModel::StateColumn) {
        const auto tone = StateTone(index.data(RankTableModel::ToneRole).toInt());
        option->palette.setColor(QPalette::Text, toneColor(tone, option->palette));
        option->icon = stateIcon(ShownState(shown.toInt()),
                                 option->widget ? option->widget->style() : nullptr);
        option->features |= QStyleOptionViewItem::HasDecoration;
    }
    if (index.data(RankTableModel::RootCauseRole).toBool())
        option->font.setBold(true);
}

} // namespace rankdeck
