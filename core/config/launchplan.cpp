// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/launchplan.h"

#include "util/translation.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace rankdeck {

LaunchPlan LaunchPlan::create(const Profile &profile, const TrainingConfig &config,
                              const QString &runId, const QString &nodeRunDirectory)
{
    LaunchPlan plan;
    plan.m_runId = runId;
    plan.m_nodeRunDirectory = nodeRunDirectory;
    plan.m_profileEnvironment = profile.environment;
    if (profile.nodes.isEmpty()) {
        plan.m_error = tr("profile \"%1\" has no nodes").arg(profile.name);
        return plan;
    }
    int rank = 0;
    for (int n = 0; n < profile.nodes.size(); ++n) {
        const ProfileNode &node = profile.nodes[n];
        if (node.ranksPerNode < 1) {
            plan.m_error =
                tr("node %1 (%2): ranks per node must be at least 1").arg(n).arg(node.host);
            return plan;
        }
        // NCCL refuses two ranks of one communicator on the same GPU.
        if (node.gpusPerNode > 0 && node.ranksPerNode > node.gpusPerNode &&
            profile.backend != QLatin1String("gloo") &&
            !profile.environment.contains(QStringLiteral("CUDA_VISIBLE_DEVICES"))) {
            plan.m_error = tr("node %1 (%2): %3 ranks but %4 GPUs; NCCL needs one GPU per rank "
                              "(lower ranks per node or use backend \"gloo\")")
                               .arg(n)
                               .arg(node.host)
                               .arg(node.ranksPerNode)
                               .arg(node.gpusPerNode);
            return plan;
        }
        plan.m_gpusPerNode.append(node.gpusPerNode);
        for (int l = 0; l < node.ranksPerNode; ++l)
            plan.m_ranks.append(PlannedRank{rank++, n, l, node.ranksPerNode, node.host});
    }
    plan.m_nodeCount = int(profile.nodes.size());
    plan.m_masterAddress = profile.rendezvousAddress.isEmpty() ? profile.nodes.first().host
                                                               : profile.rendezvousAddress;
    if (profile.isLocal() && profile.rendezvousAddress.isEmpty())
        plan.m_masterAddress = QStringLiteral("127.0.0.1");

    plan.m_workingDirectory = config.workingDirectory;
    plan.m_programEnvironment = config.environment;
    if (config.isProgram()) {
        // rankdeck-supervisor runs the program; everything after -- is the user's, untouched.
        QStringList args{QStringLiteral("--control-stdin")};
        if (!nodeRunDirectory.isEmpty())
            args << QStringLiteral("--run-dir") << nodeRunDirectory;
        if (config.warmPython || profile.warmPython)
            args << QStringLiteral("--warm-python");
        if (!config.flightRecorder || !profile.flightRecorder)
            args << QStringLiteral("--no-flight-recorder");
        if (!config.tensorBoardDir.isEmpty())
            args << QStringLiteral("--tensorboard-dir") << config.tensorBoardDir;
        args << QStringLiteral("--") << programInSyncedDirectory(config);
        plan.m_arguments = args;
        plan.m_isProgram = true;
        return plan;
    }

    TrainingConfig c = config;
    // The launcher owns these: every rank gets the control channel and its node run directory.
    c.removeFlag(QStringLiteral("--control-stdin"));
    c.removeFlag(QStringLiteral("--run-dir"));
    for (const QString &flag :
         {QStringLiteral("--rank"), QStringLiteral("--world-size"), QStringLiteral("--local-rank"),
          QStringLiteral("--local-world-size"), QStringLiteral("--master-addr"),
          QStringLiteral("--master-port")}) {
        if (c.hasFlag(flag)) {
            plan.m_error = tr("worker flag %1 is set by the launcher; remove it").arg(flag);
            return plan;
        }
    }
    // The launcher's own flags go first: a value missing after the user's last flag is then
    // reported for that flag, not as a bad value taken from the launcher's next one.
    QStringList args;
    if (!c.hasFlag(QStringLiteral("--backend")) && profile.backend != QLatin1String("auto"))
        args << QStringLiteral("--backend") << profile.backend;
    if (!c.hasFlag(QStringLiteral("--rendezvous-timeout")))
        args << QStringLiteral("--rendezvous-timeout")
             << QString::number(profile.rendezvousTimeoutSec);
    if (!c.hasFlag(QStringLiteral("--collective-timeout")))
        args << QStringLiteral("--collective-timeout")
             << QString::number(profile.collectiveTimeoutSec);
    args << QStringLiteral("--control-stdin");
    if (!nodeRunDirectory.isEmpty())
        args << QStringLiteral("--run-dir") << nodeRunDirectory;
    if ((!config.flightRecorder || !profile.flightRecorder) &&
        !c.hasFlag(QStringLiteral("--no-flight-recorder")))
        args << QStringLiteral("--no-flight-recorder");
    args << c.workerArguments;
    plan.m_arguments = args;
    return plan;
}

QString LaunchPlan::flightRecorderOffReason(const Profile &profile, const TrainingConfig &config)
{
    if (!config.flightRecorder)
        return tr("flight recorder off (--no-flight-recorder)");
    if (!profile.flightRecorder)
        return tr("flight recorder off (the profile's flight_recorder = false)");
    if (!config.isProgram() &&
        config.workerArguments.contains(QStringLiteral("--no-flight-recorder")))
        return tr("flight recorder off (the worker's --no-flight-recorder)");
    for (const QMap<QString, QString> *env : {&profile.environment, &config.environment}) {
        if (env->value(QStringLiteral("RANKDECK_FLIGHT_RECORDER")) == QLatin1String("0"))
            return tr("flight recorder off (RANKDECK_FLIGHT_RECORDER=0)");
        if (env->value(QStringLiteral("TORCH_FR_BUFFER_SIZE")) == QLatin1String("0"))
            return tr("flight recorder off (TORCH_FR_BUFFER_SIZE=0)");
    }
    return QString();
}

QStringList LaunchPlan::programInSyncedDirectory(const TrainingConfig &config)
{
    if (config.syncDirectory.isEmpty())
        return config.program;
    // Relative to where the program runs, which is the copy (or a directory below it).
    const QDir from(LaunchPlan::workingDirectoryIn(config.syncDirectory, config.workingDirectory));
    const QString prefix = config.syncDirectory + QLatin1Char('/');
    QStringList out;
    for (const QString &word : config.program) {
        if (QDir::isAbsolutePath(word) && word.startsWith(prefix) && QFileInfo::exists(word)) {
            QString rel = from.relativeFilePath(word);
            // "train.py" would be looked up in PATH as a program; "./train.py" is the file.
            if (out.isEmpty() && !rel.contains(QLatin1Char('/')))
                rel.prepend(QStringLiteral("./"));
            out << rel;
        } else {
            out << word;
        }
    }
    return out;
}

QString LaunchPlan::workingDirectoryIn(const QString &syncRoot, const QString &workingDirectory)
{
    if (workingDirectory.isEmpty() || workingDirectory == QLatin1String("."))
        return syncRoot;
    return syncRoot + QLatin1Char('/') + workingDirectory;
}

RankLaunchSpec LaunchPlan::spec(int rank, const QString &program, int masterPort, bool resume) const
{
    const PlannedRank &p = m_ranks[rank];
    RankLaunchSpec s;
    s.rank = rank;
    s.nodeIndex = p.nodeIndex;
    s.program = program;
    s.arguments = m_arguments;
    // The worker's --resume goes before the user's flags for the same reason as the others.
    if (resume && !s.arguments.contains(QStringLiteral("--resume"))) {
        if (m_isProgram)
            s.arguments << QStringLiteral("--resume");
        else
            s.arguments.prepend(QStringLiteral("--resume"));
    }
    s.nodeRunDirectory = m_nodeRunDirectory;
    s.workingDirectory = m_workingDirectory;

    QHash<QString, QString> &env = s.environment;
    // NCCL defaults (async error handling, flight recorder dumped into --run-dir) are the
    // worker's own; profile variables override them.
    // GPU policy: a node without GPUs in the profile runs on CPU even when CUDA is present, so
    // that a CPU profile behaves the same everywhere; otherwise all of the node's GPUs are
    // visible and the worker picks cuda:LOCAL_RANK.
    const int gpus = m_gpusPerNode.value(p.nodeIndex);
    if (gpus == 0) {
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QString());
    } else {
        QStringList ids;
        for (int i = 0; i < gpus; ++i)
            ids << QString::number(i);
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), ids.join(QLatin1Char(',')));
    }
    for (auto it = m_profileEnvironment.cbegin(); it != m_profileEnvironment.cend(); ++it)
        env.insert(it.key(), it.value());
    for (auto it = m_programEnvironment.cbegin(); it != m_programEnvironment.cend(); ++it)
        env.insert(it.key(), it.value());
    // The torchrun contract last, so that no profile variable can break the rendezvous.
    env.insert(QStringLiteral("RANK"), QString::number(rank));
    env.insert(QStringLiteral("WORLD_SIZE"), QString::number(worldSize()));
    env.insert(QStringLiteral("LOCAL_RANK"), QString::number(p.localRank));
    env.insert(QStringLiteral("LOCAL_WORLD_SIZE"), QString::number(p.localWorldSize));
    env.insert(QStringLiteral("GROUP_RANK"), QString::number(p.nodeIndex));
    env.insert(QStringLiteral("GROUP_WORLD_SIZE"), QString::number(m_nodeCount));
    env.insert(QStringLiteral("MASTER_ADDR"), m_masterAddress);
    env.insert(QStringLiteral("MASTER_PORT"), QString::number(masterPort));
    env.insert(QStringLiteral("RANKDECK_RUN_ID"), m_runId);
    env.insert(QStringLiteral("RANKDECK_CONTROL"), QStringLiteral("stdin"));
    return s;
}

} // namespace rankdeck
