// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Failures page's stacks as rows (issue 41): a frame's function, file:line, module and code
// line in their columns for native and Python frames, the user's own frames tinted from the
// palette and the innermost one marked, every cell whole in its tooltip, Ctrl+C copying the
// selected rows as the rank printed them, and a frame activated (Enter, double-click) asking for
// its rank's log at the time it failed, which RunView shows on the Logs page.
#include "diagnosis/failurereport.h"
#include "diagnosis/pythonfailure.h"
#include "failureentries.h"
#include "logspage.h"
#include "logview.h"
#include "models/logmodel.h"
#include "runview.h"
#include "stackframeview.h"
#include "store/logstore.h"
#include "stream/pythontraceback.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QHeaderView>
#include <QListView>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

const QString kOwnFunction = u"rankdeck::Trainer::step(std::vector<float, std::allocator<float> "
                             u"> const&, int)"_s;
const QString kOwnFile =
    u"/home/user/src/rankdeck/worker/some/deeply/nested/directory/trainer_step.cpp"_s;

// A worker that crashed in libc called from its own code: frame 1 is the first own frame.
RankFailure nativeCrash()
{
    RankFailure f;
    f.rank = 3;
    f.kind = u"crash"_s;
    f.signal = 11;
    f.signalName = u"SIGSEGV"_s;
    f.timeUs = 5'000'000;
    f.stack = QStringList{
        u"#0 0x00007f876c185ad8 in __strlen_evex at strlen-evex.S:79 [libc.so.6]"_s,
        u"#1 0x000055d0c1a2b3c4 in %1 at %2:42 [rankdeck-worker]"_s.arg(kOwnFunction, kOwnFile),
        u"#2 0x000055d0c1a2b500 in main at /home/user/src/rankdeck/worker/main.cpp:7 "
        u"[rankdeck-worker]"_s};
    f.firstOwnFrame = 1;
    return f;
}

QString sample(const QString &name)
{
    QFile f(qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/core/stream/data/"_s + name);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

RankFailure pythonError()
{
    RankFailure f;
    f.rank = 5;
    f.kind = u"error"_s;
    f.exitCode = 1;
    f.timeUs = 7'000'000;
    mergePython(&f, parsePythonTraceback(sample(u"chained_cause.txt"_s)));
    return f;
}

} // namespace

class TestStackFrames : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void columns_data();
    void columns();
    void tooltipsHoldWholeText();
    void ownFramesTintedFromThePalette();
    void activationAsksForTheFrame();
    void ctrlCCopiesRows();
    void namedForScreenReaders();
    void runViewShowsRankLogAtFailure();

private:
    QTemporaryDir m_home;
};

void TestStackFrames::initTestCase()
{
    QVERIFY(m_home.isValid());
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.path()));
    QCoreApplication::setOrganizationName(u"rankdeck-test"_s);
}

void TestStackFrames::columns_data()
{
    QTest::addColumn<bool>("python");
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("function");
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("module");
    QTest::addColumn<QString>("source");
    QTest::addColumn<bool>("own");
    QTest::addColumn<bool>("marked");

    QTest::newRow("native, libc") << false << 0 << u"__strlen_evex"_s << u"strlen-evex.S:79"_s
                                  << u"libc.so.6"_s << QString() << false << false;
    QTest::newRow("native, own, marked")
        << false << 1 << u"◀ "_s + kOwnFunction << kOwnFile + u":42"_s << u"rankdeck-worker"_s
        << QString() << true << true;
    QTest::newRow("native, own, outer")
        << false << 2 << u"main"_s << u"/home/user/src/rankdeck/worker/main.cpp:7"_s
        << u"rankdeck-worker"_s << QString() << true << false;
    QTest::newRow("python, marked")
        << true << 0 << u"◀ read_config"_s << u"/tmp/pygen/cause.py:5"_s << QString()
        << u"raise RuntimeError(f\"cannot load config {path}\") from e"_s << true << true;
    QTest::newRow("python, outer")
        << true << 1 << u"<module>"_s << u"/tmp/pygen/cause.py:6"_s << QString()
        << u"read_config(\"/nonexistent/cfg.yaml\")"_s << true << false;
}

void TestStackFrames::columns()
{
    QFETCH(bool, python);
    QFETCH(int, row);
    QFETCH(QString, function);
    QFETCH(QString, location);
    QFETCH(QString, module);
    QFETCH(QString, source);
    QFETCH(bool, own);
    QFETCH(bool, marked);

    StackFrameModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const FailureEntry e = failureEntry(python ? pythonError() : nativeCrash());
    model.setSections(e.stacks);
    QCOMPARE(model.rowCount(), e.stacks.size());
    const QModelIndex stack = model.index(0, 0);
    QVERIFY(stack.data(StackFrameModel::IsSectionRole).toBool());
    QCOMPARE(stack.data().toString(), e.stacks.first().heading);
    QVERIFY(row < model.rowCount(stack));
    auto cell = [&](int column, int role = Qt::DisplayRole) {
        return model.index(row, column, stack).data(role);
    };
    QCOMPARE(cell(StackFrameModel::FunctionColumn).toString(), function);
    QCOMPARE(cell(StackFrameModel::LocationColumn).toString(), location);
    QCOMPARE(cell(StackFrameModel::ModuleColumn).toString(), module);
    QCOMPARE(cell(StackFrameModel::SourceColumn).toString(), source);
    QCOMPARE(cell(StackFrameModel::FunctionColumn, StackFrameModel::OwnRole).toBool(), own);
    QCOMPARE(cell(StackFrameModel::LocationColumn, StackFrameModel::MarkedRole).toBool(), marked);
    QCOMPARE(cell(StackFrameModel::ModuleColumn, Qt::FontRole).value<QFont>().bold(), marked);
    QCOMPARE(
        cell(StackFrameModel::FunctionColumn, Qt::AccessibleDescriptionRole).toString().isEmpty(),
        !own);
    // Exactly one frame of the stack is marked.
    int markedRows = 0;
    for (int r = 0; r < model.rowCount(stack); ++r)
        markedRows += model.index(r, 0, stack).data(StackFrameModel::MarkedRole).toBool();
    QCOMPARE(markedRows, 1);
}

void TestStackFrames::tooltipsHoldWholeText()
{
    StackFrameView view;
    QAbstractItemModelTester tester(view.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.resize(400, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setSections(failureEntry(nativeCrash()).stacks);
    const QModelIndex own = view.model()->index(1, 0, view.model()->index(0, 0));
    const QString function =
        own.siblingAtColumn(StackFrameModel::FunctionColumn).data(Qt::ToolTipRole).toString();
    QVERIFY2(function.startsWith(kOwnFunction), qPrintable(function));
    QVERIFY2(function.contains(u"innermost frame of your own code"_s), qPrintable(function));
    QCOMPARE(own.siblingAtColumn(StackFrameModel::LocationColumn).data(Qt::ToolTipRole).toString(),
             kOwnFile + u":42"_s);
    QCOMPARE(own.siblingAtColumn(StackFrameModel::ModuleColumn).data(Qt::ToolTipRole).toString(),
             u"rankdeck-worker"_s);
    // The columns are narrower than the text (it is cut, not the tooltip) and resizable.
    QVERIFY(view.columnWidth(StackFrameModel::LocationColumn) <
            view.fontMetrics().horizontalAdvance(kOwnFile));
    for (int c = 0; c < StackFrameModel::ColumnCount; ++c)
        QCOMPARE(view.header()->sectionResizeMode(c), QHeaderView::Interactive);
}

void TestStackFrames::ownFramesTintedFromThePalette()
{
    StackFrameView view;
    QPalette light = view.palette();
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Highlight, QColor(0, 0, 255));
    view.setPalette(light);
    view.setSections(failureEntry(nativeCrash()).stacks);
    const QModelIndex stack = view.model()->index(0, 0);
    auto background = [&](int row) {
        return view.model()->index(row, 0, stack).data(Qt::BackgroundRole).value<QColor>();
    };
    QVERIFY(!background(0).isValid()); // libc: not own
    const QColor tinted = background(1);
    QVERIFY(tinted.isValid());
    QVERIFY2(tinted != QColor(Qt::white) && tinted.blue() > tinted.red(),
             qPrintable(tinted.name()));
    // A dark palette tints dark: read from the palette, never a fixed colour.
    QPalette dark = light;
    dark.setColor(QPalette::Base, QColor(20, 20, 20));
    dark.setColor(QPalette::Highlight, QColor(255, 128, 0));
    view.setPalette(dark);
    QVERIFY2(background(1).lightness() < 100 && background(1).red() > background(1).blue(),
             qPrintable(background(1).name()));
}

void TestStackFrames::activationAsksForTheFrame()
{
    FailuresPage page;
    page.resize(900, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const FailureEntry e = failureEntry(pythonError());
    page.setEntries({e}, u"report"_s);
    StackFrameView *view = page.frameView();
    QVERIFY(view->isVisible());
    QSignalSpy spy(&page, &FailuresPage::frameActivated);

    const QModelIndex stack = view->model()->index(0, 0);
    const QModelIndex frame = view->model()->index(0, StackFrameModel::LocationColumn, stack);
    view->setFocus();
    view->setCurrentIndex(frame);
    QTest::keyClick(view, Qt::Key_Return);
    QCOMPARE(spy.size(), 1);
    QCOMPARE(spy[0][0].toInt(), 5);
    QCOMPARE(spy[0][1].toString(), u"/tmp/pygen/cause.py"_s);
    QCOMPARE(spy[0][2].toInt(), 5);
    QCOMPARE(spy[0][3].toLongLong(), 7'000'000);

    const QModelIndex outer = view->model()->index(1, StackFrameModel::FunctionColumn, stack);
    // As a window system sends it: a click, then the double-click.
    const QPoint at = view->visualRect(outer).center();
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(spy.size(), 2);
    QCOMPARE(spy[1][2].toInt(), 6);

    // A heading is no frame: Enter on it asks for nothing.
    view->setCurrentIndex(stack);
    QTest::keyClick(view, Qt::Key_Return);
    QCOMPARE(spy.size(), 2);

    // "Copy entry" still copies the whole entry as text.
    QTest::mouseClick(page.findChild<QPushButton *>(u"copyFailureButton"_s), Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), e.plainText);
    // What the page shows, as text, has the frames too.
    QVERIFY2(page.detailsText().contains(u"line 5, in read_config"_s),
             qPrintable(page.detailsText()));
}

void TestStackFrames::ctrlCCopiesRows()
{
    FailuresPage page;
    page.resize(900, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const FailureEntry e = failureEntry(nativeCrash());
    page.setEntries({e}, u"report"_s);
    StackFrameView *view = page.frameView();
    const QModelIndex stack = view->model()->index(0, 0);
    view->setFocus();
    view->selectionModel()->select(view->model()->index(2, 0, stack),
                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view->selectionModel()->select(view->model()->index(0, 0, stack),
                                   QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QGuiApplication::clipboard()->clear();
    QTest::keySequence(view, QKeySequence::Copy);
    // In the order shown, as the rank printed them, whatever order they were selected in.
    QCOMPARE(QGuiApplication::clipboard()->text(),
             e.stacks[0].frames[0].text + QLatin1Char('\n') + e.stacks[0].frames[2].text);
    // A heading alone stands for its whole stack.
    view->selectionModel()->select(stack,
                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QTest::keySequence(view, QKeySequence::Copy);
    QCOMPARE(QGuiApplication::clipboard()->text(),
             stackSectionsText(e.stacks.mid(0, 1)).chopped(1));

    // A Python frame copies as Python prints it, its code line under it.
    page.setEntries({failureEntry(pythonError())}, u"report"_s);
    view->selectionModel()->select(view->model()->index(0, 0, view->model()->index(0, 0)),
                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QTest::keySequence(view, QKeySequence::Copy);
    QCOMPARE(QGuiApplication::clipboard()->text(),
             u"  File \"/tmp/pygen/cause.py\", line 5, in read_config\n"_s
             u"    raise RuntimeError(f\"cannot load config {path}\") from e"_s);
}

void TestStackFrames::namedForScreenReaders()
{
    FailuresPage page;
    page.resize(900, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    FailureEntry verdict;
    verdict.title = u"Collective — ranks disagree"_s;
    verdict.html = u"<p>no stacks</p>"_s;
    page.setEntries({failureEntry(nativeCrash()), verdict}, u"report"_s);
    StackFrameView *view = page.frameView();
    QCOMPARE(view->objectName(), u"stackFrameView"_s);
    QCOMPARE(view->accessibleName(), u"Stack frames of rank 3"_s);
    const QStringList headers{u"Function"_s, u"File:line"_s, u"Module"_s, u"Code"_s};
    for (int c = 0; c < StackFrameModel::ColumnCount; ++c) {
        QCOMPARE(view->model()->headerData(c, Qt::Horizontal).toString(), headers[c]);
        QVERIFY(!view->model()->headerData(c, Qt::Horizontal, Qt::ToolTipRole).isNull());
    }
    // An entry without stacks shows no empty table.
    page.selectEntry(1);
    QVERIFY(!view->isVisible());
    page.selectEntry(0);
    QVERIFY(view->isVisible());
    // Shown again with room for its rows (a splitter keeps a pane it hid at no height).
    QTRY_VERIFY2(view->viewport()->height() > 100, qPrintable(QString::number(view->height())));
}

void TestStackFrames::runViewShowsRankLogAtFailure()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    LogStore store;
    QVERIFY(store.open(dir.filePath(u"logs"_s)));
    // More lines than the view shows, so that the failure's line is scrolled to, not followed.
    for (int rank = 0; rank < 3; ++rank)
        for (int i = 0; i < 300; ++i) {
            LogLine line;
            line.rank = rank;
            line.timeUs = 1'000'000 + qint64(i) * 100'000;
            line.text = u"rank %1 line %2"_s.arg(rank).arg(i);
            store.append(line);
        }
    RunView view;
    view.resize(900, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    LogsPage *logs = view.logsPage();
    logs->setLogStore(&store);
    logs->poll();
    // A file not on this machine: the rank's log where it failed, its line then selected.
    const qint64 failedUs = 1'000'000 + 125 * 100'000 + 50'000;
    emit view.failuresPage()->frameActivated(2, u"/nonexistent/train.py"_s, 5, failedUs);
    QCOMPARE(view.currentIndex(), int(RunView::Logs));
    QCOMPARE(logs->shownRank(), 2);
    QVERIFY(!logs->logView()->isFollowing());
    const QModelIndex at = logs->logView()->listView()->currentIndex();
    QVERIFY(at.isValid());
    QCOMPARE(at.data(LogModel::TextRole).toString(), u"rank 2 line 125"_s);
    // No time known: the log's end, followed.
    view.setCurrentIndex(RunView::Failures);
    emit view.failuresPage()->frameActivated(1, u"train.py"_s, 5, 0);
    QCOMPARE(view.currentIndex(), int(RunView::Logs));
    QCOMPARE(logs->shownRank(), 1);
    QVERIFY(logs->logView()->isFollowing());
}

QTEST_MAIN(TestStackFrames)
#include "tst_stackframes.moc"
