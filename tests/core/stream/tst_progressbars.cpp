// SPDX-License-Identifier: GPL-3.0-or-later
//
// Progress bars and the frameworks' log lines, on the bytes real programs wrote (data/progress:
// a tqdm loop with set_postfix, Lightning 2.6.6's TQDMProgressBar, Transformers 5.24's Trainer,
// each chunk as read from its two pipes): through RankStream and LogMetricExtractor as the
// launcher runs them. A bar's redraws are one displayed line per bar (nested bars' rows left
// out) while the record keeps every byte; every postfix value is a point once, at a global step
// that never goes back; Trainer's dict lines land on the exact step; an event landing in the
// middle of a bar changes nothing; how the chunks fall changes nothing.
#include "stream/logmetricextractor.h"
#include "stream/progressbarline.h"
#include "stream/rankstream.h"
#include "wire/wireprotocol.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTest>

#include <cmath>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

struct Chunk
{
    StreamKind stream = StreamKind::Stdout;
    QByteArray bytes;
};

// data/progress/<name>.chunks: "O <n>\n<n bytes>\n" or "E <n>\n…" (src/capture.py).
QList<Chunk> readChunks(const QString &name)
{
    QFile f(qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
            QStringLiteral("/tests/core/stream/data/progress/") + name + QStringLiteral(".chunks"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    const QByteArray all = f.readAll();
    QList<Chunk> chunks;
    qsizetype at = 0;
    while (at < all.size()) {
        const qsizetype nl = all.indexOf('\n', at);
        const QByteArray head = all.mid(at, nl - at);
        const qsizetype n = head.mid(2).toLongLong();
        chunks.append(
            {head.startsWith('E') ? StreamKind::Stderr : StreamKind::Stdout, all.mid(nl + 1, n)});
        at = nl + 1 + n + 1;
    }
    return chunks;
}

// The same bytes cut otherwise: every chunk split at random places (seed > 0), or byte by byte
// (seed < 0), each stream's bytes in order and the streams interleaved as before.
QList<Chunk> rechunk(const QList<Chunk> &chunks, int seed)
{
    if (seed == 0)
        return chunks;
    QRandomGenerator rng(quint32(qAbs(seed)));
    QList<Chunk> out;
    for (const Chunk &c : chunks) {
        for (qsizetype off = 0; off < c.bytes.size();) {
            const qsizetype n =
                seed < 0 ? 1 : qMin<qsizetype>(c.bytes.size() - off, 1 + rng.bounded(120));
            out.append({c.stream, c.bytes.mid(off, n)});
            off += n;
        }
    }
    return out;
}

QByteArray heartbeat(int rank)
{
    return QByteArray::fromStdString(
        wire::WireEventWriter(wire::event::Heartbeat, rank, 1700000000000000).line());
}

struct Run
{
    QList<LogLine> shown;                  // complete lines a view shows (not overdrawn)
    QList<LogLine> overdrawn;              // complete lines it leaves out
    QByteArray stdoutRecord, stderrRecord; // what the record got, per stream
    QList<LogMetricExtractor::Point> points;
    QList<QString> live; // the live row's texts as they changed
    int events = 0;
};

Run replay(const QList<Chunk> &chunks)
{
    RankStream stream(0);
    LogMetricExtractor extractor;
    Run run;
    auto take = [&](const RankStream::Output &out) {
        for (const LogLine &l : out.lines) {
            QByteArray &record =
                l.stream == StreamKind::Stderr ? run.stderrRecord : run.stdoutRecord;
            record += l.raw;
            if (l.partial)
                continue;
            record += '\n';
            (l.overdrawn ? run.overdrawn : run.shown).append(l);
        }
        for (const RankStream::Live &l : out.live)
            run.live.append(l.text);
        run.events += int(out.events.size());
        run.points += extractor.extract(0, out);
    };
    qint64 t = 1;
    for (const Chunk &c : chunks)
        take(stream.feed(c.stream, c.bytes, t++));
    take(stream.finish(t));
    return run;
}

QList<qint64> stepsOf(const Run &run, const QString &name)
{
    QList<qint64> steps;
    for (const auto &p : run.points) {
        if (p.name == name)
            steps.append(p.step);
    }
    return steps;
}

QList<double> valuesOf(const Run &run, const QString &name)
{
    QList<double> values;
    for (const auto &p : run.points) {
        if (p.name == name)
            values.append(p.value);
    }
    return values;
}

QList<qint64> range(qint64 from, qint64 to, qint64 by = 1)
{
    QList<qint64> out;
    for (qint64 x = from; x <= to; x += by)
        out.append(x);
    return out;
}

} // namespace

class TestProgressBars : public QObject
{
    Q_OBJECT
private slots:
    void parse_data();
    void parse();
    void tqdmLoop_data();
    void tqdmLoop();
    void lightning_data();
    void lightning();
    void lightningWithPrints_data();
    void lightningWithPrints();
    void transformers_data();
    void transformers();
    void transformersPipesInEitherOrder();
    void eventsInTheMiddleOfABar();
    void crlfIsNoRedraw();
};

void TestProgressBars::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("isBar");
    QTest::addColumn<QString>("key");
    QTest::addColumn<int>("epoch");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("total");
    QTest::addColumn<QString>("postfix");
    QTest::newRow("Lightning")
        << u"Epoch 1:  38%|███▊      | 6/16 [00:00<00:00, 103.95it/s, v_num=1, train_loss=2.600]"_s
        << true << u"Epoch #"_s << 1 << qint64(6) << qint64(16) << u"v_num=1, train_loss=2.600"_s;
    QTest::newRow("Transformers") << u" 16%|█▌        | 5/32 [00:00<00:01, 17.75it/s]"_s << true
                                  << QString() << -1 << qint64(5) << qint64(32) << QString();
    QTest::newRow("unknown total")
        << u"Sanity Checking: |          | 0/? [00:00<?, ?it/s]"_s << true << u"Sanity Checking"_s
        << -1 << qint64(0) << qint64(-1) << QString();
    QTest::newRow("no bar") << u"train: 5it [00:00, 17.75it/s, loss=0.3]"_s << true << u"train"_s
                            << -1 << qint64(5) << qint64(-1) << u"loss=0.3"_s;
    QTest::newRow("epoch n/m") << u"epoch 3/10: 50%|#####     | 5/10 [00:01<00:01, lr=1e-3]"_s
                               << true << u"epoch #/##"_s << 3 << qint64(5) << qint64(10)
                               << QString();
    QTest::newRow("a table row") << u"| 0 | net | Linear | 9 |"_s << false << QString() << -1
                                 << qint64(0) << qint64(0) << QString();
    QTest::newRow("brackets, no time")
        << u"x |a| 3/4 [done]"_s << false << QString() << -1 << qint64(0) << qint64(0) << QString();
    QTest::newRow("rich's bar") << u"Epoch 2/2  ━━━━━━━━ 16/16 0:00:00 • 0:00:00 118.91it/s"_s
                                << false << QString() << -1 << qint64(0) << qint64(0) << QString();
}

void TestProgressBars::parse()
{
    QFETCH(QString, text);
    QFETCH(bool, isBar);
    const std::optional<ProgressBarLine> bar = ProgressBarLine::parse(text);
    QCOMPARE(bar.has_value(), isBar);
    if (!bar)
        return;
    QTEST(bar->key, "key");
    QTEST(bar->epoch, "epoch");
    QTEST(bar->n, "n");
    QTEST(bar->total, "total");
    QTEST(bar->postfix, "postfix");
}

// tqdm_loop.py: 3 epochs × 20 batches, set_postfix(loss=1/(1+global step), lr=1e-3) on every
// batch; tqdm's own n lags behind the postfix (it updates n every few iterations).
void TestProgressBars::tqdmLoop_data()
{
    QTest::addColumn<int>("seed");
    QTest::newRow("as read") << 0;
    QTest::newRow("cut at random") << 7;
    QTest::newRow("byte by byte") << -1;
}

void TestProgressBars::tqdmLoop()
{
    QFETCH(int, seed);
    const QList<Chunk> chunks = readChunks(u"tqdm_loop"_s);
    const Run run = replay(rechunk(chunks, seed));
    // One line per bar shown (tqdm leaves each epoch's bar), the last state of each.
    QStringList shown;
    for (const LogLine &l : run.shown)
        shown << l.text.left(15);
    QCOMPARE(shown, (QStringList{u"Epoch 0: 100%|█"_s, u"Epoch 1: 100%|█"_s, u"Epoch 2: 100%|█"_s,
                                 u"done 0"_s}));
    QVERIFY(run.overdrawn.isEmpty());
    // The record keeps every byte, every redraw.
    QByteArray err, out;
    for (const Chunk &c : chunks)
        (c.stream == StreamKind::Stderr ? err : out) += c.bytes;
    QCOMPARE(run.stderrRecord, err);
    QCOMPARE(run.stdoutRecord, out);
    // The live row showed the bar as it went (far more often than the 3 lines), then left.
    QVERIFY2(run.live.size() > 30, qPrintable(QString::number(run.live.size())));
    QCOMPARE(run.live.last(), QString());
    // Every postfix value once, at its global step: epoch × 20 + batch.
    QCOMPARE(stepsOf(run, u"loss"_s), range(0, 59));
    const QList<double> loss = valuesOf(run, u"loss"_s);
    for (qsizetype i = 0; i < loss.size(); ++i)
        QVERIFY(std::abs(loss[i] - 1.0 / double(1 + i)) <= 5e-5 + 1e-12); // printed "%.4f"
    QCOMPARE(stepsOf(run, u"lr"_s), QList<qint64>{0});                    // constant: one point
    for (const auto &p : run.points)
        QCOMPARE(p.basis, XBasis::Step);
}

// lightning_tqdm.py: Trainer(strategy="ddp") with TQDMProgressBar, 3 epochs × 32 batches,
// self.log("train_loss", prog_bar=True) every step, val_loss at each epoch's end (a nested
// validation bar below the main one, drawn with cursor-up).
void TestProgressBars::lightning_data()
{
    tqdmLoop_data();
}

void TestProgressBars::lightning()
{
    QFETCH(int, seed);
    const Run run = replay(rechunk(readChunks(u"lightning_tqdm"_s), seed));
    // Steps 1…96: the bar shows batch k's loss at n = k + 1, epoch after epoch, never back.
    QCOMPARE(stepsOf(run, u"train_loss"_s), range(1, 96));
    QCOMPARE(stepsOf(run, u"val_loss"_s), (QList<qint64>{32, 64, 96}));
    QVERIFY(stepsOf(run, u"v_num"_s).isEmpty());
    // What a terminal shows: no row of the validation bar is left, each epoch's bar once.
    QStringList bars;
    for (const LogLine &l : run.shown) {
        QVERIFY2(!l.text.contains(u"Validation"_s), qPrintable(l.text));
        if (l.text.startsWith(u"Epoch "_s))
            bars << l.text.left(7);
    }
    QCOMPARE(bars, (QStringList{u"Epoch 0"_s, u"Epoch 1"_s, u"Epoch 2"_s, u"Epoch 2"_s}));
    QVERIFY(run.overdrawn.size() >= 3 * 5); // 5 validation redraws an epoch at least
    for (const LogLine &l : run.overdrawn)
        QVERIFY2(l.text.trimmed().isEmpty() || l.text.contains(u"Validation"_s) ||
                     l.text.contains(u"Sanity"_s),
                 qPrintable(l.text));
}

// tests/cli/programs/frameworks/lightning_module.py --epochs 2, one process: a callback prints
// "rank 0 step N batch_loss=…" after each batch on stdout, where Lightning draws its bar, so each
// print ends the bar's row (issue 27). 16 steps an epoch.
void TestProgressBars::lightningWithPrints_data()
{
    tqdmLoop_data();
}

void TestProgressBars::lightningWithPrints()
{
    QFETCH(int, seed);
    const Run run = replay(rechunk(readChunks(u"lightning_printing"_s), seed));
    // The bar's value once per step at the bar's step, never twice, never back; the printed
    // value at the printed step.
    QCOMPARE(stepsOf(run, u"train_loss"_s), range(1, 32));
    QCOMPARE(stepsOf(run, u"batch_loss"_s), range(1, 32));
    QCOMPARE(stepsOf(run, u"val_loss"_s), (QList<qint64>{16, 32}));
    const QList<double> bar = valuesOf(run, u"train_loss"_s);
    const QList<double> printed = valuesOf(run, u"batch_loss"_s);
    for (qsizetype i = 0; i < bar.size(); ++i)
        QVERIFY2(
            std::abs(bar[i] - printed[i]) <= 0.005 * std::max(1.0, std::abs(printed[i])),
            qPrintable(u"step %1: bar %2, printed %3"_s.arg(i + 1).arg(bar[i]).arg(printed[i])));
}

// transformers_trainer.py: Trainer on a 2-layer GPT-2, 64 steps over 2 epochs, logging every 5
// steps with tqdm.write (dict lines on stdout, the bar on stderr), evaluation per epoch.
void TestProgressBars::transformers_data()
{
    tqdmLoop_data();
}

void TestProgressBars::transformers()
{
    QFETCH(int, seed);
    const Run run = replay(rechunk(readChunks(u"transformers_trainer"_s), seed));
    // The global step of each log, exactly (its 'epoch' × 32 steps an epoch).
    QCOMPARE(stepsOf(run, u"loss"_s), range(5, 60, 5));
    QCOMPARE(stepsOf(run, u"grad_norm"_s), range(5, 60, 5));
    QCOMPARE(stepsOf(run, u"learning_rate"_s), range(5, 60, 5));
    QCOMPARE(stepsOf(run, u"eval_loss"_s), (QList<qint64>{32, 64}));
    QCOMPARE(stepsOf(run, u"train_loss"_s), QList<qint64>{64});
    QCOMPARE(valuesOf(run, u"loss"_s).first(), 4.713);
    QCOMPARE(valuesOf(run, u"learning_rate"_s).last(), 3.906e-05);
    QVERIFY(stepsOf(run, u"epoch"_s).isEmpty());
    // The dict lines are shown as lines; the evaluation bar's rows are not.
    int dicts = 0;
    for (const LogLine &l : run.shown) {
        dicts += l.text.startsWith(u"{'"_s) ? 1 : 0;
        QVERIFY2(!l.text.contains(u"| 0/8 "_s), qPrintable(l.text));
    }
    QCOMPARE(dicts, 12 + 2 + 1);
}

// The launcher reads the two pipes as they come: a log line (stdout) may be read before the
// clear that tqdm.write wrote ahead of it (stderr), and the redraw after it before or after
// the line. Every order gives each log its exact step.
void TestProgressBars::transformersPipesInEitherOrder()
{
    const QList<Chunk> chunks = readChunks(u"transformers_trainer"_s);
    for (int variant = 0; variant < 2; ++variant) {
        // Each log line one chunk earlier, before the clear (0), or one later, after the redraw
        // that followed it (1).
        QList<Chunk> moved = chunks;
        int swaps = 0;
        for (qsizetype i = 0; i < moved.size(); ++i) {
            if (moved[i].stream != StreamKind::Stdout || !moved[i].bytes.startsWith("{'"))
                continue;
            const qsizetype other = variant == 0 ? i - 1 : i + 1;
            if (other < 0 || other >= moved.size() || moved[other].stream != StreamKind::Stderr)
                continue;
            moved.swapItemsAt(i, other);
            ++swaps;
            i = qMax(i, other);
        }
        QVERIFY(swaps >= 12);
        const Run run = replay(moved);
        QVERIFY2(stepsOf(run, u"loss"_s) == range(5, 60, 5), variant == 0 ? "before" : "after");
        QCOMPARE(stepsOf(run, u"eval_loss"_s), (QList<qint64>{32, 64}));
    }
}

// The supervisor's events share the program's stdout (a heartbeat every 500 ms, TensorBoard
// bytes): one landing between two redraws of a bar must not cut the bar's line in two.
void TestProgressBars::eventsInTheMiddleOfABar()
{
    const QList<Chunk> chunks = readChunks(u"lightning_tqdm"_s);
    QList<Chunk> withEvents;
    int inserted = 0;
    for (const Chunk &c : chunks) {
        withEvents.append(c);
        // After every 7th redraw chunk of the bar (stdout, no newline in it).
        if (c.stream == StreamKind::Stdout && c.bytes.startsWith('\r') && !c.bytes.contains('\n') &&
            withEvents.size() % 7 == 0) {
            withEvents.append({StreamKind::Stdout, heartbeat(0)});
            ++inserted;
        }
    }
    QVERIFY(inserted >= 10);
    const Run plain = replay(chunks);
    const Run mixed = replay(withEvents);
    QCOMPARE(mixed.events, inserted);
    QCOMPARE(mixed.shown.size(), plain.shown.size());
    for (qsizetype i = 0; i < plain.shown.size(); ++i)
        QCOMPARE(mixed.shown[i].text, plain.shown[i].text);
    QCOMPARE(mixed.stdoutRecord, plain.stdoutRecord);
    QCOMPARE(stepsOf(mixed, u"train_loss"_s), stepsOf(plain, u"train_loss"_s));
    QCOMPARE(valuesOf(mixed, u"train_loss"_s), valuesOf(plain, u"train_loss"_s));
}

// A CRLF is no redraw, even split between two chunks; a redraw is, even split likewise.
void TestProgressBars::crlfIsNoRedraw()
{
    RankStream stream(0);
    LogMetricExtractor extractor;
    RankStream::Output out = stream.feed(StreamKind::Stdout, "step 1 loss=0.5\r", 1);
    stream.feed(StreamKind::Stdout, "\nstep 2 loss=0.25\r\n", out, 2);
    QCOMPARE(out.redraws.size(), 0);
    QCOMPARE(out.lines.size(), 2);
    QCOMPARE(out.lines[0].text, u"step 1 loss=0.5"_s);
    QVERIFY(!out.lines[0].overdrawn && !out.lines[1].overdrawn);
    QVERIFY(out.live.isEmpty());
    const QList<LogMetricExtractor::Point> points = extractor.extract(0, out);
    QCOMPARE(points.size(), 2);
    QCOMPARE(points[0].step, 1);
    QCOMPARE(points[1].step, 2);

    RankStream::Output bar = stream.feed(StreamKind::Stdout, "step 3 loss=0.2\r", 3);
    stream.feed(StreamKind::Stdout, "step 4 loss=0.1\r", bar, 4);
    QCOMPARE(bar.redraws.size(), 1);
    QCOMPARE(bar.redraws[0].text, u"step 3 loss=0.2"_s);
    QCOMPARE(bar.live.last().text, u"step 4 loss=0.1"_s);
    stream.feed(StreamKind::Stdout, "\n", bar, 5);
    QCOMPARE(bar.lines.last().text, u"step 4 loss=0.1"_s);
    QCOMPARE(bar.live.last().text, QString());
    QCOMPARE(extractor.extract(0, bar).size(), 2);
}

QTEST_GUILESS_MAIN(TestProgressBars)
#include "tst_progressbars.moc"
