// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/trainingconfig.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>

namespace rankdeck {

namespace {
// Flags of the worker that take no value; everything else is "--name value".
bool isBareFlag(const QString &flag)
{
    static const QStringList bare = {QStringLiteral("--shuffle"), QStringLiteral("--resume"),
                                     QStringLiteral("--control-stdin"),
                                     QStringLiteral("--no-overlap"), QStringLiteral("--help")};
    return bare.contains(flag);
}
} // namespace

QString TrainingConfig::value(const QString &flag, const QString &fallback) const
{
    QString result = fallback;
    for (int i = 0; i < workerArguments.size(); ++i) {
        const QString &a = workerArguments[i];
        if (a == flag && !isBareFlag(flag) && i + 1 < workerArguments.size())
            result = workerArguments[++i];
        else if (a.startsWith(flag + QLatin1Char('=')))
            result = a.mid(flag.size() + 1);
    }
    return result;
}

bool TrainingConfig::hasFlag(const QString &flag) const
{
    return std::any_of(workerArguments.cbegin(), workerArguments.cend(), [&](const QString &a) {
        return a == flag || a.startsWith(flag + QLatin1Char('='));
    });
}

void TrainingConfig::removeFlag(const QString &flag)
{
    QStringList out;
    for (int i = 0; i < workerArguments.size(); ++i) {
        const QString &a = workerArguments[i];
        if (a == flag) {
            if (!isBareFlag(flag))
                ++i;
            continue;
        }
        if (a.startsWith(flag + QLatin1Char('=')))
            continue;
        out.append(a);
    }
    workerArguments = out;
}

void TrainingConfig::setValue(const QString &flag, const QString &v)
{
    removeFlag(flag);
    workerArguments.append(flag);
    if (!isBareFlag(flag))
        workerArguments.append(v);
}

QString TrainingConfig::programName(const QStringList &program)
{
    if (program.isEmpty())
        return QString();
    QString base = program.first().section(QLatin1Char('/'), -1);
    // Through an interpreter every run would be called "python": the script says what it is.
    static const QRegularExpression interpreter(
        QStringLiteral("^(python[0-9.]*|pypy[0-9.]*|bash|sh)$"));
    if (!interpreter.match(base).hasMatch())
        return base;
    for (qsizetype i = 1; i < program.size(); ++i) {
        const QString &arg = program[i];
        if (arg == QLatin1String("-m") && i + 1 < program.size())
            return program[i + 1];
        // Options of the interpreter that take a value (python -X dev -W error script.py).
        if (arg == QLatin1String("-c"))
            return base;
        if (arg == QLatin1String("-X") || arg == QLatin1String("-W")) {
            ++i;
            continue;
        }
        if (arg.startsWith(QLatin1Char('-')))
            continue;
        QString script = arg.section(QLatin1Char('/'), -1);
        if (script.endsWith(QLatin1String(".py")) && script.size() > 3)
            script.chop(3);
        return script.isEmpty() ? base : script;
    }
    return base;
}

QString TrainingConfig::task() const
{
    if (isProgram())
        return programName(program);
    return value(QStringLiteral("--task"), QStringLiteral("linear"));
}

int TrainingConfig::totalSteps() const
{
    if (isProgram())
        return 0; // unknown: the program does not say
    bool ok = false;
    const int n = value(QStringLiteral("--steps")).toInt(&ok);
    return ok ? n : 100;
}

QString TrainingConfig::checkpointDir() const
{
    return value(QStringLiteral("--checkpoint-dir"));
}

QString TrainingConfig::effectiveName() const
{
    return name.isEmpty() ? task() : name;
}

QJsonObject TrainingConfig::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("name")] = name;
    o[QStringLiteral("worker_arguments")] = QJsonArray::fromStringList(workerArguments);
    o[QStringLiteral("max_restarts")] = maxRestarts;
    QJsonArray ranks;
    for (int r : consoleRanks)
        ranks.append(r);
    o[QStringLiteral("console_ranks")] = ranks;
    if (!flightRecorder)
        o[QStringLiteral("flight_recorder")] = false;
    if (isProgram()) {
        o[QStringLiteral("program")] = QJsonArray::fromStringList(program);
        o[QStringLiteral("working_directory")] = workingDirectory;
        QJsonObject env;
        for (auto it = environment.cbegin(); it != environment.cend(); ++it)
            env[it.key()] = it.value();
        o[QStringLiteral("environment")] = env;
        o[QStringLiteral("metric_patterns")] = QJsonArray::fromStringList(metricPatterns);
        if (warmPython)
            o[QStringLiteral("warm_python")] = true;
        if (!tensorBoardDir.isEmpty())
            o[QStringLiteral("tensorboard_dir")] = tensorBoardDir;
        if (!syncDirectory.isEmpty()) {
            o[QStringLiteral("sync_directory")] = syncDirectory;
            o[QStringLiteral("sync_limit_bytes")] = syncLimitBytes;
        }
    }
    return o;
}

TrainingConfig TrainingConfig::fromJson(const QJsonObject &o)
{
    TrainingConfig c;
    c.name = o.value(QStringLiteral("name")).toString();
    for (const QJsonArray items = o.value(QStringLiteral("worker_arguments")).toArray();
         const auto &v : items)
        c.workerArguments.append(v.toString());
    c.maxRestarts = o.value(QStringLiteral("max_restarts")).toInt();
    for (const QJsonArray items = o.value(QStringLiteral("console_ranks")).toArray();
         const auto &v : items)
        c.consoleRanks.append(v.toInt());
    for (const QJsonArray items = o.value(QStringLiteral("program")).toArray();
         const auto &v : items)
        c.program.append(v.toString());
    c.workingDirectory = o.value(QStringLiteral("working_directory")).toString();
    const QJsonObject env = o.value(QStringLiteral("environment")).toObject();
    for (auto it = env.constBegin(); it != env.constEnd(); ++it)
        c.environment.insert(it.key(), it.value().toString());
    for (const QJsonArray items = o.value(QStringLiteral("metric_patterns")).toArray();
         const auto &v : items)
        c.metricPatterns.append(v.toString());
    c.tensorBoardDir = o.value(QStringLiteral("tensorboard_dir")).toString();
    c.syncDirectory = o.value(QStringLiteral("sync_directory")).toString();
    c.syncLimitBytes = o.value(QStringLiteral("sync_limit_bytes")).toInteger();
    c.warmPython = o.value(QStringLiteral("warm_python")).toBool();
    c.flightRecorder = o.value(QStringLiteral("flight_recorder")).toBool(true);
    return c;
}

} // namespace rankdeck
