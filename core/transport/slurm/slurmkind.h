// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "slurm" kind: its [slurm] table (SlurmSettings), its checks, its `profiles add` flags
// (--slurm, --login, --partition, …) and SlurmTransport. Slurm chooses the nodes: the profile has
// no [[nodes]], only placeholders made from the table.
#pragma once

#include "transport/transportkind.h"

namespace rankdeck {

class SlurmKind : public TransportKind
{
public:
    QString name() const override;
    QString displayName() const override;
    QList<ProfileField> sectionFields() const override;
    QList<ProfileError> validateSection(const QJsonObject &section,
                                        const QString &fileName) const override;
    bool choosesNodes() const override { return true; }
    QList<ProfileNode> placeholderNodes(const QJsonObject &section) const override;
    void setRanksPerNode(QJsonObject *section, int n) const override;
    QString nodesProblem(bool hasNodes, bool cli) const override;
    QList<QCommandLineOption> addOptions() const override;
    QString selectingOption() const override;
    bool applyOptions(const QCommandLineParser &parser, Profile *profile,
                      QString *error) const override;
    Transport *create(const Profile &profile, const QString &runId, SshInteraction *interaction,
                      QObject *parent) const override;
};

} // namespace rankdeck
