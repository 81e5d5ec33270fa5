// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/runstatewriter.h"

#include "run/flightrecordercollector.h"
#include "run/rankpipeline.h"
#include "run/runactions.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "util/processidentity.h"
#include "util/translation.h"

#include <QHostInfo>
#include <QStringList>

#include <unistd.h>

namespace rankdeck {

RunStateWriter::RunStateWriter(RunData &run, RunActions &actions,
                               const FlightRecorderCollector &collector, bool detach)
    : m_run(run), m_actions(actions), m_collector(collector), m_detach(detach)
{}

RunStateFile RunStateWriter::stateFile() const
{
    RunStateFile f;
    f.id = m_run.record.id();
    f.name = m_run.record.name();
    f.state = m_run.state;
    f.attempt = m_run.attempt;
    f.maxRestarts = m_run.config.maxRestarts;
    f.launcherPid = qint64(::getpid());
    static const qint64 launcherStart = ProcessIdentity::of(::getpid()).startTicks;
    f.launcherStartTicks = launcherStart;
    f.launcherHost = QHostInfo::localHostName();
    f.createdUs = m_run.record.createdUs();
    f.startedUs = m_run.startedUs;
    f.endedUs = m_run.endedUs;
    f.masterAddress = m_run.plan.masterAddress();
    f.masterPort = m_run.masterPort;
    f.userStop = m_run.userStop;
    f.hung = m_run.hung;
    f.straggler = m_run.straggler;
    f.slowRank = m_run.slow.rank;
    f.slowCause = SlowRankVerdict::causeKey(m_run.slow.cause);
    f.slowText = m_run.slow.text();
    f.slowSummary = m_run.slow.summary();
    f.timeSplit = m_run.slow.timeSplit;
    f.slowEvidence = m_run.slow.details;
    f.error = m_run.errorMessage;
    f.rootCauseSummary = rootCauseSummary();
    f.recordProblem = m_run.recordProblem;
    for (int r = 0; !m_run.recordProblem.isEmpty() && m_run.logs && r < m_run.ranks.size(); ++r) {
        if (const qint64 bytes = m_run.logs->missingBytes(r); bytes > 0)
            f.recordGaps.append({r, bytes, m_run.logs->missingLines(r)});
    }
    f.recordMissingPoints = m_run.metrics ? m_run.metrics->missingPoints() : 0;
    f.rootCauseRank = m_run.policy.rootCauseRank();
    f.flightRecorder = m_collector.toStateJson();
    f.ranks = m_run.ranks;
    f.attempts = m_run.attempts;
    f.detach = m_detach;
    f.detached = m_run.released;
    f.streams = streamOffsets();
    f.clocks = m_run.clocks;
    return f;
}

QList<StreamOffsets> RunStateWriter::streamOffsets() const
{
    QList<StreamOffsets> offsets;
    for (const std::unique_ptr<RankPipeline> &pipeline : m_run.pipelines)
        offsets.append(pipeline->offsets());
    return offsets;
}

void RunStateWriter::write()
{
    m_run.stateDirty = false;
    if (m_run.readOnly || m_run.record.directory().isEmpty())
        return;
    QString error;
    if (!m_run.record.writeState(stateFile().toJson(), &error) && m_run.recordProblem.isEmpty())
        recordUnwritable(error);
}

void RunStateWriter::checkRecord()
{
    if (!m_run.recordProblem.isEmpty() || m_run.readOnly)
        return;
    if (!m_compactionNoted && m_run.logs && !m_run.logs->compactionError().isEmpty()) {
        // Not a hole in the record: its old lines just stay as large as they came.
        m_compactionNoted = true;
        m_actions.note(tr("old log lines are no longer compressed (%1); the record stays whole")
                           .arg(m_run.logs->compactionError()));
    }
    if (m_run.logs && m_run.logs->diskFailed())
        recordUnwritable(m_run.logs->diskError());
    else if (m_run.metrics && m_run.metrics->diskFailed())
        recordUnwritable(m_run.metrics->diskError());
}

void RunStateWriter::recordUnwritable(const QString &why)
{
    // Said at once and once. The run is stopped rather than left running unrecorded: local
    // ranks keep no copy of their output anywhere else, and a record with a silent hole is
    // worse than a run that ended early and says why.
    m_run.recordProblem =
        tr("the run record in %1 cannot be written (%2)").arg(m_run.record.directory(), why);
    // The room kept for this moment: the state, the report and the launcher log must say it.
    m_run.record.releaseReserve();
    const QString message = tr("%1; stopping the run, since its output could no longer be "
                               "recorded")
                                .arg(m_run.recordProblem);
    m_run.errorMessage = m_run.recordProblem;
    m_actions.note(message);
    m_actions.announceRecordProblem(message);
    m_actions.requestStop();
    write();
}

QString RunStateWriter::recordGapSummary() const
{
    QStringList gaps;
    for (int r = 0; m_run.logs && r < m_run.ranks.size(); ++r) {
        if (const qint64 bytes = m_run.logs->missingBytes(r); bytes > 0)
            gaps << tr("rank %1: %2 bytes (%3 lines)")
                        .arg(r)
                        .arg(bytes)
                        .arg(m_run.logs->missingLines(r));
    }
    if (m_run.metrics && m_run.metrics->missingPoints() > 0)
        gaps << tr("%1 metric points").arg(m_run.metrics->missingPoints());
    if (gaps.isEmpty())
        return m_run.recordProblem;
    return tr("%1; missing from the record: %2")
        .arg(m_run.recordProblem, gaps.join(QStringLiteral(", ")));
}

QString RunStateWriter::rootCauseSummary() const
{
    if (!m_run.recordProblem.isEmpty())
        return recordGapSummary();
    // No rank failed: a hung run says why it is stuck (the verdict), or at least that it is.
    return m_run.rootCauseSummary.isEmpty() ? m_collector.summary(m_run.ranks)
                                            : m_run.rootCauseSummary;
}

} // namespace rankdeck
