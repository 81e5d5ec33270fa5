// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmkind.h"

#include "config/profile.h"
#include "transport/slurm/slurmsettings.h"
#include "transport/slurm/slurmtransport.h"
#include "util/translation.h"

#include <QCommandLineParser>

namespace rankdeck {

QString SlurmKind::name() const
{
    return QStringLiteral("slurm");
}

QString SlurmKind::displayName() const
{
    return tr("Slurm (sbatch)");
}

QList<ProfileField> SlurmKind::sectionFields() const
{
    return SlurmSettings::fields();
}

QList<ProfileError> SlurmKind::validateSection(const QJsonObject &section,
                                               const QString &fileName) const
{
    return SlurmSettings::fromSection(section).validate(fileName);
}

QList<ProfileNode> SlurmKind::placeholderNodes(const QJsonObject &section) const
{
    return SlurmSettings::fromSection(section).placeholderNodes();
}

void SlurmKind::setRanksPerNode(QJsonObject *section, int n) const
{
    SlurmSettings s = SlurmSettings::fromSection(*section);
    s.nprocPerNode = n;
    *section = s.toSection();
}

QString SlurmKind::nodesProblem(bool hasNodes, bool cli) const
{
    if (!hasNodes)
        return {};
    return cli ? tr("--node: Slurm chooses the nodes of a slurm profile; use --nodes N "
                    "(and --login HOST for the login node)")
               : tr("a slurm profile has no [[nodes]]: Slurm chooses them (set slurm.nodes "
                    "and slurm.nproc_per_node)");
}

QList<QCommandLineOption> SlurmKind::addOptions() const
{
    return {
        {QStringLiteral("slurm"), tr("A Slurm cluster: ranks run as one sbatch job.")},
        {QStringLiteral("login"),
         tr("Slurm: the login node that runs sbatch, over SSH (default: this machine)."),
         QStringLiteral("HOST[:PORT]")},
        {QStringLiteral("partition"), tr("Slurm: the partition (default: the cluster's)."),
         QStringLiteral("P")},
        {QStringLiteral("nodes"), tr("Slurm: nodes to allocate (default 1)."), QStringLiteral("N"),
         QStringLiteral("1")},
        {QStringLiteral("account"), tr("Slurm: the account to charge."), QStringLiteral("A")},
        {QStringLiteral("qos"), tr("Slurm: the quality of service."), QStringLiteral("Q")},
        {QStringLiteral("time"), tr("Slurm: the time limit (sbatch --time)."), QStringLiteral("T")},
        {QStringLiteral("cpus-per-task"), tr("Slurm: CPUs per rank."), QStringLiteral("N"),
         QStringLiteral("0")},
        {QStringLiteral("sbatch-arg"),
         tr("Slurm: one more sbatch option, e.g. --sbatch-arg=--exclusive (repeatable)."),
         QStringLiteral("ARG")},
        {QStringLiteral("shared-dir"),
         tr("Slurm: a directory on the cluster's shared file system (default "
            "~/.cache/rankdeck)."),
         QStringLiteral("DIR")},
    };
}

QString SlurmKind::selectingOption() const
{
    return QStringLiteral("slurm");
}

bool SlurmKind::applyOptions(const QCommandLineParser &parser, Profile *p, QString *error) const
{
    SlurmSettings s;
    if (parser.isSet(QStringLiteral("login"))) {
        const QString spec = parser.value(QStringLiteral("login"));
        QString why;
        if (!parseHostPort(spec, &s.login, &s.port, &why)) {
            *error = QStringLiteral("--login %1: %2").arg(spec, why);
            return false;
        }
    }
    // --user and --identity are the command's own (an SSH profile's nodes use them too).
    s.user = parser.value(QStringLiteral("user"));
    s.identityFile = parser.value(QStringLiteral("identity"));
    s.partition = parser.value(QStringLiteral("partition"));
    s.account = parser.value(QStringLiteral("account"));
    s.qos = parser.value(QStringLiteral("qos"));
    s.timeLimit = parser.value(QStringLiteral("time"));
    s.sbatchArgs = parser.values(QStringLiteral("sbatch-arg"));
    s.sharedDir = parser.value(QStringLiteral("shared-dir"));
    const struct
    {
        const char *option;
        int min, max;
        int *value;
    } numbers[] = {{"nodes", 1, 100000, &s.nodes},
                   {"nproc-per-node", 1, 4096, &s.nprocPerNode},
                   {"gpus-per-node", 0, 4096, &s.gpusPerNode},
                   {"cpus-per-task", 0, 100000, &s.cpusPerTask}};
    for (const auto &n : numbers) {
        const QString v = parser.value(QString::fromLatin1(n.option));
        bool ok = false;
        const int parsed = v.toInt(&ok);
        if (!ok || parsed < n.min || parsed > n.max) {
            *error = tr("--%1: \"%2\" is not a number from %3 to %4")
                         .arg(QString::fromLatin1(n.option), v)
                         .arg(n.min)
                         .arg(n.max);
            return false;
        }
        *n.value = parsed;
    }
    s.applyTo(p);
    return true;
}

Transport *SlurmKind::create(const Profile &profile, const QString &runId,
                             SshInteraction *interaction, QObject *parent) const
{
    return new SlurmTransport(profile, runId, interaction, parent);
}

} // namespace rankdeck
