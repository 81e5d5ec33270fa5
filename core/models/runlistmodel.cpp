// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/runlistmodel.h"

#include "run/runmanager.h"

#include <QDateTime>

namespace rankdeck {

RunListModel::RunListModel(RunManager *manager, QObject *parent)
    : QAbstractTableModel(parent), m_manager(manager)
{
    if (manager) {
        connect(manager, &RunManager::historyChanged, this, &RunListModel::reload);
        m_runs = manager->history();
    }
}

void RunListModel::reload()
{
    if (!m_manager)
        return;
    const QList<RunInfo> next = m_manager->history();
    bool sameRows = next.size() == m_runs.size();
    for (int i = 0; sameRows && i < next.size(); ++i)
        sameRows = next[i].id == m_runs[i].id;
    if (!sameRows) {
        // Runs come and go at the top; a reset keeps it simple and the list is short.
        beginResetModel();
        m_runs = next;
        endResetModel();
        return;
    }
    m_runs = next;
    if (!m_runs.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_runs.size()) - 1, ColumnCount - 1));
}

int RunListModel::rowOf(const QString &runId) const
{
    for (int i = 0; i < m_runs.size(); ++i)
        if (m_runs[i].id == runId)
            return i;
    return -1;
}

int RunListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_runs.size());
}

int RunListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunListModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_runs.size() || index.column() >= ColumnCount)
        return {};
    const RunInfo &r = m_runs[index.row()];
    switch (role) {
    case RunIdRole:
        return r.id;
    case DirectoryRole:
        return r.directory;
    case RunStateRole:
        return int(r.state);
    case LauncherGoneRole:
        return r.launcherGone;
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        break;
    default:
        return {};
    }
    switch (Column(index.column())) {
    case NameColumn:
        return r.name;
    case StateColumn: {
        QString s = runStateLabel(r.state);
        if (r.launcherGone)
            s += tr(" (launcher gone)");
        if (r.attempt > 0)
            s += tr(" (restart %1)").arg(r.attempt);
        return s;
    }
    case RanksColumn:
        // "ranks 0–16, 18–511 finished; rank 17 failed (exit 1, root cause)": which ranks
        // stand out, without opening the run.
        if (role == Qt::ToolTipRole && !r.rankSummary.isEmpty())
            return r.rankSummary;
        return r.worldSize;
    case StartedColumn:
        return r.createdUs > 0 ? QDateTime::fromMSecsSinceEpoch(r.createdUs / 1000)
                                     .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                               : QString();
    case DurationColumn: {
        if (r.endedUs <= 0 || r.createdUs <= 0)
            return QString();
        const double s = (r.endedUs - r.createdUs) / 1e6;
        return s < 120 ? tr("%1 s").arg(s, 0, 'f', 1) : tr("%1 min").arg(s / 60, 0, 'f', 1);
    }
    case RootCauseColumn:
        return r.rootCause;
    case IdColumn:
        return r.id;
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case NameColumn:
        return tr("Name");
    case StateColumn:
        return tr("State");
    case RanksColumn:
        return tr("Ranks");
    case StartedColumn:
        return tr("Started");
    case DurationColumn:
        return tr("Duration");
    case RootCauseColumn:
        return tr("Root cause");
    case IdColumn:
        return tr("Run id");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace rankdeck
