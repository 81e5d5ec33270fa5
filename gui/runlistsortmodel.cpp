// SPDX-License-Identifier: GPL-3.0-or-later
#include "runlistsortmodel.h"

#include "models/runlistmodel.h"
#include "record/runstate.h"

namespace rankdeck {

RunListSortModel::RunListSortModel(QObject *parent) : QSortFilterProxyModel(parent)
{
    setDynamicSortFilter(true);
    sort(0, Qt::AscendingOrder);
}

bool RunListSortModel::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    auto active = [](const QModelIndex &index) {
        const QVariant state = index.data(RunListModel::RunStateRole);
        return state.isValid() && !isTerminal(RunState(state.toInt())) &&
               !index.data(RunListModel::LauncherGoneRole).toBool();
    };
    const bool l = active(left);
    const bool r = active(right);
    if (l != r)
        return l;
    return left.row() < right.row();
}

} // namespace rankdeck
