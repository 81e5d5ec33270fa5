// SPDX-License-Identifier: GPL-3.0-or-later
//
// Cluster profiles: where ranks run and how to reach the nodes. Plain value types shared by the
// profile store, the launch plan, every transport and the front ends.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct ProfileNode
{
    QString host; // host name, address or ~/.ssh/config alias
    int port = 22;
    QString user;         // empty: ssh config / current user
    QString identityFile; // empty: agent and default keys
    int ranksPerNode = 1;
    int gpusPerNode = 0;

    bool operator==(const ProfileNode &) const = default;
};

// A "slurm" profile: where sbatch runs and what the job asks for. The ranks' nodes are Slurm's
// choice; Profile::nodes then holds `nodes` placeholders (host "slurm node I", nprocPerNode
// ranks each) so that the launch plan and the views count ranks as for any profile.
struct SlurmSettings
{
    QString login; // empty: sbatch on this machine; else an SSH host (alias, ProxyJump, keys)
    int port = 22;
    QString user;
    QString identityFile;
    QString partition; // empty: the cluster's default partition
    QString account;
    QString qos;
    QString timeLimit; // sbatch --time (e.g. "1:00:00"); empty: the partition's default
    int nodes = 1;
    int nprocPerNode = 1; // tasks (ranks) per node
    int gpusPerNode = 0;
    int cpusPerTask = 0; // 0: Slurm's default
    QStringList sbatchArgs;
    QString sharedDir; // on the cluster's shared file system; empty: ~/.cache/rankdeck

    QString effectiveSharedDir() const;
    // The login node as a profile node (for SshEndpoint::fromProfileNode).
    ProfileNode loginNode() const;
    bool operator==(const SlurmSettings &) const = default;
};

struct Profile
{
    int schemaVersion = 1;
    QString name;
    QString transport = QStringLiteral("local"); // "local" | "ssh" | "slurm"
    QList<ProfileNode> nodes;
    QString rendezvousAddress; // empty: first node
    QString workerDirectory;   // on nodes; empty: ~/.cache/rankdeck/worker
    QString libtorchPath;      // dir with libtorch .so on the nodes; empty or "python": detect
    QMap<QString, QString> environment;
    // "NAME=REGEX" scalars to find in the lines of a user's program on this cluster (as
    // `launch --metric`; the launch's own come after them).
    QStringList metricPatterns;
    // A user's Python program starts warm on this cluster (as `launch --warm`).
    bool warmPython = false;
    // torch's flight recorder on the ranks (`flight_recorder = false` turns it off, as
    // `launch --no-flight-recorder`).
    bool flightRecorder = true;
    QString backend = QStringLiteral("auto");
    int connectTimeoutSec = 10;
    int rendezvousTimeoutSec = 60;
    int heartbeatTimeoutSec = 10;
    int collectiveTimeoutSec = 300;
    // SSH ranks of a run that was not launched detachable are told to stop this long after their
    // launcher is gone (killed, or its link cut): the node sees the connection close, or hears
    // nothing from the launcher for that long. The launcher marks the node lost past the same
    // time. 4 s: with the stop itself they are gone within 5 s, and a 3 s stall of the link is
    // still survived. A detachable run (launch --detach) keeps its ranks through any outage.
    int orphanGraceSec = 4;
    SlurmSettings slurm; // transport "slurm" only

    bool isLocal() const;
    bool isSlurm() const;
    // A slurm profile: nodes from slurm.nodes × slurm.nprocPerNode (see SlurmSettings).
    void syncSlurmNodes();
    int worldSize() const;
    // Sets ranks per node on every node (the CLI's --nproc-per-node).
    void setRanksPerNode(int n);
    QString effectiveWorkerDirectory() const;

    QJsonObject toJson() const;
    static Profile fromJson(const QJsonObject &json);

    // This machine, N ranks as local processes, no SSH.
    static Profile builtinLocal(int nprocPerNode = 2);
    static QString builtinLocalName();

    bool operator==(const Profile &) const = default;
};

} // namespace rankdeck
