// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/ranktablemodel.h"

#include "run/runcontroller.h"

#include <QDateTime>

namespace rankdeck {

RankTableModel::RankTableModel(QObject *parent) : QAbstractTableModel(parent)
{
    m_timer.setInterval(250);
    connect(&m_timer, &QTimer::timeout, this, &RankTableModel::flush);
}

void RankTableModel::setController(RunController *controller)
{
    beginResetModel();
    if (m_controller)
        m_controller->disconnect(this);
    m_controller = controller;
    m_rows = controller ? controller->rankStatuses() : QList<RankStatus>();
    m_runState = controller ? controller->state() : RunState::Preparing;
    m_facts = controller ? controller->verdictFacts(m_straggler) : RunVerdictFacts();
    m_dirty.clear();
    endResetModel();
    if (!controller) {
        m_timer.stop();
        return;
    }
    connect(controller, &RunController::rankChanged, this,
            [this](int rank) { m_dirty.insert(rank); });
    connect(controller, &QObject::destroyed, this, [this] { setController(nullptr); });
    // The heartbeat column ages even without events.
    m_timer.start();
}

void RankTableModel::setUpdateInterval(int ms)
{
    m_timer.setInterval(ms);
}

void RankTableModel::setStraggler(int rank)
{
    m_straggler = rank;
}

void RankTableModel::flush()
{
    if (!m_controller)
        return;
    const QList<RankStatus> now = m_controller->rankStatuses();
    m_runState = m_controller->state();
    m_facts = m_controller->verdictFacts(m_straggler);
    if (now.size() != m_rows.size()) {
        beginResetModel();
        m_rows = now;
        m_dirty.clear();
        endResetModel();
        return;
    }
    m_rows = now;
    m_dirty.clear();
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

int RankTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RankTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RankTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size() || index.column() >= ColumnCount)
        return {};
    const RankStatus &s = m_rows[index.row()];
    switch (role) {
    case RankStateRole:
        return int(s.state);
    case RootCauseRole:
        return s.rootCause;
    case HungRole:
        return s.hung || s.silent;
    case ShownStateRole:
        return int(shownRankState(s, m_runState, m_facts));
    case ToneRole:
        return int(shownStateTone(shownRankState(s, m_runState, m_facts)));
    case UrgencyRole: {
        const ShownState shown = shownRankState(s, m_runState, m_facts);
        const bool central =
            s.rootCause || s.rank == m_facts.rootCauseRank || m_facts.culprits.contains(s.rank);
        return qint64(shownStateUrgency(shown, central)) * 1'000'000 + s.rank;
    }
    case Qt::TextAlignmentRole:
        if (index.column() != HostColumn && index.column() != StateColumn &&
            index.column() != DetailColumn && index.column() != InCollectiveColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        break;
    }
    const bool sort = role == SortRole;
    if (role != Qt::DisplayRole && !sort && role != Qt::ToolTipRole)
        return {};
    const qint64 nowUs = QDateTime::currentMSecsSinceEpoch() * 1000;
    switch (Column(index.column())) {
    case RankColumn:
        return s.rank;
    case HostColumn:
        return s.host;
    case StateColumn: {
        if (sort)
            return data(index, UrgencyRole);
        return shownRankText(s, m_runState, m_facts);
    }
    case StepColumn:
        if (sort)
            return s.shownStep();
        if (s.shownStep() < 0)
            return QString();
        return s.totalSteps > 0 ? tr("%1 / %2").arg(s.shownStep()).arg(s.totalSteps)
                                : QString::number(s.shownStep());
    case LossColumn:
        if (sort)
            return s.loss;
        return qIsNaN(s.loss) ? QString() : QString::number(s.loss, 'g', 6);
    case ThroughputColumn:
        if (sort)
            return s.samplesPerSec;
        return s.samplesPerSec > 0 ? QString::number(s.samplesPerSec, 'f', 0) : QString();
    case HeartbeatColumn: {
        if (s.lastHeartbeatUs <= 0 || isTerminal(s.state) || s.state == RankState::Pending)
            return sort ? QVariant(qint64(-1)) : QVariant(QString());
        const qint64 age = std::max<qint64>(0, nowUs - s.lastHeartbeatUs);
        if (sort)
            return age;
        return tr("%1 s ago").arg(age / 1e6, 0, 'f', 1);
    }
    case PidColumn:
        if (sort)
            return s.pid;
        return s.pid > 0 ? QString::number(s.pid) : QString();
    case InCollectiveColumn:
        return s.inCollective;
    case DetailColumn:
        return s.detail;
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RankTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case RankColumn:
        return tr("Rank");
    case HostColumn:
        return tr("Host");
    case StateColumn:
        return tr("State");
    case StepColumn:
        return tr("Step");
    case LossColumn:
        return tr("Loss");
    case ThroughputColumn:
        return tr("Samples/s");
    case HeartbeatColumn:
        return tr("Heartbeat");
    case PidColumn:
        return tr("PID");
    case InCollectiveColumn:
        return tr("In collective");
    case DetailColumn:
        return tr("Detail");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace rankdeck
