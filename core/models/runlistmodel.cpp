// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/runlistmodel.h"

#include "config/syncmanifest.h"
#include "record/runprune.h"
#include "run/runmanager.h"

#include <QDateTime>
#include <QLocale>
#include <QSet>

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
    // Runs come and go while the list is open (the runs directory is watched): rows are removed
    // and inserted one by one, so that a view's selection and scroll position stay put.
    QSet<QString> nextIds;
    for (const RunInfo &i : next)
        nextIds.insert(i.id);
    for (int row = int(m_runs.size()) - 1; row >= 0; --row) {
        if (!nextIds.contains(m_runs[row].id)) {
            beginRemoveRows({}, row, row);
            m_runs.removeAt(row);
            endRemoveRows();
        }
    }
    QSet<QString> kept;
    for (const RunInfo &i : std::as_const(m_runs))
        kept.insert(i.id);
    for (int row = 0; row < next.size();) {
        if (row < m_runs.size() && m_runs[row].id == next[row].id) {
            ++row;
            continue;
        }
        if (kept.contains(next[row].id)) {
            // The order itself changed (a clock stepped back): rare, and a reset is right.
            beginResetModel();
            m_runs = next;
            endResetModel();
            return;
        }
        // New runs next to each other come in one insertion: a long history is read a screen
        // at a time (RunManager), and the views above re-sort and re-filter once per block.
        int last = row;
        while (last + 1 < next.size() && !kept.contains(next[last + 1].id))
            ++last;
        beginInsertRows({}, row, last);
        for (int r = row; r <= last; ++r)
            m_runs.insert(r, next[r]);
        endInsertRows();
        row = last + 1;
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
    case ShownStateRole:
        return int(r.shown);
    case ToneRole:
        return int(shownStateTone(r.shown));
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        break;
    default:
        return {};
    }
    switch (Column(index.column())) {
    case NameColumn:
        // Two runs of one name prefix read alike once elided: the whole name and the run id.
        // What it holds on disk is read only here, on hover: a long history lists fast.
        if (role == Qt::ToolTipRole)
            return tr("%1\n%2\nstarted %3\non disk: %4")
                .arg(r.name, r.id,
                     QDateTime::fromMSecsSinceEpoch(r.createdUs / 1000)
                         .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                     SyncManifest::formatSize(RunPrune::diskBytes(r.directory)));
        return r.name;
    case StateColumn: {
        QString s = shownStateWord(r.shown);
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
    case StartedColumn: {
        if (r.createdUs <= 0)
            return QString();
        // Short enough for a side panel, whole on hover: the time for today's runs, the day
        // and time this year, the date before.
        const QDateTime started = QDateTime::fromMSecsSinceEpoch(r.createdUs / 1000);
        const QDate today = QDate::currentDate();
        if (role == Qt::ToolTipRole)
            return started.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        if (started.date() == today)
            return started.toString(QStringLiteral("HH:mm"));
        if (started.date().year() == today.year())
            return QLocale().toString(started, QStringLiteral("d MMM HH:mm"));
        return started.toString(QStringLiteral("yyyy-MM-dd"));
    }
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
