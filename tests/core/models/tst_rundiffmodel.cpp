// SPDX-License-Identifier: GPL-3.0-or-later
//
// RunDiffModel, the compare table (issue 41): rows in reading order (loss, the metrics people
// read, the duration, the settings, the other metrics alphabetically), metrics named as on the
// plot with their ids kept, a flag a run did not give shown with the worker's default, and the
// numbers of a row with the same decimals, right-aligned. On plain RunSummary values, under
// QAbstractItemModelTester. The worker's defaults are checked against its own parser
// (worker/workeroptions.cpp, compiled in), so the two cannot drift apart unnoticed.
#include "models/metricnames.h"
#include "models/rundiffmodel.h"
#include "store/metricsstore.h"
#include "workeroptions.h"

#include <QAbstractItemModelTester>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// metrics: "id=final/best" words ("loss=0.5/0.25"); a missing best is the final.
RunSummary run(const QString &name, const QStringList &args, const QString &metrics = {},
               int worldSize = 2, qint64 durationUs = 10'000'000,
               const QString &profile = u"local"_s)
{
    RunSummary s;
    s.id = name + u"-id"_s;
    s.name = name;
    s.profile = profile;
    s.worldSize = worldSize;
    s.arguments = args;
    s.durationUs = durationUs;
    QMap<QString, std::pair<double, double>> values;
    for (const QString &word : metrics.split(u' ', Qt::SkipEmptyParts)) {
        const QString id = word.section(u'=', 0, 0);
        const QString v = word.section(u'=', 1);
        const double final = v.section(u'/', 0, 0).toDouble();
        const QString best = v.section(u'/', 1);
        values.insert(id, {final, best.isEmpty() ? final : best.toDouble()});
    }
    for (auto it = values.cbegin(); it != values.cend(); ++it) {
        s.metrics << it.key();
        s.finalValues << it->first;
        s.bestValues << it->second;
    }
    return s;
}

struct Table
{
    RunDiffModel model;
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};

    explicit Table(const QList<RunSummary> &runs) { model.setRuns(runs); }
    int row(const QString &key) const { return int(model.keys().indexOf(key)); }
    QStringList values(const QString &key) const
    {
        QStringList out;
        const int r = row(key);
        for (int c = 0; r >= 0 && c < model.columnCount(); ++c)
            out << model.index(r, c).data().toString();
        return out;
    }
};

// What rankdeck-worker's parser ended with for `flag`, as RunSummary::workerDefault writes it;
// empty where the worker leaves it to the task (a charlm --dataset-size).
QString usedByWorker(const WorkerOptions &o, const QString &flag)
{
    const auto yesNo = [](bool on) { return on ? u"yes"_s : u"no"_s; };
    const QHash<QString, QString> used = {
        {u"--task"_s, QString::fromStdString(o.task)},
        {u"--steps"_s, QString::number(o.steps)},
        {u"--batch-size"_s, QString::number(o.batchSize)},
        {u"--lr"_s, QString::number(o.lr)},
        {u"--optimizer"_s, QString::fromStdString(o.optimizer)},
        {u"--momentum"_s, QString::number(o.momentum)},
        {u"--weight-decay"_s, QString::number(o.weightDecay)},
        {u"--schedule"_s, QString::fromStdString(o.schedule)},
        {u"--warmup-steps"_s, QString::number(o.warmupSteps)},
        {u"--clip-grad-norm"_s, QString::number(o.clipGradNorm)},
        {u"--seed"_s, QString::number(o.seed)},
        {u"--accum-steps"_s, QString::number(o.accumSteps)},
        {u"--backend"_s, QString::fromStdString(o.backend)},
        {u"--rendezvous-timeout"_s, QString::number(o.rendezvousTimeoutSec)},
        {u"--collective-timeout"_s, QString::number(o.collectiveTimeoutSec)},
        {u"--mlp-width"_s, QString::number(o.mlpWidth)},
        {u"--mlp-depth"_s, QString::number(o.mlpDepth)},
        {u"--dataset-size"_s, o.datasetSize == 0 ? QString() : QString::number(o.datasetSize)},
        {u"--loss"_s, QString::fromStdString(o.loss)},
        {u"--log-every"_s, QString::number(o.logEvery)},
        {u"--telemetry"_s, o.telemetry ? u"on"_s : u"off"_s},
        {u"--step-delay-ms"_s, QString::number(o.stepDelayMs)},
        {u"--cpu-affinity"_s, QString::fromStdString(o.cpuAffinity)},
        {u"--shuffle"_s, yesNo(o.shuffle)},
        {u"--resume"_s, yesNo(o.resume)},
        {u"--control-stdin"_s, yesNo(o.controlStdin)},
        {u"--no-overlap"_s, yesNo(o.noOverlap)},
        {u"--no-flight-recorder"_s, yesNo(!o.flightRecorder)},
    };
    return used.value(flag, u"?"_s);
}

} // namespace

class TestRunDiffModel : public QObject
{
    Q_OBJECT
private slots:
    void order_data()
    {
        QTest::addColumn<QList<RunSummary>>("runs");
        QTest::addColumn<QStringList>("keys");
        const QString a = u"loss=0.5/0.25 comm_wait_ms=3 acc=0.9 step_ms=20 gpu_mem=1000 "
                          u"samples_per_s=100 zeta=1 lr=0.01 compute_ms=17"_s;
        const QString b = u"loss=0.7/0.35 comm_wait_ms=4 acc=0.8 step_ms=30 gpu_mem=2000 "
                          u"samples_per_s=90 zeta=2 lr=0.02 compute_ms=26"_s;
        QTest::newRow("everything differs")
            << QList<RunSummary>{run(u"a"_s, {u"--task"_s, u"mlp"_s, u"--lr"_s, u"0.05"_s}, a, 2,
                                     10'000'000, u"local"_s),
                                 run(u"b"_s, {u"--task"_s, u"mlp"_s}, b, 4, 12'000'000,
                                     u"cluster"_s)}
            << QStringList{u"final:loss"_s,
                           u"best:loss"_s,
                           u"final:step_ms"_s,
                           u"best:step_ms"_s,
                           u"final:samples_per_s"_s,
                           u"best:samples_per_s"_s,
                           u"final:comm_wait_ms"_s,
                           u"best:comm_wait_ms"_s,
                           u"final:compute_ms"_s,
                           u"best:compute_ms"_s,
                           u"final:gpu_mem"_s,
                           u"best:gpu_mem"_s,
                           u"final:lr"_s,
                           u"best:lr"_s,
                           u"duration"_s,
                           u"flag:--lr"_s,
                           u"profile"_s,
                           u"world_size"_s,
                           u"final:acc"_s,
                           u"best:acc"_s,
                           u"final:zeta"_s,
                           u"best:zeta"_s};
        // Issue 41's case: the loss above comm_wait_ms, though alphabetically below it.
        QTest::newRow("loss before comm wait")
            << QList<RunSummary>{run(u"a"_s, {}, u"comm_wait_ms=3 loss=0.5/0.2"_s),
                                 run(u"b"_s, {}, u"comm_wait_ms=4 loss=0.6/0.2"_s)}
            << QStringList{u"final:loss"_s, u"final:comm_wait_ms"_s, u"best:comm_wait_ms"_s};
        QTest::newRow("settings before other metrics")
            << QList<RunSummary>{run(u"a"_s, {u"--steps"_s, u"10"_s}, u"acc=0.5 beta=1"_s),
                                 run(u"b"_s, {u"--steps"_s, u"20"_s}, u"acc=0.6 beta=2"_s)}
            << QStringList{u"flag:--steps"_s, u"final:acc"_s, u"best:acc"_s, u"final:beta"_s,
                           u"best:beta"_s};
        QTest::newRow("equal rows left out")
            << QList<RunSummary>{run(u"a"_s, {u"--seed"_s, u"1"_s}, u"loss=0.5 step_ms=20"_s),
                                 run(u"b"_s, {u"--seed"_s, u"1"_s}, u"loss=0.5 step_ms=21"_s)}
            << QStringList{u"final:step_ms"_s, u"best:step_ms"_s};
    }

    void order()
    {
        QFETCH(QList<RunSummary>, runs);
        QFETCH(QStringList, keys);
        const Table t(runs);
        QCOMPARE(t.model.keys(), keys);
        QCOMPARE(t.model.rowCount(), keys.size());
        for (int r = 0; r < keys.size(); ++r)
            QCOMPARE(t.model.headerData(r, Qt::Vertical, RunDiffModel::KeyRole).toString(),
                     keys[r]);
    }

    void names_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("label");
        QTest::addColumn<QString>("id");
        QTest::addRow("final loss") << u"final:loss"_s << u"Loss: final"_s << u"loss"_s;
        QTest::addRow("best loss") << u"best:loss"_s << u"Loss: best (lowest)"_s << u"loss"_s;
        QTest::addRow("comm wait")
            << u"final:comm_wait_ms"_s << u"Communication wait (ms): final"_s << u"comm_wait_ms"_s;
        QTest::addRow("step time")
            << u"final:step_ms"_s << u"Step time (ms): final"_s << u"step_ms"_s;
        QTest::addRow("samples/s best is the highest")
            << u"best:samples_per_s"_s << u"Samples/s: best (highest)"_s << u"samples_per_s"_s;
        QTest::addRow("memory") << u"final:gpu_mem"_s << u"GPU memory (bytes): final"_s
                                << u"gpu_mem"_s;
        QTest::addRow("a program's own metric keeps its id")
            << u"best:acc"_s << u"acc: best (highest)"_s << u"acc"_s;
        QTest::addRow("flag") << u"flag:--lr"_s << u"--lr"_s << u"--lr"_s;
        QTest::addRow("world size") << u"world_size"_s << u"World size"_s << u"world_size"_s;
    }

    void names()
    {
        QFETCH(QString, key);
        QFETCH(QString, label);
        QFETCH(QString, id);
        const Table t({run(u"a"_s, {u"--lr"_s, u"0.1"_s},
                           u"loss=0.5/0.2 comm_wait_ms=3 step_ms=20 samples_per_s=10/12 "
                           u"gpu_mem=100 acc=0.5/0.6"_s,
                           2),
                       run(u"b"_s, {u"--lr"_s, u"0.2"_s},
                           u"loss=0.6/0.3 comm_wait_ms=4 step_ms=21 samples_per_s=11/13 "
                           u"gpu_mem=200 acc=0.7/0.8"_s,
                           4)});
        const int r = t.row(key);
        QVERIFY2(r >= 0, qPrintable(t.model.keys().join(u' ')));
        QCOMPARE(t.model.headerData(r, Qt::Vertical).toString(), label);
        // The raw id stays at hand (tooltip) for those who know the metric by it.
        QCOMPARE(t.model.headerData(r, Qt::Vertical, Qt::ToolTipRole).toString(), id);
        QCOMPARE(t.model.index(r, 0).data(RunDiffModel::KeyRole).toString(), key);
        // The same words as the plot's metric list.
        if (key.contains(u':') && !key.startsWith(u"flag:"_s))
            QVERIFY(label.startsWith(metric::displayName(id)));
        QCOMPARE(t.model.headerData(0, Qt::Horizontal).toString(), u"a"_s);
        QCOMPARE(t.model.headerData(0, Qt::Horizontal, Qt::ToolTipRole).toString(), u"a-id"_s);
    }

    void defaults_data()
    {
        QTest::addColumn<QStringList>("first");
        QTest::addColumn<QStringList>("second");
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QStringList>("values"); // empty: no row (the runs used the same)
        QTest::addRow("issue 41: the baseline's --lr")
            << QStringList{} << QStringList{u"--lr"_s, u"0.05"_s} << u"--lr"_s
            << QStringList{u"0.01 (default)"_s, u"0.05"_s};
        QTest::addRow("--lr of adamw")
            << QStringList{u"--optimizer"_s, u"adamw"_s} << QStringList{u"--lr"_s, u"0.0005"_s}
            << u"--lr"_s << QStringList{u"0.0030 (default)"_s, u"0.0005"_s};
        QTest::addRow("the default given is no difference")
            << QStringList{} << QStringList{u"--lr"_s, u"0.010"_s} << u"--lr"_s << QStringList{};
        QTest::addRow("--lr follows --task though no run gives it")
            << QStringList{u"--task"_s, u"linear"_s} << QStringList{u"--task"_s, u"charlm"_s}
            << u"--lr"_s << QStringList{u"0.010 (default)"_s, u"0.003 (default)"_s};
        QTest::addRow("--batch-size follows --task")
            << QStringList{u"--task"_s, u"mlp"_s} << QStringList{u"--task=charlm"_s}
            << u"--batch-size"_s << QStringList{u"32 (default)"_s, u"16 (default)"_s};
        QTest::addRow("--steps") << QStringList{u"--steps"_s, u"60"_s} << QStringList{}
                                 << u"--steps"_s << QStringList{u"60"_s, u"100 (default)"_s};
        QTest::addRow("--optimizer")
            << QStringList{u"--optimizer"_s, u"adamw"_s} << QStringList{} << u"--optimizer"_s
            << QStringList{u"adamw"_s, u"sgd (default)"_s};
        QTest::addRow("a switch") << QStringList{u"--shuffle"_s} << QStringList{} << u"--shuffle"_s
                                  << QStringList{u"yes"_s, u"no (default)"_s};
        QTest::addRow("no default") << QStringList{u"--fault"_s, u"exit:3@5"_s} << QStringList{}
                                    << u"--fault"_s << QStringList{u"exit:3@5"_s, u"(not given)"_s};
    }

    void defaults()
    {
        QFETCH(QStringList, first);
        QFETCH(QStringList, second);
        QFETCH(QString, flag);
        QFETCH(QStringList, values);
        const Table t({run(u"a"_s, first), run(u"b"_s, second)});
        QCOMPARE(t.values(u"flag:"_s + flag), values);
    }

    // A program's run has no worker defaults: its command line is compared whole.
    void programHasNoDefaults()
    {
        RunSummary a = run(u"a"_s, {u"python3"_s, u"train.py"_s, u"--lr"_s, u"0.1"_s});
        RunSummary b = run(u"b"_s, {u"python3"_s, u"train.py"_s});
        a.program = b.program = true;
        const Table t({a, b});
        QCOMPARE(t.model.keys(), QStringList{u"program"_s});
        QCOMPARE(t.values(u"program"_s),
                 (QStringList{u"python3 train.py --lr 0.1"_s, u"python3 train.py"_s}));
    }

    // The defaults are those rankdeck-worker's own parser fills in, for every flag that has one
    // and whatever task and optimizer pick them.
    void workerDefaults_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("flag");
        const QList<std::pair<const char *, QStringList>> cases = {
            {"no flags", {}},
            {"mlp", {u"--task"_s, u"mlp"_s}},
            {"charlm", {u"--task"_s, u"charlm"_s}},
            {"charlm sgd", {u"--task=charlm"_s, u"--optimizer"_s, u"sgd"_s}},
            {"linear adamw", {u"--optimizer"_s, u"adamw"_s}},
            {"script", {u"--task"_s, u"script"_s, u"--model"_s, u"m.pt"_s, u"--data"_s, u"d.pt"_s}},
        };
        const QStringList flags = {
            u"--task"_s,
            u"--steps"_s,
            u"--batch-size"_s,
            u"--lr"_s,
            u"--optimizer"_s,
            u"--momentum"_s,
            u"--weight-decay"_s,
            u"--schedule"_s,
            u"--warmup-steps"_s,
            u"--clip-grad-norm"_s,
            u"--seed"_s,
            u"--accum-steps"_s,
            u"--backend"_s,
            u"--rendezvous-timeout"_s,
            u"--collective-timeout"_s,
            u"--mlp-width"_s,
            u"--mlp-depth"_s,
            u"--dataset-size"_s,
            u"--loss"_s,
            u"--log-every"_s,
            u"--telemetry"_s,
            u"--step-delay-ms"_s,
            u"--cpu-affinity"_s,
            u"--shuffle"_s,
            u"--resume"_s,
            u"--control-stdin"_s,
            u"--no-overlap"_s,
            u"--no-flight-recorder"_s,
        };
        for (const auto &[name, args] : cases) {
            for (const QString &flag : flags) {
                const bool given = std::any_of(args.cbegin(), args.cend(), [&](const QString &a) {
                    return a == flag || a.startsWith(flag + u'=');
                });
                if (!given)
                    QTest::addRow("%s %s", name, qPrintable(flag)) << args << flag;
            }
        }
    }

    void workerDefaults()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, flag);
        std::vector<std::string> argv;
        for (const QString &a : arguments)
            argv.push_back(a.toStdString());
        const WorkerOptions o = parseWorkerOptions(argv, {});
        QCOMPARE(RunSummary::workerDefault(flag, arguments), usedByWorker(o, flag));
    }

    void precision_data()
    {
        QTest::addColumn<QList<double>>("finals");
        QTest::addColumn<QStringList>("shown");
        QTest::addRow("issue 41") << QList<double>{0.05, 0.005}
                                  << QStringList{u"0.050"_s, u"0.005"_s};
        QTest::addRow("integers") << QList<double>{20, 300} << QStringList{u"20"_s, u"300"_s};
        QTest::addRow("6 significant digits")
            << QList<double>{0.123456789, 2.5} << QStringList{u"0.123457"_s, u"2.500000"_s};
        QTest::addRow("large and small")
            << QList<double>{12345.678, 0.5} << QStringList{u"12345.7"_s, u"0.5"_s};
        QTest::addRow("three runs")
            << QList<double>{1.5, 1.25, 1.125} << QStringList{u"1.500"_s, u"1.250"_s, u"1.125"_s};
        QTest::addRow("a run without it")
            << QList<double>{0.5, std::nan(""), 0.25} << QStringList{u"0.50"_s, u"–"_s, u"0.25"_s};
        QTest::addRow("tiny: scientific alike")
            << QList<double>{1.234e-9, 0.5} << QStringList{u"1.234e-09"_s, u"5.000e-01"_s};
    }

    void precision()
    {
        QFETCH(QList<double>, finals);
        QFETCH(QStringList, shown);
        QList<RunSummary> runs;
        for (qsizetype i = 0; i < finals.size(); ++i) {
            RunSummary s = run(u"run%1"_s.arg(i), {});
            if (!std::isnan(finals[i])) {
                s.metrics = {metric::Loss};
                s.finalValues = {finals[i]};
                s.bestValues = {finals[i]};
            }
            runs << s;
        }
        const Table t(runs);
        QCOMPARE(t.values(u"final:loss"_s), shown);
        const int r = t.row(u"final:loss"_s);
        for (int c = 0; c < t.model.columnCount(); ++c)
            QCOMPARE(t.model.index(r, c).data(Qt::TextAlignmentRole).toInt(),
                     int(Qt::AlignRight | Qt::AlignVCenter));
    }

    // Numbers are right-aligned, words are not; the CLI's text lines numbers up alike.
    void alignment()
    {
        const Table t({run(u"first-run"_s, {u"--lr"_s, u"0.5"_s, u"--schedule"_s, u"cosine"_s},
                           u"loss=12.5"_s),
                       run(u"second-run"_s, {u"--lr"_s, u"0.25"_s}, u"loss=0.25"_s)});
        QCOMPARE(t.values(u"flag:--lr"_s), (QStringList{u"0.50"_s, u"0.25"_s}));
        QCOMPARE(t.model.index(t.row(u"flag:--lr"_s), 0).data(Qt::TextAlignmentRole).toInt(),
                 int(Qt::AlignRight | Qt::AlignVCenter));
        QVERIFY(
            !t.model.index(t.row(u"flag:--schedule"_s), 0).data(Qt::TextAlignmentRole).isValid());
        const QStringList lines = t.model.toText().split(u'\n', Qt::SkipEmptyParts);
        const auto line = [&](const QString &start) {
            for (const QString &l : lines)
                if (l.startsWith(start))
                    return l;
            return QString();
        };
        const QString loss = line(u"Loss: final"_s);
        const QString lr = line(u"--lr"_s);
        QVERIFY2(loss.contains(u" 12.50 "_s) && loss.endsWith(u" 0.25"_s),
                 qPrintable(t.model.toText()));
        QCOMPARE(lr.indexOf(u"0.50"_s) + 4, loss.indexOf(u"12.50"_s) + 5);
        QCOMPARE(lr.size(), loss.size());
    }
};

QTEST_GUILESS_MAIN(TestRunDiffModel)
#include "tst_rundiffmodel.moc"
