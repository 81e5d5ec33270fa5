// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one group's verdict in each of its kinds (desync, missing
// ranks by the majority, all entered, together), each with the words that explain it; the kinds
// share the helpers above them.
#include "diagnosis/collectivegroupanalysis.h"

#include "diagnosis/failuregrouping.h"
#include "util/printabletext.h"
#include "util/translation.h"

#include <QSet>

#include <algorithm>
#include <limits>

namespace rankdeck {

namespace {

constexpr qint64 kNever = std::numeric_limits<qint64>::max();
constexpr int kMaxLines = 8; // distinct rank descriptions in one text; the rest are counted

// Ops whose ranks legitimately pass tensors of different shapes: only the op is compared
// (all_to_all's totals are a sum over ranks, not a property of one rank's call).
bool shapesMayDiffer(const QString &op)
{
    static const QSet<QString> ops = {QStringLiteral("gather"),
                                      QStringLiteral("scatter"),
                                      QStringLiteral("all_to_all"),
                                      QStringLiteral("alltoall"),
                                      QStringLiteral("alltoall_base"),
                                      QStringLiteral("all_to_all_single"),
                                      QStringLiteral("all_to_all_v_single"),
                                      QStringLiteral("all_gather_v"),
                                      QStringLiteral("reduce_scatter_v")};
    return ops.contains(op);
}

// torch's analyser's size rules (flight_recorder/components/utils.py, match_one_event): an
// all-gather's output holds the input once per rank, a reduce-scatter's input the output once
// per rank; every rank's own call can be checked, and its outputs compared with the others'.
bool gathersAll(const QString &op)
{
    static const QSet<QString> ops = {QStringLiteral("all_gather"),
                                      QStringLiteral("_allgather_base"),
                                      QStringLiteral("_all_gather_base"),
                                      QStringLiteral("all_gather_single"),
                                      QStringLiteral("all_gather_into_tensor"),
                                      QStringLiteral("allgather_into_tensor_coalesced"),
                                      QStringLiteral("all_gather_into_tensor_coalesced")};
    return ops.contains(op);
}

bool scattersReduced(const QString &op)
{
    static const QSet<QString> ops = {
        QStringLiteral("reduce_scatter"), QStringLiteral("_reduce_scatter_base"),
        QStringLiteral("reduce_scatter_single"), QStringLiteral("reduce_scatter_tensor"),
        QStringLiteral("reduce_scatter_tensor_coalesced")};
    return ops.contains(op);
}

QString sizesKey(const QList<QList<qint64>> &sizes)
{
    QStringList parts;
    for (const QList<qint64> &t : sizes) {
        QStringList dims;
        for (qint64 d : t)
            dims << QString::number(d);
        parts << QLatin1Char('[') + dims.join(QLatin1Char(',')) + QLatin1Char(']');
    }
    return parts.join(QLatin1Char(','));
}

// What must agree between ranks at one collective number: [op, input sizes, input dtypes,
// output sizes, output dtypes]. groupSize: the group's members where known, else 0 (then a
// gather's or scatter's own proportion is not judged).
QStringList signature(const FlightRecorderEntry &e, qsizetype groupSize)
{
    if (shapesMayDiffer(e.op))
        return {e.op, QString(), QString(), QString(), QString()};
    const QString in = e.inputDtypes.join(QLatin1Char(','));
    const QString out = e.outputDtypes.join(QLatin1Char(','));
    // A rank whose own call breaks the proportion differs from every rank whose call keeps it.
    const auto proportion = [&](qint64 whole, qint64 part) {
        if (groupSize <= 0 || e.outputSizes.isEmpty())
            return QString();
        return whole == part * groupSize ? QStringLiteral("×%1").arg(groupSize)
                                         : QStringLiteral("%1 of %2").arg(part).arg(whole);
    };
    if (gathersAll(e.op))
        return {e.op, sizesKey(e.inputSizes), in,
                proportion(frNumel(e.outputSizes), frNumel(e.inputSizes)) + QLatin1Char(' ') +
                    sizesKey(e.outputSizes),
                out};
    if (scattersReduced(e.op))
        return {e.op, sizesKey(e.inputSizes), in,
                proportion(frNumel(e.inputSizes), frNumel(e.outputSizes)) + QLatin1Char(' ') +
                    sizesKey(e.outputSizes),
                out};
    return {e.op, sizesKey(e.inputSizes), in, sizesKey(e.outputSizes), out};
}

QString describe(const FlightRecorderEntry *e)
{
    return e ? e->describe() : tr("a collective not in its dump");
}

QString capitalised(QString s)
{
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s;
}

QString seconds(qint64 ns)
{
    const double s = double(ns) / 1e9;
    return s < 100 ? tr("%1 s").arg(s, 0, 'f', 1) : tr("%1 s").arg(qint64(s));
}

// "train.py:22 in main, in nanosleep": where the rank's stacks put it; empty when unknown.
QString place(const RankCollectiveInput &in, bool withNative)
{
    QStringList parts;
    if (!in.where.isEmpty())
        parts << printableLabel(in.where, 120);
    if (withNative && !in.nativeFrame.isEmpty())
        parts << tr("in %1").arg(printableLabel(in.nativeFrame, 80));
    return parts.join(QStringLiteral(", "));
}

QString inParens(const QString &text)
{
    return text.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(text);
}

QString waitVerb(const QList<int> &ranks)
{
    return ranks.size() == 1 ? tr("waits") : tr("wait");
}

struct RankText
{
    int rank;
    QString text;  // "entered all_reduce of 8 float32"
    QString where; // "train.py:9 in main", may be empty
};

// Ranks that did the same once, with where each was: "ranks 0–2 entered all_reduce of 8
// float32 (x.py:9 in main / x.py:12 in step)".
QString joinByText(const QList<RankText> &rankTexts)
{
    QMap<QString, QList<int>> byText;
    QMap<QString, QStringList> wheres;
    QStringList order;
    for (const RankText &t : rankTexts) {
        if (!byText.contains(t.text))
            order << t.text;
        byText[t.text] << t.rank;
        QStringList &w = wheres[t.text];
        if (!t.where.isEmpty() && !w.contains(t.where) && w.size() <= 3)
            w << (w.size() == 3 ? QStringLiteral("…") : t.where);
    }
    QStringList lines;
    int left = 0;
    for (const QString &text : order) {
        if (lines.size() < kMaxLines)
            lines << formatRankList(byText[text]) + QLatin1Char(' ') + text +
                         inParens(wheres[text].join(QStringLiteral(" / ")));
        else
            left += int(byText[text].size());
    }
    if (left > 0)
        lines << tr("%1 more rank(s) elsewhere").arg(left);
    return lines.join(QStringLiteral("; "));
}

} // namespace

CollectiveGroupAnalysis::CollectiveGroupAnalysis(const QList<RankCollectiveInput> &inputs,
                                                 qint64 nowNs)
    : m_nowNs(nowNs)
{
    QSet<int> seen;
    for (const RankCollectiveInput &in : inputs)
        if (in.rank >= 0 && !seen.contains(in.rank)) {
            seen.insert(in.rank);
            m_ranks << RankView{&in, {}};
        }
    std::sort(m_ranks.begin(), m_ranks.end(),
              [](const RankView &a, const RankView &b) { return a.in->rank < b.in->rank; });
    for (RankView &r : m_ranks) {
        QHash<qint64, QString> names; // pg_id → group name on this rank
        for (const FlightRecorderEntry &e : r.in->dump.entries) {
            names.insert(e.pgId, e.groupName);
            GroupInfo &g = m_groups[e.groupName];
            g.name = e.groupName;
            if (g.desc.isEmpty())
                g.desc = e.groupDesc;
            if (e.isP2p || e.collectiveSeq <= 0)
                continue;
            RankGroup &rg = r.groups[e.groupName];
            // A coalesced group's end entry ("coalesced", "ALLGATHER_coalesced": no tensors of its
            // own) after its ops, or batch_isend_irecv's with the last collective's stale number:
            // not a call to compare; its state still counts.
            const bool endOfGroup =
                e.op.endsWith(QLatin1String("coalesced")) &&
                std::all_of(e.inputSizes.cbegin(), e.inputSizes.cend(),
                            [](const QList<qint64> &t) { return t.isEmpty(); }) &&
                rg.bySeq.contains(e.collectiveSeq);
            if (endOfGroup) {
                if (e.finished())
                    rg.finished = qMax(rg.finished, e.collectiveSeq);
                continue;
            }
            if (const FlightRecorderEntry *before = rg.bySeq.value(e.collectiveSeq, nullptr)) {
                QList<const FlightRecorderEntry *> &all = rg.grouped[e.collectiveSeq];
                if (all.isEmpty())
                    all << before;
                all << &e;
            }
            rg.bySeq.insert(e.collectiveSeq, &e);
            rg.entered = qMax(rg.entered, e.collectiveSeq);
            if (e.finished())
                rg.finished = qMax(rg.finished, e.collectiveSeq);
        }
        for (const FlightRecorderGroupStatus &s : r.in->dump.status) {
            // A group whose entries all fell out of the buffer: torch numbers name and id alike.
            const QString name = names.value(s.pgId, QString::number(s.pgId));
            m_groups[name].name = name;
            RankGroup &rg = r.groups[name];
            rg.entered = qMax(rg.entered, s.lastEnqueued);
            rg.finished = qMax(rg.finished, s.lastCompleted);
        }
    }
    const QList<int> all = ranks();
    for (GroupInfo &g : m_groups) {
        if (g.desc == QLatin1String("default_pg")) {
            g.members = all;
            g.membersKnown = true;
            continue;
        }
        for (const RankView &r : m_ranks)
            if (const FlightRecorderGroup *c = r.in->dump.group(g.name); c && !c->ranks.isEmpty()) {
                g.members = c->ranks;
                g.membersKnown = true;
                break;
            }
        if (!g.membersKnown)
            for (const RankView &r : m_ranks)
                if (r.groups.contains(g.name))
                    g.members << r.in->rank;
    }
}

bool CollectiveGroupAnalysis::anyCollective() const
{
    for (const RankView &r : m_ranks)
        for (const RankGroup &rg : r.groups)
            if (rg.entered > 0)
                return true;
    return false;
}

QList<int> CollectiveGroupAnalysis::ranks() const
{
    QList<int> out;
    for (const RankView &r : m_ranks)
        out << r.in->rank;
    return out;
}

const RankCollectiveInput *CollectiveGroupAnalysis::input(int rank) const
{
    const RankView *r = view(rank);
    return r ? r->in : nullptr;
}

const CollectiveGroupAnalysis::RankView *CollectiveGroupAnalysis::view(int rank) const
{
    const auto it = std::lower_bound(m_ranks.begin(), m_ranks.end(), rank,
                                     [](const RankView &r, int n) { return r.in->rank < n; });
    return it != m_ranks.end() && it->in->rank == rank ? &*it : nullptr;
}

const FlightRecorderEntry *CollectiveGroupAnalysis::entryAt(const RankView &r, const QString &group,
                                                            qint64 seq) const
{
    const auto g = r.groups.constFind(group);
    return g == r.groups.cend() ? nullptr : g->bySeq.value(seq, nullptr);
}

QStringList CollectiveGroupAnalysis::callAt(const RankView &r, const GroupInfo &g, qint64 seq) const
{
    const qsizetype size = g.membersKnown ? g.members.size() : 0;
    const auto group = r.groups.constFind(g.name);
    if (group == r.groups.cend())
        return {};
    const QList<const FlightRecorderEntry *> all = group->grouped.value(seq);
    if (all.isEmpty()) {
        const FlightRecorderEntry *e = group->bySeq.value(seq, nullptr);
        return e ? signature(*e, size) : QStringList();
    }
    // Slot by slot (op, input sizes, input dtypes, outputs, output dtypes), op after op.
    QStringList out(5);
    for (const FlightRecorderEntry *e : all) {
        const QStringList one = signature(*e, size);
        for (qsizetype i = 0; i < out.size(); ++i)
            out[i] += one.value(i) + QChar(0x1e);
    }
    return out;
}

QString CollectiveGroupAnalysis::describeAt(const RankView &r, const QString &group,
                                            qint64 seq) const
{
    const QList<const FlightRecorderEntry *> all = r.groups.value(group).grouped.value(seq);
    if (all.isEmpty())
        return describe(entryAt(r, group, seq));
    QStringList ops;
    for (const FlightRecorderEntry *e : all)
        if (ops.size() < 4)
            ops << e->describe();
    if (all.size() > 4)
        ops << QStringLiteral("…");
    return tr("a coalesced group of %1 (%2)").arg(all.size()).arg(ops.join(QStringLiteral(", ")));
}

qint64 CollectiveGroupAnalysis::firstEnteredNs(const QString &group, qint64 seq) const
{
    qint64 first = kNever;
    for (const RankView &r : m_ranks)
        if (const FlightRecorderEntry *e = entryAt(r, group, seq))
            first = qMin(first, e->timeCreatedNs);
    return first;
}

QString CollectiveGroupAnalysis::label(const QString &group, bool withRanks) const
{
    const GroupInfo g = m_groups.value(group);
    if (group.isEmpty() && g.desc.isEmpty())
        return tr("a group without a name");
    CollectiveVerdict v;
    v.m_groupName = group;
    v.m_groupDesc = g.desc;
    if (withRanks) {
        v.m_groupRanks = g.members;
        v.m_groupRanksKnown = g.membersKnown;
    }
    return v.groupLabel();
}

RankInCollective CollectiveGroupAnalysis::pendingOf(const RankView &r,
                                                    const QString &preferred) const
{
    RankInCollective c;
    c.rank = r.in->rank;
    c.hasDump = r.hasDump();
    qint64 bestTime = kNever;
    for (auto it = r.groups.begin(); it != r.groups.end(); ++it) {
        const RankGroup &rg = it.value();
        if (!rg.pending())
            continue;
        qint64 seq = rg.entered;
        for (auto e = rg.bySeq.upperBound(rg.finished); e != rg.bySeq.end(); ++e)
            if (!e.value()->finished()) {
                seq = e.key();
                break;
            }
        const FlightRecorderEntry *e = rg.bySeq.value(seq, nullptr);
        // The preferred group first, then the oldest; a tie (no entry) by name.
        const qint64 time = it.key() == preferred ? -1 : (e ? e->timeCreatedNs : kNever - 1);
        if (time < bestTime || (time == bestTime && it.key() < c.group)) {
            bestTime = time;
            c.group = it.key();
            c.seq = seq;
            c.op = e ? e->op : QString();
        }
    }
    return c;
}

RankInCollective CollectiveGroupAnalysis::waitsIn(int rank, const QString &preferred) const
{
    const RankView *r = view(rank);
    if (!r)
        return RankInCollective{rank, false, {}, -1, {}};
    RankInCollective c = pendingOf(*r, preferred);
    if (c.seq >= 0) {
        // A cell is short: "default_pg", "group 1", or the group's own description.
        const QString desc = m_groups.value(c.group).desc;
        c.group = desc == QLatin1String("default_pg") ? desc
                  : desc.isEmpty() || desc == QLatin1String("undefined")
                      ? tr("group %1").arg(c.group)
                      : desc;
    }
    return c;
}

// Where a rank that never entered the group's collective is instead.
QString CollectiveGroupAnalysis::elsewhere(const RankView &r, const QString &group,
                                           const QString &op) const
{
    const RankInCollective other = pendingOf(r, QString());
    const QString where = place(*r.in, true);
    if (other.seq > 0 && other.group != group)
        return tr("never entered %1: it waits in %2 #%3 of %4%5")
            .arg(op, printableLabel(other.op, 60))
            .arg(other.seq)
            .arg(label(other.group, false), inParens(where));
    if (!where.isEmpty())
        return tr("never entered %1 (it is at %2)").arg(op, where);
    return tr("never entered %1 (the last it entered there is #%2)")
        .arg(op)
        .arg(r.groups.value(group).entered);
}

// Where its stacks put a rank, when that is where it waits in this collective: a rank that has
// finished it (or failed out of it) is somewhere else by now.
QString CollectiveGroupAnalysis::whereIn(const RankView &r, const QString &group, qint64 seq) const
{
    const RankGroup rg = r.groups.value(group);
    return rg.entered >= seq && rg.finished < seq ? place(*r.in, false) : QString();
}

CollectiveVerdict CollectiveGroupAnalysis::examine(const QString &group) const
{
    const GroupInfo g = m_groups.value(group);
    CollectiveVerdict v;
    v.m_groupName = g.name;
    v.m_groupDesc = g.desc;
    v.m_groupRanks = g.members;
    v.m_groupRanksKnown = g.membersKnown;
    v.m_kind = CollectiveVerdict::Kind::Healthy;

    QList<const RankView *> dumped;
    QList<int> noDump, deadNoDump, aliveNoDump;
    for (int m : g.members) {
        const RankView *r = view(m);
        if (r && r->hasDump())
            dumped << r;
        else if (r) {
            noDump << m;
            (r->in->alive ? aliveNoDump : deadNoDump) << m;
        }
    }
    if (dumped.isEmpty())
        return v;
    qint64 minEntered = kNever, maxEntered = 0, lo = 0;
    for (const RankView *r : dumped) {
        const RankGroup rg = r->groups.value(g.name);
        minEntered = qMin(minEntered, rg.entered);
        maxEntered = qMax(maxEntered, rg.entered);
        if (!rg.bySeq.isEmpty())
            lo = qMax(lo, rg.bySeq.firstKey()); // older ones fell out of some rank's buffer
    }
    // The first number at which ranks that entered it entered different collectives.
    QSet<qint64> seqSet;
    for (const RankView *r : dumped) {
        const RankGroup rg = r->groups.value(g.name);
        for (auto it = rg.bySeq.lowerBound(lo); it != rg.bySeq.end() && it.key() <= maxEntered;
             ++it)
            seqSet.insert(it.key());
    }
    QList<qint64> seqs(seqSet.begin(), seqSet.end());
    std::sort(seqs.begin(), seqs.end());
    qint64 firstDesync = -1;
    for (qint64 s : seqs) {
        QSet<QString> kinds;
        for (const RankView *r : dumped)
            if (entryAt(*r, g.name, s))
                kinds.insert(callAt(*r, g, s).join(QChar(0x1f)));
        if (kinds.size() > 1) {
            firstDesync = s;
            break;
        }
    }
    const qint64 firstMissing = minEntered < maxEntered ? minEntered + 1 : -1;
    if (firstDesync > 0 && (firstMissing < 0 || firstDesync <= firstMissing))
        desync(g, dumped, firstDesync, deadNoDump, &v);
    else if (firstMissing > 0)
        missing(g, dumped, firstMissing, aliveNoDump, &v);
    else if (maxEntered > 0)
        together(g, dumped, maxEntered, noDump, aliveNoDump, &v);
    return v;
}

void CollectiveGroupAnalysis::desync(const GroupInfo &g, const QList<const RankView *> &dumped,
                                     qint64 seq, const QList<int> &deadNoDump,
                                     CollectiveVerdict *v) const
{
    v->m_kind = CollectiveVerdict::Kind::Desync;
    v->m_seq = seq;
    QMap<QStringList, QList<int>> classes;
    QList<int> notEntered;
    for (const RankView *r : dumped) {
        if (entryAt(*r, g.name, seq))
            classes[callAt(*r, g, seq)] << r->in->rank;
        else if (r->groups.value(g.name).entered < seq)
            notEntered << r->in->rank;
    }
    QStringList majority;
    qsizetype best = 0, second = 0, total = 0;
    for (auto it = classes.begin(); it != classes.end(); ++it) {
        total += it.value().size();
        if (it.value().size() > best) {
            second = best;
            best = it.value().size();
            majority = it.key();
        } else {
            second = qMax(second, it.value().size());
        }
    }
    const bool byMajority = total >= 3 && best > second;
    QList<RankText> odd, usual;
    bool opDiffers = false, sizeDiffers = false, outputDiffers = false, dtypeDiffers = false;
    QStringList ops; // for the headline, in the order of the ranks
    for (const RankView *r : dumped)
        if (entryAt(*r, g.name, seq) && ops.size() < 3 &&
            !ops.contains(describeAt(*r, g.name, seq)))
            ops << describeAt(*r, g.name, seq);
    for (auto it = classes.begin(); it != classes.end(); ++it) {
        const bool isMajority = byMajority && it.key() == majority;
        for (int rank : it.value()) {
            const RankView *r = view(rank);
            const QString what = describeAt(*r, g.name, seq);
            (isMajority ? usual : odd)
                << RankText{rank, tr("entered %1").arg(what), whereIn(*r, g.name, seq)};
            // Without a majority no side is the odd one: nobody is named.
            (isMajority || !byMajority ? v->m_victims : v->m_culprits) << rank;
        }
        const QStringList other = byMajority ? majority : classes.firstKey();
        opDiffers = opDiffers || it.key()[0] != other[0];
        sizeDiffers = sizeDiffers || it.key()[1] != other[1];
        outputDiffers = outputDiffers || it.key()[3] != other[3];
        dtypeDiffers = dtypeDiffers || it.key()[2] != other[2] || it.key()[4] != other[4];
    }
    v->m_victims += deadNoDump;
    std::sort(v->m_victims.begin(), v->m_victims.end());
    std::sort(v->m_culprits.begin(), v->m_culprits.end());
    const auto byRank = [](const RankText &a, const RankText &b) { return a.rank < b.rank; };
    std::sort(odd.begin(), odd.end(), byRank);
    std::sort(usual.begin(), usual.end(), byRank);
    const QString hint =
        opDiffers ? tr("the ranks disagree on the next collective (did one rank run more "
                       "iterations?)")
        : sizeDiffers
            ? tr("the ranks disagree on the tensor size (do all ranks build the same tensors?)")
        : outputDiffers && !dtypeDiffers
            ? tr("the ranks disagree on the output size (an all-gather's output holds the input "
                 "once per rank, a reduce-scatter's input the output once per rank)")
            : tr("the ranks disagree on the dtype (do all ranks use the same dtype?)");
    QString text = tr("collective #%1 of %2: ").arg(seq).arg(label(g.name, true)) + joinByText(odd);
    if (byMajority)
        text += tr(", where %1 — %2: %3")
                    .arg(joinByText(usual),
                         v->m_culprits.size() == 1
                             ? tr("%1 is the odd one out").arg(formatRankList(v->m_culprits))
                             : tr("%1 are the odd ones out").arg(formatRankList(v->m_culprits)),
                         hint);
    else
        text += tr(" — %1, so no rank is named the culprit: %2")
                    .arg(classes.size() == 2 && best == second
                             ? tr("the ranks split evenly (%1 against %2)").arg(best).arg(second)
                             : tr("no call is made by a majority of the ranks"),
                         hint);
    if (!notEntered.isEmpty())
        text += tr("; %1 had not entered it yet").arg(formatRankList(notEntered));
    if (!deadNoDump.isEmpty())
        text += tr("; %1 died without a dump, a victim of the mismatch (Gloo aborts a rank that "
                   "receives data of the wrong size)")
                    .arg(formatRankList(deadNoDump));
    v->m_text = text + QLatin1Char('.');
    v->m_headline = tr("Desync at collective #%1 of %2: %3")
                        .arg(seq)
                        .arg(label(g.name, false), byMajority ? formatRankList(v->m_culprits) +
                                                                    tr(" differs from the others")
                                                              : ops.join(QStringLiteral(" vs ")));
}

void CollectiveGroupAnalysis::missing(const GroupInfo &g, const QList<const RankView *> &dumped,
                                      qint64 seq, const QList<int> &aliveNoDump,
                                      CollectiveVerdict *v) const
{
    v->m_kind = CollectiveVerdict::Kind::MissingRanks;
    v->m_seq = seq;
    QList<RankText> behind, ahead;
    QList<int> behindRanks, aheadRanks;
    const FlightRecorderEntry *op = nullptr;
    for (const RankView *r : dumped)
        if (r->groups.value(g.name).entered >= seq && (op = entryAt(*r, g.name, seq)))
            break;
    for (const RankView *r : dumped) {
        if (r->groups.value(g.name).entered < seq) {
            behind << RankText{r->in->rank, elsewhere(*r, g.name, describe(op)), {}};
            behindRanks << r->in->rank;
        } else {
            ahead << RankText{r->in->rank, tr("entered it"), whereIn(*r, g.name, seq)};
            aheadRanks << r->in->rank;
        }
    }
    const QString at = tr("collective #%1 of %2: ").arg(seq).arg(label(g.name, true));
    // Ranks without a dump whose stacks put them in a collective's wait are counted with those
    // that entered it: where they are is known, if not which number.
    qsizetype aheadCount = aheadRanks.size();
    for (int rank : aliveNoDump)
        if (const RankView *r = view(rank); r && r->in->p2pCall.isEmpty() &&
                                            (r->in->nativeFrame.contains(QLatin1String("gloo::")) ||
                                             r->in->nativeFrame.contains(QLatin1String("c10d::")) ||
                                             r->in->nativeFrame.contains(QLatin1String("nccl"))))
            ++aheadCount;
    // By the majority: the side whose sequence differs from most ranks' is the culprit,
    // whichever side is behind. Most often that is a rank that never came (a sleep, I/O, a hang
    // of its own); but a rank that made a collective more than the others (an extra call of the
    // loop's own shape matches theirs until the end) is alone ahead.
    if (aheadCount < behindRanks.size()) {
        v->m_culprits = aheadRanks;
        v->m_victims = behindRanks;
        const QString what = describe(op);
        QList<RankText> alone;
        for (const RankText &t : std::as_const(ahead))
            alone << RankText{t.rank, tr("entered %1").arg(what), t.where};
        v->m_text = at + tr("%1 and %2 for it alone; %3 — %4 made one collective more than the "
                            "others (an extra call, or one iteration more).")
                             .arg(joinByText(alone), waitVerb(aheadRanks), joinByText(behind),
                                  formatRankList(aheadRanks));
        v->m_headline = tr("%1 made one collective more than the others: %2 #%3 of %4")
                            .arg(capitalised(formatRankList(aheadRanks)), what)
                            .arg(seq)
                            .arg(label(g.name, false));
        return;
    }
    if (aheadCount == behindRanks.size()) {
        // Late ranks or an extra collective: the numbers cannot tell, so nobody is named.
        v->m_victims = aheadRanks;
        v->m_text =
            at + tr("%1; %2 and %3 for it — the ranks split evenly (%4 against %4), so "
                    "no rank is named the culprit: either %5 late, or %6 one collective "
                    "more.")
                     .arg(joinByText(behind), joinByText(ahead), waitVerb(aheadRanks))
                     .arg(aheadCount)
                     .arg(behindRanks.size() == 1 ? tr("%1 is").arg(formatRankList(behindRanks))
                                                  : tr("%1 are").arg(formatRankList(behindRanks)),
                          tr("%1 made").arg(formatRankList(aheadRanks)));
        v->m_headline = tr("%1 %2 in collective #%3 of %4; %5 never entered it")
                            .arg(capitalised(formatRankList(aheadRanks)), waitVerb(aheadRanks))
                            .arg(seq)
                            .arg(label(g.name, false), formatRankList(behindRanks));
        return;
    }
    v->m_culprits = behindRanks;
    v->m_victims = aheadRanks;
    v->m_text = at + tr("%1; %2 and %3 for it.")
                         .arg(joinByText(behind), joinByText(ahead), waitVerb(v->m_victims));
    v->m_headline =
        tr("%1 never entered collective #%2 of %3; %4 %5 for it")
            .arg(capitalised(formatRankList(v->m_culprits)))
            .arg(seq)
            .arg(label(g.name, false), formatRankList(v->m_victims), waitVerb(v->m_victims));
}

// Every rank that dumped entered the same last collective `seq`.
void CollectiveGroupAnalysis::together(const GroupInfo &g, const QList<const RankView *> &dumped,
                                       qint64 seq, const QList<int> &noDump,
                                       const QList<int> &aliveNoDump, CollectiveVerdict *v) const
{
    v->m_seq = seq;
    bool noneFinished = true, allFinished = true;
    qint64 lastFinished = 0, lastEnteredNs = 0;
    const FlightRecorderEntry *op = nullptr, *previous = nullptr;
    QList<int> dumpedRanks;
    for (const RankView *r : dumped) {
        const RankGroup rg = r->groups.value(g.name);
        noneFinished = noneFinished && rg.finished < seq;
        allFinished = allFinished && rg.finished >= seq;
        lastFinished = qMax(lastFinished, qMin(rg.finished, seq));
        if (const FlightRecorderEntry *e = entryAt(*r, g.name, seq)) {
            op = op ? op : e;
            lastEnteredNs = qMax(lastEnteredNs, e->timeCreatedNs);
        }
        previous = previous ? previous : entryAt(*r, g.name, seq - 1);
        dumpedRanks << r->in->rank;
    }
    const QString at = tr("collective #%1 of %2: ").arg(seq).arg(label(g.name, true));
    if (!noDump.isEmpty() && noneFinished && !aliveNoDump.isEmpty()) {
        v->m_kind = CollectiveVerdict::Kind::MissingRanks;
        v->m_culpritsInferred = true;
        v->m_culprits = aliveNoDump;
        v->m_victims = dumpedRanks;
        QList<RankText> silent;
        for (int rank : aliveNoDump) {
            const RankCollectiveInput &in = *view(rank)->in;
            silent << RankText{rank,
                               tr("gave no dump%1%2")
                                   .arg(inParens(printableLabel(in.noDumpReason, 160)),
                                        in.where.isEmpty() && in.nativeFrame.isEmpty()
                                            ? QString()
                                            : tr(" and is at %1").arg(place(in, true))),
                               {}};
        }
        v->m_text = at + tr("%1 entered %2 and %3; %4 — not accounted for, so it probably never "
                            "entered it.")
                             .arg(formatRankList(dumpedRanks), describe(op), waitVerb(dumpedRanks),
                                  joinByText(silent));
        v->m_headline = tr("%1 (no dump) probably never entered collective #%2 of %3")
                            .arg(capitalised(formatRankList(aliveNoDump)))
                            .arg(seq)
                            .arg(label(g.name, false));
    } else if (!noDump.isEmpty() && !allFinished) {
        // Some wait, and whether the silent ones are in it cannot be told.
        v->m_kind = CollectiveVerdict::Kind::Undecided;
        v->m_text =
            at + tr("%1 entered %2%3; %4 gave no dump, so %5 cannot be compared.")
                     .arg(formatRankList(dumpedRanks), describe(op),
                          dumpedRanks.size() > 1 ? tr(" and agree") : QString(),
                          formatRankList(noDump),
                          noDump.size() == 1 ? tr("its collective") : tr("their collectives"));
        v->m_headline = tr("No collective verdict: %1 gave no dump").arg(formatRankList(noDump));
    } else if (noneFinished) {
        v->m_kind = CollectiveVerdict::Kind::AllEnteredNoneCompleted;
        v->m_lastCompleted = lastFinished;
        v->m_pendingNs = lastEnteredNs > 0 && m_nowNs > lastEnteredNs ? m_nowNs - lastEnteredNs : 0;
        v->m_victims = dumpedRanks;
        v->m_text = at + tr("every rank entered %1 and none finished it, %2 after the last rank "
                            "entered it; the last finished is #%3%4 — look at the transport or "
                            "the network, not the program.")
                             .arg(describe(op), seconds(v->m_pendingNs))
                             .arg(lastFinished)
                             .arg(previous && lastFinished == seq - 1 ? inParens(describe(previous))
                                                                      : QString());
        v->m_headline = tr("Collective #%1 of %2 stuck on every rank for %3: transport or network?")
                            .arg(seq)
                            .arg(label(g.name, false), seconds(v->m_pendingNs));
    } else {
        v->m_text = (allFinished ? tr("every rank finished collective #%1 of %2 (%3)")
                                 : tr("every rank entered collective #%1 of %2 (%3), some "
                                      "finished it"))
                        .arg(seq)
                        .arg(label(g.name, false), describe(op));
    }
}

} // namespace rankdeck
