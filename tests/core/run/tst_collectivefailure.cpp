// SPDX-License-Identifier: GPL-3.0-or-later
//
// FailurePolicy with the flight recorders' collective verdict (issue 26), on real dumps of
// data/fr/: the rank whose collective differs (or that never came) is the root cause, first in
// the report, even when another rank crashed first (Gloo aborts a peer of the odd rank); the
// crashed rank is then called a victim. A hung run the user stops is stopped, not failed.
#include "diagnosis/collectiveverdict.h"
#include "run/failurepolicy.h"

#include <QtTest>

#include <csignal>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kT0 = 1700000000000000;

QList<RankStatus> ranks(int n)
{
    QList<RankStatus> out;
    for (int r = 0; r < n; ++r) {
        RankStatus s;
        s.rank = r;
        s.host = QStringLiteral("node-%1").arg(r);
        s.state = RankState::Running;
        out << s;
    }
    return out;
}

RankFailure failure(int rank, qint64 timeUs, const QString &kind, const QString &message = {})
{
    RankFailure f;
    f.rank = rank;
    f.host = QStringLiteral("node-%1").arg(rank);
    f.timeUs = timeUs;
    f.kind = kind;
    f.message = message;
    return f;
}

const RankFailure *entryOf(const FailureReport &report, int rank)
{
    for (const RankFailure &f : report.failures) {
        if (f.rank == rank)
            return &f;
    }
    return nullptr;
}

// The verdict of one real case of data/fr/: ranks with a dump (ranks.txt) dumped, the others dead.
CollectiveVerdict realVerdict(const QString &name, int world)
{
    QList<RankCollectiveInput> inputs;
    for (int r = 0; r < world; ++r) {
        RankCollectiveInput in;
        in.rank = r;
        QFile f(QStringLiteral(RANKDECK_FR_DATA "/%1/rank_%2.json").arg(name).arg(r));
        if (f.open(QIODevice::ReadOnly))
            in.dump = FlightRecorderDump::parse(f.readAll());
        else
            in.alive = false;
        inputs << in;
    }
    return CollectiveVerdict::compute(inputs, kT0 * 1000);
}

} // namespace

class TestCollectiveFailure : public QObject
{
    Q_OBJECT

private slots:
    void collectiveVerdictNamesTheRootCause_data();
    void collectiveVerdictNamesTheRootCause();
};

void TestCollectiveFailure::collectiveVerdictNamesTheRootCause_data()
{
    QTest::addColumn<QString>("sample");
    QTest::addColumn<int>("world");
    QTest::addColumn<bool>("crashed"); // rank 1 died of Gloo's abort before the verdict
    QTest::addColumn<int>("culprit");
    QTest::addColumn<QString>("headline");
    QTest::newRow("size mismatch: the crashed rank is a victim")
        << u"sizemismatch"_s << 4 << true << 2 << u"Desync at collective #4"_s;
    QTest::newRow("a rank never entered; the hung run is stopped")
        << u"missing"_s << 4 << false << 3 << u"Rank 3 never entered collective #6"_s;
}

void TestCollectiveFailure::collectiveVerdictNamesTheRootCause()
{
    QFETCH(QString, sample);
    QFETCH(int, world);
    QFETCH(bool, crashed);
    QFETCH(int, culprit);
    QFETCH(QString, headline);
    const CollectiveVerdict verdict = realVerdict(sample, world);
    QCOMPARE(verdict.culprits(), QList<int>{culprit});
    FailurePolicy policy;
    QList<RankStatus> rs = ranks(world);
    const QHash<int, QString> stacks;
    if (crashed) {
        RankFailure f = failure(1, kT0, u"crash"_s, u"Received data size doesn't match"_s);
        f.signal = SIGABRT;
        f.signalName = u"SIGABRT"_s;
        QVERIFY(policy.record(f, rs, stacks));
        for (int r : {0, 2, 3})
            policy.addConsequence(failure(r, kT0 + 2'000'000, u"consequence"_s), rs, stacks);
        QCOMPARE(policy.rootCauseRank(), 1);
    }
    policy.setCollectiveVerdict(&verdict, kT0 + 1'000'000, rs, stacks);
    // The rank whose collective differs (or that never came) is the root cause, first in the
    // report even though another rank failed earlier.
    QCOMPARE(policy.rootCauseRank(), culprit);
    QVERIFY(rs[culprit].rootCause);
    const RankFailure &root = policy.report().failures.first();
    QCOMPARE(root.rank, culprit);
    QCOMPARE(root.kind, u"collective"_s);
    QVERIFY2(root.summary().startsWith(headline), qPrintable(root.summary()));
    QVERIFY2(policy.rootCauseSummary().startsWith(
                 u"rank %1 (%2): %3"_s.arg(culprit).arg(rs[culprit].host, headline)),
             qPrintable(policy.rootCauseSummary()));
    QVERIFY(policy.report().toText().startsWith(u"Root cause (named by the flight recorder): "_s));
    QVERIFY(policy.report().toText().contains(verdict.text()));
    if (crashed) {
        // The crashed rank is called a victim; the run still failed of it.
        const RankFailure *victim = entryOf(policy.report(), 1);
        QVERIFY(victim);
        QCOMPARE(victim->kind, u"consequence"_s);
        QVERIFY2(victim->reason.startsWith(u"a victim: "_s) &&
                     victim->reason.contains(u"its own crash followed"_s),
                 qPrintable(victim->reason));
        QVERIFY(policy.anyOwnFailure());
    } else {
        // Nobody failed: a hung run the user stops is stopped, not failed.
        QVERIFY(!policy.anyOwnFailure());
    }
    // Without the verdict, the report is what it was.
    policy.setCollectiveVerdict(nullptr, 0, rs, stacks);
    QCOMPARE(policy.rootCauseRank(), crashed ? 1 : -1);
    QCOMPARE(policy.anyOwnFailure(), crashed);
}

QTEST_GUILESS_MAIN(TestCollectiveFailure)
#include "tst_collectivefailure.moc"
