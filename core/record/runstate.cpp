// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runstate.h"

#include <QCoreApplication>
#include <QtNumeric>

namespace rankdeck {

namespace {
struct RankName
{
    RankState state;
    const char *name;
    const char *label;
};
constexpr RankName kRankNames[] = {
    {RankState::Pending, "pending", QT_TRANSLATE_NOOP("rankdeck::RankState", "pending")},
    {RankState::Starting, "starting", QT_TRANSLATE_NOOP("rankdeck::RankState", "starting")},
    {RankState::Rendezvous, "rendezvous", QT_TRANSLATE_NOOP("rankdeck::RankState", "rendezvous")},
    {RankState::Running, "running", QT_TRANSLATE_NOOP("rankdeck::RankState", "running")},
    {RankState::Finished, "finished", QT_TRANSLATE_NOOP("rankdeck::RankState", "finished")},
    {RankState::Failed, "failed", QT_TRANSLATE_NOOP("rankdeck::RankState", "failed")},
    {RankState::Stopped, "stopped", QT_TRANSLATE_NOOP("rankdeck::RankState", "stopped")},
    {RankState::Lost, "lost", QT_TRANSLATE_NOOP("rankdeck::RankState", "lost")},
};
struct RunName
{
    RunState state;
    const char *name;
    const char *label;
};
constexpr RunName kRunNames[] = {
    {RunState::Preparing, "preparing", QT_TRANSLATE_NOOP("rankdeck::RunState", "preparing")},
    {RunState::Starting, "starting", QT_TRANSLATE_NOOP("rankdeck::RunState", "starting")},
    {RunState::Running, "running", QT_TRANSLATE_NOOP("rankdeck::RunState", "running")},
    {RunState::Stopping, "stopping", QT_TRANSLATE_NOOP("rankdeck::RunState", "stopping")},
    {RunState::Finished, "finished", QT_TRANSLATE_NOOP("rankdeck::RunState", "finished")},
    {RunState::Failed, "failed", QT_TRANSLATE_NOOP("rankdeck::RunState", "failed")},
    {RunState::Stopped, "stopped", QT_TRANSLATE_NOOP("rankdeck::RunState", "stopped")},
};
} // namespace

QString rankStateName(RankState state)
{
    for (const RankName &n : kRankNames)
        if (n.state == state)
            return QString::fromLatin1(n.name);
    return QStringLiteral("pending");
}

RankState rankStateFromName(const QString &name)
{
    for (const RankName &n : kRankNames)
        if (name == QLatin1String(n.name))
            return n.state;
    return RankState::Pending;
}

QString rankStateLabel(RankState state)
{
    for (const RankName &n : kRankNames)
        if (n.state == state)
            return QCoreApplication::translate("rankdeck::RankState", n.label);
    return QString();
}

bool isTerminal(RankState state)
{
    return state == RankState::Finished || state == RankState::Failed ||
           state == RankState::Stopped || state == RankState::Lost;
}

QString runStateName(RunState state)
{
    for (const RunName &n : kRunNames)
        if (n.state == state)
            return QString::fromLatin1(n.name);
    return QStringLiteral("preparing");
}

RunState runStateFromName(const QString &name)
{
    for (const RunName &n : kRunNames)
        if (name == QLatin1String(n.name))
            return n.state;
    return RunState::Preparing;
}

QString runStateLabel(RunState state)
{
    for (const RunName &n : kRunNames)
        if (n.state == state)
            return QCoreApplication::translate("rankdeck::RunState", n.label);
    return QString();
}

bool isTerminal(RunState state)
{
    return state == RunState::Finished || state == RunState::Failed || state == RunState::Stopped;
}

QJsonObject RankStatus::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("rank")] = rank;
    o[QStringLiteral("node")] = nodeIndex;
    o[QStringLiteral("local_rank")] = localRank;
    o[QStringLiteral("host")] = host;
    o[QStringLiteral("pid")] = pid;
    if (pidStartTicks > 0)
        o[QStringLiteral("pid_start")] = pidStartTicks;
    o[QStringLiteral("state")] = rankStateName(state);
    o[QStringLiteral("device")] = device;
    o[QStringLiteral("backend")] = backend;
    o[QStringLiteral("start_us")] = startTimeUs;
    o[QStringLiteral("end_us")] = endTimeUs;
    o[QStringLiteral("exit_code")] = exitCode;
    o[QStringLiteral("signal")] = signal;
    o[QStringLiteral("step")] = step;
    if (printedStep >= 0)
        o[QStringLiteral("printed_step")] = printedStep;
    o[QStringLiteral("total_steps")] = totalSteps;
    if (!qIsNaN(loss))
        o[QStringLiteral("loss")] = loss;
    o[QStringLiteral("samples_per_s")] = samplesPerSec;
    o[QStringLiteral("silent")] = silent;
    o[QStringLiteral("hung")] = hung;
    o[QStringLiteral("root_cause")] = rootCause;
    o[QStringLiteral("detail")] = detail;
    if (!inCollective.isEmpty())
        o[QStringLiteral("in_collective")] = inCollective;
    return o;
}

RankStatus RankStatus::fromJson(const QJsonObject &json)
{
    RankStatus s;
    s.rank = json.value(QStringLiteral("rank")).toInt();
    s.nodeIndex = json.value(QStringLiteral("node")).toInt();
    s.localRank = json.value(QStringLiteral("local_rank")).toInt();
    s.host = json.value(QStringLiteral("host")).toString();
    s.pid = json.value(QStringLiteral("pid")).toInteger();
    s.pidStartTicks = json.value(QStringLiteral("pid_start")).toInteger();
    s.state = rankStateFromName(json.value(QStringLiteral("state")).toString());
    s.device = json.value(QStringLiteral("device")).toString();
    s.backend = json.value(QStringLiteral("backend")).toString();
    s.startTimeUs = json.value(QStringLiteral("start_us")).toInteger();
    s.endTimeUs = json.value(QStringLiteral("end_us")).toInteger();
    s.exitCode = json.value(QStringLiteral("exit_code")).toInt();
    s.signal = json.value(QStringLiteral("signal")).toInt();
    s.step = json.value(QStringLiteral("step")).toInteger(-1);
    s.printedStep = json.value(QStringLiteral("printed_step")).toInteger(-1);
    s.totalSteps = json.value(QStringLiteral("total_steps")).toInteger();
    s.loss = json.value(QStringLiteral("loss")).toDouble(qQNaN());
    s.samplesPerSec = json.value(QStringLiteral("samples_per_s")).toDouble();
    s.silent = json.value(QStringLiteral("silent")).toBool();
    s.hung = json.value(QStringLiteral("hung")).toBool();
    s.rootCause = json.value(QStringLiteral("root_cause")).toBool();
    s.detail = json.value(QStringLiteral("detail")).toString();
    s.inCollective = json.value(QStringLiteral("in_collective")).toString();
    return s;
}

} // namespace rankdeck
