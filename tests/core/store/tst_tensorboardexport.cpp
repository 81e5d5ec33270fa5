// SPDX-License-Identifier: GPL-3.0-or-later
//
// TensorBoard event files from a MetricsStore, read back with TensorBoard's own reader
// (EventAccumulator from the torch venv's tensorboard package), not with RankDeck's code: one
// run per rank, every step of every metric present, values equal (as float32, which is what
// simple_value holds), the ranks' own wall times; a restart reads as TensorBoard's restart; an
// export never mixes into an earlier one.
#include "store/metricsstore.h"
#include "store/tensorboardexport.h"
#include "tensorboardreader.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace rankdeck;

class TestTensorBoardExport : public QObject
{
    Q_OBJECT

    static void requirePython()
    {
        if (testing::tensorBoardPython().isEmpty())
            QSKIP("RANKDECK_TORCH_PYTHON is not set (the torch venv with tensorboard)");
    }

    // Compares one tag of one run with what was stored, point by point.
    static void compareTag(const QJsonObject &runs, int rank, const QString &tag,
                           const QList<MetricPoint> &expected)
    {
        const QJsonArray got =
            runs.value(QStringLiteral("rank-%1").arg(rank)).toObject().value(tag).toArray();
        QCOMPARE(got.size(), expected.size());
        for (qsizetype i = 0; i < got.size(); ++i) {
            const QJsonArray e = got[i].toArray();
            QCOMPARE(e[0].toInteger(), expected[i].step);
            QVERIFY2(std::abs(e[1].toDouble() - double(expected[i].wallTimeUs) / 1e6) < 1e-6,
                     qPrintable(QStringLiteral("rank %1 %2 step %3: wall time %4")
                                    .arg(rank)
                                    .arg(tag)
                                    .arg(expected[i].step)
                                    .arg(e[1].toDouble(), 0, 'f', 6)));
            if (std::isnan(expected[i].value))
                QCOMPARE(e[2].toString(), QStringLiteral("nan"));
            else
                QCOMPARE(float(e[2].toDouble()), float(expected[i].value));
        }
    }

private slots:
    void everyPointOfEveryRank()
    {
        requirePython();
        MetricsStore store;
        const qint64 t0 = 1'764'590'000'000'000;
        constexpr int kRanks = 3, kSteps = 2500; // above EventAccumulator's default 1,000
        for (int r = 0; r < kRanks; ++r) {
            for (int s = 0; s < kSteps; ++s) {
                const qint64 t = t0 + s * 10'000 + r * 137; // each rank its own clock
                store.append(r, metric::Loss, s, t, 2.0 / (1.0 + s * 0.01) + r * 1e-3);
                store.append(r, metric::StepTimeMs, s, t, 10.0 + (s % 7) + r);
                if (s % 100 == 0) // a metric with fewer points, at other steps
                    store.append(r, QStringLiteral("eval/acc"), s + 1, t + 5000, 0.5 + s * 1e-4);
            }
        }
        store.append(1, metric::Loss, kSteps, t0 + kSteps * 10'000, std::nan(""));
        QTemporaryDir dir;
        TensorBoardExport::Result result;
        QString error;
        QVERIFY2(TensorBoardExport::write(store, dir.path(), {{0, QStringLiteral("node-a")}},
                                          &result, &error),
                 qPrintable(error));
        QCOMPARE(result.ranks, kRanks);
        QCOMPARE(result.points, store.totalPoints());
        QVERIFY(result.files.first().contains(QStringLiteral("/rank-0/events.out.tfevents.")));
        QVERIFY(result.files.first().contains(QStringLiteral(".node-a.")));

        const QJsonObject runs = testing::readWithTensorBoard(dir.path(), &error);
        QVERIFY2(!runs.isEmpty(), qPrintable(error));
        QCOMPARE(runs.keys(), (QStringList{QStringLiteral("rank-0"), QStringLiteral("rank-1"),
                                           QStringLiteral("rank-2")}));
        for (int r = 0; r < kRanks; ++r) {
            QCOMPARE(runs.value(QStringLiteral("rank-%1").arg(r)).toObject().keys().size(), 3);
            for (const QString &tag : store.metricNames()) {
                const QList<MetricSegment> segs = store.segments(r, tag);
                QCOMPARE(segs.size(), 1);
                compareTag(runs, r, tag, segs.first().points);
                if (QTest::currentTestFailed())
                    return;
            }
        }
    }

    // Steps going backwards (a resume from a checkpoint): TensorBoard keeps the steps before
    // the restart and the resumed ones, exactly what the run did last.
    void restartReadsAsTensorBoardsRestart()
    {
        requirePython();
        MetricsStore store;
        const qint64 t0 = 1'764'590'000'000'000;
        for (int s = 0; s < 10; ++s)
            store.append(0, metric::Loss, s, t0 + s * 1000, 1.0 + s);
        for (int s = 5; s < 15; ++s)
            store.append(0, metric::Loss, s, t0 + 20'000 + s * 1000, 100.0 + s);
        QCOMPARE(store.segmentCount(0, metric::Loss), 2);
        QTemporaryDir dir;
        QString error;
        QVERIFY2(TensorBoardExport::write(store, dir.path(), {}, nullptr, &error),
                 qPrintable(error));
        const QJsonObject runs = testing::readWithTensorBoard(dir.path(), &error);
        QVERIFY2(!runs.isEmpty(), qPrintable(error));
        QList<MetricPoint> expected;
        for (int s = 0; s < 5; ++s)
            expected << MetricPoint{s, t0 + s * 1000, 1.0 + s};
        for (int s = 5; s < 15; ++s)
            expected << MetricPoint{s, t0 + 20'000 + s * 1000, 100.0 + s};
        compareTag(runs, 0, metric::Loss, expected);
    }

    void refusesADirectoryThatHoldsAnExport()
    {
        MetricsStore store;
        store.append(0, metric::Loss, 0, 1'000'000, 1.0);
        QTemporaryDir dir;
        QString error;
        QVERIFY(TensorBoardExport::write(store, dir.path(), {}, nullptr, &error));
        QVERIFY(!TensorBoardExport::write(store, dir.path(), {}, nullptr, &error));
        QVERIFY2(error.contains(QStringLiteral("rank-0")) &&
                     error.contains(QStringLiteral("already holds")),
                 qPrintable(error));
        QCOMPARE(QDir(dir.path() + QStringLiteral("/rank-0")).entryList(QDir::Files).size(), 1);
    }

    void unwritableDirectoryIsNamed()
    {
        MetricsStore store;
        store.append(0, metric::Loss, 0, 1'000'000, 1.0);
        QTemporaryDir dir;
        QFile blocker(dir.filePath(QStringLiteral("file")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QString error;
        QVERIFY(!TensorBoardExport::write(store, dir.filePath(QStringLiteral("file/sub")), {},
                                          nullptr, &error));
        QVERIFY2(error.contains(QStringLiteral("file/sub")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestTensorBoardExport)
#include "tst_tensorboardexport.moc"
