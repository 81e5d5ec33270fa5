// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview's heatmap as drawn: a slow rank stands out in every column (bright in step time,
// dark in communication wait), also with more ranks than pixel rows and with a spike on every
// rank in the data; the picture drawn column by column as steps arrive is the one drawn at
// once; the tooltip says what a cell is.
#include "models/stepheatmapcache.h"
#include "stepheatmapview.h"
#include "store/metricsstore.h"

#include <QTest>

using namespace rankdeck;

namespace {

// Step time around 20 ms (the slow rank 35 ms), or communication wait around 15 ms (the slow
// rank 0.5 ms); every rank 5 s at step 2,000 (a checkpoint).
void fill(MetricsStore &store, int ranks, int slow, bool wait, qint64 from, qint64 to)
{
    for (qint64 s = from; s < to; ++s) {
        for (int r = 0; r < ranks; ++r) {
            const double noise = 0.1 * double((s * 7 + r * 5) % 13);
            double v = wait ? (r == slow ? 0.5 : 15.0 + noise) : (r == slow ? 35.0 : 20.0 + noise);
            if (s == 2000)
                v = 5000.0;
            store.append(r, wait ? metric::CommWaitMs : metric::StepTimeMs, s, s * 1000, v);
        }
    }
}

} // namespace

class TestStepHeatmapView : public QObject
{
    Q_OBJECT

private slots:
    void slowRankDrawnDistinctly_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("slow");
        QTest::addColumn<int>("height");
        QTest::addColumn<bool>("wait");
        // Rank 301 is the second of its pixel row: a plain subsample (or scaling) would drop it.
        QTest::newRow("16 ranks, step time") << 16 << 5 << 300 << false;
        QTest::newRow("16 ranks, communication wait") << 16 << 5 << 300 << true;
        QTest::newRow("512 ranks in 256 pixel rows, step time") << 512 << 301 << 280 << false;
        QTest::newRow("512 ranks in 256 pixel rows, communication wait")
            << 512 << 301 << 280 << true;
    }
    void slowRankDrawnDistinctly()
    {
        QFETCH(int, ranks);
        QFETCH(int, slow);
        QFETCH(int, height);
        QFETCH(bool, wait);
        MetricsStore store;
        fill(store, ranks, slow, wait, 1, 4001);
        StepHeatmapView view;
        view.resize(900, height);
        view.show();
        StepHeatmapCache cache;
        const QString shown = wait ? metric::CommWaitMs : metric::StepTimeMs;
        QCOMPARE(cache.update(store, shown, view.wantedColumns()), 0);
        view.setHeatmap(cache.heatmap(), QStringLiteral("ms"));
        const StepHeatmap &h = view.heatmap();
        QVERIFY(h.columns > 100);
        const QImage image = view.grab().toImage();
        const QRect area = view.plotArea();
        QVERIFY(area.height() < ranks || ranks == 16);
        int sampled = 0;
        for (int c = 0; c < h.columns; c += 7) {
            if (h.columnFirstStep(c) <= 2000 && 2000 <= h.columnLastStep(c))
                continue; // the checkpoint column: every rank slow
            const int x = area.left() + int((c + 0.5) * area.width() / h.columns);
            int slowMin = 256, slowMax = -1, otherMin = 256, otherMax = -1;
            // The middle of every pixel row of the image (of every rank's band with 16 ranks).
            const int bands = std::min(ranks, area.height());
            for (int band = 0; band < bands; ++band) {
                const int y = area.top() + int((band + 0.5) * area.height() / bands);
                int row = -1, column = -1;
                QVERIFY(view.cellAt(QPoint(x, y), &row, &column));
                QCOMPARE(column, c);
                const QRgb pixel = image.pixel(x, y);
                QCOMPARE(QColor(pixel), view.colorFor(h.at(row, c)));
                const int gray = qGray(pixel);
                if (h.ranks[row] == slow) {
                    slowMin = std::min(slowMin, gray);
                    slowMax = std::max(slowMax, gray);
                } else {
                    otherMin = std::min(otherMin, gray);
                    otherMax = std::max(otherMax, gray);
                }
            }
            QVERIFY2(slowMax >= 0,
                     qPrintable(QStringLiteral("rank %1 not drawn in column %2").arg(slow).arg(c)));
            // Apart from every other rank by a good part of the ramp, on the right side.
            if (wait)
                QVERIFY2(slowMax + 30 < otherMin,
                         qPrintable(QStringLiteral("column %1: slow %2, others from %3")
                                        .arg(c)
                                        .arg(slowMax)
                                        .arg(otherMin)));
            else
                QVERIFY2(slowMin > otherMax + 30,
                         qPrintable(QStringLiteral("column %1: slow %2, others up to %3")
                                        .arg(c)
                                        .arg(slowMin)
                                        .arg(otherMax)));
            ++sampled;
        }
        QVERIFY(sampled > 10);
        // The scale is not the spike's: the legend's top is far below 5 s and says "≥".
        QVERIFY(h.high < 100.0f);
        QCOMPARE(h.maxCell, 5000.0f);
    }

    // Steps arriving in batches, each drawn from the first changed column: the same pixels as
    // one picture of the end state, and a live update redraws only the last columns.
    void incrementalPictureEqualsFullPicture_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::newRow("16 ranks") << 16;
        QTest::newRow("512 ranks, grouped rows") << 512;
    }
    void incrementalPictureEqualsFullPicture()
    {
        QFETCH(int, ranks);
        MetricsStore store;
        StepHeatmapView live, once;
        for (StepHeatmapView *v : {&live, &once}) {
            v->resize(700, 240);
            v->show();
        }
        StepHeatmapCache cache;
        qint64 step = 1;
        qint64 partial = 0;
        for (int batch = 0; batch < 40; ++batch) {
            const qint64 n = batch == 0 ? 3000 : 1 + batch % 5;
            fill(store, ranks, 3, false, step, step + n);
            step += n;
            const int from = cache.update(store, metric::StepTimeMs, live.wantedColumns());
            live.setHeatmap(cache.heatmap(), QStringLiteral("ms"), from);
            if (from > 0)
                partial = std::max(partial, live.lastRedrawnCells());
        }
        // Live steps after the first batch touch the last column or two of each rank.
        QVERIFY(partial > 0);
        QVERIFY2(partial <= qint64(ranks) * 3, qPrintable(QString::number(partial)));
        once.setHeatmap(StepHeatmap::compute(store, metric::StepTimeMs, once.wantedColumns()),
                        QStringLiteral("ms"));
        QCOMPARE(live.grab().toImage(), once.grab().toImage());
    }

    void tooltipSaysWhatACellIs()
    {
        MetricsStore store;
        fill(store, 8, 5, false, 1, 1001);
        StepHeatmapView view;
        view.resize(600, 200);
        view.show();
        StepHeatmapCache cache;
        cache.update(store, metric::StepTimeMs, view.wantedColumns());
        view.setHeatmap(cache.heatmap(), QStringLiteral("ms"));
        const StepHeatmap &h = view.heatmap();
        const QRect area = view.plotArea();
        const QPoint slowCell(area.left() + 2, area.top() + int(5.5 * area.height() / 8));
        const QString text = view.cellText(slowCell);
        const QString want =
            QStringLiteral("rank 5, steps %1–%2: 35 ms, the largest of its %3 values")
                .arg(h.columnFirstStep(0))
                .arg(h.columnLastStep(0))
                .arg(h.countAt(5, 0));
        QCOMPARE(text, want);
        QVERIFY(view.cellText(QPoint(1, 1)).isEmpty());
    }
    // By keyboard: the arrows walk the cells, and what a cell is reaches a screen reader as
    // the view's accessible description.
    void keyboardWalksTheCells()
    {
        MetricsStore store;
        fill(store, 8, 5, false, 1, 1001);
        StepHeatmapView view;
        view.resize(600, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        StepHeatmapCache cache;
        cache.update(store, metric::StepTimeMs, view.wantedColumns());
        view.setHeatmap(cache.heatmap(), QStringLiteral("ms"));
        view.setFocus();
        QTRY_VERIFY(view.hasFocus());
        QCOMPARE(view.accessibleName(), QStringLiteral("Step heatmap"));
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(view.cursorCell(), QPoint(0, 0));
        for (int i = 0; i < 5; ++i)
            QTest::keyClick(&view, Qt::Key_Down);
        QCOMPARE(view.cursorCell(), QPoint(0, 5));
        const QString slow = view.accessibleDescription();
        QVERIFY2(slow.startsWith(QStringLiteral("rank 5, steps")) &&
                     slow.contains(QStringLiteral("35 ms")),
                 qPrintable(slow));
        QCOMPARE(slow, view.cellText(view.cursorRect().center()));
        QTest::keyClick(&view, Qt::Key_Down);
        QVERIFY2(view.accessibleDescription().startsWith(QStringLiteral("rank 6")),
                 qPrintable(view.accessibleDescription()));
        QTest::keyClick(&view, Qt::Key_PageDown); // clamped to the last row
        QCOMPARE(view.cursorCell().y(), 7);
        QTest::keyClick(&view, Qt::Key_End);
        QCOMPARE(view.cursorCell().x(), view.heatmap().columns - 1);
    }
};

QTEST_MAIN(TestStepHeatmapView)
#include "tst_stepheatmapview.moc"
