// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/transportreports.h"

#include "config/syncmanifest.h"

namespace rankdeck {

TransportReports::TransportReports(const QStringList &hosts, const RunRecord *record,
                                   QObject *parent)
    : QObject(parent), m_hosts(hosts), m_record(record)
{}

void TransportReports::follow(Transport *transport)
{
    connect(transport, &Transport::synced, this, &TransportReports::onSynced);
    connect(transport, &Transport::artifact, this, &TransportReports::onArtifact);
    connect(transport, &Transport::nodeClock, this, &TransportReports::onNodeClock);
    connect(transport, &Transport::nodeProgress, this, &TransportReports::onNodeProgress);
}

QString TransportReports::host(int node) const
{
    return node >= 0 && node < m_hosts.size() ? m_hosts[node] : QString();
}

void TransportReports::onSynced(int node, const SyncStats &stats)
{
    const QString files =
        stats.filesUploaded == 1 ? tr("1 file") : tr("%1 files").arg(stats.filesUploaded);
    QString line = tr("sync: %1: %2, %3 (%4 unchanged")
                       .arg(host(node), files, SyncManifest::formatSize(stats.bytesUploaded))
                       .arg(stats.filesUnchanged);
    if (stats.filesRemoved > 0)
        line += tr(", %1 removed").arg(stats.filesRemoved);
    emit message(line + tr(") in %1 ms, into %2").arg(stats.elapsedMs).arg(stats.directory));
}

void TransportReports::onArtifact(const QString &fileName, const QByteArray &content)
{
    QString error;
    if (m_record->writeArtifact(fileName, content, &error)) {
        emit message(tr("kept %1 in the run record").arg(fileName));
        emit artifactKept(fileName);
    } else {
        emit message(error);
    }
}

void TransportReports::onNodeProgress(int node, const QString &stage, int percent)
{
    // Front ends get every percent; the log a stage's start, each quarter and its end (an
    // upload noted every percent was 200 lines of a 2-node launch's output).
    const QString noted =
        stage + QLatin1Char('/') + QString::number(percent < 0 ? -1 : percent / 25);
    if (m_progressNoted.value(node) != noted) {
        m_progressNoted.insert(node, noted);
        emit message(percent >= 0 ? tr("node %1: %2 (%3%)").arg(node).arg(stage).arg(percent)
                                  : tr("node %1: %2").arg(node).arg(stage));
    }
    emit nodeProgress(node, host(node), stage, percent);
}

void TransportReports::onNodeClock(int node, const NodeClock &clock)
{
    const NodeClock before = m_clocks.value(node);
    m_clocks.insert(node, clock);
    emit clockMeasured(node, clock);
    // Noted when first known, and when it moved by more than the measurement can tell (a clock
    // stepped during the run); a refresh that agrees says nothing.
    const qint64 moved = qAbs(clock.offsetUs - before.offsetUs);
    if (before.isKnown() && clock.error == before.error &&
        moved <= qMax<qint64>(1000, qMax(clock.rttUs, before.rttUs)))
        return;
    emit message(tr("clock: node %1 (%2): %3").arg(node).arg(host(node), clock.describe()));
    emit clockNoted();
}

} // namespace rankdeck
