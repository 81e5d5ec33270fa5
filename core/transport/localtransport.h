// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs ranks as local processes. Each rank is started in its own session (setsid), so that it
// leads a process group and signals reach everything it started; when a rank ends, whatever it
// left in its group is killed, so no orphan survives a run. Signals go through a HeldProcess
// (util/processidentity.h), taken while the rank cannot have been reaped: once it is, its pid
// and group id may be someone else's, and nothing is sent to them. Output is handed on in batches,
// at most every OutputBatchMs, in the order it arrived (see rankOutput's connection in the .cpp).
#pragma once

#include "transport/transport.h"
#include "util/processidentity.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QPointer>
#include <QTimer>

#include <memory>

class QProcess;

namespace rankdeck {

class LocalTransport : public Transport
{
    Q_OBJECT
public:
    explicit LocalTransport(QObject *parent = nullptr);
    ~LocalTransport() override;

    QString describe() const override;
    void prepare(const QString &localWorkerPath) override;
    QString workerPath(int nodeIndex) const override;
    void startRank(const RankLaunchSpec &spec) override;
    void writeStdin(int rank, const QByteArray &data) override;
    void closeStdin(int rank) override;
    void signalRank(int rank, int signal) override;
    qint64 rankStartTicks(int rank) const override;

    // Kills every process group still running (used when the owner goes away).
    void killAll();

    // How long output may wait to be handed on with what follows it.
    static constexpr int OutputBatchMs = 10;

private:
    struct Rank
    {
        QPointer<QProcess> process;
        std::shared_ptr<HeldProcess> held; // from `started` on
        bool exited = false;
    };
    struct Pending
    {
        int rank = 0;
        StreamKind stream = StreamKind::Stdout;
        QByteArray bytes;
    };
    void onFinished(int rank);
    void queueOutput(int rank, StreamKind stream, const QByteArray &chunk);
    // Hands on what is queued, in order; rank >= 0: that rank's only (it is ending).
    void flushOutput(int rank = -1);

    QString m_workerPath;
    QHash<int, Rank> m_ranks;
    QList<Pending> m_pending;
    // Each rank's last entry in m_pending: ranks print in turn, so a rank's next chunk joins
    // its own entry, not only the list's last (one write of the record per rank and batch).
    QHash<int, qsizetype> m_lastPending;
    QTimer m_flushTimer;
};

} // namespace rankdeck
