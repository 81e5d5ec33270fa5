// SPDX-License-Identifier: GPL-3.0-or-later
//
// A "slurm" profile's [slurm] table, typed: where sbatch runs and what the job asks for. A
// Profile holds the table as its kind's section (Profile::section); code of this folder reads it
// with of() and writes it with applyTo(). Its fields, their checks and its `profiles add` flags are
// the kind's (SlurmKind).
#pragma once

#include "config/profileerror.h"
#include "config/profilekind.h"
#include "config/profilenode.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct Profile;

// The ranks' nodes are Slurm's choice; Profile::nodes then holds `nodes` placeholders (host
// "slurm node I", nprocPerNode ranks each) so that the launch plan and the views count ranks as
// for any profile.
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

    // The [slurm] table's fields: keys, types, ranges, defaults, which are always written.
    static QList<ProfileField> fields();
    static SlurmSettings fromSection(const QJsonObject &section);
    QJsonObject toSection() const;
    // A profile's settings (defaults when it has no [slurm] table).
    static SlurmSettings of(const Profile &profile);
    // Makes the profile a slurm one with these settings and their placeholder nodes.
    void applyTo(Profile *profile) const;
    // The placeholder nodes (see above).
    QList<ProfileNode> placeholderNodes() const;
    // What the values cannot be, each error naming its field ("slurm.time").
    QList<ProfileError> validate(const QString &fileName = QString()) const;
};

} // namespace rankdeck
