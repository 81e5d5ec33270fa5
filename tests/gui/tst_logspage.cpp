// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: every behaviour of the page over one fixture (a real
// LogStore fed through RankStream, the page on screen); the next cut is the many-rank part.
//
// The Logs page over core's real LogStore fed through RankStream: a tab per rank (sorted, one
// view for all of them), follow mode that pauses when the user scrolls up, regex and stream
// filters, search, the elided-lines marker when memory is bounded, and identical lines of many
// ranks collapsed into one row in "All ranks" that opens in place; at many ranks, "All ranks"
// narrowed to a group of ranks that are alike ("ranks 40, 41 hung").
#include "logspage.h"
#include "logview.h"
#include "models/collapsedlogmodel.h"
#include "models/logmodel.h"
#include "models/rankpickermodel.h"
#include "store/logstore.h"
#include "stream/rankstream.h"

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QAction>
#include <QClipboard>
#include <QComboBox>
#include <QCompleter>
#include <QHelpEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QScrollBar>
#include <QSettings>
#include <QTabBar>
#include <QTemporaryDir>
#include <QToolButton>
#include <QToolTip>
#include <QtTest>

using namespace rankdeck;

class TestLogsPage : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void tabPerRankSorted();
    void rankTabShowsOnlyThatRank();
    void followPausesWhenScrolledUp();
    void filters_data();
    void filters();
    void searchFindsAndStopsFollowing();
    void elidedLinesMarker();
    void scrollingToTopReadsOlderLines_data();
    void scrollingToTopReadsOlderLines();
    void wheelAtTopReadsOlderLinesThroughFilter();
    void rankPickerFollowsTabs();
    void rankFinderFindsRanks();
    void groupNarrowsAllRanks();
    void identicalLinesCollapse_data();
    void identicalLinesCollapse();
    void collapseOption();
    void longLineWrapsOrShowsWhole();

private:
    void feed(int rank, StreamKind stream, const QByteArray &text);
    void feedLines(int rank, int from, int count);

    QTemporaryDir m_dir;
    std::unique_ptr<LogStore> m_store;
    std::map<int, std::unique_ptr<RankStream>> m_streams;
    std::unique_ptr<LogsPage> m_page;
};

void TestLogsPage::initTestCase()
{
    // The page's remembered choices (wrap) live in this test's own settings.
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("config"))));
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-test"));
}

void TestLogsPage::init()
{
    QVERIFY(m_dir.isValid());
    LogStore::Options options;
    options.windowPerRank = 300;
    options.windowAll = 600;
    m_store = std::make_unique<LogStore>(options);
    QString error;
    QVERIFY2(m_store->open(m_dir.filePath(QString::number(QRandomGenerator::global()->generate())),
                           &error),
             qPrintable(error));
    m_page = std::make_unique<LogsPage>();
    m_page->resize(900, 500);
    m_page->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_page.get()));
    m_page->setLogStore(m_store.get());
}

void TestLogsPage::cleanup()
{
    m_page.reset();
    m_streams.clear();
    m_store.reset();
}

void TestLogsPage::feed(int rank, StreamKind stream, const QByteArray &text)
{
    auto &s = m_streams[rank];
    if (!s)
        s = std::make_unique<RankStream>(rank);
    const RankStream::Output out = s->feed(stream, text);
    m_store->append(out.lines);
}

void TestLogsPage::feedLines(int rank, int from, int count)
{
    QByteArray chunk;
    for (int i = from; i < from + count; ++i)
        chunk += QStringLiteral("Rank %1: Epoch %2, Loss %3\n")
                     .arg(rank)
                     .arg(i)
                     .arg(1.0 / (i + 1), 0, 'f', 4)
                     .toUtf8();
    feed(rank, StreamKind::Stdout, chunk);
}

void TestLogsPage::tabPerRankSorted()
{
    feedLines(3, 0, 2);
    feedLines(1, 0, 2);
    m_page->poll();
    feedLines(2, 0, 2);
    feedLines(0, 0, 2);
    m_page->poll();
    QTabBar *tabs = m_page->tabBar();
    QCOMPARE(tabs->count(), 5);
    QCOMPARE(tabs->tabText(0), QStringLiteral("All ranks"));
    for (int i = 1; i < 5; ++i)
        QCOMPARE(tabs->tabData(i).toInt(), i - 1);
    // One view and one model however many ranks.
    QCOMPARE(m_page->findChildren<LogView *>().size(), 1);
    QCOMPARE(m_page->findChildren<QListView *>(QStringLiteral("logListView")).size(), 1);
}

void TestLogsPage::rankTabShowsOnlyThatRank()
{
    feedLines(0, 0, 20);
    feedLines(1, 0, 30);
    feed(1, StreamKind::Stderr, "warning: something on stderr\n");
    m_page->poll();
    QVERIFY(m_page->showRank(1));
    LogModel *model = m_page->logModel();
    QCOMPARE(model->rowCount(), 31);
    for (int row = 0; row < model->rowCount(); ++row)
        QCOMPARE(model->index(row, 0).data(LogModel::RankRole).toInt(), 1);
    QVERIFY(m_page->showRank(LogsPage::AllRanksTab));
    QCOMPARE(model->rowCount(), 51);
    QVERIFY(!m_page->showRank(7));
}

void TestLogsPage::followPausesWhenScrolledUp()
{
    feedLines(0, 0, 250);
    m_page->poll();
    QScrollBar *bar = m_page->logView()->listView()->verticalScrollBar();
    QTRY_VERIFY(bar->maximum() > 0);
    QVERIFY(m_page->logView()->isFollowing());
    QTRY_COMPARE(bar->value(), bar->maximum());

    // The user scrolls up to read: new lines must not move the view.
    bar->setValue(10);
    QVERIFY(!m_page->logView()->isFollowing());
    feedLines(0, 250, 40);
    m_page->poll();
    QCoreApplication::processEvents();
    QCOMPARE(bar->value(), 10);

    // Back at the bottom (End), following resumes and new lines scroll into view.
    QTest::keyClick(m_page->logView()->listView(), Qt::Key_End);
    QVERIFY(m_page->logView()->isFollowing());
    feedLines(0, 290, 5);
    m_page->poll();
    QTRY_COMPARE(bar->value(), bar->maximum());
}

void TestLogsPage::filters_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<int>("streamIndex"); // 0 all, 1 stdout, 2 stderr
    QTest::addColumn<int>("expectedRows");
    QTest::newRow("everything") << "" << 0 << 13;
    QTest::newRow("regex") << "Epoch [12]," << 0 << 2;
    QTest::newRow("case-insensitive") << "EPOCH 3," << 0 << 1;
    QTest::newRow("stderr only") << "" << 2 << 3;
    QTest::newRow("stdout only") << "" << 1 << 10;
    QTest::newRow("regex and stream") << "boom" << 2 << 1;
    QTest::newRow("invalid regex keeps the last valid filter") << "Epoch (" << 0 << 10;
}

void TestLogsPage::filters()
{
    QFETCH(QString, pattern);
    QFETCH(int, streamIndex);
    QFETCH(int, expectedRows);
    feedLines(0, 0, 10);
    feed(0, StreamKind::Stderr, "error: boom\nwarning: a\nwarning: b\n");
    m_page->poll();
    QVERIFY(m_page->showRank(0));
    auto *filter = m_page->findChild<QLineEdit *>(QStringLiteral("logFilterEdit"));
    auto *stream = m_page->findChild<QComboBox *>(QStringLiteral("logStreamCombo"));
    QTest::keyClicks(filter, pattern);
    stream->setCurrentIndex(streamIndex);
    m_page->poll();
    QCOMPARE(m_page->logModel()->rowCount(), expectedRows);
    if (streamIndex == 2) {
        for (int row = 0; row < m_page->logModel()->rowCount(); ++row)
            QCOMPARE(m_page->logModel()->index(row, 0).data(LogModel::StreamRole).toInt(), 1);
    }
}

void TestLogsPage::searchFindsAndStopsFollowing()
{
    feedLines(0, 0, 200);
    m_page->poll();
    auto *search = m_page->findChild<QLineEdit *>(QStringLiteral("logSearchEdit"));
    QTest::keyClicks(search, QStringLiteral("Epoch 42,"));
    QTest::keyClick(search, Qt::Key_Return);
    const QModelIndex current = m_page->logView()->listView()->currentIndex();
    QVERIFY(current.isValid());
    QVERIFY(current.data().toString().contains(QStringLiteral("Epoch 42,")));
    QVERIFY(!m_page->logView()->isFollowing());
    // Searching again wraps around to the same single match.
    QVERIFY(m_page->logView()->findNext());
    QCOMPARE(m_page->logView()->listView()->currentIndex().row(), current.row());
    search->clear();
    QTest::keyClicks(search, QStringLiteral("no such text"));
    QVERIFY(!m_page->logView()->findNext());
}

void TestLogsPage::elidedLinesMarker()
{
    // More lines than the store keeps in memory: the oldest are elided with a visible marker,
    // and remain on disk.
    feedLines(0, 0, 1000);
    m_page->poll();
    QVERIFY(m_page->showRank(0));
    LogModel *model = m_page->logModel();
    QVERIFY(model->hasMarkerRow());
    const QModelIndex marker = model->index(0, 0);
    QVERIFY(marker.data(LogModel::IsMarkerRole).toBool());
    QVERIFY(marker.data(LogModel::ElidedCountRole).toLongLong() >= 700);
    QCOMPARE(model->lineRowCount() + marker.data(LogModel::ElidedCountRole).toLongLong(), 1000);
    QCOMPARE(m_store->lineCount(0), 1000);
}

void TestLogsPage::scrollingToTopReadsOlderLines_data()
{
    QTest::addColumn<int>("shownRank");
    QTest::addColumn<int>("ranks");
    QTest::addColumn<int>("linesPerRank");
    QTest::newRow("rank tab") << 0 << 1 << 1700;
    QTest::newRow("all ranks") << int(LogsPage::AllRanksTab) << 2 << 900;
}

void TestLogsPage::scrollingToTopReadsOlderLines()
{
    // The store keeps 300 lines per rank (600 merged) in memory; the rest is only on disk.
    QFETCH(int, shownRank);
    QFETCH(int, ranks);
    QFETCH(int, linesPerRank);
    for (int from = 0; from < linesPerRank; from += 100) {
        for (int rank = 0; rank < ranks; ++rank)
            feedLines(rank, from, 100);
    }
    m_page->poll();
    QVERIFY(m_page->showRank(shownRank));
    LogModel *model = m_page->logModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QListView *list = m_page->logView()->listView();
    // The rows on screen (on "All ranks" the collapsed view: these lines all differ).
    QAbstractItemModel *shown = list->model();
    QCOMPARE(shown, m_page->shownModel());
    QScrollBar *bar = list->verticalScrollBar();
    const qint64 total = qint64(ranks) * linesPerRank;
    QVERIFY(model->hasMarkerRow());
    qint64 elided = model->elidedCount();
    QCOMPARE(elided + model->lineRowCount(), total);
    QTRY_VERIFY(bar->maximum() > 0);

    // Scroll to the top again and again: each time a chunk comes back from the run record, the
    // marker's count falls, and the line that was first stays where the user saw it.
    int rounds = 0;
    while (model->hasMarkerRow()) {
        QVERIFY2(++rounds <= int(total / LogsPage::OlderChunkLines) + 2,
                 "older lines never stopped coming");
        const QPersistentModelIndex firstLine = shown->index(1, 0);
        QCOMPARE(shown->rowCount(), model->rowCount());
        QVERIFY(!firstLine.data(LogModel::IsMarkerRole).toBool());
        const QString firstText = firstLine.data().toString();
        bar->setValue(bar->minimum());
        QVERIFY(!m_page->logView()->isFollowing());
        const int top = list->visualRect(firstLine).top();
        QTRY_VERIFY(model->elidedCount() < elided);
        QCOMPARE(model->elidedCount(), qMax<qint64>(0, elided - LogsPage::OlderChunkLines));
        elided = model->elidedCount();
        QCOMPARE(model->elidedCount() + model->lineRowCount(), total);
        if (model->hasMarkerRow())
            QCOMPARE(model->index(0, 0).data(LogModel::ElidedCountRole).toLongLong(), elided);
        QVERIFY(firstLine.isValid());
        QCOMPARE(firstLine.data().toString(), firstText);
        QCOMPARE(list->visualRect(firstLine).top(), top);
        QVERIFY(!m_page->logView()->isFollowing());
    }
    QVERIFY(rounds >= 2);

    // Every line, in order, the oldest at the top.
    QCOMPARE(model->rowCount(), int(total));
    for (int row = 0; row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, 0);
        if (shownRank == LogsPage::AllRanksTab)
            QCOMPARE(index.data(LogModel::SequenceRole).toLongLong(), qint64(row));
        else
            QCOMPARE(index.data(LogModel::LineNumberRole).toLongLong(), qint64(row));
    }
    QVERIFY(model->index(0, 0)
                .data(LogModel::TextRole)
                .toString()
                .contains(QStringLiteral("Epoch 0,")));

    // Reading old lines does not fight new ones: the view stays put until End resumes following.
    const QPersistentModelIndex anchor = list->indexAt(QPoint(1, 1));
    const int anchorTop = list->visualRect(anchor).top();
    for (int rank = 0; rank < ranks; ++rank)
        feedLines(rank, linesPerRank, 20);
    m_page->poll();
    QCoreApplication::processEvents();
    QCOMPARE(model->rowCount(), int(total) + 20 * ranks);
    QCOMPARE(list->visualRect(anchor).top(), anchorTop);
    QTest::keyClick(list, Qt::Key_End);
    QVERIFY(m_page->logView()->isFollowing());
    for (int rank = 0; rank < ranks; ++rank)
        feedLines(rank, linesPerRank + 20, 5);
    m_page->poll();
    QTRY_COMPARE(bar->value(), bar->maximum());
    QVERIFY(m_page->logView()->isFollowing());
}

void TestLogsPage::wheelAtTopReadsOlderLinesThroughFilter()
{
    // A filter that leaves only a few of the lines in memory: nothing to scroll, so a wheel turn
    // up at the top asks for older lines, which are read until some pass the filter.
    feedLines(0, 0, 2000);
    m_page->poll();
    QVERIFY(m_page->showRank(0));
    auto *filter = m_page->findChild<QLineEdit *>(QStringLiteral("logFilterEdit"));
    QTest::keyClicks(filter, QStringLiteral("Epoch (5|50|500|17[0-9]0),"));
    m_page->poll();
    LogModel *model = m_page->logModel();
    QCOMPARE(model->lineRowCount(), 10); // 1700..1790 are in memory; 5, 50, 500 only on disk
    QVERIFY(model->hasMarkerRow());
    QListView *list = m_page->logView()->listView();
    QCOMPARE(list->verticalScrollBar()->maximum(), 0);

    int rounds = 0;
    while (model->hasMarkerRow() && ++rounds < 10) {
        const qint64 elided = model->elidedCount();
        QWheelEvent wheel(QPointF(10, 10), list->viewport()->mapToGlobal(QPointF(10, 10)), QPoint(),
                          QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(list->viewport(), &wheel);
        QTRY_VERIFY(model->elidedCount() < elided);
    }
    QVERIFY(!model->hasMarkerRow());
    QCOMPARE(model->lineRowCount(), 13);
    QVERIFY(model->index(0, 0).data().toString().contains(QStringLiteral("Epoch 5,")));
    QVERIFY(model->index(1, 0).data().toString().contains(QStringLiteral("Epoch 50,")));
    QVERIFY(model->index(2, 0).data().toString().contains(QStringLiteral("Epoch 500,")));
}

void TestLogsPage::rankPickerFollowsTabs()
{
    auto *picker = m_page->findChild<QComboBox *>(QStringLiteral("logRankPicker"));
    QVERIFY(picker);
    for (int rank : {5, 3})
        feedLines(rank, 0, 2);
    m_page->poll();
    // Few ranks: the tabs are enough.
    QVERIFY(picker->isHidden());
    QCOMPARE(m_page->rankTabCount(), 2);
    QVERIFY(m_page->showRank(3));
    for (int rank : {11, 0, 9, 2, 7, 1, 10, 4, 8, 6})
        feedLines(rank, 0, 2);
    m_page->poll();
    // Many ranks: the picker replaces the tabs; a tab is a rank the user opened, and the one
    // shown when the picker took over stays.
    QVERIFY(!picker->isHidden());
    QCOMPARE(picker->count(), 13);
    QCOMPARE(picker->itemData(0).toInt(), m_page->tabBar()->tabData(0).toInt());
    for (int i = 1; i < picker->count(); ++i)
        QCOMPARE(picker->itemData(i).toInt(), i - 1);
    QCOMPARE(m_page->rankTabCount(), 1);
    QCOMPARE(m_page->shownRank(), 3);
    picker->setCurrentIndex(picker->findData(9));
    QCOMPARE(m_page->shownRank(), 9);
    QCOMPARE(m_page->logModel()->rank(), 9);
    QVERIFY(m_page->showRank(4));
    QCOMPARE(picker->currentData().toInt(), 4);
    // The tabs are the opened ranks, in rank order, named as in the picker.
    const QList<int> tabs{3, 4, 9};
    QCOMPARE(m_page->rankTabCount(), int(tabs.size()));
    for (int i = 0; i < int(tabs.size()); ++i) {
        QCOMPARE(m_page->tabBar()->tabData(i + 1).toInt(), tabs.at(i));
        QCOMPARE(m_page->tabBar()->tabText(i + 1), picker->itemText(picker->findData(tabs.at(i))));
    }
}

void TestLogsPage::rankFinderFindsRanks()
{
    // 40 ranks on 4 hosts, rank 17 failed: the search box finds ranks by number, range, host
    // and state, and choosing one shows its log (issue 31).
    auto *finder = m_page->findChild<QLineEdit *>(QStringLiteral("logRankFilter"));
    QVERIFY(finder);
    feedLines(0, 0, 2);
    m_page->poll();
    QVERIFY(finder->isHidden()); // a few ranks: the tabs are enough
    for (int rank = 1; rank < 40; ++rank)
        feedLines(rank, 0, 2);
    m_page->poll();
    QVERIFY(!finder->isHidden());
    QList<RankStatus> statuses;
    for (int rank = 0; rank < 40; ++rank) {
        RankStatus s;
        s.rank = rank;
        s.host = QStringLiteral("node%1").arg(rank / 10);
        s.state = rank == 17 ? RankState::Failed : RankState::Running;
        s.exitCode = rank == 17 ? 1 : 0;
        statuses << s;
    }
    m_page->setRankStatuses(statuses);
    RankPickerModel *found = m_page->rankFinderModel();
    QAbstractItemModelTester tester(found, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(found->rowCount(), 40);

    finder->setFocus();
    QTest::keyClicks(finder, QStringLiteral("node3"));
    QCOMPARE(found->rowCount(), 10);
    QCOMPARE(found->rankAt(0), 30);
    finder->clear();
    QTest::keyClicks(finder, QStringLiteral("failed"));
    QCOMPARE(found->rowCount(), 1);
    QCOMPARE(found->data(found->index(0)).toString(),
             QStringLiteral("Rank 17  node1  failed (exit 1)"));
    // Enter takes the first rank found.
    QTest::keyClick(finder, Qt::Key_Return);
    QCOMPARE(m_page->shownRank(), 17);
    QCOMPARE(m_page->logModel()->rank(), 17);

    // A range, chosen from the popup: the rank's log, and its tab.
    finder->clear();
    QTest::keyClicks(finder, QStringLiteral("35-36"));
    QCOMPARE(found->rowCount(), 2);
    QCompleter *completer = finder->findChild<QCompleter *>();
    if (!completer)
        completer = m_page->findChild<QCompleter *>();
    QVERIFY(completer);
    QTRY_VERIFY(completer->popup()->isVisible());
    QCOMPARE(completer->popup()->model()->rowCount(), 2);
    emit completer->activated(completer->completionModel()->index(1, 0));
    QCOMPARE(m_page->shownRank(), 36);
    QCOMPARE(m_page->logModel()->rank(), 36);
    QCOMPARE(m_page->tabBar()->tabData(m_page->tabBar()->currentIndex()).toInt(), 36);
}

void TestLogsPage::groupNarrowsAllRanks()
{
    // 48 ranks, rank 17 failed, ranks 40 and 41 hung: the group picker offers the three groups,
    // and choosing "ranks 40, 41 hung" shows "All ranks" with their lines only (issue 31).
    auto *groups = m_page->findChild<QComboBox *>(QStringLiteral("logRankGroupPicker"));
    QVERIFY(groups);
    QList<RankStatus> statuses;
    for (int rank = 0; rank < 48; ++rank) {
        feedLines(rank, 0, 3);
        RankStatus s;
        s.rank = rank;
        s.state = rank == 17 ? RankState::Failed : RankState::Running;
        s.exitCode = rank == 17 ? 1 : 0;
        s.hung = rank == 40 || rank == 41;
        statuses << s;
    }
    m_page->poll();
    m_page->setRankStatuses(statuses);
    QVERIFY(!groups->isHidden());
    QCOMPARE(groups->count(), 4); // every rank, then the three groups
    const int hung = groups->findText(QStringLiteral("ranks 40, 41 hung"));
    QVERIFY2(hung > 0, qPrintable(groups->itemText(1) + QLatin1Char('|') + groups->itemText(2) +
                                  QLatin1Char('|') + groups->itemText(3)));

    QVERIFY(m_page->showRank(3)); // a rank's tab first: choosing a group goes to "All ranks"
    groups->setCurrentIndex(hung);
    QCOMPARE(m_page->shownRank(), int(LogsPage::AllRanksTab));
    LogModel *model = m_page->logModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto ranksShown = [model] {
        QList<int> ranks;
        for (int row = 0; row < model->rowCount(); ++row)
            ranks << model->index(row).data(LogModel::RankRole).toInt();
        return ranks;
    };
    QCOMPARE(ranksShown(), (QList<int>{40, 40, 40, 41, 41, 41}));
    // Lines arriving later are narrowed too.
    feedLines(41, 3, 1);
    feedLines(5, 3, 1);
    m_page->poll();
    QCOMPARE(ranksShown(), (QList<int>{40, 40, 40, 41, 41, 41, 41}));

    // A rank's tab shows its whole log; back on "All ranks" the group holds.
    QVERIFY(m_page->showRank(5));
    QCOMPARE(model->rowCount(), 4);
    QVERIFY(m_page->showRank(LogsPage::AllRanksTab));
    QCOMPARE(model->rowCount(), 7);

    // The statuses move on (rank 40 finished): the chosen group is the one of the same label.
    statuses[40].state = RankState::Finished;
    statuses[40].hung = false;
    m_page->setRankStatuses(statuses);
    QCOMPARE(groups->currentText(), QStringLiteral("rank 41 hung"));
    QCOMPARE(ranksShown(), (QList<int>{41, 41, 41, 41}));

    // Every rank again.
    groups->setCurrentIndex(0);
    QCOMPARE(model->rowCount(), 48 * 3 + 2);
}

void TestLogsPage::identicalLinesCollapse_data()
{
    QTest::addColumn<int>("ranks");
    QTest::newRow("8 ranks") << 8;
    QTest::newRow("64 ranks") << 64;
}

void TestLogsPage::identicalLinesCollapse()
{
    QFETCH(int, ranks);
    const QByteArray nccl = "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n";
    for (int rank = 0; rank < ranks; ++rank)
        feed(rank, StreamKind::Stdout, nccl);
    feedLines(0, 0, 3);
    m_page->poll();
    QVERIFY(m_page->collapsesIdenticalLines());
    QListView *list = m_page->logView()->listView();
    QCOMPARE(list->model(), m_page->collapsedModel());
    QAbstractItemModel *shown = list->model();
    QAbstractItemModelTester tester(shown, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QString groupText = QStringLiteral("[r0–%1 \u00d7%2] NCCL INFO Bootstrap : Using "
                                             "eth0:10.0.0.1<0>")
                                  .arg(ranks - 1)
                                  .arg(ranks);
    QCOMPARE(shown->rowCount(), 4);
    QCOMPARE(m_page->logModel()->rowCount(), ranks + 3);
    const QPersistentModelIndex group = shown->index(0, 0);
    QCOMPARE(group.data().toString(), groupText);
    QVERIFY(group.data(LogModel::IsGroupRole).toBool());

    // Copying the row copies the line with its ranks note.
    list->setCurrentIndex(group);
    m_page->logView()->copySelection();
    QCOMPARE(QGuiApplication::clipboard()->text(), groupText);

    // Enter opens it in place: every rank's line below it, each with its own rank.
    list->setFocus();
    QTest::keyClick(list, Qt::Key_Return);
    QCOMPARE(shown->rowCount(), 4 + ranks);
    QVERIFY(group.data(LogModel::ExpandedRole).toBool());
    for (int rank = 0; rank < ranks; ++rank)
        QCOMPARE(shown->index(1 + rank, 0).data().toString(),
                 QStringLiteral("[r%1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>").arg(rank));
    QVERIFY(shown->index(1 + ranks, 0).data().toString().contains(QStringLiteral("Epoch 0,")));
    // Copying the open group copies every line.
    list->setCurrentIndex(group);
    m_page->logView()->copySelection();
    QCOMPARE(QGuiApplication::clipboard()->text().split(QLatin1Char('\n')).size(), ranks);
    list->selectAll();
    m_page->logView()->copySelection();
    QCOMPARE(QGuiApplication::clipboard()->text().split(QLatin1Char('\n')).size(), ranks + 3);
    // Enter again closes it.
    list->setCurrentIndex(group);
    QTest::keyClick(list, Qt::Key_Return);
    QCOMPARE(shown->rowCount(), 4);
    QVERIFY(!group.data(LogModel::ExpandedRole).toBool());

    // A click on its arrow opens it, another closes it; a click on the text only selects.
    const QRect rect = list->visualRect(group);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                      QPoint(rect.left() + 3, rect.center().y()));
    QCOMPARE(shown->rowCount(), 4 + ranks);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                      QPoint(rect.left() + 3, rect.center().y()));
    QCOMPARE(shown->rowCount(), 4);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                      QPoint(rect.left() + 200, rect.center().y()));
    QCOMPARE(shown->rowCount(), 4);
    QCOMPARE(list->currentIndex().row(), 0);
    // Right opens, Left closes.
    QTest::keyClick(list, Qt::Key_Right);
    QCOMPARE(shown->rowCount(), 4 + ranks);
    list->setCurrentIndex(shown->index(3, 0)); // one of its lines
    QTest::keyClick(list, Qt::Key_Left);
    QCOMPARE(shown->rowCount(), 4);
    QCOMPARE(list->currentIndex().row(), 0);

    // Opening a row above the newest stopped following; End resumes it. Another rank printing
    // the same line later joins the row instead of adding one.
    QVERIFY(!m_page->logView()->isFollowing());
    QTest::keyClick(list, Qt::Key_End);
    QVERIFY(m_page->logView()->isFollowing());
    QSignalSpy inserted(shown, &QAbstractItemModel::rowsInserted);
    feed(ranks, StreamKind::Stdout, nccl);
    m_page->poll();
    QCOMPARE(inserted.size(), 0);
    QCOMPARE(shown->rowCount(), 4);
    QCOMPARE(group.data(LogModel::GroupSizeRole).toInt(), ranks + 1);
    QCOMPARE(m_page->logModel()->rowCount(), ranks + 4);
    auto *status = m_page->findChild<QLabel *>(QStringLiteral("logStatusLabel"));
    QVERIFY(status);
    QCOMPARE(status->text(), QStringLiteral("4 row(s) shown for %1 line(s)").arg(ranks + 4));

    // A rank's own tab shows its line as printed.
    QVERIFY(m_page->showRank(3));
    QCOMPARE(list->model(), m_page->logModel());
    QCOMPARE(list->model()->rowCount(), 1);
    QCOMPARE(list->model()->index(0, 0).data().toString(),
             QStringLiteral("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"));
    QVERIFY(!m_page->collapseAction()->isEnabled());
    auto *button = m_page->findChild<QToolButton *>(QStringLiteral("logCollapseButton"));
    QCOMPARE(button->text(), QStringLiteral("Collapse identical"));
    QVERIFY(!button->isEnabled());
    QVERIFY(m_page->showRank(LogsPage::AllRanksTab));
    QCOMPARE(list->model(), m_page->collapsedModel());
    QCOMPARE(list->model()->rowCount(), 4);
}

void TestLogsPage::collapseOption()
{
    for (int rank = 0; rank < 4; ++rank)
        feed(rank, StreamKind::Stdout, "same\n");
    m_page->poll();
    QListView *list = m_page->logView()->listView();
    QCOMPARE(list->model()->rowCount(), 1);
    auto *button = m_page->findChild<QToolButton *>(QStringLiteral("logCollapseButton"));
    QVERIFY(button);
    QVERIFY(button->isChecked());
    // Off: every line as printed; the grouping costs nothing while off.
    button->click();
    QVERIFY(!m_page->collapsesIdenticalLines());
    QCOMPARE(list->model(), m_page->logModel());
    QCOMPARE(list->model()->rowCount(), 4);
    QVERIFY(!m_page->collapsedModel()->sourceModel());
    QCOMPARE(list->model()->index(2, 0).data().toString(), QStringLiteral("[r2] same"));
    // Filters still apply, collapsed or not.
    auto *filter = m_page->findChild<QLineEdit *>(QStringLiteral("logFilterEdit"));
    QTest::keyClicks(filter, QStringLiteral("nothing matches"));
    QCOMPARE(list->model()->rowCount(), 0);
    m_page->setCollapseIdenticalLines(true);
    QCOMPARE(list->model(), m_page->collapsedModel());
    QCOMPARE(list->model()->rowCount(), 0);
    filter->clear();
    QCOMPARE(list->model()->rowCount(), 1);
    QCOMPARE(list->model()->index(0, 0).data().toString(), QStringLiteral("[r0–3 \u00d74] same"));
}

// A RuntimeError longer than the view is read whole: in its tooltip, or wrapped with "Wrap".
void TestLogsPage::longLineWrapsOrShowsWhole()
{
    const QByteArray error = "RuntimeError: This is typically " +
                             QByteArray("caused by a rank that ").repeated(20) + "the end\n";
    feed(0, StreamKind::Stderr, error);
    m_page->poll();
    LogView *view = m_page->logView();
    QListView *list = view->listView();
    QTRY_COMPARE(list->model()->rowCount(), 1);
    QVERIFY(!view->wrapsLines());
    const QRect row = list->visualRect(list->model()->index(0, 0));
    QVERIFY(row.width() > list->viewport()->width()); // cut by the view
    QHelpEvent help(QEvent::ToolTip, row.center(), list->viewport()->mapToGlobal(row.center()));
    QCoreApplication::sendEvent(list->viewport(), &help);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().contains(QStringLiteral("the end")), qPrintable(QToolTip::text()));

    view->findChild<QToolButton *>(QStringLiteral("logWrapButton"))->click();
    QVERIFY(view->wrapsLines());
    QTRY_VERIFY(list->visualRect(list->model()->index(0, 0)).height() > 2 * row.height());
    QCOMPARE(list->horizontalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
    view->setWrapLines(false);
}

QTEST_MAIN(TestLogsPage)
#include "tst_logspage.moc"
