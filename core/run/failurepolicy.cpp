// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/failurepolicy.h"

#include "diagnosis/failureverdict.h"
#include "diagnosis/pythonfailure.h"
#include "util/signalname.h"
#include "util/translation.h"

#include <algorithm>

namespace rankdeck {

namespace {

constexpr QLatin1String kConsequence("consequence");
constexpr QLatin1String kCollective("collective");

} // namespace

FailurePolicy::ExitVerdict FailurePolicy::classifyExit(const RankExit &exit,
                                                       const RankStatus &status,
                                                       const RankRuntime &runtime,
                                                       bool bySignalWeSent, const QString &stacks)
{
    ExitVerdict v;
    const bool clean = !exit.crashed && exit.exitCode == 0;
    // Transports report a dropped connection as an exit without a code.
    const bool lost =
        !exit.crashed && exit.exitCode < 0 && !exit.detail.isEmpty() &&
        !exit.detail.startsWith(QLatin1String("failed to start"), Qt::CaseInsensitive) &&
        exit.detail.contains(QLatin1String("lost"), Qt::CaseInsensitive);

    if (exit.crashed)
        v.how = exit.signal > 0 ? tr("killed by %1").arg(signalName(exit.signal))
                                : tr("killed by a signal");
    else if (!exit.detail.isEmpty() && exit.exitCode < 0)
        v.how = exit.detail;
    else
        v.how = tr("exit code %1").arg(exit.exitCode);

    RankFailure &f = v.failure;
    f.rank = status.rank;
    // A rank the launcher was stopping can still have failed by itself first (its own exit
    // code, or a signal the launcher did not send): that is a failure, not a consequence.
    const bool ownExit = !clean && !bySignalWeSent;
    if (runtime.ownFailure) {
        // It reported its own error/crash; the exit completes that report.
        v.action = ExitVerdict::Action::CompleteOwnReport;
        v.state = RankState::Failed;
        f.exitCode = exit.crashed ? 0 : exit.exitCode;
        f.signal = exit.crashed ? exit.signal : 0;
        f.signalName = signalName(f.signal);
        return v;
    }
    if (runtime.launcherStopped && !ownExit) {
        v.state = RankState::Stopped;
        if (!runtime.consequence)
            return v;
        v.action = ExitVerdict::Action::Consequence;
        f.host = status.host;
        f.localRank = status.localRank;
        f.timeUs = status.endTimeUs;
        f.kind = kConsequence;
        f.exitCode = status.exitCode;
        f.signal = status.signal;
        f.signalName = signalName(status.signal);
        // build() names the root cause in the reason of every other consequence.
        if (status.hung) {
            f.reason = tr("hung, then stopped by the launcher (%1)").arg(v.how);
            if (!stacks.isEmpty())
                f.stack = stacks.split(QLatin1Char('\n'));
        }
        return v;
    }
    if (clean) {
        v.state = RankState::Finished;
        return v;
    }
    v.action = ExitVerdict::Action::NewFailure;
    v.state = lost ? RankState::Lost : RankState::Failed;
    f.host = status.host;
    f.localRank = status.localRank;
    // The exit is seen a little after the death; the rank's last word bounds it from below,
    // and its own events carry its clock, so prefer what the transport measured.
    f.timeUs = status.endTimeUs;
    if (lost) {
        f.kind = QStringLiteral("lost");
        f.message = exit.detail;
    } else if (exit.crashed) {
        f.kind = QStringLiteral("signal");
        f.signal = exit.signal;
        f.signalName = signalName(exit.signal);
    } else {
        f.kind = QStringLiteral("exit");
        f.exitCode = exit.exitCode;
        f.message = exit.detail;
    }
    return v;
}

RankFailure FailurePolicy::failureFromEvent(const WorkerEvent &e, const RankStatus &s, qint64 now,
                                            const NodeClock &clock)
{
    RankFailure f;
    if (e.type() == WorkerEvent::Type::Crash) {
        f = failureFromCrashEvent(e.fields());
    } else {
        f.kind = QStringLiteral("error");
        f.exitCode = e.exitCode();
        f.message = e.message();
    }
    f.rank = s.rank;
    if (f.host.isEmpty())
        f.host = s.host;
    f.localRank = s.localRank;
    // The rank's own clock said when (a crash event's time of the signal, else the event's);
    // on the launcher's clock it sorts against the other nodes' ranks and the exits seen here.
    const qint64 rankTime = f.timeUs > 0 ? f.timeUs : e.timeUs();
    if (rankTime > 0) {
        f.timeUs = clock.toLauncherTime(rankTime);
        f.clockOffsetUs = clock.isKnown() ? clock.offsetUs : 0;
    } else {
        f.timeUs = now;
    }
    return f;
}

bool FailurePolicy::record(const RankFailure &failure, QList<RankStatus> &ranks,
                           const QHash<int, QString> &stacks)
{
    for (RankFailure &f : m_failures) {
        if (f.rank == failure.rank) {
            if (f.exitCode == 0 && failure.exitCode != 0)
                f.exitCode = failure.exitCode;
            if (f.signal == 0 && failure.signal != 0) {
                f.signal = failure.signal;
                f.signalName = failure.signalName;
            }
            if (f.child.isEmpty() && !failure.child.isEmpty())
                f.child = failure.child;
            // Its traceback may come after its first report (from its stderr, at its exit).
            if ((f.python.isEmpty() && !failure.python.isEmpty()) ||
                (f.pythonDump.isEmpty() && !failure.pythonDump.isEmpty()))
                mergePython(&f, f.python.isEmpty() ? failure.python : f.python,
                            f.pythonDump.isEmpty() ? failure.pythonDump : f.pythonDump);
            rebuild(ranks, stacks);
            return false;
        }
    }
    m_failures.append(failure);
    rebuild(ranks, stacks);
    if (failure.kind == kConsequence || m_failureSeen)
        return false;
    m_failureSeen = true;
    m_firstFailedRank = failure.rank;
    return true;
}

void FailurePolicy::addConsequence(const RankFailure &failure, QList<RankStatus> &ranks,
                                   const QHash<int, QString> &stacks)
{
    m_failures.append(failure);
    rebuild(ranks, stacks);
}

void FailurePolicy::setCollectiveVerdict(const CollectiveVerdict *verdict, qint64 atUs,
                                         QList<RankStatus> &ranks,
                                         const QHash<int, QString> &stacks)
{
    const bool names = verdict && !verdict->culprits().isEmpty() &&
                       (verdict->kind() == CollectiveVerdict::Kind::Desync ||
                        verdict->kind() == CollectiveVerdict::Kind::MissingRanks);
    if (!names && !m_collective)
        return;
    if (names) {
        m_collective = *verdict;
        m_collectiveUs = atUs;
    } else {
        m_collective.reset();
    }
    rebuild(ranks, stacks);
}

void FailurePolicy::rebuild(QList<RankStatus> &ranks, const QHash<int, QString> &stacks)
{
    const FailureVerdict verdict = FailureVerdict::judge(
        m_failures, m_collective ? &*m_collective : nullptr, m_collectiveUs, ranks, stacks);
    m_victimFailed = verdict.victimFailed();
    m_report = verdict.report();
    m_rootCauseSummary = FailureVerdict::summaryOf(m_report);
    for (RankStatus &s : ranks)
        s.rootCause = false;
    const int root = verdict.rootCauseRank();
    if (root >= 0 && root < ranks.size())
        ranks[root].rootCause = true;
}

int FailurePolicy::rootCauseRank() const
{
    const RankFailure *root = m_report.rootCause();
    return root ? root->rank : -1;
}

bool FailurePolicy::anyOwnFailure() const
{
    // A culprit named by the flight recorder did not fail by itself (a hung run the user
    // stopped stays stopped); a victim that did, still failed.
    if (m_victimFailed)
        return true;
    return std::ranges::any_of(m_report.failures, [](const RankFailure &f) {
        return f.kind != kConsequence && f.kind != kCollective;
    });
}

void FailurePolicy::reset()
{
    *this = FailurePolicy();
}

void FailurePolicy::restore(const FailureReport &report)
{
    m_report = report;
    m_failures = report.failures;
    m_failureSeen = !m_failures.isEmpty();
    m_rootCauseSummary = FailureVerdict::summaryOf(report);
    m_firstFailedRank = rootCauseRank();
}

} // namespace rankdeck
