// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rundata.h"

#include "run/rankpipeline.h"
#include "run/reattachplan.h"
#include "store/logstore.h"
#include "store/metricsstore.h"

#include <QFile>
#include <QJsonArray>

namespace rankdeck {

RunData::RunData() = default;

RunData::~RunData() = default;

void RunData::setUp(const Profile &newProfile, const TrainingConfig &newConfig)
{
    profile = newProfile;
    config = newConfig;
    // The profile's metric patterns first, then the launch's: the run record keeps them all, so
    // a re-extraction (export --metric) and a reopen see what this run used.
    if (config.isProgram()) {
        QStringList patterns = profile.metricPatterns;
        for (const QString &spec : std::as_const(newConfig.metricPatterns))
            if (!patterns.contains(spec))
                patterns << spec;
        config.metricPatterns = patterns;
    }
}

void RunData::closeStores()
{
    if (logs)
        logs->close();
    if (metrics)
        metrics->close();
}

void RunData::closeRecord()
{
    closeStores();
    record.releaseReserve();
    QFile::remove(record.stopRequestPath());
    QFile::remove(record.directory() + QStringLiteral("/kill-request"));
}

void RunData::restoreFrom(const RunStateFile &st, const FailureReport &report)
{
    state = st.state;
    attempt = st.attempt;
    startedUs = st.startedUs;
    masterPort = st.masterPort;
    attempts = st.attempts;
    ranks = st.ranks;
    policy.restore(report);
    rootCauseSummary = st.rootCauseSummary;
}

bool RunData::reopen(const QString &runDirectory, RunStateFile *st, QString *error)
{
    readOnly = true;
    if (!record.open(runDirectory, error))
        return false;
    profile = record.profile();
    config = record.config();
    *st = RunStateFile::fromJson(record.readState());
    const QJsonObject failure = record.readFailureReport();
    restoreFrom(*st, failure.isEmpty() ? FailureReport() : FailureReport::fromJson(failure));
    endedUs = st->endedUs;
    hung = st->hung;
    straggler = st->straggler;
    errorMessage = st->error;
    clocks = st->clocks;
    runtime.resize(ranks.size());
    for (int r = 0; r < ranks.size(); ++r) {
        QFile f(runDirectory + QStringLiteral("/stacks-rank-%1.txt").arg(r));
        if (f.open(QIODevice::ReadOnly))
            stacks.insert(r, QString::fromUtf8(f.readAll()));
    }
    logs = std::make_unique<LogStore>();
    logs->open(record.directory());
    metrics = std::make_unique<MetricsStore>();
    metrics->setHistoryBudget(MetricsStore::kRunHistory);
    metrics->open(record.directory());
    finalized = true;
    return true;
}

void RunData::restoreFrom(const ReattachPlan &reattach, qint64 nowUs)
{
    record = reattach.record();
    plan = reattach.launchPlan();
    config.maxRestarts = reattach.maxRestarts();
    const RunStateFile &st = reattach.state();
    restoreFrom(st, reattach.failureReport());
    userStop = st.userStop;
    if (!policy.rootCauseSummary().isEmpty())
        rootCauseSummary = policy.rootCauseSummary();
    runtime = reattach.runtimes(nowUs);
    for (RankStatus &s : ranks)
        s.lastHeartbeatUs = nowUs;
}

void RunData::addPlannedRanks()
{
    for (const PlannedRank &p : plan.ranks()) {
        RankStatus s;
        s.rank = p.rank;
        s.nodeIndex = p.nodeIndex;
        s.localRank = p.localRank;
        s.host = p.host;
        s.totalSteps = config.totalSteps();
        ranks.append(s);
        runtime.append(RankRuntime());
    }
}

void RunData::restartRank(int rank, qint64 now)
{
    RankStatus &s = ranks[rank];
    RankStatus fresh;
    fresh.rank = s.rank;
    fresh.nodeIndex = s.nodeIndex;
    fresh.localRank = s.localRank;
    fresh.host = s.host;
    fresh.totalSteps = s.totalSteps;
    s = fresh;
    runtime[rank] = RankRuntime();
    runtime[rank].lastStepChangeUs = now;
}

bool RunData::allRanksStarted() const
{
    if (ranks.isEmpty())
        return false;
    for (int r = 0; r < ranks.size(); ++r) {
        if (!runtime[r].pidKnown && !runtime[r].exited)
            return false;
    }
    return true;
}

QHash<int, QString> RunData::hostsByRank() const
{
    QHash<int, QString> hosts;
    for (const RankStatus &s : ranks)
        hosts.insert(s.rank, s.host);
    return hosts;
}

QList<int> RunData::livingRanks() const
{
    QList<int> living;
    for (int r = 0; r < runtime.size(); ++r) {
        if (runtime[r].started && runtime[r].pidKnown && !runtime[r].exited)
            living << r;
    }
    return living;
}

void RunData::archiveAttempt(qint64 now)
{
    QJsonObject a;
    a[QStringLiteral("attempt")] = attempt;
    a[QStringLiteral("ended_us")] = now;
    a[QStringLiteral("root_cause_summary")] = rootCauseSummary;
    a[QStringLiteral("failure")] = policy.report().toJson();
    QJsonArray rankList;
    for (const RankStatus &s : ranks)
        rankList.append(s.toJson());
    a[QStringLiteral("ranks")] = rankList;
    attempts.append(a);
    ++attempt;
    policy.reset();
    hung = false;
    straggler = -1;
}

RunState RunData::finalState(bool ownFailure) const
{
    if (ownFailure)
        return RunState::Failed;
    if (userStop)
        return RunState::Stopped;
    for (const RankStatus &s : ranks) {
        if (s.state != RankState::Finished)
            return RunState::Failed;
    }
    return RunState::Finished;
}

} // namespace rankdeck
