// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/pointtopointanalysis.h"

#include "diagnosis/collectivegroupanalysis.h"
#include "diagnosis/failuregrouping.h"
#include "util/printabletext.h"
#include "util/translation.h"

#include <QRegularExpression>
#include <QSet>

#include <array>

namespace rankdeck {

namespace {

enum class Direction
{
    Receive,
    Send,
    Both // batch_isend_irecv, a schedule's batched ops: either way
};

Direction directionOf(const RankCollectiveInput &in)
{
    static const QSet<QString> receives = {QStringLiteral("recv"), QStringLiteral("irecv"),
                                           QStringLiteral("recv_object_list")};
    static const QSet<QString> sends = {QStringLiteral("send"), QStringLiteral("isend"),
                                        QStringLiteral("send_object_list")};
    if (receives.contains(in.p2pCall))
        return Direction::Receive;
    if (sends.contains(in.p2pCall))
        return Direction::Send;
    if (in.p2pCall == QLatin1String("wait")) {
        if (in.nativeFrame.contains(QLatin1String("Recv")))
            return Direction::Receive;
        if (in.nativeFrame.contains(QLatin1String("Send")))
            return Direction::Send;
    }
    return Direction::Both;
}

QString callText(const RankCollectiveInput &in)
{
    if (in.p2pCall != QLatin1String("wait"))
        return in.p2pCall;
    switch (directionOf(in)) {
    case Direction::Receive:
        return tr("a receive's wait()");
    case Direction::Send:
        return tr("a send's wait()");
    case Direction::Both:
        break;
    }
    return tr("a request's wait()");
}

// "train.py:24 in main: `dist.recv(t, src=0)`"
QString callPlace(const RankCollectiveInput &in)
{
    QString out = printableLabel(in.where, 120);
    if (!in.callSource.isEmpty())
        out += (out.isEmpty() ? QString() : QStringLiteral(": ")) + QLatin1Char('`') +
               printableLabel(in.callSource.trimmed(), 120) + QLatin1Char('`');
    return out.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(out);
}

// "it is at train.py:19 in main, in clock_nanosleep"
QString elsewhereText(const CollectiveGroupAnalysis &a, int rank)
{
    const RankCollectiveInput *in = a.input(rank);
    if (!in)
        return tr("it is not among the ranks compared");
    if (!in->alive)
        return tr("it has exited");
    const RankInCollective c = a.waitsIn(rank, QString());
    QStringList where;
    if (!in->where.isEmpty())
        where << printableLabel(in->where, 120);
    if (!in->nativeFrame.isEmpty())
        where << tr("in %1").arg(printableLabel(in->nativeFrame, 80));
    QString at = where.isEmpty() ? tr("its stacks do not say where it is")
                                 : tr("it is at %1").arg(where.join(QStringLiteral(", ")));
    if (c.seq > 0)
        at = tr("it waits in collective %1; %2").arg(c.text(), at);
    return at;
}

QString capitalisedRankList(const QList<int> &ranks)
{
    QString s = formatRankList(ranks);
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s;
}

} // namespace

int PointToPointAnalysis::peerFromSource(const QString &source, bool receiving)
{
    static const QRegularExpression srcKeyword(
        QStringLiteral("\\b(?:group_)?src\\s*=\\s*(\\d+)\\b"));
    static const QRegularExpression dstKeyword(
        QStringLiteral("\\b(?:group_)?dst\\s*=\\s*(\\d+)\\b"));
    // torch's order: send(tensor, dst, …), recv(tensor, src, …), and their i- forms.
    static const QRegularExpression recvPositional(
        QStringLiteral("\\bi?recv\\s*\\(\\s*[^,()]+(?:\\([^()]*\\))?\\s*,\\s*(\\d+)\\s*[,)]"));
    static const QRegularExpression sendPositional(
        QStringLiteral("\\bi?send\\s*\\(\\s*[^,()]+(?:\\([^()]*\\))?\\s*,\\s*(\\d+)\\s*[,)]"));
    for (const QRegularExpression *rx : receiving ? std::array{&srcKeyword, &recvPositional}
                                                  : std::array{&dstKeyword, &sendPositional})
        if (const QRegularExpressionMatch m = rx->match(source); m.hasMatch())
            return m.captured(1).toInt();
    return -1;
}

std::optional<CollectiveVerdict> PointToPointAnalysis::examine(const CollectiveGroupAnalysis &a,
                                                               const QString &collectives)
{
    QList<int> blocked, idle;
    for (int r : a.ranks()) {
        const RankCollectiveInput *in = a.input(r);
        if (!in->p2pCall.isEmpty() && in->alive)
            blocked << r;
        else if (in->alive && a.waitsIn(r, QString()).seq < 0)
            idle << r;
    }
    if (blocked.isEmpty())
        return std::nullopt;

    CollectiveVerdict v;
    v.m_kind = CollectiveVerdict::Kind::MissingRanks;
    QStringList parts;
    QSet<int> culprits, victims;
    QSet<int> receivedFrom; // culprits a rank waits to receive from (else to send to)
    QList<int> unknownPeer;
    for (int r : blocked) {
        const RankCollectiveInput &in = *a.input(r);
        const Direction d = directionOf(in);
        const int peer =
            d == Direction::Both ? -1 : peerFromSource(in.callSource, d == Direction::Receive);
        const QString verb = d == Direction::Receive ? tr("from")
                             : d == Direction::Send  ? tr("to")
                                                     : tr("with");
        if (peer < 0 || !a.input(peer)) {
            unknownPeer << r;
            parts << tr("rank %1 waits in %2%3").arg(r).arg(callText(in), callPlace(in));
            victims.insert(r);
            continue;
        }
        const RankCollectiveInput &other = *a.input(peer);
        parts << tr("rank %1 waits in %2 %3 rank %4%5")
                     .arg(r)
                     .arg(callText(in), verb)
                     .arg(peer)
                     .arg(callPlace(in));
        if (blocked.contains(peer)) {
            const Direction od = directionOf(other);
            const int back = od == Direction::Both
                                 ? -1
                                 : peerFromSource(other.callSource, od == Direction::Receive);
            // Each receiving from the other: neither sends first. A matching pair (one sends,
            // the other receives) is waiting on something else and names no one.
            if (back == r && od == d && d != Direction::Both) {
                culprits.insert(r);
                culprits.insert(peer);
            } else {
                victims.insert(r);
            }
            continue;
        }
        victims.insert(r);
        culprits.insert(peer);
        if (d == Direction::Receive)
            receivedFrom.insert(peer);
    }
    for (int c : std::as_const(culprits))
        victims.remove(c);
    // Who the others wait for, said once per culprit.
    QList<int> named(culprits.begin(), culprits.end());
    std::sort(named.begin(), named.end());
    for (int c : std::as_const(named)) {
        if (blocked.contains(c))
            continue;
        parts << tr("rank %1 is not %2: %3")
                     .arg(c)
                     .arg(receivedFrom.contains(c) ? tr("sending") : tr("receiving"),
                          elsewhereText(a, c));
    }
    // No peer in the code line: the ranks in no send, receive or collective are the likely ones.
    if (culprits.isEmpty() && !unknownPeer.isEmpty() && !idle.isEmpty()) {
        v.m_culpritsInferred = true;
        for (int c : std::as_const(idle)) {
            culprits.insert(c);
            parts << tr("rank %1 is in no send, receive or collective: %2")
                         .arg(c)
                         .arg(elsewhereText(a, c));
        }
    }
    v.m_culprits = QList<int>(culprits.begin(), culprits.end());
    v.m_victims = QList<int>(victims.begin(), victims.end());
    std::sort(v.m_culprits.begin(), v.m_culprits.end());
    std::sort(v.m_victims.begin(), v.m_victims.end());
    QString text =
        tr("Point-to-point, not a collective: %1.").arg(parts.join(QStringLiteral("; ")));
    if (!collectives.isEmpty())
        text +=
            tr(" The flight recorder shows %1 (Gloo records no send or recv).").arg(collectives);
    v.m_text = text;
    const int first = v.m_victims.isEmpty() ? blocked.first() : v.m_victims.first();
    const RankCollectiveInput &waiting = *a.input(first);
    if (v.m_culprits.isEmpty())
        v.m_headline =
            tr("Rank %1 waits in %2; no rank is named for it").arg(first).arg(callText(waiting));
    else if (v.m_victims.isEmpty())
        v.m_headline = tr("%1 wait in point-to-point calls for each other")
                           .arg(capitalisedRankList(v.m_culprits));
    else
        v.m_headline = tr("%1 %2 in %3 for %4%5")
                           .arg(capitalisedRankList(v.m_victims),
                                v.m_victims.size() == 1 ? tr("waits") : tr("wait"),
                                callText(waiting), formatRankList(v.m_culprits),
                                v.m_culpritsInferred ? tr(" (inferred)") : QString());
    return v;
}

} // namespace rankdeck
