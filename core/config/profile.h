// SPDX-License-Identifier: GPL-3.0-or-later
//
// Cluster profiles: where ranks run and how to reach the nodes. Plain value types shared by the
// profile store, the launch plan, every transport and the front ends.
#pragma once

#include "config/profilenode.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct Profile
{
    int schemaVersion = 1;
    QString name;
    // A kind's name (ProfileKinds): "local", "ssh", "slurm", …
    QString transport = QStringLiteral("local");
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
    // The kind's own table ([slurm]), as ProfileKind::completeSection() makes it; empty for a
    // kind without one. Only code of the kind's folder reads it (through its own settings type).
    QJsonObject section;

    bool isLocal() const;
    // The kind picks the nodes itself (ProfileKind::choosesNodes(): Slurm).
    bool kindChoosesNodes() const;
    // Such a profile: its nodes made again from its table (ProfileKind::placeholderNodes()).
    void syncNodes();
    int worldSize() const;
    // Sets ranks per node on every node (the CLI's --nproc-per-node), and in the kind's table.
    void setRanksPerNode(int n);
    QString effectiveWorkerDirectory() const;

    QJsonObject toJson() const;
    static Profile fromJson(const QJsonObject &o);

    // This machine, N ranks as local processes, no SSH.
    static Profile builtinLocal(int nprocPerNode = 2);
    static QString builtinLocalName();

    bool operator==(const Profile &) const = default;
};

} // namespace rankdeck
