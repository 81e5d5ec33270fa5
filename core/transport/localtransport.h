// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs ranks as local processes. Each rank is started in its own session (setsid), so that it
// leads a process group and signals reach everything it started; when a rank ends, whatever it
// left in its group is killed, so no orphan survives a run.
#pragma once

#include "transport/transport.h"

#include <QHash>
#include <QPointer>

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

    // Kills every process group still running (used when the owner goes away).
    void killAll();

private:
    struct Rank
    {
        QPointer<QProcess> process;
        qint64 pid = 0;
        bool exited = false;
    };
    void onFinished(int rank);

    QString m_workerPath;
    QHash<int, Rank> m_ranks;
};

} // namespace rankdeck
