// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/failureverdict.h"

#include "util/translation.h"

#include <QRegularExpression>

namespace rankdeck {

namespace {

constexpr QLatin1String kConsequence("consequence");
constexpr QLatin1String kCollective("collective");

} // namespace

FailureVerdict FailureVerdict::judge(QList<RankFailure> observed,
                                     const CollectiveVerdict *collective, qint64 collectiveUs,
                                     const QList<RankStatus> &ranks,
                                     const QHash<int, QString> &stacks)
{
    FailureVerdict verdict;
    // Echoes of another rank's death (peer closed the connection, collective timed out) are
    // consequences whenever some rank failed for a reason of its own.
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
    if (collective) {
        const CollectiveVerdict &v = *collective;
        const QString headline = v.headline();
        for (RankFailure &f : observed) {
            if (!v.victims().contains(f.rank) || f.kind == kConsequence)
                continue;
            f.reason = tr("a victim: %1 (its own %2 followed)").arg(headline, f.kind);
            f.kind = kConsequence;
            verdict.m_victimFailed = true;
        }
        for (int rank : v.culprits()) {
            RankFailure f;
            f.rank = rank;
            if (rank >= 0 && rank < ranks.size()) {
                f.host = ranks[rank].host;
                f.localRank = ranks[rank].localRank;
            }
            f.timeUs = collectiveUs;
            f.kind = kCollective;
            f.message = headline + QLatin1Char('\n') + v.text();
            observed << f;
        }
    }
    for (RankFailure &f : observed) {
        if (ranks.value(f.rank).hung && f.stack.isEmpty() && stacks.contains(f.rank))
            f.stack = stacks.value(f.rank).split(QLatin1Char('\n'));
    }
    verdict.m_report = FailureReport::build(observed);
    return verdict;
}

bool FailureVerdict::looksLikePeerFailure(const QString &text)
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

bool FailureVerdict::looksLikePeerFailure(const RankFailure &failure)
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

QString FailureVerdict::summaryOf(const FailureReport &report)
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

int FailureVerdict::rootCauseRank() const
{
    const RankFailure *root = m_report.rootCause();
    return root ? root->rank : -1;
}

} // namespace rankdeck
