// SPDX-License-Identifier: GPL-3.0-or-later
//
// SlowRankVerdict on sample windows as the supervisor sends them (SampleWindow::fromEvent of
// real `samples` event lines, then SampleStore's sums): who is named, with which cause and
// line, and that a healthy job, noise, too few samples or a split job name no one.
#include "diagnosis/slowrankanalysis.h"
#include "record/runstatefile.h"
#include "store/samplestore.h"
#include "stream/workerevent.h"

#include <QtTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// One rank's window: "category:count,…", its top frames "count|category|frame;…", /proc.
struct Rank
{
    QString categories;
    QString frames;
    double cpu = 0.05;
    double runq = 0.01;
    double faults = 0;
};

QByteArray eventJson(int rank, qint64 ts, const Rank &r)
{
    QJsonObject cats;
    int n = 0;
    for (const QString &c : r.categories.split(u',', Qt::SkipEmptyParts)) {
        const QStringList kv = c.split(u':');
        cats.insert(kv[0], kv[1].toInt());
        n += kv[1].toInt();
    }
    QJsonArray top;
    for (const QString &f : r.frames.split(u';', Qt::SkipEmptyParts))
        top.append(f.split(u'|').join(u'\t'));
    const QJsonObject o{{u"t"_s, u"samples"_s}, {u"ts"_s, ts},           {u"rank"_s, rank},
                        {u"ms"_s, 2000},        {u"hz"_s, 20},           {u"n"_s, n},
                        {u"cat"_s, cats},       {u"top"_s, top},         {u"cpu"_s, r.cpu},
                        {u"runq"_s, r.runq},    {u"majflt"_s, r.faults}, {u"rss"_s, 1000000}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

SlowRankVerdict judge(const QList<Rank> &ranks, int windows = 5,
                      const QHash<int, QString> &hosts = {{2, u"gpu2"_s}})
{
    SampleStore store;
    for (int w = 0; w < windows; ++w)
        for (int r = 0; r < ranks.size(); ++r) {
            const std::optional<WorkerEvent> e = WorkerEvent::fromJson(
                eventJson(r, 1'000'000'000 + qint64(w) * 2'000'000, ranks[r]));
            if (e)
                store.add(r, SampleWindow::fromEvent(*e));
        }
    return SlowRankVerdict::analyze(store.summaries(10'000'000), hosts);
}

const Rank waiting{u"backward:39,forward:1"_s, u"39|backward|<module> (train.py:30)"_s};

} // namespace

class TestSlowRankAnalysis : public QObject
{
    Q_OBJECT
private slots:
    void verdicts_data()
    {
        QTest::addColumn<QList<Rank>>("ranks");
        QTest::addColumn<int>("rank");
        QTest::addColumn<int>("cause");
        QTest::addColumn<QString>("text");
        const Rank burning{u"data:28,backward:8,forward:4"_s,
                           u"20|data|Samples.__getitem__ (data.py:41);6|data|Samples.__getitem__ "
                           "(data.py:42);8|backward|<module> (train.py:30)"_s,
                           0.9, 0.02};
        QTest::newRow("input-bound: rank 2's Dataset on the CPU")
            << QList<Rank>{waiting, waiting, burning, waiting} << 2
            << int(SlowRankVerdict::Cause::InputBound)
            << u"rank 2 (gpu2) is the straggler, input-bound: 65 % of its time in data loading at "
               "Samples.__getitem__ (data.py:41), against 0 % on the other ranks, which spend "
               "98 % waiting in backward (gradient sync) at <module> (train.py:30); it waits 20 %. "
               "It runs on a CPU 90 % of the time"_s;
        // Lightning: sampled in-process, the busy Dataset lets the sampler in mostly in
        // collate, under the script's Trainer.fit line, which thus gets more than twice the
        // Dataset's data samples; the others wait under that very line, and never run the Dataset.
        const Rank underTrainer{
            u"backward:14,data:20,forward:2,collective:4"_s,
            u"14|backward|<module> (train.py:30);14|data|<module> (train.py:30);"
            "5|data|Shard.__getitem__ (lightning_slow.py:33);"
            "1|data|Shard.__getitem__ (lightning_slow.py:32)"_s,
            0.7, 0.02};
        QTest::newRow("input-bound under Lightning: the Dataset, not the loop line")
            << QList<Rank>{waiting, waiting, underTrainer, waiting} << 2
            << int(SlowRankVerdict::Cause::InputBound)
            << u"input-bound: 15 % of its time in data loading at Shard.__getitem__ "
               "(lightning_slow.py:33), against 0 % on the other ranks"_s;
        // The machine is shared with other work: every rank waits for a CPU alike, and the
        // Dataset's loop runs only 40 % of the time. Still input-bound, not I/O-bound.
        Rank crowded = burning;
        crowded.cpu = 0.4;
        crowded.runq = 0.4;
        Rank crowdedWaiting = waiting;
        crowdedWaiting.runq = 0.4;
        QTest::newRow("input-bound on a crowded machine")
            << QList<Rank>{crowdedWaiting, crowdedWaiting, crowded, crowdedWaiting} << 2
            << int(SlowRankVerdict::Cause::InputBound)
            << u"It runs on a CPU 40 % of the time and waits for one 40 %"_s;
        Rank blocked = burning;
        blocked.cpu = 0.05;
        QTest::newRow("I/O-bound: the same place, off the CPU")
            << QList<Rank>{waiting, waiting, blocked, waiting} << 2
            << int(SlowRankVerdict::Cause::IoBound) << u"It is off the CPU, blocked, 93 %"_s;
        Rank starved{
            u"forward:15,data:10,backward:15"_s,
            u"15|forward|<module> (train.py:28);10|data|Samples.__getitem__ (data.py:41)"_s, 0.25,
            0.6};
        QTest::newRow("CPU-starved: it waits for a CPU")
            << QList<Rank>{waiting, starved} << 1 << int(SlowRankVerdict::Cause::CpuStarved)
            << u"When it wants to run it waits for a CPU 71 % of the time (run queue), the other "
               "ranks 17 %"_s;
        // Starved so plainly that its own backward is slow too: a wait gap of 0.15 names it.
        Rank starvedEverywhere{
            u"backward:30,forward:6,data:4"_s,
            u"30|backward|<module> (train.py:30);6|forward|<module> (train.py:28)"_s, 0.2, 0.6};
        QTest::newRow("CPU-starved: slow in backward too")
            << QList<Rank>{waiting, starvedEverywhere} << 1
            << int(SlowRankVerdict::Cause::CpuStarved) << u"(run queue)"_s;
        Rank mildlyStarved = starvedEverywhere;
        mildlyStarved.runq = 0.15; // 43 % of its runnable time: not plainly starved
        QTest::newRow("the same wait gap without plain starvation: nobody")
            << QList<Rank>{waiting, mildlyStarved} << -1 << int(SlowRankVerdict::Cause::None)
            << QString();
        Rank faulting = burning;
        faulting.faults = 400;
        QTest::newRow("memory pressure: major faults")
            << QList<Rank>{waiting, waiting, faulting} << 2
            << int(SlowRankVerdict::Cause::MemoryPressure) << u"400 major page faults/s"_s;
        Rank computing{u"forward:25,backward:15"_s, u"25|forward|Net.forward (model.py:12)"_s, 0.95,
                       0.01};
        QTest::newRow("compute-bound: more time in forward")
            << QList<Rank>{waiting, computing, waiting} << 1
            << int(SlowRankVerdict::Cause::ComputeBound)
            << u"63 % of its time in forward at Net.forward (model.py:12)"_s;
        // Nobody named:
        const Rank busy{u"forward:14,backward:14,data:12"_s,
                        u"14|forward|<module> (train.py:28);12|data|<module> (train.py:26)"_s, 0.8,
                        0.1};
        Rank busy2 = busy;
        busy2.categories = u"forward:12,backward:17,data:11"_s;
        QTest::newRow("healthy: every rank alike, some noise")
            << QList<Rank>{busy, busy2, busy, busy2} << -1 << int(SlowRankVerdict::Cause::None)
            << u"where the time goes: "_s;
        QTest::newRow("two slow ranks of four: not one rank's slowness")
            << QList<Rank>{waiting, burning, burning, waiting} << -1
            << int(SlowRankVerdict::Cause::None) << QString();
        QTest::newRow("one rank alone: nothing to compare")
            << QList<Rank>{burning} << -1 << int(SlowRankVerdict::Cause::None) << QString();
        Rank slowButEven{u"backward:30,data:10"_s, u"10|data|Samples.__getitem__ (data.py:41)"_s,
                         0.3, 0.01};
        QTest::newRow("a gap below the threshold")
            << QList<Rank>{waiting, slowButEven} << -1 << int(SlowRankVerdict::Cause::None)
            << QString();
    }
    void verdicts()
    {
        QFETCH(QList<Rank>, ranks);
        QFETCH(int, rank);
        QFETCH(int, cause);
        QFETCH(QString, text);
        const SlowRankVerdict v = judge(ranks);
        QCOMPARE(v.rank, rank);
        QCOMPARE(int(v.cause), cause);
        QVERIFY2(v.text().contains(text), qPrintable(v.text()));
        QCOMPARE(v.details.size(), ranks.size() >= 1 ? qsizetype(ranks.size()) : 0);
        // The banner says "Straggler:" before it: the same sentence, without saying it twice,
        // from the verdict and from its recorded text alike.
        if (!v.found())
            return;
        const QString banner = v.bannerText();
        const QString who = rank == 2 ? u"rank 2 (gpu2), "_s : u"rank %1, "_s.arg(rank);
        QVERIFY2(!banner.contains(u"straggler"_s), qPrintable(banner));
        QVERIFY2(banner.startsWith(who), qPrintable(banner));
        QCOMPARE(banner.size(), v.text().size() - qsizetype(u" is the straggler"_s.size()));
        const SlowRankVerdict recorded = SlowRankVerdict::fromRecord(
            v.rank, SlowRankVerdict::causeKey(v.cause), v.text(), v.timeSplit, v.details);
        QCOMPARE(recorded.bannerText(), banner);
    }

    // Where the time goes, per node when the ranks run on several: the node whose ranks load
    // data while the others wait stands out even with no single straggler (two against two).
    void timeSplitPerNode()
    {
        const Rank loading{u"data:20,backward:20"_s, u"20|data|Samples.__getitem__ (d.py:4)"_s};
        const QList<Rank> ranks{waiting, waiting, loading, loading};
        const SlowRankVerdict split = judge(
            ranks, 5, {{0, u"node-a"_s}, {1, u"node-a"_s}, {2, u"node-b"_s}, {3, u"node-b"_s}});
        QCOMPARE(split.timeSplit,
                 u"node-a (ranks 0–1): backward (gradient sync) 98 %, forward 3 %; "
                 "node-b (ranks 2–3): backward (gradient sync) 50 %, data loading 50 %"_s);
        // One node, or nodes not known for every rank: one split over the job.
        QCOMPARE(
            judge(ranks, 5, {{0, u"vm"_s}, {1, u"vm"_s}, {2, u"vm"_s}, {3, u"vm"_s}}).timeSplit,
            judge(ranks, 5, {}).timeSplit);
        QVERIFY(!judge(ranks, 5, {}).timeSplit.contains(u';'));
    }

    void tooFewSamples()
    {
        // 2 windows of 40 samples: 80 ≥ kMinSamples, 1 window: 40 < it.
        const Rank burning{u"data:30,backward:10"_s, u"30|data|Samples.__getitem__ (data.py:41)"_s,
                           0.9, 0.02};
        QVERIFY(judge({waiting, burning}, 2).found());
        QVERIFY(!judge({waiting, burning}, 1).found());
        QCOMPARE(judge({waiting, burning}, 1).ranksCompared, 0);
    }

    void hostileEvents()
    {
        // Out-of-range numbers, wrong types, a thousand frames: bounded, never a crash.
        QJsonArray top;
        for (int i = 0; i < 1000; ++i)
            top.append(u"5\tdata\t"_s + QString(500, u'x'));
        top.append(42);
        top.append(u"-3\tdata\tneg"_s);
        const QJsonObject o{{u"t"_s, u"samples"_s},
                            {u"ts"_s, 1},
                            {u"rank"_s, 0},
                            {u"n"_s, 1e12},
                            {u"cat"_s, QJsonObject{{u"data"_s, -5}}},
                            {u"top"_s, top},
                            {u"cpu"_s, u"nan"_s},
                            {u"runq"_s, 7}};
        const std::optional<WorkerEvent> e =
            WorkerEvent::fromJson(QJsonDocument(o).toJson(QJsonDocument::Compact));
        QVERIFY(e);
        const SampleWindow w = SampleWindow::fromEvent(*e);
        QCOMPARE(w.main.samples, 1000000);
        QVERIFY(w.main.categories.isEmpty());
        QCOMPARE(w.main.frames.size(), 32);
        QCOMPARE(w.main.frames.first().frame.size(), 300);
        QCOMPARE(w.proc.cpuShare, 0.0);
        QCOMPARE(w.proc.runQueueShare, 1.0);
    }

    void throughStateJson()
    {
        // What the launcher writes (state.json's "slow") is what a second window, `show` and
        // `runs` read back: the same sentence, rank, cause and evidence.
        const Rank burning{u"data:28,backward:8,forward:4"_s,
                           u"26|data|Samples.__getitem__ (data.py:41)"_s, 0.9, 0.02};
        const SlowRankVerdict v = judge({waiting, waiting, burning});
        QVERIFY(v.found());
        RunStateFile f;
        f.slowRank = v.rank;
        f.slowCause = SlowRankVerdict::causeKey(v.cause);
        f.slowText = v.text();
        f.slowSummary = v.summary();
        f.timeSplit = v.timeSplit;
        f.slowEvidence = v.details;
        const RunStateFile back = RunStateFile::fromJson(f.toJson());
        const SlowRankVerdict read = SlowRankVerdict::fromRecord(
            back.slowRank, back.slowCause, back.slowText, back.timeSplit, back.slowEvidence);
        QCOMPARE(read.rank, 2);
        QCOMPARE(read.cause, SlowRankVerdict::Cause::InputBound);
        QCOMPARE(read.text(), v.text());
        QCOMPARE(read.details, v.details);
        QCOMPARE(back.slowSummary,
                 u"rank 2 input-bound: Samples.__getitem__ (data.py:41) 65 % vs 0 %"_s);
        // No verdict: nothing named, the split kept.
        RunStateFile none;
        none.timeSplit = u"backward (gradient sync) 98 %"_s;
        const RunStateFile noneBack = RunStateFile::fromJson(none.toJson());
        QCOMPARE(noneBack.slowRank, -1);
        QCOMPARE(noneBack.timeSplit, none.timeSplit);
        QVERIFY(!SlowRankVerdict::fromRecord(-1, QString(), u"x"_s, QString(), {}).found());
    }

    void startUpDropped()
    {
        // Importing torch and forming the group is no part of how a rank trains.
        SampleStore store;
        SampleWindow startUp;
        startUp.windowMs = 2000;
        startUp.main.samples = 40;
        startUp.main.categories = {{u"other"_s, 36}, {u"collective"_s, 4}};
        SampleWindow training = startUp;
        training.main.categories = {{u"backward"_s, 30}, {u"data"_s, 10}};
        for (int i = 0; i < 3; ++i) {
            startUp.timeUs = qint64(i) * 2'000'000;
            store.add(0, startUp);
        }
        QCOMPARE(store.summaries(10'000'000).value(0).windows, 3); // nothing better yet
        training.timeUs = 6'000'000;
        store.add(0, training);
        startUp.timeUs = 8'000'000; // a pause later (a checkpoint) stays
        store.add(0, startUp);
        const SampleSummary s = store.summaries(10'000'000).value(0);
        QCOMPARE(s.windows, 2);
        QCOMPARE(s.main.categories.value(u"other"_s), 36);
    }

    void storeKeepsAMinute()
    {
        SampleStore store;
        SampleWindow w;
        w.windowMs = 2000;
        w.main.samples = 40;
        for (int i = 0; i < 100; ++i) {
            w.timeUs = qint64(i) * 2'000'000;
            store.add(0, w);
        }
        // 10 s: the last 5 windows.
        QCOMPARE(store.summaries(10'000'000).value(0).windows, 5);
        QCOMPARE(store.summaries(10'000'000).value(0).main.samples, 200);
        // Kept: a minute (and the one at its edge).
        QVERIFY(store.summaries(qint64(1) << 40).value(0).windows <= 31);
    }
};

QTEST_GUILESS_MAIN(TestSlowRankAnalysis)
#include "tst_slowrankanalysis.moc"
