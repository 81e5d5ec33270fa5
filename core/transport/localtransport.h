// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs ranks as local processes. Each rank is started in its own session (setsid), so that it
// leads a process group and signals reach everything it started; when a rank ends, whatever it
// left in its group is killed, so no orphan survives a run. A rank's stdout and stderr are pipes
// read at most every OutputBatchMs while they trickle (RankOutputPipe).
#pragma once

#include "transport/transport.h"

#include <QHash>
#include <QPointer>

class QProcess;

namespace rankdeck {

class RankOutputPipe;

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

    // Kills every process group still running (used when the owner goes away).
    void killAll();

    // How long a rank's trickle of output may wait to be read with what follows it.
    static constexpr int OutputBatchMs = 10;

private:
    struct Rank
    {
        QPointer<QProcess> process;
        qint64 pid = 0;
        bool exited = false;
        QPointer<RankOutputPipe> out;
        QPointer<RankOutputPipe> err;
    };
    void onFinished(int rank);
    // Reads what the rank's pipes hold and lets them go (it ended, or never started).
    void closeOutput(Rank &rank);

    QString m_workerPath;
    QHash<int, Rank> m_ranks;
};

} // namespace rankdeck
