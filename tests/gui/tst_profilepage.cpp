// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Profile tab as a user and a screen reader meet it: the rank chooser, the sentence on
// where the rank's time goes (and the flame graph's description, which says the same), the
// comparison with the other ranks, the button's request and its busy and unavailable states,
// the export in collapsed format, the flame graph's zoom by mouse and keyboard, and the page
// drawn at 800×600.
#include "accessiblenames.h"
#include "flamegraphview.h"
#include "mnemonics.h"
#include "profilepage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

using Profile = QHash<QString, qint64>;
using Profiles = QMap<int, Profile>;

namespace {

constexpr QLatin1String kMain("main (train.py:90)");
constexpr QLatin1String kStep("train_step (train.py:41)");
constexpr QLatin1String kForward("forward (model.py:10)");
constexpr QLatin1String kLoad("load (data.py:5)");
constexpr QLatin1String kGetItem("Dataset.__getitem__ (data.py:41)");

QString stack(const QStringList &frames)
{
    return frames.join(QLatin1Char(';'));
}

// Ranks 0 and 1 compute; rank 2 waits for its data loader.
Profiles threeRanks()
{
    Profiles p;
    p[0] = {{stack({kMain, kStep, kForward}), 70},
            {stack({kMain, kStep}), 20},
            {stack({kMain, kLoad}), 10}};
    p[1] = {{stack({kMain, kStep, kForward}), 140},
            {stack({kMain, kStep}), 40},
            {stack({kMain, kLoad}), 20},
            {stack({kMain, QStringLiteral("never")}), 0}};
    p[2] = {{stack({kMain, kLoad, kGetItem}), 72}, {stack({kMain, kStep, kForward}), 28}};
    return p;
}

int nodeOf(const FlameGraphLayout &g, const QStringList &path)
{
    int n = 0;
    for (const QString &frame : path)
        n = g.childOf(n, frame);
    return n;
}

} // namespace

class TestProfilePage : public QObject
{
    Q_OBJECT

private slots:
    void ranksInTheComboBox()
    {
        ProfilePage page;
        auto *combo = page.findChild<QComboBox *>(QStringLiteral("profileRank"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 0);
        QCOMPARE(page.selectedRank(), -1);
        QVERIFY(!page.findChild<QPushButton *>(QStringLiteral("profileExport"))->isEnabled());
        page.setProfiles(threeRanks(), QStringLiteral("recorded 10 s at 20 Hz, 12:01:05"));
        QCOMPARE(combo->count(), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(combo->itemText(i), QStringLiteral("Rank %1").arg(i));
            QCOMPARE(combo->itemData(i).toInt(), i);
        }
        QCOMPARE(page.selectedRank(), 0);
        QVERIFY(page.findChild<QLabel *>(QStringLiteral("profileStatus"))
                    ->text()
                    .contains(QStringLiteral("recorded 10 s at 20 Hz, 12:01:05")));
        // The chosen rank stays through a refresh; when it is gone, the first is shown.
        page.setSelectedRank(2);
        page.setProfiles(threeRanks(), QStringLiteral("again"));
        QCOMPARE(page.selectedRank(), 2);
        Profiles fewer = threeRanks();
        fewer.remove(2);
        fewer.remove(0);
        page.setProfiles(fewer, QStringLiteral("fewer"));
        QCOMPARE(page.selectedRank(), 1);
        QCOMPARE(combo->count(), 1);
        // Only one rank: nothing to compare with.
        QVERIFY(!page.findChild<QCheckBox *>(QStringLiteral("profileDifferential"))->isEnabled());
        page.setProfiles({}, QString());
        QCOMPARE(page.selectedRank(), -1);
        QVERIFY(page.flameGraph()->flameGraph().isEmpty());
        QCOMPARE(page.flameGraph()->accessibleDescription(), page.flameGraph()->emptyText());
    }

    void summaryFollowsTheRank_data()
    {
        QTest::addColumn<int>("rank");
        QTest::addColumn<bool>("differential");
        QTest::addColumn<QString>("summaryHas");
        QTest::addColumn<QString>("description");
        QTest::newRow("rank 0") << 0 << false
                                << QStringLiteral("Rank 0 spends its time (100 samples, by time in "
                                                  "the frame itself) in: forward (model.py:10) 70 "
                                                  "%; train_step (train.py:41) 20 %; load "
                                                  "(data.py:5) 10 %")
                                << QStringLiteral("forward (model.py:10) 70 %; train_step "
                                                  "(train.py:41) 20 %; load (data.py:5) 10 %");
        QTest::newRow("rank 2") << 2 << false
                                << QStringLiteral("Dataset.__getitem__ (data.py:41) 72 %; forward "
                                                  "(model.py:10) 28 %")
                                << QStringLiteral("Dataset.__getitem__ (data.py:41) 72 %; forward "
                                                  "(model.py:10) 28 %");
        // The others (ranks 0 and 1, the same shares) never load items and compute 70 %.
        QTest::newRow("rank 2 against the others")
            << 2 << true
            << QStringLiteral("Dataset.__getitem__ (data.py:41) 72 % (others 0 %); forward "
                              "(model.py:10) 28 % (others 70 %)")
            << QStringLiteral("Dataset.__getitem__ (data.py:41) 72 % (others 0 %); forward "
                              "(model.py:10) 28 % (others 70 %)");
        // The others are ranks 1 and 2, each weighing the same: forward (70 % + 28 %) / 2.
        QTest::newRow("rank 0 against the others")
            << 0 << true << QStringLiteral("forward (model.py:10) 70 % (others 49 %)")
            << QStringLiteral("forward (model.py:10) 70 % (others 49 %); train_step "
                              "(train.py:41) 20 % (others 10 %); load (data.py:5) 10 % (others "
                              "5 %)");
    }
    void summaryFollowsTheRank()
    {
        QFETCH(int, rank);
        QFETCH(bool, differential);
        QFETCH(QString, summaryHas);
        QFETCH(QString, description);
        ProfilePage page;
        page.setProfiles(threeRanks(), QStringLiteral("recorded"));
        auto *combo = page.findChild<QComboBox *>(QStringLiteral("profileRank"));
        auto *summary = page.findChild<QLabel *>(QStringLiteral("profileSummary"));
        FlameGraphView *view = page.findChild<FlameGraphView *>(QStringLiteral("flameGraph"));
        QVERIFY(view);
        QCOMPARE(view, page.flameGraph());
        // Another rank first, so that choosing this one is a change.
        combo->setCurrentIndex(combo->findData(rank == 2 ? 0 : 2));
        const QString summaryBefore = summary->text();
        const QString descriptionBefore = view->accessibleDescription();
        if (differential)
            page.findChild<QCheckBox *>(QStringLiteral("profileDifferential"))->setChecked(true);
        combo->setCurrentIndex(combo->findData(rank));
        QCOMPARE(page.selectedRank(), rank);
        QVERIFY2(summary->text().contains(summaryHas), qPrintable(summary->text()));
        QCOMPARE(page.summaryText(), summary->text());
        QVERIFY(summary->text() != summaryBefore);
        QCOMPARE(view->accessibleDescription(), description);
        QVERIFY(view->accessibleDescription() != descriptionBefore);
        QCOMPARE(view->accessibleName(), QStringLiteral("Flame graph of rank %1").arg(rank));
        QCOMPARE(view->isDifferential(), differential);
    }

    void differentialColoursAndTooltip()
    {
        ProfilePage page;
        page.setProfiles(threeRanks(), QStringLiteral("recorded"));
        page.setSelectedRank(2);
        FlameGraphView *view = page.flameGraph();
        const FlameGraphLayout &plain = view->flameGraph();
        const int forward = nodeOf(plain, {kMain, kStep, kForward});
        QCOMPARE(view->nodeText(forward),
                 QStringLiteral("forward (model.py:10) — 28.0 % of samples"));
        page.setDifferential(true);
        const FlameGraphLayout &g = view->flameGraph();
        const int getItem = nodeOf(g, {kMain, kLoad, kGetItem});
        const int step = nodeOf(g, {kMain, kStep});
        QCOMPARE(view->nodeText(getItem),
                 QStringLiteral("Dataset.__getitem__ (data.py:41) — 72.0 % of samples (others "
                                "0.0 %)"));
        // More than the others: red; less: blue; the same (the root): near white.
        const QColor more = view->colorFor(getItem), less = view->colorFor(step),
                     same = view->colorFor(0);
        QVERIFY(more.red() > 150 && more.blue() < 100);
        QVERIFY(less.blue() > 150 && less.red() < 100);
        QVERIFY(same.red() > 230 && same.green() > 230 && same.blue() > 230);
        page.setDifferential(false);
        QVERIFY(view->accessibleDescription().indexOf(QStringLiteral("others")) < 0);
        // Warm and stable: the same frame, the same colour after a refresh.
        const QColor warm = view->colorFor(nodeOf(view->flameGraph(), {kMain, kLoad}));
        QVERIFY(warm.red() >= 205 && warm.blue() <= 55);
        page.setProfiles(threeRanks(), QStringLiteral("again"));
        QCOMPARE(view->colorFor(nodeOf(view->flameGraph(), {kMain, kLoad})), warm);
    }

    void buttonBusyAndAvailable()
    {
        ProfilePage page;
        auto *button = page.findChild<QPushButton *>(QStringLiteral("profileButton"));
        auto *status = page.findChild<QLabel *>(QStringLiteral("profileStatus"));
        QVERIFY(button);
        QCOMPARE(button->text(), QStringLiteral("Profile &10 s"));
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QSignalSpy requested(&page, &ProfilePage::profileRequested);
        QTest::mouseClick(button, Qt::LeftButton);
        QCOMPARE(requested.size(), 1);
        QCOMPARE(requested.constFirst().constFirst().toInt(), 10);
        page.setBusy(QStringLiteral("Profiling all ranks for 10 s…"));
        QVERIFY(!button->isEnabled());
        QCOMPARE(status->text(), QStringLiteral("Profiling all ranks for 10 s…"));
        QTest::mouseClick(button, Qt::LeftButton);
        QCOMPARE(requested.size(), 1);
        page.setProfiles(threeRanks(), QStringLiteral("recorded 10 s at 20 Hz, 12:01:05"));
        QVERIFY(button->isEnabled());
        QVERIFY(!status->text().contains(QStringLiteral("Profiling")));
        page.setAvailable(false, QStringLiteral("The run has ended"));
        QVERIFY(!button->isEnabled());
        QCOMPARE(button->toolTip(), QStringLiteral("The run has ended"));
        QVERIFY(status->text().contains(QStringLiteral("The run has ended")));
        QVERIFY(status->text().contains(QStringLiteral("12:01:05"))); // the last profile's
        page.setAvailable(true);
        QVERIFY(button->isEnabled());
        QVERIFY(!status->text().contains(QStringLiteral("The run has ended")));
    }

    void exportWritesCollapsedLines()
    {
        ProfilePage page;
        page.setProfiles(threeRanks(), QStringLiteral("recorded"));
        page.setSelectedRank(1);
        page.setDifferential(true); // the rank's own profile all the same
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("rank1.folded"));
        QString error;
        QVERIFY2(page.exportTo(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines =
            QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::KeepEmptyParts);
        // Sorted by stack; the 0-count stack left out; a final newline.
        const QStringList want = {
            QStringLiteral("main (train.py:90);load (data.py:5) 20"),
            QStringLiteral("main (train.py:90);train_step (train.py:41) 40"),
            QStringLiteral("main (train.py:90);train_step (train.py:41);forward (model.py:10) 140"),
            QString()};
        QCOMPARE(lines.size(), want.size());
        for (int i = 0; i < want.size(); ++i)
            QCOMPARE(lines[i], want[i]);
        // Nowhere to write, and nothing to write.
        QVERIFY(!page.exportTo(dir.filePath(QStringLiteral("missing/folder/x.folded")), &error));
        QVERIFY(!error.isEmpty());
        ProfilePage empty;
        error.clear();
        QVERIFY(!empty.exportTo(dir.filePath(QStringLiteral("none.folded")), &error));
        QVERIFY(!error.isEmpty());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("none.folded"))));
    }

    // A click zooms into a frame: its subtree fills the width; a click on the root, Backspace
    // and Escape zoom out.
    void zoomByClickAndKeys()
    {
        ProfilePage page;
        page.resize(800, 600);
        page.setProfiles(threeRanks(), QStringLiteral("recorded"));
        page.setSelectedRank(2);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        FlameGraphView *view = page.flameGraph();
        const FlameGraphLayout &g = view->flameGraph();
        const int load = nodeOf(g, {kMain, kLoad});
        const int getItem = nodeOf(g, {kMain, kLoad, kGetItem});
        const int forward = nodeOf(g, {kMain, kStep, kForward});
        QCOMPARE(view->zoomNode(), 0);
        const QRect before = view->nodeRect(load);
        QVERIFY(before.width() < view->width() * 3 / 4);
        QCOMPARE(view->nodeAtPos(before.center()), load);
        QSignalSpy zoomed(view, &FlameGraphView::zoomChanged);
        QTest::mouseClick(view, Qt::LeftButton, {}, before.center());
        QCOMPARE(view->zoomNode(), load);
        QCOMPARE(zoomed.size(), 1);
        QCOMPARE(view->nodeRect(load).width(), view->width());
        QCOMPARE(view->nodeRect(getItem).width(), view->width()); // its only callee: all of it
        QVERIFY(view->nodeRect(forward).isEmpty());               // outside the zoom
        QTest::mouseClick(view, Qt::LeftButton, {}, view->nodeRect(getItem).center());
        QCOMPARE(view->zoomNode(), getItem);
        QTest::keyClick(view, Qt::Key_Backspace);
        QCOMPARE(view->zoomNode(), load);
        QVERIFY(view->accessibleDescription().endsWith(
            QStringLiteral("\nZoomed into load (data.py:5) — 72.0 % of samples")));
        QTest::keyClick(view, Qt::Key_Escape);
        QCOMPARE(view->zoomNode(), 0);
        QCOMPARE(view->nodeRect(load), before);
        QVERIFY(!view->accessibleDescription().contains(QStringLiteral("Zoomed")));
        // By keyboard: Down into the widest callee, Right and Left along the callees of the
        // same caller, Up back to the caller.
        const int mainFrame = nodeOf(g, {kMain});
        const int stepFrame = nodeOf(g, {kMain, kStep});
        QTest::keyClick(view, Qt::Key_Down);
        QCOMPARE(view->zoomNode(), mainFrame);
        QTest::keyClick(view, Qt::Key_Down);
        QCOMPARE(view->zoomNode(), load); // 72 % against train_step's 28 %
        QTest::keyClick(view, Qt::Key_Right);
        QCOMPARE(view->zoomNode(), stepFrame);
        QTest::keyClick(view, Qt::Key_Right); // the last callee: stays
        QCOMPARE(view->zoomNode(), stepFrame);
        QTest::keyClick(view, Qt::Key_Left);
        QCOMPARE(view->zoomNode(), load);
        QTest::keyClick(view, Qt::Key_Up);
        QCOMPARE(view->zoomNode(), mainFrame);
        QTest::keyClick(view, Qt::Key_Escape);
        QCOMPARE(view->zoomNode(), 0);
        // The root zooms out too; the zoom survives a refresh of the same profile.
        QTest::mouseClick(view, Qt::LeftButton, {}, view->nodeRect(load).center());
        page.setProfiles(threeRanks(), QStringLiteral("again"));
        QCOMPARE(view->zoomNode(), nodeOf(view->flameGraph(), {kMain, kLoad}));
        QTest::mouseClick(view, Qt::LeftButton, {}, view->nodeRect(0).center());
        QCOMPARE(view->zoomNode(), 0);
        // A parent's own time is no frame: a click there does nothing. Rank 0's train_step
        // has its own time right of forward.
        page.setSelectedRank(0);
        view->zoomTo(0);
        const QRect step = view->nodeRect(nodeOf(view->flameGraph(), {kMain, kStep}));
        const QRect fwd = view->nodeRect(nodeOf(view->flameGraph(), {kMain, kStep, kForward}));
        QVERIFY(fwd.right() + 10 < step.right());
        const QPoint own((fwd.right() + step.right()) / 2, fwd.center().y());
        QCOMPARE(view->nodeAtPos(own), -1);
        QTest::mouseClick(view, Qt::LeftButton, {}, own);
        QCOMPARE(view->zoomNode(), 0);
    }

    void pageDrawnAt800x600()
    {
        ProfilePage page;
        page.setProfiles(threeRanks(), QStringLiteral("recorded 10 s at 20 Hz, 12:01:05"));
        page.setAvailable(false, QStringLiteral("The run has ended, so no new profile can be "
                                                "recorded; the last one stays shown here."));
        page.setSelectedRank(2);
        page.setDifferential(true);
        page.resize(800, 600);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QCOMPARE(page.size(), QSize(800, 600));
        const QImage image = page.grab().toImage();
        const QString path = QDir(QDir::tempPath()).filePath(QStringLiteral("tst_profilepage.png"));
        QVERIFY(image.save(path));
        // Not blank: the graph's colours, red and blue among them.
        QSet<QRgb> colours;
        bool red = false, blue = false;
        for (int y = 0; y < image.height(); y += 2) {
            for (int x = 0; x < image.width(); x += 2) {
                const QColor c = image.pixelColor(x, y);
                colours.insert(c.rgb());
                red = red || (c.red() > 180 && c.green() < 120 && c.blue() < 120);
                blue = blue || (c.blue() > 180 && c.red() < 120);
            }
        }
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
        QVERIFY(red && blue);
        // Nothing cut off: every wrapped label has the height its text needs, every control
        // has a name, and no mnemonic is taken twice.
        for (const char *name : {"profileStatus", "profileSummary"}) {
            auto *label = page.findChild<QLabel *>(QLatin1String(name));
            QVERIFY(label->isVisible());
            QVERIFY2(label->height() >= label->heightForWidth(label->width()),
                     qPrintable(QLatin1String(name)));
            QVERIFY(page.rect().contains(label->geometry()));
        }
        QVERIFY(page.flameGraph()->visibleRegion().boundingRect().height() > 100);
        const QStringList nameless = testing::namelessControls(&page);
        QVERIFY2(nameless.isEmpty(), qPrintable(nameless.join(QStringLiteral(", "))));
        const QStringList clashes = testing::clashingMnemonics(&page);
        QVERIFY2(clashes.isEmpty(), qPrintable(clashes.join(QStringLiteral("; "))));
    }

    // The cap's worth of frames paints quickly, and the frames narrower than a pixel are skipped.
    void manyFramesPaintQuickly()
    {
        Profile p;
        for (int i = 0; i < 25'000; ++i)
            p[QStringLiteral("main;group%1;leaf%2").arg(i % 50).arg(i)] = 1 + i % 13;
        FlameGraphView view;
        view.resize(1200, 400);
        view.setFlameGraph(FlameGraphLayout(p));
        QCOMPARE(view.flameGraph().size(), FlameGraphLayout::kMaxNodes);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < 5; ++i)
            view.grab();
        // Generous for a loaded CI machine: a frame at 20,000 nodes costs a few milliseconds.
        QVERIFY2(timer.elapsed() < 2500, qPrintable(QString::number(timer.elapsed())));
        int narrow = 0;
        for (int i = 0; i < view.flameGraph().size(); ++i)
            narrow += view.nodeRect(i).isEmpty() ? 1 : 0;
        QVERIFY(narrow > 10'000);
    }

    void emptyText()
    {
        FlameGraphView view;
        view.setEmptyText(QStringLiteral("Nothing sampled yet"));
        QCOMPARE(view.accessibleDescription(), QStringLiteral("Nothing sampled yet"));
        QCOMPARE(view.zoomNode(), -1);
        QCOMPARE(view.nodeAtPos(QPoint(5, 5)), -1);
        QVERIFY(view.nodeText(0).isEmpty());
        view.resize(300, 120);
        const QImage image = view.grab().toImage();
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                colours.insert(image.pixel(x, y));
        QVERIFY(colours.size() > 1); // the text is drawn
    }
};

QTEST_MAIN(TestProfilePage)
#include "tst_profilepage.moc"
