// SPDX-License-Identifier: GPL-3.0-or-later
//
// One flight-recorder collection's bookkeeping on real dumps (data/fr/) sent as the ranks send
// them: chunks put back at their offsets in any order, the record's folder in the layout torch's
// analyser reads, and every way an answer can break (a chunk missing at the end, overlapping
// chunks, a file that changes size, too big, not base64, after the end, a rank not asked): the
// rank's dump is then given up with a reason naming what was wrong, and nothing else is lost.
#include "frdumpanswer.h"
#include "run/flightrecordercollection.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace rankdeck::testing;
using namespace Qt::StringLiterals;

class TestFlightRecorderCollection : public QObject
{
    Q_OBJECT

private slots:
    void reassembles_data();
    void reassembles();
    void writesTorchLayout();
    void brokenChunk_data();
    void brokenChunk();
    void incompleteAtEnd();
    void endWithReason();
    void givingUp();
    void ids();
};

using Trigger = FlightRecorderCollection::Trigger;

void TestFlightRecorderCollection::reassembles_data()
{
    QTest::addColumn<QString>("order");
    QTest::newRow("in order") << u"in order"_s;
    QTest::newRow("reversed") << u"reversed"_s;
    QTest::newRow("shuffled") << u"shuffled"_s;
}

void TestFlightRecorderCollection::reassembles()
{
    QFETCH(QString, order);
    const QByteArray json = frSample(u"healthy/rank_0.json"_s);
    const QByteArray pickle = json.left(5000) + "pickle"; // any bytes: only the layout counts
    QList<WorkerEvent> events = frAnswer(0, 3, json, pickle);
    QVERIFY(events.size() > 4);
    const WorkerEvent end = events.takeLast();
    if (order == u"reversed"_s)
        std::reverse(events.begin(), events.end());
    else if (order == u"shuffled"_s)
        std::shuffle(events.begin(), events.end(), *QRandomGenerator::global());
    FlightRecorderCollection c(3, Trigger::Hang, 100, 2, {0, 1});
    QCOMPARE(c.pending(), (QList<int>{0, 1}));
    for (const WorkerEvent &e : std::as_const(events)) {
        QString problem;
        QVERIFY2(c.add(0, e.fields(), 200, &problem), qPrintable(problem));
    }
    QVERIFY(!c.answer(0)->done);
    QString problem;
    QVERIFY(c.add(0, end.fields(), 300, &problem));
    QCOMPARE(c.pending(), (QList<int>{1}));
    QVERIFY(c.answer(0)->hasJson());
    QCOMPARE(c.answer(0)->json.bytes, json);
    QCOMPARE(c.answer(0)->pickle.bytes, pickle);
    QVERIFY(c.answer(0)->reason.isEmpty());
    QCOMPARE(c.ranksWithJson(), (QList<int>{0}));
}

void TestFlightRecorderCollection::writesTorchLayout()
{
    QTemporaryDir run;
    FlightRecorderCollection c(7, Trigger::Stacks, 100, 3, {0, 1});
    const QByteArray json0 = frSample(u"uneven/rank_0.json"_s);
    const QByteArray json1 = frSample(u"uneven/rank_1.json"_s);
    QString problem;
    for (const WorkerEvent &e : frAnswer(0, 7, json0, "P0"))
        QVERIFY(c.add(0, e.fields(), 200, &problem));
    for (const WorkerEvent &e :
         frAnswer(1, 7, json1, {}, u"torch.distributed is not initialised"_s))
        QVERIFY(c.add(1, e.fields(), 250, &problem));
    QVERIFY(c.isComplete());
    QString error;
    QVERIFY2(c.write(run.path(), QJsonObject{{u"kind"_s, u"desync"_s}}, &error), qPrintable(error));
    const QString base = run.path() + u"/flight-recorder/7"_s;
    // torch's analyser gets the pickles alone in torch/ (it reads every rank_* below the folder
    // it is given, and int("0.json") would fail); the JSON beside it.
    QCOMPARE(QDir(base + u"/torch"_s).entryList(QDir::Files), QStringList{u"rank_0"_s});
    QFile pickle(base + u"/torch/rank_0"_s);
    QVERIFY(pickle.open(QIODevice::ReadOnly));
    QCOMPARE(pickle.readAll(), QByteArray("P0"));
    QFile j0(FlightRecorderCollection::jsonPath(run.path(), 7, 0));
    QVERIFY(j0.open(QIODevice::ReadOnly));
    QCOMPARE(j0.readAll(), json0);
    QFile j1(FlightRecorderCollection::jsonPath(run.path(), 7, 1));
    QVERIFY(j1.open(QIODevice::ReadOnly));
    QCOMPARE(j1.readAll(), json1); // the JSON came whole though the reason says more
    QFile meta(base + u"/collection.json"_s);
    QVERIFY(meta.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
    QCOMPARE(o.value(u"id"_s).toInteger(), 7);
    QCOMPARE(o.value(u"trigger"_s).toString(), u"stacks"_s);
    QCOMPARE(o.value(u"ended_us"_s).toInteger(), 250);
    QCOMPARE(o.value(u"verdict"_s).toObject().value(u"kind"_s).toString(), u"desync"_s);
    const QJsonArray ranks = o.value(u"ranks"_s).toArray();
    QCOMPARE(ranks.size(), 3);
    QVERIFY(ranks[0].toObject().value(u"torch_pickle"_s).toBool());
    QCOMPARE(ranks[1].toObject().value(u"reason"_s).toString(),
             u"torch.distributed is not initialised"_s);
    QVERIFY(!ranks[2].toObject().value(u"asked"_s).toBool());
    QVERIFY(!ranks[2].toObject().value(u"reason"_s).toString().isEmpty());
}

void TestFlightRecorderCollection::brokenChunk_data()
{
    QTest::addColumn<QJsonObject>("event");
    QTest::addColumn<QString>("problem");
    const QJsonObject good{{u"t"_s, u"frdump"_s}, {u"id"_s, 1},   {u"file"_s, u"json"_s},
                           {u"offset"_s, 0},      {u"size"_s, 8}, {u"data"_s, u"e30="_s}};
    auto with = [&](const QString &k, const QJsonValue &v) {
        QJsonObject o = good;
        o[k] = v;
        return o;
    };
    QTest::newRow("unknown file") << with(u"file"_s, u"core"_s) << u"unknown file \"core\""_s;
    QTest::newRow("size too big") << with(u"size"_s, double(1ll << 40)) << u"at most"_s;
    QTest::newRow("size zero") << with(u"size"_s, 0) << u"a json file of 0 bytes"_s;
    QTest::newRow("not base64") << with(u"data"_s, u"!!!!"_s) << u"not base64"_s;
    QTest::newRow("no data") << with(u"data"_s, 5) << u"without data"_s;
    QTest::newRow("past the end") << with(u"offset"_s, 7) << u"outside a file of 8 bytes"_s;
    QTest::newRow("negative offset") << with(u"offset"_s, -1) << u"outside"_s;
    QTest::newRow("overlap") << with(u"offset"_s, 1) << u"overlap at offset 1"_s;
    QTest::newRow("size changes") << with(u"size"_s, 9) << u"changed its size from 8 to 9"_s;
    QTest::newRow("rank not asked") << good << u"which was not asked"_s;
    QTest::newRow("after the end") << good << u"after the end"_s;
}

void TestFlightRecorderCollection::brokenChunk()
{
    QFETCH(QJsonObject, event);
    QFETCH(QString, problem);
    const QString row = QString::fromUtf8(QTest::currentDataTag());
    FlightRecorderCollection c(1, Trigger::Probe, 100, 3, {0, 1});
    const QJsonObject first{{u"t"_s, u"frdump"_s}, {u"id"_s, 1},   {u"file"_s, u"json"_s},
                            {u"offset"_s, 0},      {u"size"_s, 8}, {u"data"_s, u"e30="_s}};
    QString why;
    int rank = 0;
    if (row == u"overlap"_s || row == u"size changes"_s)
        QVERIFY(c.add(0, first, 150, &why)); // "{}" at 0..1
    if (row == u"after the end"_s)
        QVERIFY(c.add(0, QJsonObject{{u"end"_s, true}, {u"msg"_s, u"off"_s}}, 150, &why));
    if (row == u"rank not asked"_s)
        rank = 2;
    QVERIFY(!c.add(rank, event, 200, &why));
    QVERIFY2(why.contains(problem), qPrintable(why));
    const FlightRecorderCollection::Answer *a = c.answer(rank);
    QVERIFY(a->done);
    QVERIFY(!a->hasJson());
    if (row != u"rank not asked"_s && row != u"after the end"_s) {
        // The rest of its answer is not trusted: given up, saying why; the other rank waits on.
        QVERIFY2(a->reason.contains(u"broke the protocol"_s) && a->reason.contains(problem),
                 qPrintable(a->reason));
        QCOMPARE(c.pending(), QList<int>{1});
        QVERIFY(!c.add(0, first, 300, &why)); // and what it sends later is refused
    }
}

void TestFlightRecorderCollection::incompleteAtEnd()
{
    const QByteArray json = frSample(u"healthy/rank_1.json"_s);
    QList<WorkerEvent> events = frAnswer(1, 2, json);
    QVERIFY(events.size() >= 4);
    events.removeAt(1); // one chunk (a whole one: not the last) lost on the way
    FlightRecorderCollection c(2, Trigger::Hang, 100, 2, {1});
    QString problem;
    for (const WorkerEvent &e : std::as_const(events))
        QVERIFY(c.add(1, e.fields(), 200, &problem));
    QVERIFY(c.isComplete());
    QVERIFY(!c.answer(1)->hasJson());
    const QString expected = u"its dump arrived incomplete (json: %1 of %2 bytes)"_s
                                 .arg(json.size() - qsizetype(wire::kFlightRecorderChunkBytes))
                                 .arg(json.size());
    QCOMPARE(c.answer(1)->reason, expected);
}

void TestFlightRecorderCollection::endWithReason()
{
    FlightRecorderCollection c(4, Trigger::Hang, 100, 2, {0, 1});
    QString problem;
    const QString why = u"no answer within 2 s: the program holds the GIL in native code or is "
                        u"stopped"_s;
    for (const WorkerEvent &e : frAnswer(0, 4, {}, {}, why))
        QVERIFY(c.add(0, e.fields(), 200, &problem));
    for (const WorkerEvent &e : frAnswer(1, 4, {}, {}, {}))
        QVERIFY(c.add(1, e.fields(), 200, &problem));
    QCOMPARE(c.answer(0)->reason, why);
    QCOMPARE(c.answer(1)->reason, u"its answer held no dump and no reason"_s);
    QVERIFY(c.ranksWithJson().isEmpty());
}

void TestFlightRecorderCollection::givingUp()
{
    FlightRecorderCollection c(5, Trigger::RankFailed, 100, 4, {0, 2, 3});
    QCOMPARE(c.pending(), (QList<int>{0, 2, 3}));
    // Chunks that came before the rank exited are dropped with it: half a dump is none.
    QString problem;
    const QList<WorkerEvent> events = frAnswer(2, 5, frSample(u"missing/rank_2.json"_s));
    QVERIFY(c.add(2, events.first().fields(), 150, &problem));
    c.giveUp(2, u"it exited before answering"_s, 200);
    c.giveUp(2, u"no answer within 5 s"_s, 300); // the first reason stays
    QCOMPARE(c.answer(2)->reason, u"it exited before answering"_s);
    QVERIFY(c.answer(2)->json.bytes.isEmpty());
    c.giveUp(0, u"no answer within 5 s"_s, 400);
    c.giveUp(3, u"no answer within 5 s"_s, 400);
    QVERIFY(c.isComplete());
    QCOMPARE(c.endedUs(), 400);
    QVERIFY(!c.answer(1)->asked);
}

void TestFlightRecorderCollection::ids()
{
    QTemporaryDir run;
    QCOMPARE(FlightRecorderCollection::ids(run.path()), QList<qint64>{});
    for (const QString &name : {u"3"_s, u"12"_s, u"1"_s, u"x"_s, u"007"_s, u"-2"_s})
        QVERIFY(QDir().mkpath(run.path() + u"/flight-recorder/"_s + name));
    QCOMPARE(FlightRecorderCollection::ids(run.path()), (QList<qint64>{1, 3, 12}));
}

QTEST_GUILESS_MAIN(TestFlightRecorderCollection)
#include "tst_flightrecordercollection.moc"
