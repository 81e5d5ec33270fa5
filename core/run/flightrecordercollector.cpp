// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/flightrecordercollector.h"

#include "diagnosis/failuregrouping.h"
#include "diagnosis/rankstackdump.h"
#include "stream/workerevent.h"
#include "util/atomicfile.h"
#include "util/translation.h"

#include "wire/wireprotocol.h"

#include <QDateTime>
#include <QFile>
#include <QJsonDocument>

#include <algorithm>

namespace rankdeck {

namespace {

// Line `line` (1-based) of a source file that is here, as its code says which peer a send or
// receive waits for; empty when the file is not here (another node), too big, or shorter.
QString sourceLine(const QString &path, int line)
{
    constexpr qint64 kMaxSourceBytes = qint64(8) * 1024 * 1024;
    QFile f(path);
    if (line <= 0 || path.isEmpty() || f.size() > kMaxSourceBytes || !f.open(QIODevice::ReadOnly))
        return QString();
    for (int n = 1; !f.atEnd(); ++n) {
        const QByteArray text = f.readLine(qint64(64) * 1024);
        if (n == line)
            return QString::fromUtf8(text).trimmed();
    }
    return QString();
}

qint64 wallNs()
{
    return QDateTime::currentMSecsSinceEpoch() * 1'000'000;
}

} // namespace

// The pool thread's result: each rank's dump parsed, or why there is none.
struct FlightRecorderCollector::Parsed
{
    qint64 id = 0;
    QString trigger;
    quint64 hangEpisode = 0; // the hang it was made in; 0: none suspected
    qint64 startedUs = 0;
    QList<int> asked;
    QList<RankCollectiveInput> inputs; // where, nativeFrame and alive filled in later
    QString writeError;
    qint64 parseUs = 0;
};

FlightRecorderCollector::FlightRecorderCollector(QObject *parent) : QObject(parent)
{
    m_pool.setMaxThreadCount(1); // one collection at a time, in order
    m_thenTimer.setSingleShot(true);
    m_thenTimer.setInterval(kStopDelayMs);
    connect(&m_thenTimer, &QTimer::timeout, this, &FlightRecorderCollector::runThen);
}

FlightRecorderCollector::~FlightRecorderCollector()
{
    m_pool.waitForDone();
}

void FlightRecorderCollector::setRun(int worldSize,
                                     std::function<void(int, const QByteArray &)> send,
                                     std::function<QList<int>()> living)
{
    m_worldSize = worldSize;
    m_send = std::move(send);
    m_living = std::move(living);
}

void FlightRecorderCollector::setRunDirectory(const QString &directory)
{
    m_directory = directory;
    const QList<qint64> ids = FlightRecorderCollection::ids(directory);
    m_nextId = ids.isEmpty() ? 1 : ids.last() + 1;
    m_collections = int(ids.size());
}

void FlightRecorderCollector::collect(Trigger trigger, qint64 nowUs)
{
    if (!m_send || !m_living)
        return;
    if (m_current) {
        // The one in flight answers a probe as well as anything; others wait for it.
        if (trigger != Trigger::Probe && (!m_queued || *m_queued == Trigger::Probe))
            m_queued = trigger;
        return;
    }
    start(trigger, nowUs);
}

void FlightRecorderCollector::collectThen(Trigger trigger, qint64 nowUs, std::function<void()> then)
{
    // A second failure while the first one's collection runs: its wait is the same.
    if (m_then) {
        const std::function<void()> first = std::move(m_then);
        m_then = [first, then] {
            first();
            then();
        };
        return;
    }
    m_then = std::move(then);
    if (!m_current)
        start(trigger, nowUs);
    if (!m_current) {
        runThen();
        return;
    }
    m_thenTimer.start();
}

void FlightRecorderCollector::runThen()
{
    m_thenTimer.stop();
    if (const std::function<void()> then = std::exchange(m_then, nullptr))
        then();
}

void FlightRecorderCollector::start(Trigger trigger, qint64 nowUs)
{
    const QList<int> living = m_living();
    if (living.isEmpty() || m_directory.isEmpty())
        return;
    const qint64 id = m_nextId++;
    m_current = std::make_unique<FlightRecorderCollection>(id, trigger, nowUs, m_worldSize, living);
    m_currentEpisode = m_hung ? m_hangEpisode : 0;
    for (int r = 0; r < m_worldSize; ++r)
        if (!living.contains(r))
            m_current->setNotAsked(r, tr("it was not running when the collection started"));
    const QByteArray command = QByteArray(wire::command::DumpFlightRecorder.data(),
                                          qsizetype(wire::command::DumpFlightRecorder.size())) +
                               ' ' + QByteArray::number(id) + '\n';
    for (int r : living)
        m_send(r, command);
    ++m_collections;
}

bool FlightRecorderCollector::handleEvent(int rank, const WorkerEvent &e, qint64 nowUs)
{
    if (e.type() != WorkerEvent::Type::FlightRecorder)
        return false;
    const qint64 id = e.integer(wire::field::Id, -1);
    if (!m_current || id != m_current->id())
        return true; // an answer to a collection already closed (it timed out): dropped
    QString problem;
    if (!m_current->add(rank, e.fields(), nowUs, &problem))
        emit message(
            tr("flight recorder: collection %1: rank %2: %3").arg(id).arg(rank).arg(problem));
    if (m_current->isComplete())
        finishCurrent(nowUs);
    return true;
}

void FlightRecorderCollector::rankExited(int rank, qint64 nowUs)
{
    if (!m_current)
        return;
    m_current->giveUp(rank, tr("it exited before answering"), nowUs);
    if (m_current->isComplete())
        finishCurrent(nowUs);
}

void FlightRecorderCollector::stacksReceived(int rank, const QString &stacks)
{
    m_stacks.insert(rank, stacks);
    m_stacksUs.insert(rank, QDateTime::currentMSecsSinceEpoch() * 1000);
    // The verdict's `where` comes from them: a verdict already made gets it now.
    if (m_inputsId > 0 && !m_inputs.isEmpty())
        recompute();
}

void FlightRecorderCollector::tick(qint64 nowUs, const QList<RankStatus> &ranks,
                                   const QList<RankRuntime> &runtimes)
{
    if (m_current && nowUs - m_current->startedUs() > kAnswerTimeoutUs) {
        for (int r : m_current->pending())
            m_current->giveUp(r, tr("no answer within %1 s").arg(kAnswerTimeoutUs / 1'000'000),
                              nowUs);
        finishCurrent(nowUs);
    }
    bool hung = false;
    for (const RankStatus &s : ranks)
        hung = hung || s.hung;
    if (hung != m_hung) {
        m_hung = hung;
        if (hung)
            ++m_hangEpisode;
        if (!hung) // progress came back: the probes start over
            m_probeAfterUs = std::max(kFirstProbeUs, m_longestQuietUs * 3 / 2);
        if (decideShown())
            emit verdictChanged();
    }

    // Probes: only while every rank runs and has made progress once (a program's start-up,
    // `import torch` and the rendezvous, is no quiet spell of the training).
    bool armed = !ranks.isEmpty() && m_offReason.isEmpty() && !m_hung;
    qint64 lastProgress = 0;
    for (int r = 0; armed && r < ranks.size() && r < runtimes.size(); ++r) {
        const RankStatus &s = ranks[r];
        const RankRuntime &rt = runtimes[r];
        if (s.state != RankState::Running || rt.exited || rt.launcherStopped ||
            (rt.lastActivityUs <= 0 && s.step < 0))
            armed = false;
        lastProgress = std::max({lastProgress, rt.lastStepChangeUs, rt.lastActivityUs});
    }
    if (!armed) {
        m_lastProgressUs = 0;
        return;
    }
    if (m_lastProgressUs > 0 && lastProgress > m_lastProgressUs) {
        // A quiet spell ended: the next one is judged against the longest so far.
        m_longestQuietUs = std::max(m_longestQuietUs, lastProgress - m_lastProgressUs);
        m_probeAfterUs = std::max(kFirstProbeUs, m_longestQuietUs * 3 / 2);
    }
    m_lastProgressUs = lastProgress;
    if (!m_current && nowUs - lastProgress >= m_probeAfterUs) {
        collect(Trigger::Probe, nowUs);
        m_probeAfterUs = std::min(kMaxProbeUs, m_probeAfterUs * 2);
    }
}

void FlightRecorderCollector::reset()
{
    m_shown = false;
    m_shownId = 0;
    m_hung = false;
    m_inputs.clear();
    m_inputsId = 0;
    ++m_generation; // a verdict of the last attempt still computing is dropped
    m_verdict = CollectiveVerdict();
    m_verdictId = 0;
    m_verdictTrigger.clear();
    m_verdictUs = 0;
    m_stacks.clear();
    m_stacksUs.clear();
    m_lastProgressUs = 0;
    m_longestQuietUs = 0;
    m_probeAfterUs = kFirstProbeUs;
    m_queued.reset();
    emit verdictChanged();
}

void FlightRecorderCollector::finishCurrent(qint64 nowUs)
{
    Q_UNUSED(nowUs);
    std::unique_ptr<FlightRecorderCollection> done = std::move(m_current);
    const quint64 episode = m_currentEpisode;
    QList<int> asked;
    // Ranks without a dump by reason, in the order the reasons first came: at 96 ranks "ranks
    // 0–16, 18–95: torch.distributed is not initialised", not 95 times the same words.
    QStringList reasons;
    QHash<QString, QList<int>> silentBy;
    for (const FlightRecorderCollection::Answer &a : done->answers()) {
        if (a.asked)
            asked << a.rank;
        if (a.asked && !a.hasJson()) {
            if (!silentBy.contains(a.reason))
                reasons << a.reason;
            silentBy[a.reason] << a.rank;
        }
    }
    QStringList silent;
    for (const QString &reason : std::as_const(reasons))
        silent << formatRankList(silentBy.value(reason)) + QStringLiteral(": ") + reason;
    if (done->trigger() != Trigger::Probe)
        emit message(
            tr("flight recorder: collection %1 (%2): %3 dumped%4")
                .arg(done->id())
                .arg(FlightRecorderCollection::triggerName(done->trigger()),
                     done->ranksWithJson().isEmpty() ? tr("no rank")
                                                     : formatRankList(done->ranksWithJson()),
                     silent.isEmpty() ? QString()
                                      : QStringLiteral("; ") + silent.join(QStringLiteral("; "))));
    runThen();
    // The files and the parsing off this thread: the collection moves there whole.
    auto shared = std::shared_ptr<FlightRecorderCollection>(std::move(done));
    const QString directory = m_directory;
    m_pool.start([this, shared, directory, episode, asked] {
        auto parsed = std::make_shared<Parsed>();
        parsed->id = shared->id();
        parsed->trigger = FlightRecorderCollection::triggerName(shared->trigger());
        parsed->hangEpisode = episode;
        parsed->startedUs = shared->startedUs();
        parsed->asked = asked;
        shared->write(directory, {}, &parsed->writeError);
        const qint64 t0 = QDateTime::currentMSecsSinceEpoch();
        for (const FlightRecorderCollection::Answer &a : shared->answers()) {
            RankCollectiveInput in;
            in.rank = a.rank;
            if (a.hasJson()) {
                QString error;
                in.dump = FlightRecorderDump::parse(a.json.bytes, &error);
                if (in.dump.isNull())
                    in.noDumpReason = tr("its dump could not be read: %1").arg(error);
            } else {
                in.noDumpReason = a.reason;
            }
            parsed->inputs << in;
        }
        parsed->parseUs = (QDateTime::currentMSecsSinceEpoch() - t0) * 1000;
        // Queued to the collector's thread, and dropped there when it is gone by then (its
        // destructor waits for this job, so it is still there while the call is posted).
        QMetaObject::invokeMethod(
            this, [this, parsed] { onParsed(parsed); }, Qt::QueuedConnection);
    });
    if (m_queued) {
        const Trigger next = *m_queued;
        m_queued.reset();
        start(next, QDateTime::currentMSecsSinceEpoch() * 1000);
    }
}

void FlightRecorderCollector::onParsed(const std::shared_ptr<Parsed> &parsed)
{
    if (!parsed->writeError.isEmpty())
        emit message(parsed->writeError);
    // Collections end in order; a newer verdict is never replaced by an older one.
    if (parsed->id < m_inputsId)
        return;
    m_inputs = parsed->inputs;
    m_inputsId = parsed->id;
    m_inputsTrigger = parsed->trigger;
    m_inputsUs = parsed->startedUs;
    m_inputsEpisode = parsed->hangEpisode;
    m_stacksAsked = false;
    recompute();
}

// What the pool thread computed from one version of the inputs.
struct FlightRecorderCollector::Computed
{
    quint64 generation = 0;
    qint64 id = 0;
    QString trigger;
    qint64 startedUs = 0;
    quint64 hangEpisode = 0; // the hang it was made in; 0: none suspected
    CollectiveVerdict verdict;
};

void FlightRecorderCollector::recompute()
{
    // Where each rank is, from its latest stacks (cheap), here; the verdict itself (tens of ms
    // for a few 500-entry dumps on a loaded machine) on the pool thread.
    const QList<int> living = m_living ? m_living() : QList<int>();
    for (RankCollectiveInput &in : m_inputs) {
        in.alive = living.contains(in.rank);
        const RankPlace place = rankPlace(RankStackDump::split(m_stacks.value(in.rank)));
        in.where = place.where;
        in.nativeFrame = place.nativeFrame;
        in.p2pCall = place.p2pCall;
        in.callSource =
            place.p2pCall.isEmpty() ? QString() : sourceLine(place.callFile, place.callLine);
    }
    auto job = std::make_shared<Computed>();
    job->generation = ++m_generation;
    job->id = m_inputsId;
    job->trigger = m_inputsTrigger;
    job->startedUs = m_inputsUs;
    job->hangEpisode = m_inputsEpisode;
    const QList<RankCollectiveInput> inputs = m_inputs;
    const QString directory = m_directory;
    m_pool.start([this, job, inputs, directory] {
        job->verdict = CollectiveVerdict::compute(inputs, wallNs());
        // collection.json says what its collection showed.
        const QString path = FlightRecorderCollection::folder(directory, job->id) +
                             QStringLiteral("/collection.json");
        QFile f(path);
        if (!directory.isEmpty() && f.open(QIODevice::ReadOnly)) {
            QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
            f.close();
            o[QStringLiteral("verdict")] = job->verdict.toJson();
            AtomicFile::writeFile(path, QJsonDocument(o).toJson());
        }
        QMetaObject::invokeMethod(
            this, [this, job] { onComputed(job); }, Qt::QueuedConnection);
    });
}

void FlightRecorderCollector::onComputed(const std::shared_ptr<Computed> &job)
{
    if (job->generation != m_generation)
        return; // newer inputs (stacks, a collection) are on their way
    const CollectiveVerdict before = m_verdict;
    const bool shownBefore = m_shown;
    const qint64 shownIdBefore = m_shownId;
    m_verdict = job->verdict;
    m_verdictId = job->id;
    m_verdictTrigger = job->trigger;
    m_verdictUs = job->startedUs;
    m_verdictEpisode = job->hangEpisode;
    // A desync seen by a probe names each side by its line: their stacks are asked for once.
    if (m_verdict.kind() == CollectiveVerdict::Kind::Desync && !m_stacksAsked) {
        const QList<int> living = m_living ? m_living() : QList<int>();
        QList<int> want;
        for (int r : m_verdict.culprits() + m_verdict.victims())
            if (living.contains(r) && m_stacksUs.value(r) < m_verdictUs && !want.contains(r))
                want << r;
        m_stacksAsked = true;
        if (!want.isEmpty())
            emit stacksWanted(want);
    }
    decideShown();
    if (m_shown && (!shownBefore || m_verdict.headline() != before.headline()))
        emit message(tr("collective verdict (flight-recorder collection %1, %2): %3")
                         .arg(m_verdictId)
                         .arg(m_verdictTrigger, m_verdict.text()));
    // The record points at the newest collection that shows it, even when it says the same.
    m_shownId = m_shown ? m_verdictId : 0;
    if (m_shown != shownBefore ||
        (m_shown && (!(m_verdict == before) || m_shownId != shownIdBefore)))
        emit verdictChanged();
}

bool FlightRecorderCollector::decideShown()
{
    const bool before = m_shown;
    const CollectiveVerdict::Kind kind = m_verdict.kind();
    // A desync is conclusive at once. The other kinds only mean something while the ranks are
    // stuck (a healthy run dumped mid-step shows ranks a collective apart), and only from a
    // collection of this hang: one of an earlier hang that progress ended (ranks slow to import
    // torch under a short --hang-timeout) says nothing of where they are now. A failed rank's
    // collection explains its failure only by a desync.
    m_shown =
        m_verdictId > 0 && (kind == CollectiveVerdict::Kind::Desync ||
                            (m_hung && m_verdictEpisode != 0 && m_verdictEpisode == m_hangEpisode &&
                             m_verdictTrigger != QLatin1String("rank-failed")));
    return m_shown != before;
}

QString FlightRecorderCollector::torchFolder() const
{
    return m_verdictId > 0 && !m_directory.isEmpty()
               ? FlightRecorderCollection::torchFolder(m_directory, m_verdictId)
               : QString();
}

QList<int> FlightRecorderCollector::applyTo(QList<RankStatus> &ranks) const
{
    QList<int> changed;
    for (RankStatus &s : ranks) {
        const RankInCollective *cell = m_shown ? m_verdict.inCollective(s.rank) : nullptr;
        const QString text = cell ? cell->text() : QString();
        if (text != s.inCollective) {
            s.inCollective = text;
            changed << s.rank;
        }
    }
    return changed;
}

QString FlightRecorderCollector::summary(const QList<RankStatus> &ranks) const
{
    using Kind = CollectiveVerdict::Kind;
    const Kind kind = m_verdict.kind();
    if (m_shown && (kind == Kind::Desync || kind == Kind::MissingRanks ||
                    kind == Kind::AllEnteredNoneCompleted))
        return m_verdict.headline();
    QList<int> hung;
    for (const RankStatus &s : ranks)
        if (s.hung)
            hung << s.rank;
    if (hung.isEmpty())
        return m_shown ? m_verdict.headline() : QString();
    // A verdict that names nobody (no dump, nothing stuck in a collective) says why.
    const QString why = m_shown                  ? m_verdict.headline()
                        : !m_offReason.isEmpty() ? tr("no collective verdict: %1").arg(m_offReason)
                                                 : QString();
    return tr("hung: %1 made no progress%2")
        .arg(formatRankList(hung), why.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(why));
}

QJsonObject FlightRecorderCollector::toStateJson() const
{
    QJsonObject o{{QStringLiteral("collections"), m_collections}};
    if (!m_offReason.isEmpty())
        o[QStringLiteral("off")] = m_offReason;
    if (m_verdictId > 0) {
        o[QStringLiteral("verdict")] = m_verdict.toJson();
        o[QStringLiteral("verdict_collection")] = m_verdictId;
        o[QStringLiteral("verdict_trigger")] = m_verdictTrigger;
        o[QStringLiteral("verdict_us")] = m_verdictUs;
        o[QStringLiteral("verdict_shown")] = m_shown;
    }
    return o;
}

void FlightRecorderCollector::restoreStateJson(const QJsonObject &json)
{
    m_collections = json.value(QStringLiteral("collections")).toInt();
    m_offReason = json.value(QStringLiteral("off")).toString();
    m_verdictId = json.value(QStringLiteral("verdict_collection")).toInteger();
    m_verdictTrigger = json.value(QStringLiteral("verdict_trigger")).toString();
    m_verdictUs = json.value(QStringLiteral("verdict_us")).toInteger();
    m_verdict = CollectiveVerdict::fromJson(json.value(QStringLiteral("verdict")).toObject());
    m_shown = m_verdictId > 0 && json.value(QStringLiteral("verdict_shown")).toBool();
    m_shownId = m_shown ? m_verdictId : 0;
    // A verdict shown while the ranks were stuck stays shown while they still are.
    if (m_shown && m_verdict.kind() != CollectiveVerdict::Kind::Desync) {
        m_hung = true;
        m_verdictEpisode = m_hangEpisode = 1;
    }
}

} // namespace rankdeck
