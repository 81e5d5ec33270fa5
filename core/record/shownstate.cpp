// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/shownstate.h"

#include <QCoreApplication>
#include <QJsonArray>

#include <array>

namespace rankdeck {

namespace {

struct ShownName
{
    ShownState state;
    const char *name;
    const char *word;
    StateTone tone;
    const char *icon;
};

constexpr std::array<ShownName, 13> kShown{{
    {ShownState::Starting, "starting", QT_TRANSLATE_NOOP("rankdeck::ShownState", "starting"),
     StateTone::Neutral, "content-loading"},
    {ShownState::Running, "running", QT_TRANSLATE_NOOP("rankdeck::ShownState", "running"),
     StateTone::Active, "media-playback-start"},
    {ShownState::Stopping, "stopping", QT_TRANSLATE_NOOP("rankdeck::ShownState", "stopping"),
     StateTone::Neutral, "media-playback-stop"},
    {ShownState::Straggling, "straggling", QT_TRANSLATE_NOOP("rankdeck::ShownState", "straggling"),
     StateTone::Warning, "dialog-warning"},
    {ShownState::Stuck, "stuck", QT_TRANSLATE_NOOP("rankdeck::ShownState", "stuck"),
     StateTone::Warning, "dialog-warning"},
    {ShownState::Desynced, "desynced", QT_TRANSLATE_NOOP("rankdeck::ShownState", "desynced"),
     StateTone::Warning, "dialog-warning"},
    {ShownState::Failed, "failed", QT_TRANSLATE_NOOP("rankdeck::ShownState", "failed"),
     StateTone::Error, "dialog-error"},
    {ShownState::Consequence, "consequence",
     QT_TRANSLATE_NOOP("rankdeck::ShownState", "stopped (consequence)"), StateTone::Muted,
     "media-playback-stop"},
    {ShownState::Finished, "finished", QT_TRANSLATE_NOOP("rankdeck::ShownState", "finished"),
     StateTone::Done, "emblem-ok"},
    {ShownState::Stopped, "stopped", QT_TRANSLATE_NOOP("rankdeck::ShownState", "stopped"),
     StateTone::Muted, "media-playback-stop"},
    {ShownState::StoppedByUser, "stopped_by_user",
     QT_TRANSLATE_NOOP("rankdeck::ShownState", "stopped by user"), StateTone::Muted,
     "media-playback-stop"},
    {ShownState::Unknown, "unknown", QT_TRANSLATE_NOOP("rankdeck::ShownState", "unknown"),
     StateTone::Neutral, "dialog-question"},
    // Kept last: a lookup that finds nothing else reads "unknown".
    {ShownState::Unknown, "unknown", QT_TRANSLATE_NOOP("rankdeck::ShownState", "unknown"),
     StateTone::Neutral, "dialog-question"},
}};

const ShownName &entry(ShownState state)
{
    for (const ShownName &n : kShown)
        if (n.state == state)
            return n;
    return kShown.back();
}

// A rank the verdict or the failure report puts at the centre: the one the others wait for.
bool isCulprit(const RankStatus &rank, const RunVerdictFacts &facts)
{
    return rank.rootCause || rank.rank == facts.rootCauseRank || facts.culprits.contains(rank.rank);
}

} // namespace

RunVerdictFacts RunVerdictFacts::fromStateJson(const QJsonObject &state)
{
    RunVerdictFacts f;
    f.stuck = state.value(QStringLiteral("hung")).toBool();
    f.userStop = state.value(QStringLiteral("user_stop")).toBool();
    f.rootCauseRank = state.value(QStringLiteral("root_cause_rank")).toInt(-1);
    f.straggler = state.value(QStringLiteral("straggler")).toInt(-1);
    const QJsonArray ranks = state.value(QStringLiteral("ranks")).toArray();
    for (const auto &r : ranks) {
        const QJsonObject o = r.toObject();
        const bool running =
            !isTerminal(rankStateFromName(o.value(QStringLiteral("state")).toString()));
        f.stuck = f.stuck || (running && (o.value(QStringLiteral("hung")).toBool() ||
                                          o.value(QStringLiteral("silent")).toBool()));
    }
    // The flight recorder's verdict counts once it is shown (a hang suspected, or a desync).
    const QJsonObject fr = state.value(QStringLiteral("flight_recorder")).toObject();
    if (fr.value(QStringLiteral("verdict_shown")).toBool()) {
        const QJsonObject v = fr.value(QStringLiteral("verdict")).toObject();
        const QString kind = v.value(QStringLiteral("kind")).toString();
        f.desynced = kind == QLatin1String("desync");
        f.stuck = f.stuck || kind == QLatin1String("missing_ranks") ||
                  kind == QLatin1String("all_entered_none_completed");
        const QJsonArray culprits = v.value(QStringLiteral("culprits")).toArray();
        for (const auto &c : culprits)
            f.culprits.append(c.toInt());
    }
    return f;
}

ShownState shownRunState(RunState state, const RunVerdictFacts &facts)
{
    switch (state) {
    case RunState::Preparing:
    case RunState::Starting:
        return facts.stuck ? ShownState::Stuck : ShownState::Starting;
    case RunState::Running:
        if (facts.desynced)
            return ShownState::Desynced;
        if (facts.stuck)
            return ShownState::Stuck;
        return facts.straggler >= 0 ? ShownState::Straggling : ShownState::Running;
    case RunState::Stopping:
        return ShownState::Stopping;
    case RunState::Finished:
        return ShownState::Finished;
    case RunState::Failed:
        return ShownState::Failed;
    case RunState::Stopped:
        return facts.userStop ? ShownState::StoppedByUser : ShownState::Stopped;
    }
    return ShownState::Unknown;
}

ShownState shownRankState(const RankStatus &rank, RunState runState, const RunVerdictFacts &facts)
{
    switch (rank.state) {
    case RankState::Finished:
        return ShownState::Finished;
    case RankState::Failed:
    case RankState::Lost:
        return facts.consequences.contains(rank.rank) && !isCulprit(rank, facts)
                   ? ShownState::Consequence
                   : ShownState::Failed;
    case RankState::Stopped:
        if (isCulprit(rank, facts) && !facts.userStop && facts.rootCauseRank == rank.rank)
            return ShownState::Failed;
        // A rank the launcher stopped because another failed, or because the run was torn
        // down after a failure, is a consequence; one the user stopped is not.
        if (facts.consequences.contains(rank.rank) ||
            (!facts.userStop && (runState == RunState::Failed || facts.rootCauseRank >= 0)))
            return ShownState::Consequence;
        return facts.userStop ? ShownState::StoppedByUser : ShownState::Stopped;
    case RankState::Pending:
    case RankState::Starting:
    case RankState::Rendezvous:
    case RankState::Running:
        break;
    }
    if (isTerminal(runState))
        return ShownState::Unknown; // the run ended and this rank never said how
    if (facts.desynced)
        return ShownState::Desynced;
    if (facts.stuck || rank.hung || rank.silent)
        return ShownState::Stuck;
    if (facts.straggler == rank.rank)
        return ShownState::Straggling;
    return rank.state == RankState::Running ? ShownState::Running : ShownState::Starting;
}

QString shownStateWord(ShownState state)
{
    return QCoreApplication::translate("rankdeck::ShownState", entry(state).word);
}

QString shownStateName(ShownState state)
{
    return QString::fromLatin1(entry(state).name);
}

StateTone shownStateTone(ShownState state)
{
    return entry(state).tone;
}

QString shownStateIconName(ShownState state)
{
    return QString::fromLatin1(entry(state).icon);
}

QString shownRankText(const RankStatus &rank, RunState runState, const RunVerdictFacts &facts)
{
    const ShownState state = shownRankState(rank, runState, facts);
    QString text = shownStateWord(state);
    if (state == ShownState::Failed && (rank.rootCause || rank.rank == facts.rootCauseRank))
        text += QCoreApplication::translate("rankdeck::ShownState", " (root cause)");
    else if ((state == ShownState::Stuck || state == ShownState::Desynced) &&
             isCulprit(rank, facts))
        text += QCoreApplication::translate("rankdeck::ShownState", " (culprit)");
    else if (state == ShownState::Stuck && rank.silent)
        text += QCoreApplication::translate("rankdeck::ShownState", " (silent)");
    return text;
}

int shownStateUrgency(ShownState state, bool rootCauseOrCulprit)
{
    switch (state) {
    case ShownState::Failed:
        return rootCauseOrCulprit ? 0 : 2;
    case ShownState::Stuck:
    case ShownState::Desynced:
        return rootCauseOrCulprit ? 1 : 3;
    case ShownState::Straggling:
        return 4;
    case ShownState::Consequence:
        return 5;
    case ShownState::Starting:
    case ShownState::Unknown:
        return 6;
    case ShownState::Running:
    case ShownState::Stopping:
        return 7;
    case ShownState::Finished:
    case ShownState::Stopped:
    case ShownState::StoppedByUser:
        return 8;
    }
    return 9;
}

} // namespace rankdeck
