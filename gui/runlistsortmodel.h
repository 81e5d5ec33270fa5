// SPDX-License-Identifier: GPL-3.0-or-later
//
// Orders core's run list for the side panel: runs in progress on top, then the history in the
// model's own order (newest first).
#pragma once

#include <QSortFilterProxyModel>

namespace rankdeck {

class RunListSortModel : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit RunListSortModel(QObject *parent = nullptr);

protected:
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;
};

} // namespace rankdeck
