// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/failurepolicy.h"

#include "diagnosis/pythonfailure.h"
#include "util/signalname.h"
#include "util/translation.h"

#include <QRegularExpression>

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

bool FailurePolicy::looksLikePeerFailure(const QString &text)
{
    // Python ranks add what torch raises in a survivor: Gloo's pair errors (a read or write on
    // the connection to the dead peer), c10d's DistBackendError/DistNetworkError, NCCL's
    // communicator abort after the watchdog or a peer's error.
    static const QRegularExpression re(
        QStringLiteral(
            "closed by peer|reset by peer|connection (was )?(closed|reset|refused)|broken pipe|"
            "ECONNRESET|EPIPE|timed? ?out|Watchdog caught|peer|remote process exited|"
            "socket (closed|error)|store.*(closed|timeout)|"
            "third_party/gloo/.*\\b(read|write|recv|send)|"
            "\\bDist(Backend|Network)Error\\b|"
            "NCCL communicator was "
            "aborted|ProcessGroupNCCL.*\\babort|NCCL.*\\bcommunicator.*abort"),
        QRegularExpression::CaseInsensitiveOption);
    return re.match(text).hasMatch();
}

bool FailurePolicy::looksLikePeerFailure(const RankFailure &failure)
{
    // A rank whose own DataLoader worker died failed of its own, whatever its exception then
    // said (a ConnectionResetError from the dead worker's socket; issue 27).
    if (!failure.child.isEmpty())
        return false;
    if (looksLikePeerFailure(failure.message) || looksLikePeerFailure(failure.exceptionType))
        return true;
    // The exception that ended a Python rank: its type says as much as its message
    // ("torch.distributed.DistNetworkError: Broken pipe").
    if (!failure.python.isEmpty()) {
        const PythonException &last = failure.python.last();
        return looksLikePeerFailure(last.type) || looksLikePeerFailure(last.message);
    }
    return false;
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
    // Echoes of another rank's death (peer closed the connection, collective timed out) are
    // consequences whenever some rank failed for a reason of its own.
    QList<RankFailure> observed = m_failures;
    bool anyOwn = false;
    for (const RankFailure &f : observed) {
        if (f.kind != kConsequence && !looksLikePeerFailure(f))
            anyOwn = true;
    }
    if (anyOwn) {
        for (RankFailure &f : observed) {
            if (f.kind != kConsequence && looksLikePeerFailure(f)) {
                f.reason = tr("a peer failed first (this rank's own %1 followed)").arg(f.kind);
                f.kind = kConsequence;
            }
        }
    }
    m_victimFailed = false;
    if (m_collective) {
        const CollectiveVerdict &v = *m_collective;
        const QString headline = v.headline();
        for (RankFailure &f : observed) {
            if (!v.victims().contains(f.rank) || f.kind == kConsequence)
                continue;
            f.reason = tr("a victim: %1 (its own %2 followed)").arg(headline, f.kind);
            f.kind = kConsequence;
            m_victimFailed = true;
        }
        for (int rank : v.culprits()) {
            RankFailure f;
            f.rank = rank;
            if (rank >= 0 && rank < ranks.size()) {
                f.host = ranks[rank].host;
                f.localRank = ranks[rank].localRank;
            }
            f.timeUs = m_collectiveUs;
            f.kind = kCollective;
            f.message = headline + QLatin1Char('\n') + v.text();
            observed << f;
        }
    }
    for (RankFailure &f : observed) {
        if (ranks.value(f.rank).hung && f.stack.isEmpty() && stacks.contains(f.rank))
            f.stack = stacks.value(f.rank).split(QLatin1Char('\n'));
    }
    m_report = FailureReport::build(observed);
    m_rootCauseSummary = summaryOf(m_report);
    for (RankStatus &s : ranks)
        s.rootCause = false;
    const int root = rootCauseRank();
    if (root >= 0 && root < ranks.size())
        ranks[root].rootCause = true;
}

QString FailurePolicy::summaryOf(const FailureReport &report)
{
    const RankFailure *root = report.rootCause();
    if (!root)
        return QString();
    const RankFailure &f = *root;
    if (f.kind == kCollective)
        return tr("rank %1 (%2): %3").arg(f.rank).arg(f.host, f.summary());
    QString what;
    if (f.endedByChild())
        // The rank's own RuntimeError only says that its child died: the child's death is why.
        return tr("rank %1 (%2): %3").arg(f.rank).arg(f.host, f.child.summary());
    if (f.kind == QLatin1String("crash") || f.kind == QLatin1String("signal"))
        what = f.signalName.isEmpty() ? tr("signal %1").arg(f.signal) : f.signalName;
    else if (f.kind == QLatin1String("exception"))
        what = f.exceptionType.isEmpty() ? tr("exception") : f.exceptionType;
    else if (f.kind == QLatin1String("exit") || f.kind == QLatin1String("error"))
        what = tr("exit code %1").arg(f.exitCode);
    else
        what = f.kind;
    QString summary = tr("rank %1 (%2): %3").arg(f.rank).arg(f.host, what);
    if (!f.message.isEmpty())
        summary += QStringLiteral(": ") + f.message.section(QLatin1Char('\n'), 0, 0);
    return summary;
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
    m_rootCauseSummary = summaryOf(report);
    m_firstFailedRank = rootCauseRank();
}

} // namespace rankdeck
