// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one state model (record/shownstate.h): each row is a run's processes as a spec, the
// verdict facts, and what the run and each rank read. The words are what the title, the run
// list, the rank table, `runs` and `show` print, so a change here is a change a user sees.
#include "record/shownstate.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// One letter per rank: "R" running, "P" pending, "F" finished, "X" failed, "T" stopped,
// "H" running with its hung flag, "C" the root cause (failed), "c" the root cause (running).
QList<RankStatus> ranksOf(const QString &spec)
{
    QList<RankStatus> out;
    for (int r = 0; r < spec.size(); ++r) {
        RankStatus s;
        s.rank = r;
        switch (spec[r].toLatin1()) {
        case 'R':
            s.state = RankState::Running;
            break;
        case 'P':
            s.state = RankState::Pending;
            break;
        case 'F':
            s.state = RankState::Finished;
            break;
        case 'X':
            s.state = RankState::Failed;
            break;
        case 'T':
            s.state = RankState::Stopped;
            break;
        case 'H':
            s.state = RankState::Running;
            s.hung = true;
            break;
        case 'C':
            s.state = RankState::Failed;
            s.rootCause = true;
            break;
        case 'c':
            s.state = RankState::Running;
            s.rootCause = true;
            break;
        default:
            qFatal("bad spec letter");
        }
        out << s;
    }
    return out;
}

} // namespace

class TestShownState : public QObject
{
    Q_OBJECT
private slots:
    void states_data();
    void states();
    void factsFromStateJson();
    void urgencyPutsWhatDiffersFirst();
    void everyStateHasAWordAndAName();
};

void TestShownState::states_data()
{
    QTest::addColumn<int>("runState");
    QTest::addColumn<QString>("ranks");
    QTest::addColumn<QString>("facts"); // s stuck, d desynced, u user stop, g<N> straggler,
                                        // k<N> culprit, r<N> root cause, q<N> consequence
    QTest::addColumn<QString>("run");
    QTest::addColumn<QStringList>("rows");

    const int running = int(RunState::Running);
    QTest::newRow("healthy") << running << u"RRRR"_s << u""_s << u"running"_s
                             << QStringList{4, u"running"_s};
    QTest::newRow("starting") << int(RunState::Starting) << u"PR"_s << u""_s << u"starting"_s
                              << QStringList{u"starting"_s, u"running"_s};
    // The sleeping-rank hang: the hang watch flagged it, the flight recorder names rank 2.
    QTest::newRow("hang") << running << u"RRcR"_s << u"s k2"_s << u"stuck"_s
                          << QStringList{u"stuck"_s, u"stuck"_s, u"stuck (culprit)"_s, u"stuck"_s};
    // One rank's hung flag is enough for the run to be stuck.
    QTest::newRow("one rank hung")
        << running << u"RHR"_s << u""_s << u"stuck"_s << QStringList{3, u"stuck"_s};
    QTest::newRow("desync") << running << u"RR"_s << u"d k0 k1"_s << u"desynced"_s
                            << QStringList{2, u"desynced (culprit)"_s};
    QTest::newRow("desync, one died of it")
        << running << u"CR"_s << u"d k1 r0"_s << u"desynced"_s
        << QStringList{u"failed (root cause)"_s, u"desynced (culprit)"_s};
    QTest::newRow("straggler") << running << u"RRRR"_s << u"g3"_s << u"straggling"_s
                               << QStringList{u"running"_s, u"running"_s, u"running"_s,
                                              u"straggling"_s};
    // A crash on rank 1: the launcher stops the others; one had finished already.
    QTest::newRow("crash") << int(RunState::Failed) << u"TCTF"_s << u"r1"_s << u"failed"_s
                           << QStringList{u"stopped (consequence)"_s, u"failed (root cause)"_s,
                                          u"stopped (consequence)"_s, u"finished"_s};
    // A rank that died of its peer's death ("Connection closed by peer") is a consequence.
    QTest::newRow("peer echo") << int(RunState::Failed) << u"CX"_s << u"r0 q1"_s << u"failed"_s
                               << QStringList{u"failed (root cause)"_s, u"stopped (consequence)"_s};
    // Two ranks failing on their own: both failed, one of them the root cause.
    QTest::newRow("both failed") << int(RunState::Failed) << u"CX"_s << u"r0"_s << u"failed"_s
                                 << QStringList{u"failed (root cause)"_s, u"failed"_s};
    QTest::newRow("user stop") << int(RunState::Stopped) << u"TT"_s << u"u"_s
                               << u"stopped by user"_s << QStringList{2, u"stopped by user"_s};
    QTest::newRow("stopped by the hang policy") << int(RunState::Stopped) << u"TT"_s << u"s"_s
                                                << u"stopped"_s << QStringList{2, u"stopped"_s};
    QTest::newRow("finished") << int(RunState::Finished) << u"FF"_s << u""_s << u"finished"_s
                              << QStringList{2, u"finished"_s};
    // A rank still "running" in a run that ended never said how it ended.
    QTest::newRow("ended, rank silent")
        << int(RunState::Failed) << u"CR"_s << u"r0"_s << u"failed"_s
        << QStringList{u"failed (root cause)"_s, u"unknown"_s};
}

void TestShownState::states()
{
    QFETCH(int, runState);
    QFETCH(QString, ranks);
    QFETCH(QString, facts);
    QFETCH(QString, run);
    QFETCH(QStringList, rows);
    RunVerdictFacts f;
    for (const QString &fact : facts.split(u' ', Qt::SkipEmptyParts)) {
        const int n = fact.mid(1).toInt();
        switch (fact[0].toLatin1()) {
        case 's':
            f.stuck = true;
            break;
        case 'd':
            f.desynced = true;
            break;
        case 'u':
            f.userStop = true;
            break;
        case 'g':
            f.straggler = n;
            break;
        case 'k':
            f.culprits << n;
            break;
        case 'r':
            f.rootCauseRank = n;
            break;
        case 'q':
            f.consequences << n;
            break;
        default:
            QFAIL("bad fact");
        }
    }
    const QList<RankStatus> statuses = ranksOf(ranks);
    // One rank's hung flag makes the run stuck, as RunController::verdictFacts() and
    // fromStateJson() see it.
    for (const RankStatus &s : statuses)
        f.stuck = f.stuck || (!isTerminal(s.state) && s.hung);
    QCOMPARE(shownStateWord(shownRunState(RunState(runState), f)), run);
    QStringList read;
    for (const RankStatus &s : statuses)
        read << shownRankText(s, RunState(runState), f);
    QCOMPARE(read, rows);
}

void TestShownState::factsFromStateJson()
{
    // What state.json holds for the uneven-shards desync, as the CLI and the run list read it.
    const QByteArray json = R"({
        "state": "running", "hung": false, "user_stop": false, "root_cause_rank": -1,
        "ranks": [{"rank": 0, "state": "running"}, {"rank": 1, "state": "running"}],
        "flight_recorder": {"verdict_shown": true,
                            "verdict": {"kind": "desync", "culprits": [0, 1]}}})";
    const QJsonObject state = QJsonDocument::fromJson(json).object();
    RunVerdictFacts f = RunVerdictFacts::fromStateJson(state);
    QVERIFY(f.desynced);
    QVERIFY(!f.stuck);
    QCOMPARE(f.culprits, (QList<int>{0, 1}));
    QCOMPARE(shownRunState(RunState::Running, f), ShownState::Desynced);

    // A verdict not shown (a healthy run dumped) changes nothing; a rank's hung flag does.
    QJsonObject quiet = state;
    QJsonObject fr = quiet[u"flight_recorder"_s].toObject();
    fr[u"verdict_shown"_s] = false;
    quiet[u"flight_recorder"_s] = fr;
    f = RunVerdictFacts::fromStateJson(quiet);
    QCOMPARE(shownRunState(RunState::Running, f), ShownState::Running);
    QJsonArray ranks = quiet[u"ranks"_s].toArray();
    QJsonObject hung = ranks[1].toObject();
    hung[u"hung"_s] = true;
    ranks[1] = hung;
    quiet[u"ranks"_s] = ranks;
    QCOMPARE(shownRunState(RunState::Running, RunVerdictFacts::fromStateJson(quiet)),
             ShownState::Stuck);

    // Missing ranks: the others wait for rank 2.
    QJsonObject missing = state;
    missing[u"flight_recorder"_s] =
        QJsonObject{{u"verdict_shown"_s, true},
                    {u"verdict"_s,
                     QJsonObject{{u"kind"_s, u"missing_ranks"_s}, {u"culprits"_s, QJsonArray{2}}}}};
    f = RunVerdictFacts::fromStateJson(missing);
    QVERIFY(f.stuck && !f.desynced);
    QCOMPARE(f.culprits, QList<int>{2});
    QCOMPARE(RunVerdictFacts::fromStateJson(QJsonObject()).rootCauseRank, -1);
}

void TestShownState::urgencyPutsWhatDiffersFirst()
{
    QVERIFY(shownStateUrgency(ShownState::Failed, true) <
            shownStateUrgency(ShownState::Stuck, true));
    QVERIFY(shownStateUrgency(ShownState::Stuck, true) <
            shownStateUrgency(ShownState::Failed, false));
    QVERIFY(shownStateUrgency(ShownState::Stuck, false) <
            shownStateUrgency(ShownState::Straggling, false));
    QVERIFY(shownStateUrgency(ShownState::Straggling, false) <
            shownStateUrgency(ShownState::Consequence, false));
    QVERIFY(shownStateUrgency(ShownState::Consequence, false) <
            shownStateUrgency(ShownState::Running, false));
}

void TestShownState::everyStateHasAWordAndAName()
{
    QSet<QString> names;
    for (int s = 0; s <= int(ShownState::Unknown); ++s) {
        const auto state = ShownState(s);
        QVERIFY(!shownStateWord(state).isEmpty());
        QVERIFY(!shownStateIconName(state).isEmpty());
        names.insert(shownStateName(state));
    }
    QCOMPARE(names.size(), int(ShownState::Unknown) + 1); // each its own
}

QTEST_GUILESS_MAIN(TestShownState)
#include "tst_shownstate.moc"
