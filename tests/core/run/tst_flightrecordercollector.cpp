// SPDX-License-Identifier: GPL-3.0-or-later
//
// FlightRecorderCollector on real dumps (data/fr/), answered the way ranks answer (frdump
// events from core/wire): what it asks and when (probes after a quiet spell, doubling; none
// while recording is off), what it shows (a desync at once; ranks missing from a collective
// only from a collection made while a hang is suspected, and only until progress comes back),
// ranks that do not answer (timed out, exited, a garbage or truncated dump: each named with its
// reason while the verdict is made from the others), each rank's line from its stacks, the
// stop it holds back for a failed rank, and its state in state.json.
#include "frdumpanswer.h"
#include "run/flightrecordercollector.h"

#include <QDir>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace rankdeck::testing;
using namespace Qt::StringLiterals;

namespace {

using Trigger = FlightRecorderCollector::Trigger;
constexpr qint64 kSecond = 1'000'000;

// A run of `world` ranks as the collector sees it: what it sent to whom, and who lives.
struct Run
{
    QTemporaryDir directory;
    FlightRecorderCollector collector;
    QList<QPair<int, QByteArray>> sent;
    QList<int> living;

    explicit Run(int world)
    {
        for (int r = 0; r < world; ++r)
            living << r;
        collector.setRun(
            world,
            [this](int rank, const QByteArray &line) {
                sent.append({rank, line});
            },
            [this] { return living; });
        collector.setRunDirectory(directory.path());
    }
    // The ids asked for since the last call.
    QList<qint64> asked()
    {
        QList<qint64> ids;
        for (const auto &[rank, line] : std::as_const(sent)) {
            const QByteArray id = line.trimmed().split(' ').value(1);
            if (line.startsWith("dump-flight-recorder ") && !ids.contains(id.toLongLong()))
                ids << id.toLongLong();
        }
        sent.clear();
        return ids;
    }
    void answer(int rank, qint64 id, const QByteArray &json, const QString &why = {})
    {
        for (const WorkerEvent &e : frAnswer(rank, id, json, {}, why))
            QVERIFY(collector.handleEvent(rank, e, 1));
    }
    // Every rank answers with the case's own dump (ranks.txt says which have one).
    void answerCase(const QString &name, qint64 id, int world)
    {
        for (int r = 0; r < world; ++r) {
            QFile f(QStringLiteral(RANKDECK_FR_DATA "/%1/rank_%2.json").arg(name).arg(r));
            if (f.open(QIODevice::ReadOnly))
                answer(r, id, f.readAll());
            else
                answer(r, id, {}, u"no dump in the sample"_s);
        }
    }
};

// Statuses of running ranks that made progress until `lastUs`, hung or not.
QList<RankStatus> statuses(int world, bool hung)
{
    QList<RankStatus> out;
    for (int r = 0; r < world; ++r) {
        RankStatus s;
        s.rank = r;
        s.state = RankState::Running;
        s.hung = hung;
        out << s;
    }
    return out;
}

QList<RankRuntime> runtimes(int world, qint64 lastUs)
{
    QList<RankRuntime> out;
    for (int r = 0; r < world; ++r) {
        RankRuntime rt;
        rt.started = rt.pidKnown = true;
        rt.lastActivityUs = lastUs;
        rt.lastStepChangeUs = lastUs;
        out << rt;
    }
    return out;
}

bool waitVerdict(FlightRecorderCollector &c, qint64 id)
{
    return QTest::qWaitFor([&] { return c.verdictCollection() == id; }, 10000);
}

QString stacksWithPython(const QString &faulthandler)
{
    return u"thread 1 (python, main thread):\n#0 0x0000000000001000 in clock_nanosleep "
           u"[libc.so.6]\n"
           u"python stacks (faulthandler):\n"_s +
           faulthandler;
}

} // namespace

class TestFlightRecorderCollector : public QObject
{
    Q_OBJECT

private slots:
    void desyncIsShownAtOnce();
    void missingRanksOnlyWhileHung();
    void ranksThatGiveNoDump_data();
    void ranksThatGiveNoDump();
    void manyRanksWithoutDumpAreGrouped();
    void probesAfterAQuietSpell();
    void noProbeWhileOff();
    void collectThenStops_data();
    void collectThenStops();
    void oneCollectionAtATime();
    void stateRoundTrip();
};

void TestFlightRecorderCollector::desyncIsShownAtOnce()
{
    Run run(2);
    QSignalSpy changed(&run.collector, &FlightRecorderCollector::verdictChanged);
    QSignalSpy wanted(&run.collector, &FlightRecorderCollector::stacksWanted);
    run.collector.collect(Trigger::Probe, 10 * kSecond);
    QCOMPARE(run.sent.size(), 2);
    QCOMPARE(run.sent[0].second, QByteArray("dump-flight-recorder 1\n"));
    QCOMPARE(run.asked(), QList<qint64>{1});
    QVERIFY(run.collector.isCollecting());
    run.answerCase(u"uneven"_s, 1, 2);
    QVERIFY(!run.collector.isCollecting());
    QVERIFY(waitVerdict(run.collector, 1));
    // No hang suspected, yet shown: ranks in different collectives at one number never agree.
    QVERIFY(run.collector.shownVerdict());
    QCOMPARE(run.collector.shownVerdict()->kind(), CollectiveVerdict::Kind::Desync);
    QCOMPARE(run.collector.shownVerdict()->seq(), 10);
    QVERIFY(changed.count() >= 1);
    // The probe had no stacks: the lines of both sides are asked for.
    QCOMPARE(wanted.count(), 1);
    QCOMPARE(wanted.first().first().value<QList<int>>(), (QList<int>{0, 1}));
    QList<RankStatus> ranks = statuses(2, false);
    QCOMPARE(run.collector.applyTo(ranks), (QList<int>{0, 1}));
    QCOMPARE(ranks[0].inCollective, u"#10 barrier"_s);
    QCOMPARE(ranks[1].inCollective, u"#10 all_reduce"_s);
    QCOMPARE(run.collector.summary(ranks), run.collector.shownVerdict()->headline());
    // Their stacks come: each side is named by its line (the hook's own thread skipped).
    for (int r = 0; r < 2; ++r)
        run.collector.stacksReceived(
            r, stacksWithPython(QString::fromUtf8(frSample(u"uneven/rank_%1.stack.txt"_s.arg(r)))));
    QString text;
    QVERIFY(QTest::qWaitFor(
        [&] {
            text = run.collector.shownVerdict()->text();
            return text.contains(u"case_uneven.py:23"_s) && text.contains(u"case_uneven.py:20"_s);
        },
        10000));
    QVERIFY2(!text.contains(u"frrank.py"_s), qPrintable(text));
    // The record has it: the folder torch's analyser reads, the JSON and the verdict.
    QVERIFY(QFile::exists(FlightRecorderCollection::jsonPath(run.directory.path(), 1, 1)));
    QCOMPARE(run.collector.torchFolder(), run.directory.path() + u"/flight-recorder/1/torch"_s);
    QFile meta(run.directory.path() + u"/flight-recorder/1/collection.json"_s);
    QVERIFY(meta.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
    QCOMPARE(o.value(u"trigger"_s).toString(), u"probe"_s);
    QCOMPARE(o.value(u"verdict"_s).toObject().value(u"kind"_s).toString(), u"desync"_s);
}

void TestFlightRecorderCollector::missingRanksOnlyWhileHung()
{
    Run run(4);
    const qint64 now = 100 * kSecond;
    run.collector.tick(now, statuses(4, false), runtimes(4, now));
    run.collector.collect(Trigger::Stacks, now);
    QCOMPARE(run.asked(), QList<qint64>{1});
    run.answerCase(u"missing"_s, 1, 4);
    QVERIFY(waitVerdict(run.collector, 1));
    // Ranks a collective apart: what any healthy run dumped mid-step may show. Not shown.
    QCOMPARE(run.collector.latestVerdict().kind(), CollectiveVerdict::Kind::MissingRanks);
    QVERIFY(!run.collector.shownVerdict());
    // A hang suspected: still not shown from a collection made before it…
    QSignalSpy changed(&run.collector, &FlightRecorderCollector::verdictChanged);
    run.collector.tick(now + kSecond, statuses(4, true), runtimes(4, now));
    QVERIFY(!run.collector.shownVerdict());
    QCOMPARE(run.collector.summary(statuses(4, true)), u"hung: ranks 0–3 made no progress"_s);
    // …but from the one the hang makes.
    run.collector.collect(Trigger::Hang, now + kSecond);
    QCOMPARE(run.asked(), QList<qint64>{2});
    run.answerCase(u"missing"_s, 2, 4);
    QVERIFY(waitVerdict(run.collector, 2));
    QVERIFY(run.collector.shownVerdict());
    QCOMPARE(run.collector.shownVerdict()->culprits(), QList<int>{3});
    QVERIFY(changed.count() >= 1);
    // Progress comes back: it was no hang, and the verdict goes.
    changed.clear();
    run.collector.tick(now + 2 * kSecond, statuses(4, false), runtimes(4, now + 2 * kSecond));
    QVERIFY(!run.collector.shownVerdict());
    QCOMPARE(changed.count(), 1);
    // A hang suspected again: the last hang's verdict says nothing of where the ranks are now
    // (they moved on), so it stays unshown until this hang's collection comes.
    changed.clear();
    run.collector.tick(now + 20 * kSecond, statuses(4, true), runtimes(4, now + 2 * kSecond));
    QVERIFY(!run.collector.shownVerdict());
    QCOMPARE(changed.count(), 0);
    run.collector.collect(Trigger::Hang, now + 20 * kSecond);
    QCOMPARE(run.asked(), QList<qint64>{3});
    run.answerCase(u"missing"_s, 3, 4);
    QVERIFY(waitVerdict(run.collector, 3));
    QVERIFY(run.collector.shownVerdict());
    // A reopened run shows it while its ranks are still stuck, and not once they move on.
    FlightRecorderCollector reopened;
    reopened.setRunDirectory(run.directory.path());
    reopened.restoreStateJson(run.collector.toStateJson());
    QVERIFY(reopened.shownVerdict());
    reopened.tick(now + 21 * kSecond, statuses(4, true), runtimes(4, now + 2 * kSecond));
    QVERIFY(reopened.shownVerdict());
    reopened.tick(now + 22 * kSecond, statuses(4, false), runtimes(4, now + 22 * kSecond));
    QVERIFY(!reopened.shownVerdict());
}

// 96 ranks of a program without torch.distributed, rank 17 gone (issue 31): the launcher's line
// names each reason once, with its ranks as ranges, not 95 times the same words.
void TestFlightRecorderCollector::manyRanksWithoutDumpAreGrouped()
{
    constexpr int world = 96;
    Run run(world);
    QSignalSpy messages(&run.collector, &FlightRecorderCollector::message);
    const qint64 now = 100 * kSecond;
    run.collector.collect(Trigger::RankFailed, now);
    QCOMPARE(run.asked(), QList<qint64>{1});
    run.living.removeAll(17);
    run.collector.rankExited(17, now);
    const QString uninitialised = u"torch.distributed is not initialised in the program"_s;
    for (int r = 0; r < world; ++r)
        if (r != 17)
            run.answer(r, 1, {}, uninitialised);
    QVERIFY(!run.collector.isCollecting());
    QCOMPARE(messages.size(), 1);
    QCOMPARE(messages.first().first().toString(),
             u"flight recorder: collection 1 (rank-failed): no rank dumped; ranks 0–16, 18–95: "
             u"%1; rank 17: it exited before answering"_s.arg(uninitialised));
}

void TestFlightRecorderCollector::ranksThatGiveNoDump_data()
{
    QTest::addColumn<QString>("how");
    QTest::addColumn<QString>("reason"); // what the verdict says of rank 3
    QTest::addColumn<bool>("named");     // rank 3 is named the culprit
    QTest::newRow("GIL held (the supervisor's reason)")
        << u"gil"_s << u"no answer within 2 s: the program holds the GIL"_s << true;
    QTest::newRow("no answer at all") << u"silent"_s << u"no answer within 5 s"_s << true;
    // A dead rank without a dump cannot be told from one that died in the collective: its
    // failure, not the verdict, names it.
    QTest::newRow("exited") << u"exited"_s << u"it has exited; it exited before answering"_s
                            << false;
    QTest::newRow("garbage dump") << u"garbage"_s << u"its dump could not be read: "_s << true;
    QTest::newRow("truncated dump") << u"truncated"_s << u"its dump could not be read: "_s << true;
}

void TestFlightRecorderCollector::ranksThatGiveNoDump()
{
    QFETCH(QString, how);
    QFETCH(QString, reason);
    QFETCH(bool, named);
    Run run(4);
    const qint64 now = 100 * kSecond;
    run.collector.tick(now, statuses(4, true), runtimes(4, now - 60 * kSecond));
    run.collector.collect(Trigger::Hang, now);
    QCOMPARE(run.asked(), QList<qint64>{1});
    // Ranks 0–2 wait in all_reduce #6; rank 3 (asleep in the sample) gives no usable dump.
    for (int r = 0; r < 3; ++r)
        run.answer(r, 1, frSample(u"missing/rank_%1.json"_s.arg(r)));
    if (how == u"gil"_s)
        run.answer(3, 1, {},
                   u"no answer within 2 s: the program holds the GIL in native code or is "
                   u"stopped"_s);
    else if (how == u"silent"_s)
        run.collector.tick(now + FlightRecorderCollector::kAnswerTimeoutUs + kSecond,
                           statuses(4, true), runtimes(4, now - 60 * kSecond));
    else if (how == u"exited"_s) {
        run.living.removeAll(3);
        run.collector.rankExited(3, now + kSecond);
    } else if (how == u"garbage"_s)
        run.answer(3, 1, R"({"version": "2.10", "entries": "garbage"})");
    else
        run.answer(3, 1, frSample(u"missing/rank_3.json"_s).chopped(300));
    QVERIFY(!run.collector.isCollecting());
    QVERIFY(waitVerdict(run.collector, 1));
    const CollectiveVerdict *v = run.collector.shownVerdict();
    QVERIFY(v);
    QCOMPARE(v->ranksWithoutDump(), QList<int>{3});
    QVERIFY2(v->text().contains(reason), qPrintable(v->text()));
    // The verdict works with the rest: ranks 0–2 wait in #6 for rank 3, which never came.
    if (named) {
        QCOMPARE(v->kind(), CollectiveVerdict::Kind::MissingRanks);
        QCOMPARE(v->culprits(), QList<int>{3});
        QCOMPARE(v->victims(), (QList<int>{0, 1, 2}));
    } else {
        QCOMPARE(v->kind(), CollectiveVerdict::Kind::Undecided);
        QVERIFY(v->culprits().isEmpty());
    }
    QFile meta(run.directory.path() + u"/flight-recorder/1/collection.json"_s);
    QVERIFY(meta.open(QIODevice::ReadOnly));
    QVERIFY(!QFile::exists(FlightRecorderCollection::jsonPath(run.directory.path(), 1, 3)) ||
            how == u"garbage"_s || how == u"truncated"_s); // kept as received, for a look
}

void TestFlightRecorderCollector::probesAfterAQuietSpell()
{
    Run run(2);
    qint64 t = 1000 * kSecond;
    // Progress every 0.5 s: never asked.
    for (int i = 0; i < 20; ++i, t += kSecond / 2)
        run.collector.tick(t, statuses(2, false), runtimes(2, t));
    QVERIFY(run.asked().isEmpty());
    // Quiet: the first look after 2 s, the next after 4 more, then 8…
    const qint64 quietFrom = t;
    QList<qint64> at;
    for (; t < quietFrom + 15 * kSecond; t += kSecond / 2) {
        run.collector.tick(t, statuses(2, false), runtimes(2, quietFrom));
        for (qint64 id : run.asked()) {
            at << (t - quietFrom) / (kSecond / 2);
            run.answerCase(u"healthy"_s, id, 2);
        }
    }
    QCOMPARE(at, (QList<qint64>{4, 8, 16})); // in half seconds: 2 s, 4 s, 8 s
    // Progress after 15 s: a run with quiet spells that long is next looked at after 22.5 s
    // (1.5 times its longest), so that one printing every 15 s is not looked at every time.
    run.collector.tick(t, statuses(2, false), runtimes(2, t));
    const qint64 again = t;
    at.clear();
    for (t += kSecond / 2; t < again + 30 * kSecond; t += kSecond / 2) {
        run.collector.tick(t, statuses(2, false), runtimes(2, again));
        for (qint64 id : run.asked()) {
            at << (t - again) / (kSecond / 2);
            run.answerCase(u"healthy"_s, id, 2);
        }
    }
    QCOMPARE(at, QList<qint64>{45});
}

void TestFlightRecorderCollector::noProbeWhileOff()
{
    Run run(2);
    run.collector.setOffReason(u"flight recorder off (--no-flight-recorder)"_s);
    const qint64 t = 1000 * kSecond;
    run.collector.tick(t, statuses(2, false), runtimes(2, t));
    run.collector.tick(t + 60 * kSecond, statuses(2, false), runtimes(2, t));
    QVERIFY(run.asked().isEmpty());
    // A hang still asks: the ranks' answers say that recording is off.
    run.collector.tick(t + 61 * kSecond, statuses(2, true), runtimes(2, t));
    run.collector.collect(Trigger::Hang, t + 61 * kSecond);
    QCOMPARE(run.asked(), QList<qint64>{1});
    run.answer(0, 1, {}, u"flight recorder off (--no-flight-recorder)"_s);
    run.answer(1, 1, {}, u"flight recorder off (--no-flight-recorder)"_s);
    QVERIFY(waitVerdict(run.collector, 1));
    QVERIFY(run.collector.shownVerdict());
    QCOMPARE(run.collector.shownVerdict()->kind(), CollectiveVerdict::Kind::Undecided);
    QVERIFY(run.collector.shownVerdict()->text().contains(u"flight recorder off"_s));
}

void TestFlightRecorderCollector::collectThenStops_data()
{
    QTest::addColumn<bool>("answer");
    QTest::newRow("every living rank answers") << true;
    QTest::newRow("one never answers: 2 s at most") << false;
}

void TestFlightRecorderCollector::collectThenStops()
{
    QFETCH(bool, answer);
    Run run(4);
    run.living = {0, 2, 3}; // rank 1 died of Gloo's abort
    int stopped = 0;
    run.collector.collectThen(Trigger::RankFailed, 100 * kSecond, [&] { ++stopped; });
    QCOMPARE(run.asked(), QList<qint64>{1});
    QCOMPARE(stopped, 0);
    run.answer(0, 1, frSample(u"sizemismatch/rank_0.json"_s));
    run.answer(2, 1, frSample(u"sizemismatch/rank_2.json"_s));
    QCOMPARE(stopped, 0);
    if (answer) {
        run.answer(3, 1, frSample(u"sizemismatch/rank_3.json"_s));
        QCOMPARE(stopped, 1);
    } else {
        QTRY_COMPARE_WITH_TIMEOUT(stopped, 1, 30000);
    }
    if (answer) {
        // Rank 2 all-reduced 264 floats where 0 and 3 gave 256: it is the odd one out, the dead
        // rank 1 a victim.
        QVERIFY(waitVerdict(run.collector, 1));
        const CollectiveVerdict *v = run.collector.shownVerdict();
        QVERIFY(v);
        QCOMPARE(v->kind(), CollectiveVerdict::Kind::Desync);
        QCOMPARE(v->culprits(), QList<int>{2});
        QVERIFY(v->victims().contains(1));
    }
    QCOMPARE(stopped, 1);
}

void TestFlightRecorderCollector::oneCollectionAtATime()
{
    Run run(2);
    run.collector.collect(Trigger::Probe, kSecond);
    run.collector.collect(Trigger::Hang, kSecond);
    run.collector.collect(Trigger::Stacks, kSecond);
    QCOMPARE(run.asked(), QList<qint64>{1});
    // A late answer to a closed collection is dropped, not mixed in.
    run.answerCase(u"healthy"_s, 1, 2);
    QCOMPARE(run.asked(), QList<qint64>{2}); // the one that waited
    for (const WorkerEvent &e : frAnswer(0, 1, frSample(u"healthy/rank_0.json"_s)))
        QVERIFY(run.collector.handleEvent(0, e, 1));
    QVERIFY(run.collector.isCollecting());
    run.answerCase(u"healthy"_s, 2, 2);
    QVERIFY(!run.collector.isCollecting());
    QVERIFY(run.asked().isEmpty());
    QVERIFY(waitVerdict(run.collector, 2));
    QCOMPARE(run.collector.collections(), 2);
}

void TestFlightRecorderCollector::stateRoundTrip()
{
    Run run(2);
    run.collector.collect(Trigger::Stacks, kSecond);
    run.answerCase(u"uneven"_s, 1, 2);
    QVERIFY(waitVerdict(run.collector, 1));
    FlightRecorderCollector reopened;
    reopened.setRunDirectory(run.directory.path());
    reopened.restoreStateJson(run.collector.toStateJson());
    QVERIFY(reopened.shownVerdict());
    QCOMPARE(*reopened.shownVerdict(), *run.collector.shownVerdict());
    QCOMPARE(reopened.verdictCollection(), 1);
    QCOMPARE(reopened.verdictTrigger(), u"stacks"_s);
    QCOMPARE(reopened.torchFolder(), run.collector.torchFolder());
    QCOMPARE(reopened.collections(), 1);
}

QTEST_GUILESS_MAIN(TestFlightRecorderCollector)
#include "tst_flightrecordercollector.moc"
