// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmsettings.h"

#include "config/profile.h"
#include "config/profilestore.h"
#include "util/printabletext.h"
#include "util/translation.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>

namespace rankdeck {

QString SlurmSettings::effectiveSharedDir() const
{
    return sharedDir.isEmpty() ? QStringLiteral("~/.cache/rankdeck") : sharedDir;
}

ProfileNode SlurmSettings::loginNode() const
{
    ProfileNode n;
    n.host = login;
    n.port = port;
    n.user = user;
    n.identityFile = identityFile;
    return n;
}

QList<ProfileField> SlurmSettings::fields()
{
    using F = ProfileField;
    // Text fields in the order ProfileStore::validate() checks them; the file's order is by key.
    return {
        {QStringLiteral("login"), F::String, QJsonValue(), 0, 0, true},
        {QStringLiteral("port"), F::Int, 22, 1, 65535, false},
        {QStringLiteral("user"), F::String, QJsonValue(), 0, 0, false},
        {QStringLiteral("identity_file"), F::String, QJsonValue(), 0, 0, false},
        {QStringLiteral("partition"), F::String, QJsonValue(), 0, 0, true},
        {QStringLiteral("account"), F::String, QJsonValue(), 0, 0, false},
        {QStringLiteral("qos"), F::String, QJsonValue(), 0, 0, false},
        {QStringLiteral("time"), F::String, QJsonValue(), 0, 0, false},
        {QStringLiteral("shared_dir"), F::String, QJsonValue(), 0, 0, false},
        {QStringLiteral("sbatch_args"), F::StringList, QJsonValue(), 0, 0, false},
        {QStringLiteral("nodes"), F::Int, 1, 1, 100000, true},
        {QStringLiteral("nproc_per_node"), F::Int, 1, 1, 4096, true},
        {QStringLiteral("gpus_per_node"), F::Int, 0, 0, 4096, true},
        {QStringLiteral("cpus_per_task"), F::Int, 0, 0, 100000, false},
    };
}

SlurmSettings SlurmSettings::fromSection(const QJsonObject &section)
{
    SlurmSettings s;
    s.login = section.value(QStringLiteral("login")).toString();
    s.port = section.value(QStringLiteral("port")).toInt(22);
    s.user = section.value(QStringLiteral("user")).toString();
    s.identityFile = section.value(QStringLiteral("identity_file")).toString();
    s.partition = section.value(QStringLiteral("partition")).toString();
    s.account = section.value(QStringLiteral("account")).toString();
    s.qos = section.value(QStringLiteral("qos")).toString();
    s.timeLimit = section.value(QStringLiteral("time")).toString();
    s.nodes = section.value(QStringLiteral("nodes")).toInt(1);
    s.nprocPerNode = section.value(QStringLiteral("nproc_per_node")).toInt(1);
    s.gpusPerNode = section.value(QStringLiteral("gpus_per_node")).toInt(0);
    s.cpusPerTask = section.value(QStringLiteral("cpus_per_task")).toInt(0);
    const QJsonArray sbatchArgs = section.value(QStringLiteral("sbatch_args")).toArray();
    for (const auto &v : sbatchArgs)
        s.sbatchArgs << v.toString();
    s.sharedDir = section.value(QStringLiteral("shared_dir")).toString();
    return s;
}

QJsonObject SlurmSettings::toSection() const
{
    QJsonObject j;
    j[QStringLiteral("login")] = login;
    j[QStringLiteral("port")] = port;
    j[QStringLiteral("user")] = user;
    j[QStringLiteral("identity_file")] = identityFile;
    j[QStringLiteral("partition")] = partition;
    j[QStringLiteral("account")] = account;
    j[QStringLiteral("qos")] = qos;
    j[QStringLiteral("time")] = timeLimit;
    j[QStringLiteral("nodes")] = nodes;
    j[QStringLiteral("nproc_per_node")] = nprocPerNode;
    j[QStringLiteral("gpus_per_node")] = gpusPerNode;
    j[QStringLiteral("cpus_per_task")] = cpusPerTask;
    j[QStringLiteral("sbatch_args")] = QJsonArray::fromStringList(sbatchArgs);
    j[QStringLiteral("shared_dir")] = sharedDir;
    return j;
}

SlurmSettings SlurmSettings::of(const Profile &profile)
{
    return fromSection(profile.section);
}

void SlurmSettings::applyTo(Profile *profile) const
{
    profile->transport = QStringLiteral("slurm");
    profile->section = toSection();
    profile->nodes = placeholderNodes();
}

QList<ProfileNode> SlurmSettings::placeholderNodes() const
{
    QList<ProfileNode> out;
    for (int i = 0; i < nodes; ++i) {
        ProfileNode n;
        n.host = QStringLiteral("slurm node %1").arg(i);
        n.ranksPerNode = nprocPerNode;
        n.gpusPerNode = gpusPerNode;
        out.append(n);
    }
    return out;
}

QList<ProfileError> SlurmSettings::validate(const QString &fileName) const
{
    const SlurmSettings &s = *this;
    QList<ProfileError> errors;
    auto add = [&](const QString &field, const QString &msg) {
        errors.append(ProfileError{fileName, 0, QStringLiteral("slurm.") + field, msg});
    };
    static const QRegularExpression word(QStringLiteral("^[^\\s'\"\\\\$`;|&<>]*\\z"));
    const std::pair<const char *, const QString *> words[] = {{"login", &s.login},
                                                              {"user", &s.user},
                                                              {"partition", &s.partition},
                                                              {"account", &s.account},
                                                              {"qos", &s.qos}};
    for (const auto &[name, value] : words)
        if (!word.match(*value).hasMatch())
            add(QLatin1String(name),
                tr("\"%1\" is not a valid name (no spaces, quotes or shell characters)")
                    .arg(printableLabel(*value, 80)));
    // What the word rule lets through but ssh would misread (a leading '-', control bytes).
    const auto reported = [&](const QString &field) {
        return std::any_of(errors.cbegin(), errors.cend(), [&](const ProfileError &e) {
            return e.field == QStringLiteral("slurm.") + field;
        });
    };
    if (const QString why = s.login.isEmpty() ? QString() : ProfileStore::hostProblem(s.login);
        !why.isEmpty() && !reported(QStringLiteral("login")))
        add(QStringLiteral("login"), why);
    if (const QString why = ProfileStore::userProblem(s.user);
        !why.isEmpty() && !reported(QStringLiteral("user")))
        add(QStringLiteral("user"), why);
    if (s.port < 1 || s.port > 65535)
        add(QStringLiteral("port"), tr("%1 is out of range (1 to 65535)").arg(s.port));
    if (s.nodes < 1)
        add(QStringLiteral("nodes"), tr("must be at least 1"));
    if (s.nprocPerNode < 1)
        add(QStringLiteral("nproc_per_node"), tr("must be at least 1"));
    if (s.gpusPerNode < 0)
        add(QStringLiteral("gpus_per_node"), tr("must not be negative"));
    if (s.cpusPerTask < 0)
        add(QStringLiteral("cpus_per_task"), tr("must not be negative"));
    // sbatch's forms: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or no limit.
    static const QRegularExpression time(QStringLiteral(
        "^(\\d+|\\d+:\\d+|\\d+:\\d+:\\d+|\\d+-\\d+|\\d+-\\d+:\\d+|\\d+-\\d+:\\d+:\\d+|"
        "UNLIMITED|unlimited|infinite|INFINITE)\\z"));
    if (!s.timeLimit.isEmpty() && !time.match(s.timeLimit).hasMatch())
        add(QStringLiteral("time"),
            tr("\"%1\" is not a Slurm time limit (minutes, H:MM:SS or D-HH:MM:SS)")
                .arg(printableLabel(s.timeLimit, 80)));
    // What the launcher sets itself; a user's value would break the one-task-per-rank step or
    // the files it follows.
    static const QStringList owned{QStringLiteral("--nodes"),
                                   QStringLiteral("-N"),
                                   QStringLiteral("--ntasks"),
                                   QStringLiteral("-n"),
                                   QStringLiteral("--ntasks-per-node"),
                                   QStringLiteral("--output"),
                                   QStringLiteral("-o"),
                                   QStringLiteral("--error"),
                                   QStringLiteral("-e"),
                                   QStringLiteral("--parsable"),
                                   QStringLiteral("--open-mode"),
                                   QStringLiteral("--wrap")};
    for (const QString &arg : s.sbatchArgs) {
        const QString flag = arg.section(QLatin1Char('='), 0, 0);
        if (!arg.startsWith(QLatin1Char('-')))
            add(QStringLiteral("sbatch_args"),
                tr("\"%1\" is not an sbatch option (options start with -)")
                    .arg(printableLabel(arg, 80)));
        else if (owned.contains(flag))
            add(QStringLiteral("sbatch_args"),
                tr("%1 is set by RankDeck from the profile; remove it").arg(flag));
    }
    return errors;
}

} // namespace rankdeck
