// SPDX-License-Identifier: GPL-3.0-or-later
//
// CollectiveVerdict on the real dumps of tests/core/diagnosis/data/fr/ (torch 2.14.1, Gloo; each
// rank's `where` from its real faulthandler dump, its liveness from ranks.txt) and on hand-made
// cases the real ones do not cover: no dumps at all, a rank without a dump (alive or dead), a
// 3-rank majority, a tie, named subgroups, ranks waiting in two groups, garbage dump files; and
// torch's own tests of its analyser as pairs of ranks.
// Longer than the house's ~600 lines: one data-driven test per source of cases (real dumps, hand
// made, torch's own), which share the entry and rank builders at the top.
#include "diagnosis/collectiveverdict.h"

#include "frcases.h"
#include "stream/pythontraceback.h"

#include <QFile>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>

using namespace rankdeck;
using namespace rankdeck::testing;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kSecond = 1'000'000'000;

QString cells(const CollectiveVerdict &v)
{
    QStringList out;
    for (const RankInCollective &c : v.inCollective())
        out << u"%1: %2"_s.arg(c.rank).arg(c.text());
    return out.join(u" | "_s);
}

// A hand-made entry of the default group (or `group`/`desc`).
FlightRecorderEntry entry(qint64 seq, const QString &op, qint64 size = 8,
                          const QString &dtype = u"Float"_s, const QString &group = u"0"_s,
                          const QString &desc = u"default_pg"_s)
{
    FlightRecorderEntry e;
    e.pgId = group.toLongLong();
    e.groupName = group;
    e.groupDesc = desc;
    e.collectiveSeq = seq;
    e.backend = u"nccl"_s;
    e.op = op;
    if (op != u"barrier"_s) {
        e.inputSizes = {{size}};
        e.inputDtypes = {dtype};
    }
    e.state = u"scheduled"_s;
    e.timeCreatedNs = 1000 * kSecond + seq * kSecond;
    return e;
}

// A rank that finished collectives 1..done of the default group and entered done+1..entered,
// the last being `last`.
RankCollectiveInput rank(int r, qint64 done, qint64 entered, const FlightRecorderEntry &last)
{
    RankCollectiveInput in;
    in.rank = r;
    in.dump.valid = true;
    in.dump.version = u"2.10"_s;
    for (qint64 s = 1; s < entered; ++s) {
        FlightRecorderEntry e = entry(s, u"all_reduce"_s);
        e.state = s <= done ? u"completed"_s : u"started"_s;
        in.dump.entries << e;
    }
    if (entered > 0)
        in.dump.entries << last;
    in.dump.status << FlightRecorderGroupStatus{0, entered, -1, done};
    in.where = u"train.py:%1 in main"_s.arg(20 + r);
    return in;
}

RankCollectiveInput noDump(int r, const QString &reason, bool alive = true)
{
    RankCollectiveInput in;
    in.rank = r;
    in.alive = alive;
    in.noDumpReason = reason;
    in.where = u"train.py:9 in load"_s;
    in.nativeFrame = u"spin_forever"_s;
    return in;
}

using Inputs = QList<RankCollectiveInput>;
using Groups = QList<std::tuple<QString, qint64, qint64>>; // group ("0" or "1"), done, entered

// A rank that finished collectives 1..done and entered done+1..entered of each group.
RankCollectiveInput ranked(int r, const Groups &groups)
{
    RankCollectiveInput in;
    in.rank = r;
    in.dump.valid = true;
    in.dump.version = u"2.10"_s;
    for (const auto &[group, done, entered] : groups) {
        const QString desc = group == u"0"_s ? u"default_pg"_s : u"undefined"_s;
        for (qint64 s = 1; s <= entered; ++s) {
            FlightRecorderEntry e = entry(s, u"all_reduce"_s, 8, u"Float"_s, group, desc);
            e.retired = s <= done;
            in.dump.entries << e;
        }
        in.dump.status << FlightRecorderGroupStatus{group.toLongLong(), entered, -1, done};
    }
    in.where = u"train.py:%1 in main"_s.arg(20 + r);
    return in;
}

// Ranks 1 and 3 share group 5 ("tp"), which rank 1's pg_config names, as NCCL's does; rank 3
// is one behind there (or never used the group).
Inputs namedGroup(bool used)
{
    Inputs out;
    for (int r = 0; r < 4; ++r) {
        RankCollectiveInput in = ranked(r, {{u"0"_s, 4, 4}});
        if (r == 1 || (r == 3 && used)) {
            const qint64 entered = r == 1 ? (used ? 3 : 1) : 2;
            for (qint64 s = 1; s <= entered; ++s) {
                FlightRecorderEntry e = entry(s, u"all_reduce"_s, 8, u"Float"_s, u"5"_s, u"tp"_s);
                e.state = s < entered || r == 3 ? u"completed"_s : u"started"_s;
                in.dump.entries << e;
            }
            in.dump.status << FlightRecorderGroupStatus{5, entered, entered,
                                                        r == 1 ? entered - 1 : entered};
        }
        if (r == 1)
            in.dump.groups << FlightRecorderGroup{u"5"_s, u"tp"_s, {1, 3}};
        out << in;
    }
    return out;
}

// Ranks 0–2 wait in the world group's #5 for rank 3, which is elsewhere; rank 2 also waits in
// group 1's #3 for rank 0, which is held up in #5 itself.
Inputs twoGroups()
{
    return {ranked(0, {{u"0"_s, 4, 5}, {u"1"_s, 2, 2}}), ranked(1, {{u"0"_s, 4, 5}}),
            ranked(2, {{u"1"_s, 2, 3}, {u"0"_s, 4, 5}}), ranked(3, {{u"0"_s, 4, 4}})};
}

// Rank 0 waits in group 1's #3 for rank 2, rank 2 in the world group's #5 for rank 0.
Inputs cycle()
{
    return {ranked(0, {{u"0"_s, 4, 4}, {u"1"_s, 2, 3}}), ranked(1, {{u"0"_s, 4, 5}}),
            ranked(2, {{u"1"_s, 2, 2}, {u"0"_s, 4, 5}}), ranked(3, {{u"0"_s, 4, 5}})};
}

// The parts, in this order, somewhere in text.
bool holdsInOrder(const QString &text, const QStringList &parts, QString *missing)
{
    qsizetype from = 0;
    for (const QString &part : parts) {
        const qsizetype at = text.indexOf(part, from);
        if (at < 0) {
            *missing = u"«%1» not in «%2»"_s.arg(part, text.mid(from));
            return false;
        }
        from = at + part.size();
    }
    return true;
}

} // namespace

class TestCollectiveVerdict : public QObject
{
    Q_OBJECT
private slots:
    void realDumps_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("group");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<QList<int>>("culprits");
        QTest::addColumn<QList<int>>("victims");
        QTest::addColumn<QStringList>("text"); // parts the text holds, in this order
        QTest::addColumn<QString>("cells");    // the rank table's "in collective" column
        using K = CollectiveVerdict::Kind;
        QTest::newRow("missing rank")
            << u"missing"_s << int(K::MissingRanks) << u"0"_s << 6LL << QList<int>{3}
            << QList<int>{0, 1, 2}
            << QStringList{u"collective #6 of default_pg: rank 3 never entered all_reduce of 8 "
                           "float32 (it is at case_missing.py:16 in <module>); ranks 0–2 entered "
                           "it (case_missing.py:17 in <module>) and wait for it."_s}
            << u"0: #6 all_reduce | 1: #6 all_reduce | 2: #6 all_reduce "
               "| 3: none pending"_s;
        QTest::newRow("uneven shards")
            << u"uneven"_s << int(K::Desync) << u"0"_s << 10LL << QList<int>{} << QList<int>{0, 1}
            << QStringList{u"collective #10 of default_pg: rank 0 entered barrier "
                           "(case_uneven.py:23 in <module>); rank 1 entered all_reduce of 21 "
                           "float32 (case_uneven.py:20 in <module>) — the ranks split evenly (1 "
                           "against 1), so no rank is named the culprit: the ranks disagree on the "
                           "next collective (did one rank run more iterations?)."_s}
            << u"0: #10 barrier | 1: #10 all_reduce"_s;
        QTest::newRow("size mismatch, a victim aborted")
            << u"sizemismatch"_s << int(K::Desync) << u"0"_s << 4LL << QList<int>{2}
            << QList<int>{0, 1, 3}
            << QStringList{u"collective #4 of default_pg: rank 2 entered all_reduce of 264 "
                           "float32, where ranks 0, 3 entered all_reduce of 256 float32 "
                           "(case_sizemismatch.py:20 in <module>)"_s,
                           u"rank 2 is the odd one out: the ranks disagree on the tensor size"_s,
                           u"rank 1 died without a dump, a victim of the mismatch"_s,
                           u"No dump from rank 1 (it has exited; died of SIGABRT"_s}
            << u"0: none pending | 1: no dump | 2: none pending | 3: #4 all_reduce"_s;
        QTest::newRow("size mismatch, the culprit aborted")
            << u"sizemismatch_smaller"_s << int(K::Undecided) << u"0"_s << 4LL << QList<int>{}
            << QList<int>{}
            << QStringList{u"ranks 0–1, 3 entered all_reduce of 256 float32 and agree; rank 2 "
                           "gave no dump, so its collective cannot be compared."_s}
            << u"0: #4 all_reduce | 1: none pending | 2: no dump | 3: none pending"_s;
        QTest::newRow("subgroup, split evenly")
            << u"subgroup"_s << int(K::MissingRanks) << u"1"_s << 2LL << QList<int>{}
            << QList<int>{0}
            << QStringList{u"collective #2 of group 1 (seen on ranks 0, 2): rank 2 never entered "
                           "all_reduce of 16 float32 (it is at case_subgroup.py:21 in <module>)"_s,
                           u"the ranks split evenly (1 against 1), so no rank is named the "
                           "culprit: either rank 2 is late, or rank 0 made one collective more."_s}
            << u"0: #2 all_reduce (group 1) | 1: none pending | 2: none "
               "pending | 3: none pending"_s;
        QTest::newRow("an extra collective of the loop's shape on one rank")
            << u"extra"_s << int(K::MissingRanks) << u"0"_s << 6LL << QList<int>{3}
            << QList<int>{0, 1, 2}
            << QStringList{u"collective #6 of default_pg: rank 3 entered all_reduce of 8 float32 "
                           "(case_extra.py:17 in <module>) and waits for it alone; ranks 0–2 "
                           "never entered all_reduce of 8 float32"_s,
                           u"rank 3 made one collective more than the others"_s}
            << u"0: none pending | 1: none pending | 2: none pending | 3: #6 all_reduce"_s;
        QTest::newRow("point-to-point: 2 sends, 3 receives")
            << u"p2p"_s << int(K::MissingRanks) << QString() << -1LL << QList<int>{0}
            << QList<int>{1}
            << QStringList{u"Point-to-point, not a collective: rank 1 waits in recv from rank 0 "
                           "(case_p2p.py:24 in <module>: `dist.recv(t, src=0)`); rank 0 is not "
                           "sending: it is at case_p2p.py:20 in <module>."_s,
                           u"The flight recorder shows every rank finished collective #3 of "
                           "default_pg (all_reduce of 4 float32) (Gloo records no send or recv)."_s}
            << u"0: none pending | 1: recv (point-to-point)"_s;
        QTest::newRow("all entered, none completed")
            << u"allentered"_s << int(K::AllEnteredNoneCompleted) << u"0"_s << 4LL << QList<int>{}
            << QList<int>{0, 1, 2, 3}
            << QStringList{u"collective #4 of default_pg: every rank entered all_reduce of "
                           "33554432 float32 and none finished it, 12.5 s after the last rank "
                           "entered it; the last finished is #3 (all_reduce of 8 float32) — look "
                           "at the transport or the network"_s}
            << u"0: #4 all_reduce | 1: #4 all_reduce | 2: #4 all_reduce | 3: #4 all_reduce"_s;
        QTest::newRow("healthy") << u"healthy"_s << int(K::Healthy) << QString() << -1LL
                                 << QList<int>{} << QList<int>{}
                                 << QStringList{u"No collective is stuck: every rank finished "
                                                "collective #9 of default_pg (barrier)."_s}
                                 << u"0: none pending | 1: none pending"_s;
        QTest::newRow("recorder off")
            << u"froff"_s << int(K::Undecided) << QString() << -1LL << QList<int>{} << QList<int>{}
            << QStringList{u"No dump holds a collective"_s}
            << u"0: none pending | 1: none pending"_s;
    }
    void realDumps()
    {
        QFETCH(QString, name);
        const Inputs ranks = realCase(name);
        QVERIFY(ranks.size() >= 2);
        const CollectiveVerdict v =
            CollectiveVerdict::compute(ranks, lastCreatedNs(ranks) + 12'500'000'000);
        qInfo("%s\n  %s\n  %s", qPrintable(v.headline()), qPrintable(v.text()),
              qPrintable(cells(v)));
        QTEST(int(v.kind()), "kind");
        QTEST(v.groupName(), "group");
        QTEST(v.seq(), "seq");
        QTEST(v.culprits(), "culprits");
        QTEST(v.victims(), "victims");
        QTEST(cells(v), "cells");
        QFETCH(QStringList, text);
        QString missing;
        QVERIFY2(holdsInOrder(v.text(), text, &missing), qPrintable(missing));
        QVERIFY(!v.headline().isEmpty());
        QCOMPARE(CollectiveVerdict::fromJson(v.toJson()), v);
    }

    void handMade_data()
    {
        QTest::addColumn<Inputs>("ranks");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("group");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<QList<int>>("culprits");
        QTest::addColumn<QList<int>>("victims");
        QTest::addColumn<bool>("inferred");
        QTest::addColumn<QStringList>("text"); // parts the text holds, in this order
        using K = CollectiveVerdict::Kind;
        const FlightRecorderEntry ar6 = entry(6, u"all_reduce"_s);
        const FlightRecorderEntry ar5 = entry(5, u"all_reduce"_s);

        // torch's size rules (match_one_event): an all-gather's output is its input once per
        // rank, a reduce-scatter's input its output once per rank, outputs and their dtypes
        // compared like inputs.
        const auto withOutput = [](const QString &op, qint64 in, qint64 out,
                                   const QString &outDtype = u"Float"_s) {
            FlightRecorderEntry e = entry(5, op, in);
            e.outputSizes = {{out}};
            e.outputDtypes = {outDtype};
            return e;
        };
        const FlightRecorderEntry gathered = withOutput(u"all_gather_into_tensor"_s, 8, 32);
        QTest::newRow("all_gather_into_tensor: one rank's output is the wrong size")
            << Inputs{rank(0, 4, 5, gathered), rank(1, 4, 5, gathered),
                      rank(2, 4, 5, withOutput(u"all_gather_into_tensor"_s, 8, 24)),
                      rank(3, 4, 5, gathered)}
            << int(K::Desync) << u"0"_s << 5LL << QList<int>{2} << QList<int>{0, 1, 3} << false
            << QStringList{u"rank 2 is the odd one out: the ranks disagree on the output size"_s};
        const FlightRecorderEntry scattered = withOutput(u"reduce_scatter_tensor"_s, 32, 8);
        QTest::newRow("reduce_scatter_tensor: one rank's output is the wrong size")
            << Inputs{rank(0, 4, 5, scattered),
                      rank(1, 4, 5, withOutput(u"reduce_scatter_tensor"_s, 32, 4)),
                      rank(2, 4, 5, scattered), rank(3, 4, 5, scattered)}
            << int(K::Desync) << u"0"_s << 5LL << QList<int>{1} << QList<int>{0, 2, 3} << false
            << QStringList{u"rank 1 is the odd one out: the ranks disagree on the output size"_s};
        const FlightRecorderEntry reduced = withOutput(u"all_reduce"_s, 8, 8);
        QTest::newRow("all_reduce: one rank's output dtype differs")
            << Inputs{rank(0, 4, 5, reduced), rank(1, 4, 5, reduced), rank(2, 4, 5, reduced),
                      rank(3, 4, 5, withOutput(u"all_reduce"_s, 8, 8, u"Half"_s))}
            << int(K::Desync) << u"0"_s << 5LL << QList<int>{3} << QList<int>{0, 1, 2} << false
            << QStringList{u"rank 3 is the odd one out: the ranks disagree on the dtype"_s};
        QTest::newRow("all_gather: every rank's output holds the input once per rank")
            << Inputs{rank(0, 5, 5, gathered), rank(1, 5, 5, gathered), rank(2, 5, 5, gathered),
                      rank(3, 5, 5, gathered)}
            << int(K::Healthy) << QString() << -1LL << QList<int>{} << QList<int>{} << false
            << QStringList{u"No collective is stuck"_s};

        QTest::newRow("no ranks") << Inputs{} << int(K::Undecided) << QString() << -1LL
                                  << QList<int>{} << QList<int>{} << false
                                  << QStringList{u"No ranks to compare."_s};
        QTest::newRow("no dumps at all")
            << Inputs{noDump(0, u"no answer within 2 s"_s), noDump(1, QString(), false)}
            << int(K::Undecided) << QString() << -1LL << QList<int>{} << QList<int>{} << false
            << QStringList{u"No rank gave a flight-recorder dump: rank 0 (no answer within 2 s); "
                           "rank 1 (it has exited)."_s};
        RankCollectiveInput unreadable = noDump(1, u"its dump could not be read: garbage"_s);
        unreadable.nativeFrame = u"gloo::transport::tcp::UnboundBuffer::waitRecv"_s;
        QTest::newRow("a rank without a dump waiting in a collective counts with the others")
            << Inputs{rank(0, 5, 6, ar6), unreadable, rank(2, 5, 5, ar5)} << int(K::MissingRanks)
            << u"0"_s << 6LL << QList<int>{2} << QList<int>{0} << false
            << QStringList{u"rank 2 never entered all_reduce of 8 float32"_s};
        QTest::newRow("a missing rank and a rank without a dump")
            << Inputs{rank(0, 5, 6, ar6), rank(1, 5, 6, ar6), rank(2, 5, 5, ar5),
                      noDump(3, u"flight recorder off (--no-flight-recorder)"_s)}
            << int(K::MissingRanks) << u"0"_s << 6LL << QList<int>{2} << QList<int>{0, 1} << false
            << QStringList{u"rank 2 never entered all_reduce of 8 float32 (it is at train.py:22 "
                           "in main)"_s,
                           u"ranks 0–1 entered it (train.py:20 in main / train.py:21 in main) and "
                           "wait for it."_s,
                           u"No dump from rank 3 (flight recorder off (--no-flight-recorder))"_s};
        QTest::newRow("a silent rank is the one left")
            << Inputs{rank(0, 5, 6, ar6), rank(1, 5, 6, ar6), rank(2, 5, 6, ar6),
                      noDump(3, u"no answer within 2 s: the program holds the GIL"_s)}
            << int(K::MissingRanks) << u"0"_s << 6LL << QList<int>{3} << QList<int>{0, 1, 2} << true
            << QStringList{u"ranks 0–2 entered all_reduce of 8 float32 and wait"_s,
                           u"rank 3 gave no dump (no answer within 2 s: the program holds the "
                           "GIL) and is at train.py:9 in load, in spin_forever"_s,
                           u"probably never entered it"_s};
        QTest::newRow("a dead rank without a dump cannot be compared")
            << Inputs{rank(0, 5, 6, ar6), rank(1, 5, 6, ar6), rank(2, 5, 6, ar6),
                      noDump(3, QString(), false)}
            << int(K::Undecided) << u"0"_s << 6LL << QList<int>{} << QList<int>{} << false
            << QStringList{u"ranks 0–2 entered all_reduce of 8 float32 and agree"_s,
                           u"No dump from rank 3 (it has exited)"_s};
        QTest::newRow("3 ranks: the odd dtype by majority")
            << Inputs{rank(0, 4, 5, ar5), rank(1, 4, 5, ar5),
                      rank(2, 4, 5, entry(5, u"all_reduce"_s, 8, u"Double"_s))}
            << int(K::Desync) << u"0"_s << 5LL << QList<int>{2} << QList<int>{0, 1} << false
            << QStringList{u"rank 2 entered all_reduce of 8 float64 (train.py:22 in main), where "
                           "ranks 0–1 entered all_reduce of 8 float32 (train.py:20 in main / "
                           "train.py:21 in main)"_s,
                           u"rank 2 is the odd one out: the ranks disagree on the dtype"_s};
        QTest::newRow("2 against 2: no majority")
            << Inputs{rank(0, 4, 5, ar5), rank(1, 4, 5, ar5),
                      rank(2, 4, 5, entry(5, u"all_reduce"_s, 16)),
                      rank(3, 4, 5, entry(5, u"all_reduce"_s, 16))}
            << int(K::Desync) << u"0"_s << 5LL << QList<int>{} << QList<int>{0, 1, 2, 3} << false
            << QStringList{u"— the ranks split evenly (2 against 2), so no rank is named the "
                           "culprit: the ranks disagree on the tensor size"_s};
        QTest::newRow("the odd op while a rank has not entered")
            << Inputs{rank(0, 4, 5, ar5), rank(1, 4, 5, ar5),
                      rank(2, 4, 5, entry(5, u"broadcast"_s)),
                      rank(3, 4, 4, entry(4, u"all_reduce"_s))}
            << int(K::Desync) << u"0"_s << 5LL << QList<int>{2} << QList<int>{0, 1} << false
            << QStringList{u"rank 2 entered broadcast of 8 float32"_s,
                           u"the ranks disagree on the next collective"_s,
                           u"rank 3 had not entered it yet"_s};
        QTest::newRow("a subgroup the dumps name (NCCL's pg_config)")
            << namedGroup(true) << int(K::MissingRanks) << u"5"_s << 3LL << QList<int>{}
            << QList<int>{1} << false
            << QStringList{u"collective #3 of tp (group 5, ranks 1, 3): rank 3 never entered "
                           "all_reduce of 8 float32"_s};
        QTest::newRow("a member that never used its group")
            << namedGroup(false) << int(K::MissingRanks) << u"5"_s << 1LL << QList<int>{}
            << QList<int>{1} << false
            << QStringList{u"collective #1 of tp (group 5, ranks 1, 3): rank 3 never entered"_s};
        QTest::newRow("the chain starts at the rank that waits on nothing")
            << twoGroups() << int(K::MissingRanks) << u"0"_s << 5LL << QList<int>{3}
            << QList<int>{0, 1, 2} << false
            << QStringList{u"rank 3 never entered all_reduce"_s,
                           u"Also: rank 2 waits in collective #3 of group 1; rank 0 never "
                           "entered it"_s};
        QTest::newRow("a cycle: the parting that began first")
            << cycle() << int(K::MissingRanks) << u"1"_s << 3LL << QList<int>{} << QList<int>{0}
            << false
            << QStringList{u"collective #3 of group 1 (seen on ranks 0, 2): rank 2 never entered "
                           "all_reduce of 8 float32: it waits in all_reduce #5 of default_pg "
                           "(train.py:22 in main)"_s,
                           u"the ranks split evenly (1 against 1), so no rank is named the "
                           "culprit"_s,
                           u"Also: rank 0 never entered collective #5 of default_pg"_s};
        QTest::newRow("the rest healthy, one rank without a dump")
            << Inputs{rank(0, 5, 5, ar5), noDump(1, u"the dump failed: OSError"_s)}
            << int(K::Undecided) << QString() << -1LL << QList<int>{} << QList<int>{} << false
            << QStringList{u"The ranks that dumped show no collective stuck (every rank finished "
                           "collective #5 of default_pg (all_reduce of 8 float32)); no dump from "
                           "rank 1 (the dump failed: OSError)."_s};
        Inputs garbage = realCase(u"missing"_s);
        garbage[3].dump = FlightRecorderDump::parse(QByteArray::fromHex("00ff") + "garbage",
                                                    &garbage[3].noDumpReason);
        QTest::newRow("a garbage dump file")
            << garbage << int(K::MissingRanks) << u"0"_s << 6LL << QList<int>{3}
            << QList<int>{0, 1, 2} << true << QStringList{u"rank 3 gave no dump (not JSON: "_s};
        Inputs cut = realCase(u"uneven"_s);
        const QByteArray bytes = sample(u"uneven/rank_1.json"_s);
        cut[1].dump =
            FlightRecorderDump::parse(bytes.left(bytes.size() - 40), &cut[1].noDumpReason);
        QTest::newRow("a cut-off dump file")
            << cut << int(K::MissingRanks) << u"0"_s << 10LL << QList<int>{1} << QList<int>{0}
            << true
            << QStringList{u"rank 0 entered barrier and waits; rank 1 gave no dump (not JSON: "_s};
        // Seen once on a real Gloo dump: the barrier retired while pg_status still said one less.
        Inputs lagging = {ranked(0, {{u"0"_s, 5, 5}}), ranked(1, {{u"0"_s, 5, 5}})};
        for (RankCollectiveInput &r : lagging)
            r.dump.status[0].lastCompleted = 4;
        QTest::newRow("a retired entry is finished, whatever pg_status says")
            << lagging << int(K::Healthy) << QString() << -1LL << QList<int>{} << QList<int>{}
            << false << QStringList{u"No collective is stuck: every rank finished collective #5"_s};
        Inputs odd = {rank(1, 5, 5, ar5), rank(1, 5, 6, ar6), rank(-4, 0, 0, ar5),
                      rank(0, 5, 5, ar5)};
        QTest::newRow("duplicate and negative ranks are left out")
            << odd << int(K::Healthy) << QString() << -1LL << QList<int>{} << QList<int>{} << false
            << QStringList{u"No collective is stuck"_s};
    }
    void handMade()
    {
        QFETCH(Inputs, ranks);
        const CollectiveVerdict v = CollectiveVerdict::compute(ranks, 2000 * kSecond);
        qInfo("%s\n  %s\n  %s", qPrintable(v.headline()), qPrintable(v.text()),
              qPrintable(cells(v)));
        QTEST(int(v.kind()), "kind");
        QTEST(v.groupName(), "group");
        QTEST(v.seq(), "seq");
        QTEST(v.culprits(), "culprits");
        QTEST(v.victims(), "victims");
        QTEST(v.culpritsInferred(), "inferred");
        QFETCH(QStringList, text);
        QString missing;
        QVERIFY2(holdsInOrder(v.text(), text, &missing), qPrintable(missing));
        QVERIFY(!v.headline().isEmpty());
        QCOMPARE(CollectiveVerdict::fromJson(v.toJson()), v);
    }

    // torch's own tests of its analyser (pytorch/pytorch,
    // test/distributed/flight_recorder/test_fr_analysis.py, test_match_one_event and
    // test_all_events), each pair of events as two ranks' collective #1: RankDeck parts the ranks
    // (a desync) exactly where torch's match_one_event reports a mismatch, but for the two cases
    // marked "on purpose" (data/fr/README.md): an all_reduce whose output differs from its input
    // the same way on both ranks does not part them, and a rank that completed the collective
    // beside one that has not is progress, not a parting, on Gloo (states come with NCCL).
    void torchMatchOneEvent_data()
    {
        QTest::addColumn<Inputs>("ranks");
        QTest::addColumn<bool>("parted");
        struct Event
        {
            QString op;
            QList<QList<qint64>> in, out;
            QString outDtype = u"float32"_s;
            QString state = u"scheduled"_s;
        };
        const auto ranksOf = [](const Event &a, const Event &b) {
            Inputs out;
            for (const Event &e : {a, b}) {
                FlightRecorderEntry x = entry(1, e.op);
                x.inputSizes = e.in;
                x.inputDtypes = {u"float32"_s};
                x.outputSizes = e.out;
                x.outputDtypes = e.outDtype.isEmpty() ? QStringList() : QStringList{e.outDtype};
                x.state = e.state;
                out << rank(int(out.size()), e.state == u"completed"_s ? 1 : 0, 1, x);
            }
            return out;
        };
        const Event e1{u"all_reduce"_s, {{4, 4}}, {{4, 4}}};
        const Event e9{u"all_reduce"_s, {{4, 4}}, {{4, 4}}, u"float32"_s, u"completed"_s};
        const Event e11{u"gather"_s, {{4, 4}}, {{4, 4}, {4, 4}}, u"float32"_s, u"completed"_s};
        QTest::newRow("e1 e1: fully matched") << ranksOf(e1, e1) << false;
        QTest::newRow("e1 e2: type mismatch")
            << ranksOf(e1, {u"all_gather"_s, {{4, 4}}, {{4, 4}}}) << true;
        QTest::newRow("e3 e4: all_to_all, undecided (the op alone compared)")
            << ranksOf({u"all_to_all"_s, {{4, 4}}, {{4, 4}}}, {u"all_to_all"_s, {{4, 4}}, {{4, 4}}})
            << false;
        QTest::newRow("e1 e5: input size mismatch")
            << ranksOf(e1, {u"all_reduce"_s, {{5, 4}}, {{4, 4}}}) << true;
        QTest::newRow("e1 e6: output size mismatch")
            << ranksOf(e1, {u"all_reduce"_s, {{4, 4}}, {{5, 4}}}) << true;
        QTest::newRow("e7 e7: output unlike input on both ranks (on purpose: not parted)")
            << ranksOf({u"all_reduce"_s, {{4, 4}}, {{5, 4}}}, {u"all_reduce"_s, {{4, 4}}, {{5, 4}}})
            << false;
        QTest::newRow("e1 e9: state mismatch (on purpose: progress on Gloo)")
            << ranksOf(e1, e9) << false;
        QTest::newRow("e10 e9: output dtype mismatch")
            << ranksOf({u"all_reduce"_s, {{4, 4}}, {{4, 4}}, u"float16"_s, u"completed"_s}, e9)
            << true;
        QTest::newRow("e11 e12: gather, the non-root's empty output")
            << ranksOf(e11, {u"gather"_s, {{4, 4}}, {{}}, QString(), u"completed"_s}) << false;
        QTest::newRow("e11 e13: gather")
            << ranksOf(e11, {u"gather"_s, {{4, 4}}, {{4, 4}}, QString(), u"completed"_s}) << false;
        // test_all_events: every collective of torch's COLLECTIVES, sized as torch sizes it.
        for (const QString &op : {u"ALLGATHER_coalesced"_s,
                                  u"REDUCE_SCATTER_coalesced"_s,
                                  u"_all_gather_base"_s,
                                  u"_broadcast_oop"_s,
                                  u"_reduce_oop"_s,
                                  u"_reduce_scatter_base"_s,
                                  u"all_gather"_s,
                                  u"all_gather_into_tensor_coalesced"_s,
                                  u"all_gather_single"_s,
                                  u"all_gather_v"_s,
                                  u"all_reduce"_s,
                                  u"all_reduce_barrier"_s,
                                  u"all_to_all"_s,
                                  u"all_to_all_single"_s,
                                  u"all_to_all_v_single"_s,
                                  u"allreduce_coalesced"_s,
                                  u"barrier"_s,
                                  u"broadcast"_s,
                                  u"gather"_s,
                                  u"new_window"_s,
                                  u"reduce"_s,
                                  u"reduce_scatter"_s,
                                  u"reduce_scatter_single"_s,
                                  u"reduce_scatter_tensor_coalesced"_s,
                                  u"reduce_scatter_v"_s,
                                  u"scatter"_s,
                                  u"split"_s}) {
            Event e{op, {{4, 4}}, {{4, 4}}};
            if (op == u"reduce_scatter"_s || op == u"_reduce_scatter_base"_s ||
                op == u"reduce_scatter_tensor_coalesced"_s)
                e.out = {{8}};
            if (op == u"all_gather"_s || op == u"_all_gather_base"_s ||
                op == u"all_gather_into_tensor_coalesced"_s)
                e.out = {{32}};
            QTest::addRow("all events: %s", qPrintable(op)) << ranksOf(e, e) << false;
        }
    }
    // torch's build_db cases (test_fr_analysis.py, testBuildDB) with the ops of one coalesced
    // group sharing a collective number, as NCCL records them: each op is compared, not the
    // group's end entry alone.
    void torchCoalescedGroups_data()
    {
        QTest::addColumn<Inputs>("ranks");
        QTest::addColumn<bool>("parted");
        const auto group = [](const QList<QPair<QString, qint64>> &ops, const QString &end) {
            QList<FlightRecorderEntry> out;
            for (const auto &[op, side] : ops) {
                FlightRecorderEntry e = entry(1, op);
                e.inputSizes = {{side, side}};
                e.outputSizes = {{side, side}};
                e.inputDtypes = e.outputDtypes = {u"float32"_s};
                e.state = u"completed"_s;
                out << e;
            }
            FlightRecorderEntry marker = entry(1, end);
            marker.inputSizes = marker.outputSizes = {{}};
            marker.inputDtypes.clear();
            marker.state = u"completed"_s;
            out << marker;
            return out;
        };
        const auto ranksOf = [](const QList<FlightRecorderEntry> &a,
                                const QList<FlightRecorderEntry> &b) {
            Inputs out;
            for (const QList<FlightRecorderEntry> &entries : {a, b}) {
                RankCollectiveInput in = rank(int(out.size()), 1, 1, entries.first());
                in.dump.entries = entries;
                out << in;
            }
            return out;
        };
        const auto broadcasts = group({{u"broadcast"_s, 4}, {u"broadcast"_s, 4}}, u"coalesced"_s);
        QTest::newRow("case 3: two broadcasts coalesced, matched")
            << ranksOf(broadcasts, broadcasts) << false;
        QTest::newRow("case 4: an uneven all-gather's broadcasts (5×5 vs 4×4), mismatched")
            << ranksOf(group({{u"_broadcast_oop"_s, 4}, {u"_broadcast_oop"_s, 5}},
                             u"ALLGATHER_coalesced"_s),
                       group({{u"_broadcast_oop"_s, 4}, {u"_broadcast_oop"_s, 4}},
                             u"ALLGATHER_coalesced"_s))
            << true;
        const auto reduces =
            group({{u"_reduce_oop"_s, 4}, {u"_reduce_oop"_s, 4}}, u"REDUCE_SCATTER_coalesced"_s);
        QTest::newRow("case 5: a reduce-scatter's reduces, matched")
            << ranksOf(reduces, reduces) << false;
        QTest::newRow("case 6: an empty coalesced call on one rank")
            << ranksOf(group({}, u"REDUCE_SCATTER_coalesced"_s), reduces) << true;
    }
    void torchCoalescedGroups()
    {
        QFETCH(Inputs, ranks);
        QFETCH(bool, parted);
        const CollectiveVerdict v = CollectiveVerdict::compute(ranks, 1010 * kSecond);
        QVERIFY2((v.kind() == CollectiveVerdict::Kind::Desync) == parted, qPrintable(v.text()));
        qInfo("%s", qPrintable(v.text()));
    }
    void torchMatchOneEvent()
    {
        QFETCH(Inputs, ranks);
        QFETCH(bool, parted);
        const CollectiveVerdict v = CollectiveVerdict::compute(ranks, 1010 * kSecond);
        QVERIFY2((v.kind() == CollectiveVerdict::Kind::Desync) == parted, qPrintable(v.text()));
        if (parted) // two ranks, one against one: no rank named
            QVERIFY(v.culprits().isEmpty());
    }
    void pendingTime()
    {
        Inputs ranks = realCase(u"allentered"_s);
        const qint64 last = lastCreatedNs(ranks);
        CollectiveVerdict v = CollectiveVerdict::compute(ranks, last + 90 * kSecond);
        QCOMPARE(v.pendingNs(), 90 * kSecond);
        QCOMPARE(v.lastCompletedSeq(), 3LL);
        QVERIFY2(v.headline().contains(u"for 90.0 s"_s), qPrintable(v.headline()));
        // A clock behind the dumps' (another node's): no negative time.
        v = CollectiveVerdict::compute(ranks, last - kSecond);
        QCOMPARE(v.pendingNs(), 0LL);
    }

    void readsBackOnlyWhatItWrote_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error");
        QTest::newRow("empty") << QByteArray("{}") << u"kind"_s;
        QTest::newRow("unknown kind")
            << QByteArray(R"({"kind": "doom"})") << u"kind \"doom\" is not"_s;
        QTest::newRow("ranks not numbers")
            << QByteArray(R"({"kind": "desync", "group": {"name": "0", "desc": "", "ranks": ["a"]},
                              "seq": 1})")
            << u"ranks holds something that is not a rank"_s;
        QTest::newRow("seq a string")
            << QByteArray(R"({"kind": "desync", "group": {"name": "0", "desc": "", "ranks": []},
                              "seq": "1"})")
            << u"seq is not an integer"_s;
    }
    void readsBackOnlyWhatItWrote()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        QString got;
        const CollectiveVerdict v =
            CollectiveVerdict::fromJson(QJsonDocument::fromJson(json).object(), &got);
        QCOMPARE(v, CollectiveVerdict());
        QVERIFY2(got.contains(error), qPrintable(got));
    }
};

QTEST_GUILESS_MAIN(TestCollectiveVerdict)
#include "tst_collectiveverdict.moc"
