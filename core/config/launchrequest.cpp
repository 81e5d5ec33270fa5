// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/launchrequest.h"

#include "config/metricpattern.h"
#include "config/profile.h"
#include "config/syncmanifest.h"
#include "util/translation.h"

#include <QDir>
#include <QFileInfo>

namespace rankdeck {

namespace {

bool isAbsoluteOrHome(const QString &path)
{
    return QDir::isAbsolutePath(path) || path.startsWith(QLatin1Char('~'));
}

} // namespace

QList<LaunchRequest::Problem> LaunchRequest::problems() const
{
    QList<Problem> out;
    if (runsProgram && (command.isEmpty() || command.first().trimmed().isEmpty()))
        out.append({Field::Program, tr("no program to run on every rank, e.g. python3 train.py")});
    for (const QString &kv : environment) {
        if (kv.indexOf(QLatin1Char('=')) <= 0)
            out.append({Field::Environment, tr("\"%1\" is not NAME=VALUE").arg(kv)});
    }
    for (const QString &spec : metricPatterns) {
        MetricPattern pattern;
        QString error;
        if (!parseMetricPattern(spec, &pattern, &error))
            out.append({Field::Metric, error});
    }
    if (!syncFolder.isEmpty() && isAbsoluteOrHome(workingDirectory))
        // Inside the copy, whose place on a node this launcher does not choose.
        out.append({Field::WorkingDirectory,
                    tr("with a sync folder, \"%1\" must be a folder inside it (a relative path)")
                        .arg(workingDirectory)});
    if (!syncFolder.isEmpty()) {
        const QFileInfo folder(syncFolder);
        if (!folder.exists())
            out.append({Field::SyncFolder, tr("\"%1\" does not exist").arg(syncFolder)});
        else if (!folder.isDir())
            out.append({Field::SyncFolder, tr("\"%1\" is not a directory").arg(syncFolder)});
        else if (!folder.isReadable())
            out.append({Field::SyncFolder, tr("\"%1\" is not readable").arg(syncFolder)});
        qint64 bytes = 0;
        if (!syncLimit.isEmpty() && !SyncManifest::parseSize(syncLimit, &bytes))
            out.append(
                {Field::SyncLimit, tr("\"%1\" is not a size such as 500M or 2G").arg(syncLimit)});
    }
    if (!runsProgram) {
        // The launcher gives every rank its own; a second one would make ranks disagree.
        for (const QString &arg : command) {
            if (arg == QLatin1String("--rank") || arg == QLatin1String("--world-size") ||
                arg == QLatin1String("--master-port") || arg == QLatin1String("--master-addr"))
                out.append({Field::WorkerArguments,
                            tr("%1 is set by the launcher for every rank").arg(arg)});
        }
    }
    if (name.contains(QLatin1Char('/')))
        out.append({Field::Name, tr("\"%1\" must not contain '/'").arg(name)});
    return out;
}

QString LaunchRequest::text(const Problem &problem, const QString &fieldName)
{
    if (problem.field == Field::Metric)
        return problem.message;
    return fieldName + QStringLiteral(": ") + problem.message;
}

TrainingConfig LaunchRequest::config(const Profile &profile) const
{
    TrainingConfig c;
    c.name = name;
    c.maxRestarts = maxRestarts;
    c.flightRecorder = flightRecorder;
    if (!runsProgram) {
        c.workerArguments = command;
        return c;
    }
    c.program = command;
    c.warmPython = warmPython;
    c.metricPatterns = metricPatterns;
    c.tensorBoardDir = tensorBoardDir;
    for (const QString &kv : environment) {
        const qsizetype eq = kv.indexOf(QLatin1Char('='));
        if (eq > 0)
            c.environment.insert(kv.left(eq), kv.mid(eq + 1));
    }
    if (!syncFolder.isEmpty()) {
        c.syncDirectory = QFileInfo(syncFolder).absoluteFilePath();
        qint64 bytes = 0;
        if (!syncLimit.isEmpty() && SyncManifest::parseSize(syncLimit, &bytes))
            // 0 means no limit: the transport takes any negative limit as none.
            c.syncLimitBytes = bytes == 0 ? -1 : bytes;
    }
    c.workingDirectory = workingDirectory;
    if (!c.workingDirectory.isEmpty() && c.syncDirectory.isEmpty() && profile.isLocal())
        // A local run starts here: a relative directory means one below the current one.
        c.workingDirectory = QFileInfo(c.workingDirectory).absoluteFilePath();
    return c;
}

LaunchRequest LaunchRequest::of(const TrainingConfig &c)
{
    LaunchRequest r;
    r.name = c.name;
    r.maxRestarts = c.maxRestarts;
    r.flightRecorder = c.flightRecorder;
    r.runsProgram = c.isProgram();
    r.command = r.runsProgram ? c.program : c.workerArguments;
    if (!r.runsProgram)
        return r;
    r.warmPython = c.warmPython;
    r.metricPatterns = c.metricPatterns;
    r.tensorBoardDir = c.tensorBoardDir;
    for (auto it = c.environment.cbegin(); it != c.environment.cend(); ++it)
        r.environment << it.key() + QLatin1Char('=') + it.value();
    r.syncFolder = c.syncDirectory;
    if (c.syncLimitBytes != 0)
        r.syncLimit =
            c.syncLimitBytes < 0 ? QStringLiteral("0") : QString::number(c.syncLimitBytes);
    r.workingDirectory = c.workingDirectory;
    return r;
}

QStringList LaunchRequest::cliArguments(const QString &profileName, int ranksPerNode) const
{
    QStringList a{QStringLiteral("launch"), QStringLiteral("--profile"), profileName};
    if (ranksPerNode > 0)
        a << QStringLiteral("--nproc-per-node") << QString::number(ranksPerNode);
    if (!name.isEmpty())
        a << QStringLiteral("--name") << name;
    if (maxRestarts > 0)
        a << QStringLiteral("--max-restarts") << QString::number(maxRestarts);
    if (!flightRecorder)
        a << QStringLiteral("--no-flight-recorder");
    if (runsProgram) {
        a << QStringLiteral("--exec");
        if (!workingDirectory.isEmpty())
            a << QStringLiteral("--workdir") << workingDirectory;
        for (const QString &kv : environment)
            a << QStringLiteral("--env") << kv;
        for (const QString &m : metricPatterns)
            a << QStringLiteral("--metric") << m;
        if (!tensorBoardDir.isEmpty())
            a << QStringLiteral("--tensorboard-dir") << tensorBoardDir;
        if (!syncFolder.isEmpty())
            a << QStringLiteral("--sync") << syncFolder;
        if (!syncLimit.isEmpty())
            a << QStringLiteral("--sync-limit") << syncLimit;
        if (warmPython)
            a << QStringLiteral("--warm");
    }
    if (!command.isEmpty())
        a << QStringLiteral("--") << command;
    return a;
}

} // namespace rankdeck
