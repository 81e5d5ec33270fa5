// SPDX-License-Identifier: GPL-3.0-or-later
//
// Collects the ranks' flight-recorder dumps and turns them into the run's collective verdict
// (issue 26). RunController owns one and feeds it; it decides nothing else about the run.
// When collections happen (docs/architecture.md):
//   - probe: every rank has stopped making progress (no step, line or metric) for a while:
//     2 s, or 1.5 times the longest such quiet spell the run has had, whichever is longer;
//     then after twice as long, and so on (at most every 5 minutes) until progress comes back.
//     A run that keeps printing is never probed; one that is stuck is looked at within
//     seconds, long before --hang-timeout. Not when recording is off.
//   - hang: the hang watch flagged ranks (their stacks are asked for at the same time);
//   - stacks: `rankdeck-cli stacks`, the GUI's "Dump stacks";
//   - rank-failed: a rank failed while others live; the controller holds back their stop until
//     they answered or kStopDelayMs passed (collectThen()).
// Only one collection is in flight; a trigger that comes meanwhile waits for it (one waits at
// most). A rank that does not answer within kAnswerTimeoutUs, or exits first, is recorded
// with that reason; the verdict is made with the others. Every collection is kept in the run
// record (FlightRecorderCollection says how). Writing the files, parsing the JSON dumps and
// computing the verdict run on a pool thread (four 500-entry dumps: 190–390 ms to parse and
// 11–35 ms to judge on this 2-core machine under load 11, far too long for the GUI thread).
// What is shown: a desync as soon as a collection shows it (it is conclusive); any other
// verdict only from a collection made during the hang suspected now, and only until progress
// comes back. Each rank's `where` and native frame come from its latest stacks.
#pragma once

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/rankruntime.h"
#include "record/runstate.h"
#include "run/flightrecordercollection.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace rankdeck {

class WorkerEvent;

class FlightRecorderCollector : public QObject
{
    Q_OBJECT
public:
    using Trigger = FlightRecorderCollection::Trigger;
    // The supervisor answers for a program that cannot within 2 s; this is for the rest
    // (a stopped process, a lost link).
    static constexpr qint64 kAnswerTimeoutUs = 5'000'000;
    static constexpr qint64 kFirstProbeUs = 2'000'000;
    static constexpr qint64 kMaxProbeUs = 300'000'000;
    static constexpr int kStopDelayMs = 2000;

    explicit FlightRecorderCollector(QObject *parent = nullptr);
    ~FlightRecorderCollector() override;

    // What it needs of the run: a line to a rank's stdin, and which ranks live now.
    void setRun(int worldSize, std::function<void(int rank, const QByteArray &line)> send,
                std::function<QList<int>()> living);
    // Where collections are kept; new ids continue after those already there.
    void setRunDirectory(const QString &directory);
    // The launch turned recording off (--no-flight-recorder, the profile): no probes, and the
    // reports say so.
    void setOffReason(const QString &why) { m_offReason = why; }
    QString offReason() const { return m_offReason; }

    void collect(Trigger trigger, qint64 nowUs);
    // Collects, then calls `then` once every living rank answered, or after kStopDelayMs.
    void collectThen(Trigger trigger, qint64 nowUs, std::function<void()> then);
    // An frdump event (false: not one).
    bool handleEvent(int rank, const WorkerEvent &event, qint64 nowUs);
    void rankExited(int rank, qint64 nowUs);
    void stacksReceived(int rank, const QString &stacks);
    // Each watch tick: answers overdue, the probes, and whether a hang is suspected (any rank
    // flagged hung, ended ones included: a stopped hung run keeps its verdict).
    void tick(qint64 nowUs, const QList<RankStatus> &ranks, const QList<RankRuntime> &runtimes);
    // A new attempt: nothing shown, probes start over (ids go on).
    void reset();

    bool isCollecting() const { return bool(m_current); }
    // The verdict to show; nullptr when none.
    const CollectiveVerdict *shownVerdict() const { return m_shown ? &m_verdict : nullptr; }
    // The latest verdict, shown or not, and its collection (0: none yet).
    const CollectiveVerdict &latestVerdict() const { return m_verdict; }
    qint64 verdictCollection() const { return m_verdictId; }
    QString verdictTrigger() const { return m_verdictTrigger; }
    qint64 verdictTimeUs() const { return m_verdictUs; }
    int collections() const { return m_collections; }
    // The folder to give torch's analyser for the verdict's collection; empty without one.
    QString torchFolder() const;
    // Each rank's "in collective" cell from the shown verdict (cleared without one); returns
    // the ranks whose cell changed.
    QList<int> applyTo(QList<RankStatus> &ranks) const;
    // The run's one-line root cause when no rank failed: the shown verdict's headline, else
    // "hung: ranks 0, 1 made no progress" for ranks flagged hung; empty otherwise.
    QString summary(const QList<RankStatus> &ranks) const;

    // state.json's "flight_recorder" object, and back (a reopened run shows what was shown).
    QJsonObject toStateJson() const;
    void restoreStateJson(const QJsonObject &json);

signals:
    // shownVerdict() or its text changed.
    void verdictChanged();
    // What the launcher did, for its log ("flight recorder: collection 3 (hang): …").
    void message(const QString &text);
    // A probe found a desync without fresh stacks of these ranks: their `where` needs them.
    void stacksWanted(const QList<int> &ranks);

private:
    struct Parsed;   // the pool thread's dumps of one collection
    struct Computed; // its verdict
    void start(Trigger trigger, qint64 nowUs);
    void finishCurrent(qint64 nowUs);
    void onParsed(const std::shared_ptr<Parsed> &parsed);
    void onComputed(const std::shared_ptr<Computed> &job);
    void recompute();
    bool decideShown(); // true: shown or not changed
    void runThen();

    int m_worldSize = 0;
    std::function<void(int, const QByteArray &)> m_send;
    std::function<QList<int>()> m_living;
    QString m_directory;
    QString m_offReason;
    qint64 m_nextId = 1;
    int m_collections = 0;
    std::unique_ptr<FlightRecorderCollection> m_current;
    quint64 m_currentEpisode = 0; // m_hangEpisode when it started while hung, else 0
    std::optional<Trigger> m_queued;
    std::function<void()> m_then;
    QTimer m_thenTimer;

    // Stacks: the latest of each rank (its `where`), and when it came.
    QHash<int, QString> m_stacks;
    QHash<int, qint64> m_stacksUs;

    // What the latest verdict is made from (the newest collection's dumps), and the verdict.
    QList<RankCollectiveInput> m_inputs;
    qint64 m_inputsId = 0;
    QString m_inputsTrigger;
    qint64 m_inputsUs = 0;
    quint64 m_inputsEpisode = 0;
    quint64 m_generation = 0; // of the inputs; a verdict of older ones is dropped
    CollectiveVerdict m_verdict;
    qint64 m_verdictId = 0;
    QString m_verdictTrigger;
    qint64 m_verdictUs = 0;
    quint64 m_verdictEpisode = 0;
    bool m_shown = false;
    qint64 m_shownId = 0;
    bool m_hung = false;
    quint64 m_hangEpisode = 0; // counts the times a hang came to be suspected
    bool m_stacksAsked = false;

    // The probes' schedule.
    qint64 m_lastProgressUs = 0;
    qint64 m_longestQuietUs = 0;
    qint64 m_probeAfterUs = kFirstProbeUs;

    // Last: destroyed first, so that no job outlives what it reports to.
    QThreadPool m_pool;
};

} // namespace rankdeck
