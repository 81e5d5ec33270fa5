// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/transport.h"

#include "util/clock.h"

#include <QMetaObject>

namespace rankdeck {
namespace {
// Queued connections across threads need the value types registered once.
const int s_registered = [] {
    qRegisterMetaType<rankdeck::StreamKind>();
    qRegisterMetaType<rankdeck::RankExit>();
    qRegisterMetaType<rankdeck::SyncStats>();
    qRegisterMetaType<rankdeck::NodeClock>();
    return 0;
}();
} // namespace

void Transport::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                           qint64 stderrBytes)
{
    Q_UNUSED(attempt);
    Q_UNUSED(stdoutBytes);
    Q_UNUSED(stderrBytes);
    RankExit exit;
    exit.exitCode = -1;
    exit.timeUs = nowUs();
    exit.detail = tr("failed to start: %1 cannot re-attach ranks").arg(describe());
    reportExitLater(spec.rank, exit);
}

void Transport::setSyncDirectory(const QString &localDirectory, qint64 limitBytes)
{
    m_syncDirectory = localDirectory;
    m_syncLimitBytes = limitBytes;
}

QString Transport::syncedDirectory(int nodeIndex) const
{
    Q_UNUSED(nodeIndex);
    return m_syncDirectory;
}

QString Transport::nodeReport(int nodeIndex) const
{
    Q_UNUSED(nodeIndex);
    return {};
}

QString Transport::checkSummary() const
{
    return tr("every node reachable");
}

QString Transport::nodeName(int nodeIndex) const
{
    return tr("node %1").arg(nodeIndex);
}

void Transport::reportExitLater(int rank, const RankExit &exit)
{
    QMetaObject::invokeMethod(
        this, [this, rank, exit] { emit rankExited(rank, exit); }, Qt::QueuedConnection);
}

} // namespace rankdeck
