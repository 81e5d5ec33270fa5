// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/reattachplan.h"

#include "record/streamoffsetsfile.h"

#include "transport/transport.h"
#include "util/translation.h"

#include <algorithm>

namespace rankdeck {

bool ReattachPlan::load(const QString &runDirectory, QString *error)
{
    if (!m_record.open(runDirectory, error))
        return false;
    const QJsonObject json = m_record.readState();
    m_state = RunStateFile::fromJson(json);
    const QString id = m_record.id();
    if (m_record.profile().isLocal()) {
        *error = tr("run %1 ran on the local profile: its ranks ended with their launcher, nothing "
                    "to re-attach")
                     .arg(id);
        return false;
    }
    if (json.isEmpty() || isTerminal(m_state.state)) {
        *error = tr("run %1 is not running (%2)")
                     .arg(id, json.isEmpty() ? tr("no state") : runStateName(m_state.state));
        return false;
    }
    if (!m_state.detached && !m_record.info().launcherGone) {
        *error = tr("run %1 is still followed by its launcher (pid %2 on %3)")
                     .arg(id)
                     .arg(m_state.launcherPid)
                     .arg(m_state.launcherHost);
        return false;
    }
    if (m_state.streams.size() != m_state.ranks.size() || m_state.ranks.isEmpty()) {
        *error = tr("%1: state.json has no stream offsets for its ranks (not a detachable run)")
                     .arg(m_record.directory());
        return false;
    }
    // streams.bin is behind the record by one write at most, state.json by up to 0.5 s.
    StreamOffsetsFile::takeNewer(&m_state.streams,
                                 StreamOffsetsFile::read(runDirectory, int(m_state.ranks.size())));
    m_plan = LaunchPlan::create(m_record.profile(), m_record.config(), id,
                                QStringLiteral("~/.cache/rankdeck/runs/") + id);
    if (!m_plan.isValid()) {
        *error = tr("run %1: its profile snapshot does not give the recorded ranks: %2")
                     .arg(id, m_plan.error());
        return false;
    }
    if (m_plan.worldSize() != m_state.ranks.size()) {
        *error = tr("run %1: its profile snapshot gives %2 ranks, state.json records %3")
                     .arg(id)
                     .arg(m_plan.worldSize())
                     .arg(m_state.ranks.size());
        return false;
    }
    const QJsonObject failure = m_record.readFailureReport();
    if (!failure.isEmpty())
        m_report = FailureReport::fromJson(failure);
    m_maxRestarts = m_record.config().maxRestarts;
    for (const RankStatus &s : m_state.ranks) {
        if (isTerminal(s.state))
            m_maxRestarts = std::min(m_maxRestarts, m_state.attempt);
    }
    return true;
}

QList<RankRuntime> ReattachPlan::runtimes(qint64 now) const
{
    QList<RankRuntime> result;
    for (int r = 0; r < m_state.ranks.size(); ++r) {
        RankRuntime rt;
        rt.lastStepChangeUs = now;
        if (isTerminal(m_state.ranks[r].state))
            rt.started = rt.exited = rt.pidKnown = true;
        else if (m_state.streams.value(r).attempt > 0)
            rt.started = true;
        result.append(rt);
    }
    return result;
}

QList<int> ReattachPlan::attach(Transport &transport, const LaunchPlan &plan,
                                const QList<RankRuntime> &runtimes,
                                const QList<StreamOffsets> &offsets, int masterPort)
{
    QList<int> neverStarted;
    for (int r = 0; r < runtimes.size(); ++r) {
        const RankRuntime &rt = runtimes[r];
        if (rt.exited)
            continue;
        if (!rt.started) {
            neverStarted << r;
            continue;
        }
        const StreamOffsets &o = offsets.value(r);
        transport.attachRank(plan.spec(r, QString(), masterPort, false), o.attempt,
                             o.committed(StreamKind::Stdout), o.committed(StreamKind::Stderr));
    }
    return neverStarted;
}

} // namespace rankdeck
