// SPDX-License-Identifier: GPL-3.0-or-later
//
// LogMetricExtractor: the default patterns on the ways people print metrics, the x value from
// step/iter/epoch or the count of points and what it counts (XBasis), user patterns and their
// errors. Progress bars, dict lines and the frameworks' real output: tst_progressbars.
#include "stream/logmetricextractor.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace rankdeck;
using namespace Qt::StringLiterals;
using Point = LogMetricExtractor::Point;
constexpr XBasis R = XBasis::Report;
constexpr XBasis E = XBasis::Epoch;

Q_DECLARE_METATYPE(QList<LogMetricExtractor::Point>)

namespace rankdeck {
// What QCOMPARE prints for a point that differs (found by argument-dependent lookup).
char *toString(const LogMetricExtractor::Point &p);
char *toString(const LogMetricExtractor::Point &p)
{
    return qstrdup(p.name.toUtf8() + '@' + xBasisKey(p.basis).toUtf8() + ' ' +
                   QByteArray::number(p.step) + '=' + QByteArray::number(p.value, 'g', 9));
}
} // namespace rankdeck

class TestLogMetricExtractor : public QObject
{
    Q_OBJECT
private slots:
    void defaults_data();
    void defaults();
    void referenceScriptGivesOnePointPerEpoch();
    void countIsTheFallbackPerRankAndMetric();
    void nanAndInf();
    void userPatterns();
    void badPatterns_data();
    void badPatterns();
    void metricReportedInEventsIsNotReadTwice();
    void dictLines_data();
    void dictLines();
    void anotherBasisIsAnotherSeries();
};

void TestLogMetricExtractor::defaults_data()
{
    QTest::addColumn<QString>("line");
    QTest::addColumn<QList<Point>>("points");

    QTest::newRow("name=value") << "loss=0.31" << QList<Point>{{u"loss"_s, 0, 0.31, R}};
    QTest::newRow("name: value") << "loss: 0.31" << QList<Point>{{u"loss"_s, 0, 0.31, R}};
    QTest::newRow("Name value") << "Loss 0.31" << QList<Point>{{u"loss"_s, 0, 0.31, R}};
    QTest::newRow("dict repr") << "{'loss': 0.31, 'step': 7}" << QList<Point>{{u"loss"_s, 7, 0.31}};
    QTest::newRow("json") << R"({"step": 12, "loss": 0.31, "lr": 0.001})"
                          << QList<Point>{{u"loss"_s, 12, 0.31}, {u"lr"_s, 12, 0.001}};
    QTest::newRow("val_loss and spaces")
        << "epoch 2 | val_loss = 1.5e-1" << QList<Point>{{u"val_loss"_s, 2, 0.15, E}};
    QTest::newRow("lr exponent") << "step 100: lr=3e-4 loss=2.25"
                                 << QList<Point>{{u"lr"_s, 100, 3e-4}, {u"loss"_s, 100, 2.25}};
    QTest::newRow("step beats epoch")
        << "Epoch 3 step 1200 loss 0.5" << QList<Point>{{u"loss"_s, 1200, 0.5}};
    QTest::newRow("iter") << "iter 40/100 acc 0.9" << QList<Point>{{u"acc"_s, 40, 0.9}};
    QTest::newRow("negative") << "loss=-3.5" << QList<Point>{{u"loss"_s, 0, -3.5, R}};
    QTest::newRow("quoted number") << "'loss': '4.718'" << QList<Point>{{u"loss"_s, 0, 4.718, R}};
    QTest::newRow("no metric") << "Rank 0: joined 2 ranks over gloo" << QList<Point>{};
    QTest::newRow("word inside another") << "gloss=3 overloss 4 closs: 2" << QList<Point>{};
    QTest::newRow("not a number after") << "loss_scale 1024 lr_scheduler step" << QList<Point>{};
    QTest::newRow("version-like") << "loss 1.2.3" << QList<Point>{};
}

void TestLogMetricExtractor::defaults()
{
    QFETCH(QString, line);
    QFETCH(QList<Point>, points);
    LogMetricExtractor x;
    QCOMPARE(x.extract(0, line), points);
}

// The reference torchrun-style script prints "Rank R: Epoch E, Loss L"; each rank gets a loss
// point at step E with the printed value.
void TestLogMetricExtractor::referenceScriptGivesOnePointPerEpoch()
{
    LogMetricExtractor x;
    for (int epoch = 0; epoch < 5; ++epoch) {
        for (int rank = 0; rank < 2; ++rank) {
            const double loss = 0.5 / (epoch + 1) + rank;
            const QList<Point> got = x.extract(rank, QStringLiteral("Rank %1: Epoch %2, Loss %3")
                                                         .arg(rank)
                                                         .arg(epoch)
                                                         .arg(loss, 0, 'g', 17));
            QCOMPARE(got.size(), 1);
            QCOMPARE(got[0].name, u"loss"_s);
            QCOMPARE(got[0].step, qint64(epoch));
            QCOMPARE(got[0].basis, XBasis::Epoch);
            QCOMPARE(got[0].value, loss);
        }
    }
}

void TestLogMetricExtractor::countIsTheFallbackPerRankAndMetric()
{
    LogMetricExtractor x;
    QCOMPARE(x.extract(0, u"loss=1"_s), (QList<Point>{{u"loss"_s, 0, 1, R}}));
    QCOMPARE(x.extract(0, u"loss=2 acc=0.5"_s),
             (QList<Point>{{u"loss"_s, 1, 2, R}, {u"acc"_s, 0, 0.5, R}}));
    QCOMPARE(x.extract(1, u"loss=3"_s), (QList<Point>{{u"loss"_s, 0, 3, R}}));
    QCOMPARE(x.extract(0, u"loss=4"_s), (QList<Point>{{u"loss"_s, 2, 4, R}}));
}

void TestLogMetricExtractor::nanAndInf()
{
    LogMetricExtractor x;
    const QList<Point> got = x.extract(0, u"step 3 loss=nan val_loss=-inf"_s);
    QCOMPARE(got.size(), 2);
    QVERIFY(std::isnan(got[0].value));
    QCOMPARE(got[0].step, 3);
    QVERIFY(std::isinf(got[1].value) && got[1].value < 0);
}

void TestLogMetricExtractor::userPatterns()
{
    MetricPattern tokens;
    QString error;
    QVERIFY2(parseMetricPattern(u"tokens_per_s=([0-9.]+) tok/s"_s, &tokens, &error),
             qPrintable(error));
    LogMetricExtractor x;
    x.setDefaultPatternsEnabled(false);
    x.setUserPatterns({tokens});
    QCOMPARE(x.extract(0, u"step 5: 1234.5 tok/s, loss=3"_s),
             (QList<Point>{{u"tokens_per_s"_s, 5, 1234.5}}));
    QCOMPARE(x.extract(0, u"no match here"_s), QList<Point>{});
    x.setDefaultPatternsEnabled(true);
    QCOMPARE(x.extract(0, u"step 6: 99 tok/s, loss=3"_s),
             (QList<Point>{{u"loss"_s, 6, 3}, {u"tokens_per_s"_s, 6, 99}}));
}

void TestLogMetricExtractor::badPatterns_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("message");
    QTest::newRow("no =") << "loss"
                          << "metric pattern \"loss\": expected NAME=REGEX";
    QTest::newRow("empty name") << "=(\\d+)"
                                << "expected NAME=REGEX";
    QTest::newRow("odd name") << "my loss=(\\d+)"
                              << "the name \"my loss\" must start";
    QTest::newRow("bad regex") << "acc=(\\d+"
                               << "metric pattern \"acc=(\\d+\": invalid regular expression";
    QTest::newRow("no group") << "acc=\\d+"
                              << "exactly one capture group for the value, it has 0";
    QTest::newRow("two groups") << "acc=(\\d+)/(\\d+)"
                                << "it has 2";
}

void TestLogMetricExtractor::badPatterns()
{
    QFETCH(QString, spec);
    QFETCH(QString, message);
    MetricPattern p;
    QString error;
    QVERIFY(!parseMetricPattern(spec, &p, &error));
    QVERIFY2(error.contains(message), qPrintable(error));
}

// A rank whose step events carry `loss` gets no second loss curve from its lines; its other
// printed metrics, and other ranks' loss, still count.
void TestLogMetricExtractor::metricReportedInEventsIsNotReadTwice()
{
    LogMetricExtractor x;
    x.reportedInEvents(1, u"loss"_s);
    QCOMPARE(x.extract(1, u"loss=1"_s), QList<Point>{});
    QCOMPARE(x.extract(1, u"step 4 loss=1 acc=0.5"_s), (QList<Point>{{u"acc"_s, 4, 0.5}}));
    QCOMPARE(x.extract(0, u"loss=1"_s).size(), 1);
}

// A line that is a dict of numbers: every number but the x keys, x from its step, or (without a
// bar on the rank) its integral epoch, else a report count. Transformers' own lines (with its
// bar: tst_progressbars).
void TestLogMetricExtractor::dictLines_data()
{
    QTest::addColumn<QString>("line");
    QTest::addColumn<QList<Point>>("points");
    QTest::newRow("Transformers, no bar (disable_tqdm): a report")
        << "{'loss': '0.6931', 'grad_norm': '1.2', 'learning_rate': '5e-05', 'epoch': '0.12'}"
        << QList<Point>{{u"loss"_s, 0, 0.6931, R},
                        {u"grad_norm"_s, 0, 1.2, R},
                        {u"learning_rate"_s, 0, 5e-05, R}};
    QTest::newRow("Transformers eval at an epoch's end: the epoch")
        << "{'eval_loss': '4.667', 'eval_runtime': '0.0558', 'epoch': '1.0'}"
        << QList<Point>{{u"eval_loss"_s, 1, 4.667, E}, {u"eval_runtime"_s, 1, 0.0558, E}};
    QTest::newRow("older Transformers: unquoted numbers")
        << "{'loss': 0.69, 'learning_rate': 5e-05, 'epoch': 0.12}"
        << QList<Point>{{u"loss"_s, 0, 0.69, R}, {u"learning_rate"_s, 0, 5e-05, R}};
    QTest::newRow("JSON with a global step")
        << R"({"global_step": 40, "train/loss": 2.5, "tokens_per_s": 1200, "note": "x"})"
        << QList<Point>{{u"train/loss"_s, 40, 2.5}, {u"tokens_per_s"_s, 40, 1200}};
    QTest::newRow("nan and inf")
        << "{'step': 3, 'loss': 'nan', 'grad_norm': 'inf'}"
        << QList<Point>{{u"loss"_s, 3, std::numeric_limits<double>::quiet_NaN()},
                        {u"grad_norm"_s, 3, std::numeric_limits<double>::infinity()}};
    QTest::newRow("not a dict of numbers")
        << "{'model': 'gpt2', 'layers': 'two'}" << QList<Point>{};
    QTest::newRow("a dict inside a sentence: the default patterns")
        << "metrics {'loss': 0.5} at step 9" << QList<Point>{{u"loss"_s, 9, 0.5}};
}

void TestLogMetricExtractor::dictLines()
{
    QFETCH(QString, line);
    QFETCH(QList<Point>, points);
    LogMetricExtractor x;
    const QList<Point> got = x.extract(0, line);
    QCOMPARE(got.size(), points.size());
    for (qsizetype i = 0; i < got.size(); ++i) {
        QCOMPARE(got[i].name, points[i].name);
        QCOMPARE(got[i].step, points[i].step);
        QCOMPARE(got[i].basis, points[i].basis);
        QVERIFY(got[i].value == points[i].value ||
                (std::isnan(got[i].value) && std::isnan(points[i].value)));
    }
}

// A series keeps the axis of its first point: a later point on another goes to a series of its
// own, named for it, never onto the same axis unsaid.
void TestLogMetricExtractor::anotherBasisIsAnotherSeries()
{
    LogMetricExtractor x;
    QCOMPARE(x.extract(0, u"Epoch 1: val_loss=0.5"_s), (QList<Point>{{u"val_loss"_s, 1, 0.5, E}}));
    QCOMPARE(x.extract(0, u"step 300 val_loss=0.4"_s),
             (QList<Point>{{u"val_loss [step]"_s, 300, 0.4}}));
    QCOMPARE(x.extract(0, u"val_loss=0.3"_s), (QList<Point>{{u"val_loss [report]"_s, 0, 0.3, R}}));
    QCOMPARE(x.extract(0, u"Epoch 2: val_loss=0.2"_s), (QList<Point>{{u"val_loss"_s, 2, 0.2, E}}));
    // Another rank's series are its own.
    QCOMPARE(x.extract(1, u"step 10 val_loss=0.9"_s), (QList<Point>{{u"val_loss"_s, 10, 0.9}}));
}

QTEST_GUILESS_MAIN(TestLogMetricExtractor)
#include "tst_logmetricextractor.moc"
