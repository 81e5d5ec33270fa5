// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/collectiveverdict.h"

#include "diagnosis/collectivegroupanalysis.h"
#include "diagnosis/failuregrouping.h"
#include "diagnosis/pointtopointanalysis.h"
#include "util/printabletext.h"
#include "util/translation.h"

#include <QJsonArray>

#include <limits>

namespace rankdeck {

namespace {

// How strongly a group's verdict explains the hang; the lowest wins (see compute()).
int priority(const CollectiveVerdict &v, const CollectiveGroupAnalysis &a)
{
    switch (v.kind()) {
    case CollectiveVerdict::Kind::Desync:
        return 0;
    case CollectiveVerdict::Kind::MissingRanks:
        if (v.culpritsInferred())
            return 3;
        // A culprit that itself waits in another group's collective is held up there: the
        // group whose culprits wait on nothing is where the chain starts.
        for (int c : v.culprits())
            if (a.waitsIn(c, QString()).seq < 0)
                return 1;
        return 2;
    case CollectiveVerdict::Kind::AllEnteredNoneCompleted:
        return 4;
    case CollectiveVerdict::Kind::Undecided:
        return 5;
    case CollectiveVerdict::Kind::Healthy:
        break;
    }
    return 6;
}

// "rank 2 (it has exited); ranks 0, 1 (no answer within 2 s: …)"
QString noDumpText(const CollectiveGroupAnalysis &a, const QList<int> &ranks)
{
    QMap<QString, QList<int>> byReason;
    QStringList order;
    for (int r : ranks) {
        const RankCollectiveInput *in = a.input(r);
        QString reason = printableLabel(in->noDumpReason, 200);
        if (!in->alive)
            reason = reason.isEmpty() ? tr("it has exited") : tr("it has exited; %1").arg(reason);
        else if (reason.isEmpty())
            reason = tr("no reason given");
        if (!byReason.contains(reason))
            order << reason;
        byReason[reason] << r;
    }
    QStringList parts;
    for (const QString &reason : order)
        parts << QStringLiteral("%1 (%2)").arg(formatRankList(byReason[reason]), reason);
    return parts.join(QStringLiteral("; "));
}

constexpr qsizetype kMaxJsonRanks = 1 << 20;
constexpr qsizetype kMaxJsonText = 1 << 16;

} // namespace

CollectiveVerdict CollectiveVerdict::compute(const QList<RankCollectiveInput> &inputs, qint64 nowNs)
{
    const CollectiveGroupAnalysis a(inputs, nowNs);
    QList<int> noDump;
    for (int r : a.ranks())
        if (!a.input(r)->dump.valid)
            noDump << r;

    CollectiveVerdict best;
    int bestPriority = std::numeric_limits<int>::max();
    qint64 bestTime = std::numeric_limits<qint64>::max();
    QStringList healthy, others;
    for (const QString &name : a.groupNames()) {
        CollectiveVerdict v = a.examine(name);
        const int p = priority(v, a);
        // Between groups of one kind: the one whose parting began first.
        const qint64 t =
            v.m_seq > 0 ? a.firstEnteredNs(name, v.m_seq) : std::numeric_limits<qint64>::max();
        if (v.kind() == Kind::Healthy) {
            if (!v.m_text.isEmpty() && healthy.size() < 4)
                healthy << v.m_text;
            continue;
        }
        if (p < bestPriority || (p == bestPriority && t < bestTime)) {
            if (bestPriority < 6)
                others << best.m_headline;
            best = v;
            bestPriority = p;
            bestTime = t;
        } else {
            others << v.m_headline;
        }
    }

    CollectiveVerdict out = best;
    out.m_noDump = noDump;
    if (a.ranks().isEmpty()) {
        out.m_text = tr("No ranks to compare.");
        out.m_headline = tr("No collective verdict: no ranks");
    } else if (noDump.size() == a.ranks().size()) {
        out = CollectiveVerdict();
        out.m_noDump = noDump;
        out.m_text = tr("No rank gave a flight-recorder dump: %1.").arg(noDumpText(a, noDump));
        out.m_headline = tr("No collective verdict: no rank gave a flight-recorder dump");
    } else if (bestPriority == std::numeric_limits<int>::max()) {
        out = CollectiveVerdict();
        out.m_noDump = noDump;
        if (!a.anyCollective()) {
            out.m_text = tr("No dump holds a collective: the flight recorder records nothing "
                            "(TORCH_FR_BUFFER_SIZE=0?) or no collective ran yet.");
            out.m_headline = tr("No collective verdict: the dumps hold no collective");
        } else if (!noDump.isEmpty()) {
            out.m_text = tr("The ranks that dumped show no collective stuck (%1); no dump from "
                            "%2.")
                             .arg(healthy.join(QStringLiteral("; ")), noDumpText(a, noDump));
            out.m_headline =
                tr("No collective verdict: %1 gave no dump").arg(formatRankList(noDump));
        } else {
            out.m_kind = Kind::Healthy;
            out.m_text = tr("No collective is stuck: %1.").arg(healthy.join(QStringLiteral("; ")));
            out.m_headline = tr("No collective stuck");
        }
        // No collective explains it: a rank blocked in send or recv may.
        if (std::optional<CollectiveVerdict> p2p =
                PointToPointAnalysis::examine(a, healthy.join(QStringLiteral("; ")))) {
            const QList<int> silent = out.m_noDump;
            out = *p2p;
            out.m_noDump = silent;
            if (!silent.isEmpty())
                out.m_text += tr(" No dump from %1.").arg(noDumpText(a, silent));
        }
    } else {
        QString text = out.m_text;
        // The inferred verdict already gives the silent ranks' reasons.
        if (!noDump.isEmpty() && !out.m_culpritsInferred)
            text += tr(" No dump from %1.").arg(noDumpText(a, noDump));
        if (!others.isEmpty()) {
            QString also = others.mid(0, 4).join(QStringLiteral("; "));
            if (!also.isEmpty())
                also[0] = also[0].toLower();
            text += tr(" Also: %1.").arg(also);
        }
        out.m_text = text;
    }
    for (int r : a.ranks()) {
        RankInCollective c = a.waitsIn(r, out.m_groupName);
        // Where no collective is pending, the point-to-point call a rank is blocked in.
        if (c.seq < 0 && c.hasDump && !a.input(r)->p2pCall.isEmpty())
            c.op = tr("%1 (point-to-point)").arg(a.input(r)->p2pCall);
        out.m_inCollective << c;
    }
    return out;
}

QString CollectiveVerdict::groupLabel() const
{
    if (m_groupName.isEmpty() && m_groupDesc.isEmpty())
        return QString();
    if (m_groupDesc == QLatin1String("default_pg"))
        return QStringLiteral("default_pg");
    // "group 1 (ranks 0, 2)", "tp (group 5, ranks 1, 3)"; Gloo's new_group says "undefined".
    const bool named = !m_groupDesc.isEmpty() && m_groupDesc != QLatin1String("undefined");
    QStringList inside;
    if (named)
        inside << tr("group %1").arg(printableLabel(m_groupName, 60));
    if (!m_groupRanks.isEmpty())
        inside << (m_groupRanksKnown ? tr("ranks %1") : tr("seen on ranks %1"))
                      .arg(formatRankRanges(m_groupRanks));
    const QString base = named ? printableLabel(m_groupDesc, 60)
                               : tr("group %1").arg(printableLabel(m_groupName, 60));
    return inside.isEmpty()
               ? base
               : QStringLiteral("%1 (%2)").arg(base, inside.join(QStringLiteral(", ")));
}

const RankInCollective *CollectiveVerdict::inCollective(int rank) const
{
    for (const RankInCollective &c : m_inCollective)
        if (c.rank == rank)
            return &c;
    return nullptr;
}

QString RankInCollective::text() const
{
    if (!hasDump)
        return tr("no dump");
    if (seq < 0)
        return op.isEmpty() ? tr("none pending") : printableLabel(op, 60);
    QString out = QStringLiteral("#%1 %2").arg(seq).arg(printableLabel(op, 60)).trimmed();
    if (group != QLatin1String("default_pg"))
        out += QStringLiteral(" (%1)").arg(printableLabel(group, 60));
    return out;
}

QString CollectiveVerdict::kindName(Kind kind)
{
    switch (kind) {
    case Kind::Healthy:
        return QStringLiteral("healthy");
    case Kind::MissingRanks:
        return QStringLiteral("missing_ranks");
    case Kind::Desync:
        return QStringLiteral("desync");
    case Kind::AllEnteredNoneCompleted:
        return QStringLiteral("all_entered_none_completed");
    case Kind::Undecided:
        break;
    }
    return QStringLiteral("undecided");
}

namespace {

QJsonArray intsToJson(const QList<int> &list)
{
    QJsonArray out;
    for (int n : list)
        out.append(n);
    return out;
}

// Reads what toJson() wrote; the first problem is kept in *error and the rest is skipped.
struct JsonIn
{
    QString error;

    bool fail(const QString &why)
    {
        if (error.isEmpty())
            error = why;
        return false;
    }
    QString string(const QJsonObject &o, const char *key, qsizetype max)
    {
        const QJsonValue v = o.value(QLatin1String(key));
        if (!v.isString() || v.toString().size() > max)
            fail(
                tr("%1 is not a string of at most %2 characters").arg(QLatin1String(key)).arg(max));
        return v.toString().left(max);
    }
    qint64 integer(const QJsonObject &o, const char *key, qint64 min)
    {
        const qint64 none = std::numeric_limits<qint64>::min();
        const qint64 n = o.value(QLatin1String(key)).toInteger(none);
        if (n == none || n < min)
            return fail(tr("%1 is not an integer of at least %2").arg(QLatin1String(key)).arg(min)),
                   min;
        return n;
    }
    QList<int> ranks(const QJsonObject &o, const char *key)
    {
        QList<int> out;
        const QJsonValue v = o.value(QLatin1String(key));
        if (!v.isArray() || v.toArray().size() > kMaxJsonRanks)
            return fail(tr("%1 is not a list of ranks").arg(QLatin1String(key))), out;
        for (const QJsonArray items = v.toArray(); const auto &r : items) {
            const qint64 n = r.toInteger(-1);
            if (n < 0 || n > std::numeric_limits<int>::max())
                return fail(tr("%1 holds something that is not a rank").arg(QLatin1String(key))),
                       QList<int>();
            out << int(n);
        }
        return out;
    }
};

} // namespace

QJsonObject CollectiveVerdict::toJson() const
{
    QJsonArray cells;
    for (const RankInCollective &c : m_inCollective)
        cells.append(QJsonObject{{QStringLiteral("rank"), c.rank},
                                 {QStringLiteral("dump"), c.hasDump},
                                 {QStringLiteral("group"), c.group},
                                 {QStringLiteral("seq"), c.seq},
                                 {QStringLiteral("op"), c.op}});
    return QJsonObject{
        {QStringLiteral("kind"), kindName(m_kind)},
        {QStringLiteral("group"), QJsonObject{{QStringLiteral("name"), m_groupName},
                                              {QStringLiteral("desc"), m_groupDesc},
                                              {QStringLiteral("ranks"), intsToJson(m_groupRanks)},
                                              {QStringLiteral("ranksKnown"), m_groupRanksKnown}}},
        {QStringLiteral("seq"), m_seq},
        {QStringLiteral("culprits"), intsToJson(m_culprits)},
        {QStringLiteral("victims"), intsToJson(m_victims)},
        {QStringLiteral("culpritsInferred"), m_culpritsInferred},
        {QStringLiteral("noDump"), intsToJson(m_noDump)},
        {QStringLiteral("lastCompletedSeq"), m_lastCompleted},
        {QStringLiteral("pendingNs"), m_pendingNs},
        {QStringLiteral("inCollective"), cells},
        {QStringLiteral("text"), m_text},
        {QStringLiteral("headline"), m_headline},
    };
}

CollectiveVerdict CollectiveVerdict::fromJson(const QJsonObject &json, QString *error)
{
    JsonIn in;
    CollectiveVerdict v;
    const QString kind = in.string(json, "kind", 64);
    bool known = false;
    for (Kind k : {Kind::Undecided, Kind::Healthy, Kind::MissingRanks, Kind::Desync,
                   Kind::AllEnteredNoneCompleted})
        if (kindName(k) == kind) {
            v.m_kind = k;
            known = true;
        }
    if (!known)
        in.fail(tr("kind \"%1\" is not a verdict's kind").arg(printableLabel(kind, 60)));
    const QJsonObject group = json.value(QLatin1String("group")).toObject();
    v.m_groupName = in.string(group, "name", frlimits::MaxString);
    v.m_groupDesc = in.string(group, "desc", frlimits::MaxString);
    v.m_groupRanks = in.ranks(group, "ranks");
    v.m_groupRanksKnown = group.value(QLatin1String("ranksKnown")).toBool();
    v.m_seq = in.integer(json, "seq", -1);
    v.m_culprits = in.ranks(json, "culprits");
    v.m_victims = in.ranks(json, "victims");
    v.m_culpritsInferred = json.value(QLatin1String("culpritsInferred")).toBool();
    v.m_noDump = in.ranks(json, "noDump");
    v.m_lastCompleted = in.integer(json, "lastCompletedSeq", -1);
    v.m_pendingNs = in.integer(json, "pendingNs", 0);
    const QJsonValue cells = json.value(QLatin1String("inCollective"));
    if (!cells.isArray() || cells.toArray().size() > kMaxJsonRanks)
        in.fail(tr("inCollective is not a list"));
    for (const QJsonArray items = cells.toArray(); const auto &cell : items) {
        const QJsonObject o = cell.toObject();
        RankInCollective c;
        const qint64 rank = in.integer(o, "rank", 0);
        if (rank > std::numeric_limits<int>::max())
            in.fail(tr("inCollective holds a rank out of range"));
        c.rank = int(rank);
        c.hasDump = o.value(QLatin1String("dump")).toBool();
        c.group = in.string(o, "group", 4 * frlimits::MaxString);
        c.seq = in.integer(o, "seq", -1);
        c.op = in.string(o, "op", frlimits::MaxString);
        if (!in.error.isEmpty())
            break;
        v.m_inCollective << c;
    }
    v.m_text = in.string(json, "text", kMaxJsonText);
    v.m_headline = in.string(json, "headline", kMaxJsonText);
    if (error)
        *error = in.error.isEmpty() ? QString() : tr("collective verdict: %1").arg(in.error);
    if (!in.error.isEmpty())
        return CollectiveVerdict();
    return v;
}

} // namespace rankdeck
