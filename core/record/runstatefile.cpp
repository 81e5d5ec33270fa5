// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runstatefile.h"

#include <QJsonArray>

namespace rankdeck {

QJsonObject RunStateFile::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("id")] = id;
    o[QStringLiteral("name")] = name;
    o[QStringLiteral("state")] = runStateName(state);
    o[QStringLiteral("attempt")] = attempt;
    o[QStringLiteral("max_restarts")] = maxRestarts;
    o[QStringLiteral("world_size")] = int(ranks.size());
    o[QStringLiteral("launcher_pid")] = launcherPid;
    if (launcherStartTicks > 0)
        o[QStringLiteral("launcher_start")] = launcherStartTicks;
    o[QStringLiteral("launcher_host")] = launcherHost;
    o[QStringLiteral("created_us")] = createdUs;
    o[QStringLiteral("started_us")] = startedUs;
    o[QStringLiteral("ended_us")] = endedUs;
    o[QStringLiteral("master_addr")] = masterAddress;
    o[QStringLiteral("master_port")] = masterPort;
    o[QStringLiteral("user_stop")] = userStop;
    o[QStringLiteral("hung")] = hung;
    o[QStringLiteral("straggler")] = straggler;
    if (slowRank >= 0 || !timeSplit.isEmpty())
        o[QStringLiteral("slow")] =
            QJsonObject{{QStringLiteral("rank"), slowRank},
                        {QStringLiteral("cause"), slowCause},
                        {QStringLiteral("text"), slowText},
                        {QStringLiteral("summary"), slowSummary},
                        {QStringLiteral("time_split"), timeSplit},
                        {QStringLiteral("evidence"), QJsonArray::fromStringList(slowEvidence)}};
    o[QStringLiteral("error")] = error;
    o[QStringLiteral("root_cause_summary")] = rootCauseSummary;
    o[QStringLiteral("root_cause_rank")] = rootCauseRank;
    QJsonArray rankArray;
    for (const RankStatus &s : ranks)
        rankArray.append(s.toJson());
    o[QStringLiteral("ranks")] = rankArray;
    QJsonArray attemptArray;
    for (const QJsonObject &a : attempts)
        attemptArray.append(a);
    o[QStringLiteral("attempts")] = attemptArray;
    o[QStringLiteral("detach")] = detach;
    o[QStringLiteral("detached")] = detached;
    QJsonArray streamArray;
    for (int r = 0; r < streams.size(); ++r)
        streamArray.append(streams[r].toJson(r));
    o[QStringLiteral("streams")] = streamArray;
    if (!recordProblem.isEmpty()) {
        QJsonObject record;
        record[QStringLiteral("problem")] = recordProblem;
        QJsonArray gaps;
        for (const RecordGap &g : recordGaps)
            gaps.append(QJsonObject{{QStringLiteral("rank"), g.rank},
                                    {QStringLiteral("bytes"), g.bytes},
                                    {QStringLiteral("lines"), g.lines}});
        record[QStringLiteral("missing")] = gaps;
        record[QStringLiteral("missing_metric_points")] = recordMissingPoints;
        o[QStringLiteral("record_incomplete")] = record;
    }
    QJsonArray clockArray;
    for (auto it = clocks.cbegin(); it != clocks.cend(); ++it) {
        QJsonObject c = it->toJson();
        c[QStringLiteral("node")] = it.key();
        clockArray.append(c);
    }
    o[QStringLiteral("clocks")] = clockArray;
    if (!flightRecorder.isEmpty())
        o[QStringLiteral("flight_recorder")] = flightRecorder;
    return o;
}

RunStateFile RunStateFile::fromJson(const QJsonObject &json)
{
    RunStateFile f;
    f.id = json.value(QStringLiteral("id")).toString();
    f.name = json.value(QStringLiteral("name")).toString();
    f.state = runStateFromName(json.value(QStringLiteral("state")).toString());
    f.attempt = json.value(QStringLiteral("attempt")).toInt();
    f.maxRestarts = json.value(QStringLiteral("max_restarts")).toInt();
    f.launcherPid = json.value(QStringLiteral("launcher_pid")).toInteger();
    f.launcherStartTicks = json.value(QStringLiteral("launcher_start")).toInteger();
    f.launcherHost = json.value(QStringLiteral("launcher_host")).toString();
    f.createdUs = json.value(QStringLiteral("created_us")).toInteger();
    f.startedUs = json.value(QStringLiteral("started_us")).toInteger();
    f.endedUs = json.value(QStringLiteral("ended_us")).toInteger();
    f.masterAddress = json.value(QStringLiteral("master_addr")).toString();
    f.masterPort = json.value(QStringLiteral("master_port")).toInt();
    f.userStop = json.value(QStringLiteral("user_stop")).toBool();
    f.hung = json.value(QStringLiteral("hung")).toBool();
    f.straggler = json.value(QStringLiteral("straggler")).toInt(-1);
    const QJsonObject slow = json.value(QStringLiteral("slow")).toObject();
    f.slowRank = slow.value(QStringLiteral("rank")).toInt(-1);
    f.slowCause = slow.value(QStringLiteral("cause")).toString().left(32);
    f.slowText = slow.value(QStringLiteral("text")).toString().left(4000);
    f.slowSummary = slow.value(QStringLiteral("summary")).toString().left(400);
    f.timeSplit = slow.value(QStringLiteral("time_split")).toString().left(1000);
    const QJsonArray evidence = slow.value(QStringLiteral("evidence")).toArray();
    for (const auto &v : evidence)
        if (f.slowEvidence.size() < 4096)
            f.slowEvidence << v.toString().left(1000);
    f.error = json.value(QStringLiteral("error")).toString();
    f.rootCauseSummary = json.value(QStringLiteral("root_cause_summary")).toString();
    f.rootCauseRank = json.value(QStringLiteral("root_cause_rank")).toInt(-1);
    for (const QJsonArray items = json.value(QStringLiteral("ranks")).toArray();
         const auto &v : items)
        f.ranks.append(RankStatus::fromJson(v.toObject()));
    for (const QJsonArray items = json.value(QStringLiteral("attempts")).toArray();
         const auto &v : items)
        f.attempts.append(v.toObject());
    f.detach = json.value(QStringLiteral("detach")).toBool();
    f.detached = json.value(QStringLiteral("detached")).toBool();
    for (const QJsonArray items = json.value(QStringLiteral("streams")).toArray();
         const auto &v : items)
        f.streams.append(StreamOffsets::fromJson(v.toObject()));
    const QJsonObject record = json.value(QStringLiteral("record_incomplete")).toObject();
    f.recordProblem = record.value(QStringLiteral("problem")).toString();
    for (const QJsonArray items = record.value(QStringLiteral("missing")).toArray();
         const auto &v : items) {
        const QJsonObject g = v.toObject();
        f.recordGaps.append(RecordGap{g.value(QStringLiteral("rank")).toInt(),
                                      g.value(QStringLiteral("bytes")).toInteger(),
                                      g.value(QStringLiteral("lines")).toInteger()});
    }
    f.recordMissingPoints = record.value(QStringLiteral("missing_metric_points")).toInteger();
    for (const QJsonArray items = json.value(QStringLiteral("clocks")).toArray();
         const auto &v : items) {
        const int node = v.toObject().value(QStringLiteral("node")).toInt(-1);
        if (node >= 0)
            f.clocks.insert(node, NodeClock::fromJson(v.toObject()));
    }
    f.flightRecorder = json.value(QStringLiteral("flight_recorder")).toObject();
    return f;
}

} // namespace rankdeck
