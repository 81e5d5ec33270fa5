// SPDX-License-Identifier: GPL-3.0-or-later
//
// Curves and logs of the frameworks people train with, end to end: real programs (the torch
// venv's Python, 2 local ranks, `rankdeck-cli launch --exec`) written the way each framework's
// users write them, nothing RankDeck-specific:
//   - a tqdm loop with set_postfix and a SummaryWriter under tb_logs/ per rank: every postfix
//     value of every rank is a point at its global step (epoch × batches + batch), the bar is
//     one line per epoch in `logs` and every redraw is in the record, the event files under
//     tb_logs/ are found without --tensorboard-dir and each is its rank's, and the two sources
//     of `train_loss` stay two series;
//   - Lightning 2.6 (Trainer(strategy="ddp"), TQDMProgressBar, TensorBoardLogger(save_dir=
//     "tb_logs")): train_loss and val_loss from rank 0's bar on one step axis that never goes
//     back across epochs, the logger's files found, the validation bar's rows not in `logs`;
//   - Transformers 5.24's Trainer on a tiny GPT-2 (report_to tensorboard): its printed dict
//     lines land on exactly the steps its TensorBoard files say;
//   - a bar that redraws for several hang timeouts without a newline is output: no hang.
// Every series of the printed lines: one segment, steps strictly increasing.
#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

struct Point
{
    int segment = 0;
    qint64 step = 0;
    double value = 0;
};
using Series = QList<Point>;
using Metrics = QMap<QPair<int, QString>, Series>; // (rank, metric) → points in order

Metrics readMetrics(const QString &runDir)
{
    Metrics out;
    QFile f(runDir + u"/metrics.csv"_s);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QList<QByteArray> c = line.split(','); // no metric here has a comma
        if (c.size() != 6 || c[0] == "rank")
            continue;
        out[{c[0].toInt(), QString::fromUtf8(c[1])}].append(
            {c[2].toInt(), c[3].toLongLong(), c[5].toDouble()});
    }
    return out;
}

QList<qint64> steps(const Series &s)
{
    QList<qint64> out;
    for (const Point &p : s)
        out.append(p.step);
    return out;
}

QList<qint64> range(qint64 from, qint64 to, qint64 by = 1)
{
    QList<qint64> out;
    for (qint64 x = from; x <= to; x += by)
        out.append(x);
    return out;
}

// x never goes back: one segment, strictly increasing steps. The curves of the printed lines;
// a TensorBoard file's steps are the program's (Transformers logs train/epoch at step 32
// twice, at the evaluation and at the end).
QString neverBack(const Metrics &m)
{
    for (auto it = m.cbegin(); it != m.cend(); ++it) {
        if (it.key().second.startsWith(u"tb/"_s))
            continue;
        for (qsizetype i = 0; i < it->size(); ++i) {
            if ((*it)[i].segment != 0 || (i > 0 && (*it)[i].step <= (*it)[i - 1].step))
                return u"rank %1 %2 goes back at its point %3"_s.arg(it.key().first)
                    .arg(it.key().second)
                    .arg(i);
        }
    }
    return {};
}

} // namespace

class TestFrameworkCurves : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_home;
    QString m_cli;
    QString m_python;
    QString m_programs;

    Result cli(const QStringList &args, int timeoutMs = 300000) const
    {
        return rankdeck::testing::runCommand(
            m_cli, args, rankdeck::testing::cliEnvironment(m_home.path()), timeoutMs);
    }

    // Launches PROGRAM on 2 local ranks in a fresh working directory; the run's directory.
    QString launch(const QString &name, const QStringList &program, const QStringList &options = {})
    {
        const QString work = m_home.filePath(name);
        if (!QDir().mkpath(work))
            return {};
        const Result r = cli(QStringList{u"launch"_s, u"--profile"_s, u"local"_s,
                                         u"--nproc-per-node"_s, u"2"_s, u"--name"_s, name,
                                         u"--quiet"_s, u"--no-progress"_s, u"--workdir"_s, work} +
                             options + QStringList{u"--exec"_s, u"--"_s, m_python} + program);
        if (r.code != 0) {
            // torch 2.14.1 sometimes aborts a rank at exit (tst_programlaunch): the curves are
            // what this test checks, and they are all in by then.
            if (!r.out.contains(u"terminate called without an active exception"_s) &&
                !r.err.contains(u"terminate called without an active exception"_s))
                qWarning("%s: exit %d\n%s\n%s", qPrintable(name), r.code,
                         qPrintable(r.out.right(3000)), qPrintable(r.err.right(3000)));
        }
        return rankdeck::testing::runDirectoryNamed(m_home.path(), name);
    }

    void needModules(const QString &modules)
    {
        QProcess probe;
        probe.start(m_python, {u"-c"_s, u"import "_s + modules});
        if (!probe.waitForFinished(120000) || probe.exitCode() != 0)
            QSKIP(qPrintable(u"the torch Python lacks %1 (issue 27: the bootstrap pins lightning "
                             "2.6.6, transformers 5.24.0, tensorboard, tqdm)"_s.arg(modules)));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        m_programs = qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs/"_s;
        m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
        if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
            QSKIP("no torch Python (RANKDECK_TORCH_PYTHON): scripts/bootstrap.sh creates it");
    }

    void tqdmLoopAndTbLogs()
    {
        needModules(u"tqdm, torch.utils.tensorboard"_s);
        const QString dir =
            launch(u"tqdmbars"_s, {m_programs + u"progress_tqdm.py"_s, u"--tensorboard"_s});
        QVERIFY(!dir.isEmpty());
        const Metrics m = readMetrics(dir);
        const QString back = neverBack(m);
        QVERIFY2(back.isEmpty(), qPrintable(back));
        for (int rank = 0; rank < 2; ++rank) {
            // The bar's postfix: every value, at epoch × 20 + batch, (rank + 1) / (1 + step).
            const Series bar = m.value({rank, u"train_loss"_s});
            QCOMPARE(steps(bar), range(0, 59));
            for (const Point &p : bar)
                QVERIFY(std::abs(p.value - (rank + 1.0) / (1.0 + double(p.step))) <= 5e-5 + 1e-12);
            // tb_logs/lightning_logs/version_<rank>/, found with no --tensorboard-dir, its own
            // rank's (10 × rank + step), a series apart from the bar's.
            const Series tb = m.value({rank, u"tb/train_loss"_s});
            QCOMPARE(steps(tb), range(0, 59));
            for (const Point &p : tb)
                QCOMPARE(p.value, 10.0 * rank + double(p.step));
            // `logs`: each epoch's bar once (its last state), and the last print (stdout: it
            // may come before the bar's last line, on stderr).
            const Result logs = cli({u"logs"_s, u"tqdmbars"_s, u"--rank"_s, QString::number(rank)});
            QCOMPARE(logs.code, 0);
            QStringList lines = logs.out.split(u'\n', Qt::SkipEmptyParts);
            QCOMPARE(lines.size(), 4);
            QCOMPARE(lines.removeAll(u"rank %1 done"_s.arg(rank)), 1);
            for (int epoch = 0; epoch < 3; ++epoch)
                QVERIFY2(lines[epoch].startsWith(u"Epoch %1: 100%|"_s.arg(epoch)),
                         qPrintable(lines[epoch]));
            // The record: every redraw (at least one per batch).
            QFile log(dir + u"/rank-%1.log"_s.arg(rank));
            QVERIFY(log.open(QIODevice::ReadOnly));
            QVERIFY(log.readAll().count('\r') >= 60);
        }
        // `logs --follow` of the ended run prints what `logs` does.
        const Result follow = cli({u"logs"_s, u"tqdmbars"_s, u"--rank"_s, u"1"_s, u"--follow"_s});
        QCOMPARE(follow.out.split(u'\n', Qt::SkipEmptyParts).size(), 4);
    }

    // One epoch of 24 batches at 0.25 s, the bar never ending its line meanwhile, under a hang
    // timeout of 2 s: the redraws are the program's output, the run is no hang.
    void barWithoutNewlineIsNoHang()
    {
        needModules(u"tqdm"_s);
        const QString dir = launch(u"longbar"_s,
                                   {m_programs + u"progress_tqdm.py"_s, u"--epochs"_s, u"1"_s,
                                    u"--batches"_s, u"24"_s, u"--sleep"_s, u"0.25"_s},
                                   {u"--hang-timeout"_s, u"2"_s});
        QVERIFY(!dir.isEmpty());
        QFile notes(dir + u"/launcher.log"_s);
        QVERIFY(notes.open(QIODevice::ReadOnly));
        const QByteArray said = notes.readAll();
        QVERIFY2(!said.contains("hung") && !said.contains("hang"), said.constData());
        const Result shown = cli({u"show"_s, u"longbar"_s});
        QVERIFY2(shown.out.contains(u"finished"_s) && !shown.out.contains(u"hung"_s),
                 qPrintable(shown.out));
        QCOMPARE(steps(readMetrics(dir).value({1, u"train_loss"_s})), range(0, 23));
    }

    void lightning()
    {
        needModules(u"lightning, tensorboard"_s);
        const QString dir = launch(u"lightning"_s, {m_programs + u"lightning_bars.py"_s});
        QVERIFY(!dir.isEmpty());
        const Metrics m = readMetrics(dir);
        const QString back = neverBack(m);
        QVERIFY2(back.isEmpty(), qPrintable(back));
        // 512 samples / 16 a batch / 2 ranks = 16 steps an epoch, 3 epochs. Lightning shows its
        // bar on rank 0: batch k's loss at n = k + 1, on through the epochs.
        QCOMPARE(steps(m.value({0, u"train_loss"_s})), range(1, 48));
        QCOMPARE(steps(m.value({0, u"val_loss"_s})), (QList<qint64>{16, 32, 48}));
        QVERIFY(!m.contains({0, u"v_num"_s}));
        // Its TensorBoardLogger(save_dir="tb_logs") on rank 0 (Lightning logs on rank 0 only):
        // found in the working directory, a source of its own.
        QCOMPARE(steps(m.value({0, u"tb/train_loss"_s})),
                 (QList<qint64>{4, 9, 14, 19, 24, 29, 34, 39, 44}));
        QCOMPARE(steps(m.value({0, u"tb/val_loss"_s})), (QList<qint64>{15, 31, 47}));
        for (auto it = m.cbegin(); it != m.cend(); ++it)
            QVERIFY2(it.key().first == 0, qPrintable(it.key().second));
        // What a terminal shows: no row of the validation bar, each epoch's bar.
        const Result logs = cli({u"logs"_s, u"lightning"_s, u"--rank"_s, u"0"_s});
        QCOMPARE(logs.code, 0);
        QVERIFY2(!logs.out.contains(u"Validation"_s), qPrintable(logs.out));
        QVERIFY(logs.out.contains(u"Epoch 2: 100%"_s));
        QVERIFY(QDir(m_home.filePath(u"lightning/tb_logs/lightning_logs/version_0"_s)).exists());
    }

    void transformers()
    {
        needModules(u"transformers, tensorboard"_s);
        const QString dir = launch(u"transformers"_s, {m_programs + u"transformers_trainer.py"_s},
                                   {u"--env"_s, u"REPORT_TO=tensorboard"_s});
        QVERIFY(!dir.isEmpty());
        const Metrics m = readMetrics(dir);
        const QString back = neverBack(m);
        QVERIFY2(back.isEmpty(), qPrintable(back));
        // 256 sequences / 8 a batch / 2 ranks = 16 steps an epoch, 2 epochs, a log every 5.
        // The printed lines' steps are the ones its own TensorBoard files carry.
        const QList<qint64> logged = steps(m.value({0, u"tb/train/loss"_s}));
        QCOMPARE(logged, range(5, 30, 5));
        QCOMPARE(steps(m.value({0, u"loss"_s})), logged);
        QCOMPARE(steps(m.value({0, u"grad_norm"_s})), logged);
        QCOMPARE(steps(m.value({0, u"learning_rate"_s})), logged);
        QCOMPARE(steps(m.value({0, u"eval_loss"_s})), steps(m.value({0, u"tb/eval/loss"_s})));
        QCOMPARE(steps(m.value({0, u"eval_loss"_s})), (QList<qint64>{16, 32}));
        for (qsizetype i = 0; i < logged.size(); ++i)
            QVERIFY(std::abs(m.value({0, u"loss"_s})[i].value -
                             m.value({0, u"tb/train/loss"_s})[i].value) < 1e-3);
    }
};

QTEST_GUILESS_MAIN(TestFrameworkCurves)
#include "tst_frameworkcurves.moc"
