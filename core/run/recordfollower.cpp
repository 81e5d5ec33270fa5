// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/recordfollower.h"

#include "record/runstatefile.h"
#include "run/flightrecordercollector.h"
#include "run/runactions.h"
#include "run/rundata.h"
#include "store/logstore.h"
#include "store/metricsstore.h"

#include <QDir>
#include <QFile>

#include <sys/stat.h>

namespace rankdeck {

RecordFollower::RecordFollower(RunData &run, RunActions &actions,
                               FlightRecorderCollector &collector, QObject *parent)
    : QObject(parent), m_run(run), m_actions(actions), m_collector(collector)
{
    m_timer.setInterval(PollMs);
    connect(&m_timer, &QTimer::timeout, this, &RecordFollower::poll);
    m_report = m_run.policy.report().toJson();
}

void RecordFollower::start()
{
    m_timer.start();
    poll();
}

void RecordFollower::poll()
{
    // state.json first: a run that ended there had every line in its files before (the writer
    // closes its stores, then writes the final state), so the stores read next have them all.
    if (stateFileReplaced())
        readState();
    if (m_run.logs)
        m_run.logs->readAppended();
    if (m_run.metrics)
        m_run.metrics->readAppended();
    if (isTerminal(m_run.state) && m_timer.isActive()) {
        m_timer.stop();
        readStacks();
        emit finished(m_run.state);
    }
}

bool RecordFollower::stateFileReplaced()
{
    struct stat st = {};
    const QByteArray path =
        QFile::encodeName(m_run.record.directory() + QStringLiteral("/state.json"));
    if (::stat(path.constData(), &st) != 0)
        return false;
    const qint64 mtimeNs = qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (qint64(st.st_ino) == m_stateInode && qint64(st.st_size) == m_stateSize &&
        mtimeNs == m_stateMtimeNs)
        return false;
    m_stateInode = qint64(st.st_ino);
    m_stateSize = qint64(st.st_size);
    m_stateMtimeNs = mtimeNs;
    return true;
}

void RecordFollower::readState()
{
    const QJsonObject json = m_run.record.readState();
    if (json.isEmpty())
        return; // unreadable now: the next replacement is read
    const RunStateFile st = RunStateFile::fromJson(json);
    const QJsonObject report = m_run.record.readFailureReport();
    const QList<RankStatus> before = m_run.ranks;
    const RunState stateBefore = m_run.state;
    const QMap<int, NodeClock> clocksBefore = m_run.clocks;

    m_run.restoreFrom(st, report.isEmpty() ? FailureReport() : FailureReport::fromJson(report));
    m_run.endedUs = st.endedUs;
    m_run.hung = st.hung;
    m_run.straggler = st.straggler;
    // The owning launcher's verdict on the sampled stacks, as it wrote it.
    const QString slowBefore = m_run.slow.text() + m_run.slow.timeSplit;
    m_run.slow = SlowRankVerdict::fromRecord(st.slowRank, st.slowCause, st.slowText, st.timeSplit,
                                             st.slowEvidence);
    if (m_run.slow.text() + m_run.slow.timeSplit != slowBefore)
        m_actions.announceSlowVerdict();
    m_run.errorMessage = st.error;
    m_run.clocks = st.clocks;
    m_run.runtime.resize(m_run.ranks.size());

    for (int r = 0; r < m_run.ranks.size(); ++r)
        if (r >= before.size() || before[r].toJson() != m_run.ranks[r].toJson())
            m_actions.announceRank(r);
    if (m_run.clocks != clocksBefore)
        emit nodeClocksChanged();
    if (report != m_report) {
        m_report = report;
        m_actions.announceReport();
    }
    if (st.flightRecorder != m_flightRecorder) {
        m_flightRecorder = st.flightRecorder;
        m_collector.restoreStateJson(m_flightRecorder);
        m_actions.announceVerdict();
    }
    // A hang's stacks arrive in their files after it is seen, while the run goes on.
    if (m_run.hung)
        readStacks();
    if (m_run.state != stateBefore)
        emit stateChanged(m_run.state);
}

void RecordFollower::readStacks()
{
    const QDir dir(m_run.record.directory());
    for (int r = 0; r < m_run.ranks.size(); ++r) {
        QFile f(dir.filePath(QStringLiteral("stacks-rank-%1.txt").arg(r)));
        if (!f.exists() || !f.open(QIODevice::ReadOnly))
            continue;
        const QString stacks = QString::fromUtf8(f.readAll());
        if (stacks != m_run.stacks.value(r)) {
            m_run.stacks.insert(r, stacks);
            m_actions.announceStacks(r, stacks);
        }
    }
}

} // namespace rankdeck
