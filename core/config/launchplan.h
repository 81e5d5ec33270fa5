// SPDX-License-Identifier: GPL-3.0-or-later
//
// Maps a profile's nodes × ranks to one launch spec per rank with the torchrun environment
// (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, RANKDECK_RUN_ID), the GPU visibility policy and the profile's variables. The
// rest of torchrun's variables, which a user may set, are the supervisor's defaults.
//
// No port race: rank 0 is started with MASTER_PORT=0, binds a free port itself and reports it in
// its `store` event; the other ranks are then started with that port (spec(rank, …, port)).
#pragma once

#include "config/profile.h"
#include "config/ranklaunchspec.h"
#include "config/trainingconfig.h"

#include <QList>
#include <QString>

namespace rankdeck {

struct PlannedRank
{
    int rank = 0;
    int nodeIndex = 0;
    int localRank = 0;
    int localWorldSize = 1;
    QString host;
};

class LaunchPlan
{
public:
    // nodeRunDirectory: where ranks keep their complete output and crash reports on their node.
    static LaunchPlan create(const Profile &profile, const TrainingConfig &config,
                             const QString &runId, const QString &nodeRunDirectory);

    bool isValid() const { return m_error.isEmpty(); }
    QString error() const { return m_error; }

    int worldSize() const { return int(m_ranks.size()); }
    QString masterAddress() const { return m_masterAddress; }
    QString runId() const { return m_runId; }
    const QList<PlannedRank> &ranks() const { return m_ranks; }
    const PlannedRank &rank(int r) const { return m_ranks[r]; }

    // The spec of one rank. masterPort 0 asks rank 0 to pick the port (only valid for rank 0);
    // resume adds --resume for a restart from the last checkpoint.
    RankLaunchSpec spec(int rank, const QString &program, int masterPort,
                        bool resume = false) const;

    // The working directory of a program whose directory was synced: the copy (syncRoot) itself,
    // or workingDirectory below it.
    static QString workingDirectoryIn(const QString &syncRoot, const QString &workingDirectory);
    // The program's words with the local paths of existing files inside the synced directory made
    // relative to where it runs: "python3 /home/me/proj/train.py" with --sync /home/me/proj runs
    // "python3 train.py" in the node's copy, not a path that only this machine has.
    static QStringList programInSyncedDirectory(const TrainingConfig &config);
    // Why torch's flight recorder is off for this launch ("flight recorder off
    // (--no-flight-recorder)"), empty when it is on. Off: launch --no-flight-recorder, the
    // profile's flight_recorder = false, the worker's own --no-flight-recorder, or
    // RANKDECK_FLIGHT_RECORDER=0 / TORCH_FR_BUFFER_SIZE=0 in the profile's or launch's environment.
    static QString flightRecorderOffReason(const Profile &profile, const TrainingConfig &config);

private:
    QString m_error;
    QString m_runId;
    QString m_masterAddress;
    QString m_nodeRunDirectory;
    QList<PlannedRank> m_ranks;
    QList<int> m_gpusPerNode;
    int m_nodeCount = 0;
    QMap<QString, QString> m_profileEnvironment;
    QMap<QString, QString> m_programEnvironment; // launch --env, after the profile's
    QString m_workingDirectory;
    QStringList m_arguments;
    bool m_isProgram = false;
};

} // namespace rankdeck
