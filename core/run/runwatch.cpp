// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/runwatch.h"

#include "diagnosis/hangwatchdog.h"
#include "diagnosis/stragglerreport.h"
#include "run/flightrecordercollector.h"
#include "run/runactions.h"
#include "store/metricsstore.h"
#include "transport/transport.h"
#include "util/clock.h"

#include <algorithm>
#include <csignal>

namespace rankdeck {

namespace {
// How long a user's program that has printed nothing yet may stay quiet before the hang watch
// judges it: `import torch` alone takes seconds, minutes on a loaded node or a cold cache.
constexpr int kProgramStartupGraceSec = 120;
// state.json holds every rank: at 512 ranks 390 KB, about 20 ms of the GUI thread to serialize
// and write, and a running run is dirty on every tick (each step). Rewritten every 0.5 s up to
// this many ranks, then less often in proportion (2 s at 512); a run's end writes it at once.
constexpr int kStateRanksPerHalfSecond = 128;
} // namespace

RunWatch::RunWatch(RunData &run, RunActions &actions, FlightRecorderCollector &collector,
                   const Settings &settings, QObject *parent)
    : QObject(parent), m_run(run), m_actions(actions), m_collector(collector), m_settings(settings)
{
    m_timer.setInterval(500);
    connect(&m_timer, &QTimer::timeout, this, &RunWatch::tick);
}

void RunWatch::start()
{
    m_timer.start();
}

void RunWatch::stop()
{
    m_timer.stop();
}

void RunWatch::tick()
{
    if (m_run.readOnly || m_run.finalized)
        return;
    if (!m_run.userStop && m_run.record.stopRequested()) {
        m_actions.note(tr("stop requested through %1").arg(m_run.record.stopRequestPath()));
        m_actions.requestStop();
    }
    if (!m_killTaken && m_run.record.killRequested()) {
        m_killTaken = true;
        m_actions.note(tr("kill requested through %1/kill-request").arg(m_run.record.directory()));
        m_actions.requestKill();
    }
    if (m_run.record.takeStackDumpRequest()) {
        m_actions.note(tr("stack dump requested"));
        m_actions.requestStacks(-1);
    }
    int profileSeconds = 0;
    if (QList<int> ranks; m_run.record.takeProfileRequest(&profileSeconds, &ranks))
        m_actions.requestProfile(profileSeconds, ranks);
    const qint64 now = nowUs();
    checkRendezvous(now);

    HangWatchdog::Limits limits;
    limits.heartbeatUs = qint64(m_run.profile.heartbeatTimeoutSec) * 1'000'000;
    limits.hangUs = qint64(m_settings.hangTimeoutSec > 0 ? m_settings.hangTimeoutSec
                                                         : m_run.profile.heartbeatTimeoutSec) *
                    1'000'000;
    limits.autoDumpStacks = m_settings.autoDumpStacks;
    // A program may report no steps: what it prints counts as progress.
    limits.outputIsProgress = m_run.config.isProgram();
    // Only the default: a --hang-timeout the user gave is taken as it is.
    if (m_settings.hangTimeoutSec <= 0)
        limits.startupUs = qint64(kProgramStartupGraceSec) * 1'000'000;
    const HangWatchdog::Findings found =
        HangWatchdog::check(now, limits, m_run.ranks, m_run.runtime);
    Transport *transport = m_actions.runTransport();
    for (int r : found.silent)
        m_actions.note(tr("rank %1: %2").arg(r).arg(m_run.ranks[r].detail));
    for (int r : found.changed) {
        m_run.stateDirty = true;
        m_actions.announceRank(r);
    }
    // The control channel of a silent rank may be stuck too; SIGUSR1 also makes the worker dump.
    for (int r : found.dumpBySignal) {
        // SIGUSR1 would reach the user's program too, whose default action is to die.
        if (m_run.config.isProgram())
            transport->writeStdin(r, QByteArray("dump-stacks\n"));
        else
            transport->signalRank(r, SIGUSR1);
    }
    for (int r : found.dumpByCommand)
        transport->writeStdin(r, QByteArray("dump-stacks\n"));
    if (found.anyHung != m_run.hung) {
        m_run.hung = found.anyHung;
        m_run.stateDirty = true;
    }
    m_collector.tick(now, m_run.ranks, m_run.runtime);
    if (!found.hung.isEmpty())
        m_collector.collect(FlightRecorderCollector::Trigger::Hang, now);
    if (!found.hung.isEmpty()) {
        QStringList list;
        for (int r : found.hung)
            list << QString::number(r);
        m_actions.note(tr("run looks hung: rank(s) %1 make no progress; asked for their stacks and "
                          "flight recorders")
                           .arg(list.join(QStringLiteral(", "))));
        m_actions.announceHang(found.hung);
    }
    checkStraggler();
    const qint64 stateEveryMs =
        500 * std::max<qint64>(1, (qint64(m_run.ranks.size()) + kStateRanksPerHalfSecond - 1) /
                                      kStateRanksPerHalfSecond);
    if (m_run.stateDirty &&
        (!m_sinceStateWrite.isValid() || m_sinceStateWrite.elapsed() >= stateEveryMs - 100)) {
        m_sinceStateWrite.start();
        m_actions.writeState();
    }
}

void RunWatch::checkSlowRank()
{
    if (m_run.samples.generation() == m_samplesGeneration)
        return;
    m_samplesGeneration = m_run.samples.generation();
    const SlowRankVerdict v =
        SlowRankVerdict::analyze(m_run.samples.summaries(kSlowWindowUs), m_run.hostsByRank());
    // A rank is named once two judgements in a row name it with the same cause, and it stays
    // named until two in a row do not: one noisy window neither names nor clears it.
    const bool asShown = v.rank == m_run.slow.rank && v.cause == m_run.slow.cause;
    const bool asBefore = v.rank == m_pendingSlowRank && v.cause == m_pendingSlowCause;
    m_pendingSlowRank = v.rank;
    m_pendingSlowCause = v.cause;
    if (asShown || asBefore) {
        const bool changed = !asShown;
        m_run.slow = v;
        if (changed) {
            m_run.stateDirty = true;
            m_actions.note(v.found() ? tr("straggler: %1").arg(v.text())
                                     : tr("the sampled stacks name no straggler any more"));
        }
    } else if (!m_run.slow.found()) {
        m_run.slow.timeSplit = v.timeSplit; // where the time goes, fresh
        m_run.slow.details = v.details;
    }
    m_run.stateDirty = true; // `show --why-slow` reads the evidence from state.json
    m_actions.announceSlowVerdict();
}

void RunWatch::checkStraggler()
{
    checkSlowRank();
    if (!m_run.metrics || (m_sinceStraggler.isValid() && m_sinceStraggler.elapsed() < 2000))
        return;
    const quint64 generation = m_run.metrics->generation() + m_run.samples.generation();
    if (generation == m_stragglerGeneration)
        return;
    m_sinceStraggler.start();
    m_stragglerGeneration = generation;
    const int reported = StragglerReport::analyze(*m_run.metrics, m_run.hostsByRank()).rank;
    // The sampled stacks name a straggler in a program that reports no step times, and say
    // why; the step times, where there are any, stay the word on who.
    const int rank = reported >= 0 ? reported : m_run.slow.rank;
    if (rank == m_run.straggler)
        return;
    const int before = m_run.straggler;
    m_run.straggler = rank;
    m_run.stateDirty = true;
    for (int r : {before, rank})
        if (r >= 0 && r < m_run.ranks.size())
            m_actions.announceRank(r);
}

void RunWatch::checkRendezvous(qint64 now)
{
    // Rank 0 must report its store port in time, or the others never start.
    const int timeout = m_settings.storeTimeoutSec > 0 ? m_settings.storeTimeoutSec
                                                       : m_run.profile.rendezvousTimeoutSec;
    if (m_run.state != RunState::Starting || m_run.masterPort != 0 || m_run.ranks.size() <= 1 ||
        m_run.policy.failureSeen() || m_run.userStop || !m_run.runtime.value(0).started ||
        m_run.runtime[0].exited)
        return;
    // From the moment rank 0 runs: a queued job (Slurm) may wait for hours before it does.
    const qint64 since = m_run.runtime[0].pidKnown && m_run.ranks[0].startTimeUs > 0
                             ? std::max(m_run.rank0StartUs, m_run.ranks[0].startTimeUs)
                             : 0;
    if (since == 0 || !HangWatchdog::rendezvousOverdue(now, since, timeout))
        return;
    RankFailure f;
    f.rank = 0;
    f.host = m_run.ranks[0].host;
    f.timeUs = now;
    f.kind = QStringLiteral("error");
    f.message =
        tr("rank 0 did not report its rendezvous port (store event) within %1 s").arg(timeout);
    m_run.runtime[0].ownFailure = true;
    m_actions.recordFailure(f, {});
    m_actions.stopRank(0, false);
}

} // namespace rankdeck
