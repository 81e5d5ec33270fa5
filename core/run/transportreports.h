// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a run's transport reports about its nodes, besides the ranks, put into words for the
// launcher log and front ends: each node's preparation (a stage's start, each quarter and its
// end in the log; every percent to front ends), a --sync upload's totals, a file kept in the run
// record (the Slurm batch script), and a node's clock offset when first known or when it moved.
// The run keeps the clocks (state.json, the ranks' timestamps); this only says what changed.
#pragma once

#include "record/runrecord.h"
#include "transport/transport.h"
#include "util/nodeclock.h"

#include <QHash>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

namespace rankdeck {

class TransportReports : public QObject
{
    Q_OBJECT
public:
    // hosts: the profile's name for each node, by node index. record keeps the artifacts.
    TransportReports(const QStringList &hosts, const RunRecord *record, QObject *parent = nullptr);

    // Follows this transport's node reports (until it or this object goes).
    void follow(Transport *transport);

signals:
    // A line for the launcher log.
    void message(const QString &message);
    void nodeProgress(int nodeIndex, const QString &host, const QString &stage, int percent);
    void artifactKept(const QString &fileName);
    // Every measurement; clockNoted() after message() when it was worth a line (first known,
    // or moved by more than the measurement can tell).
    void clockMeasured(int nodeIndex, const rankdeck::NodeClock &clock);
    void clockNoted();

private:
    QString host(int node) const;
    void onSynced(int node, const SyncStats &stats);
    void onArtifact(const QString &fileName, const QByteArray &content);
    void onNodeProgress(int node, const QString &stage, int percent);
    void onNodeClock(int node, const NodeClock &clock);

    QStringList m_hosts;
    const RunRecord *m_record = nullptr;
    QHash<int, QString> m_progressNoted; // by node: the stage and quarter last written to the log
    QMap<int, NodeClock> m_clocks;       // by node: the last measurement, to tell a move
};

} // namespace rankdeck
