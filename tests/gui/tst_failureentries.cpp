// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the Failures page makes of a Python rank's failure: one stack of native frames down to
// the interpreter and then the Python frames (FailureEntry::stacks, the rows of the page's frame
// view), the user's own frames highlighted (the innermost one marked), a "copy" that reads like
// Python's own traceback, and many ranks that died alike
// as one entry, and ranks that died of the root cause's own traceback said so first. At 512
// ranks (issue 31) the page holds a handful of entries: ranks that failed alike, and ranks whose
// stack dumps wait in the same places, are one entry each, titled by their ranges.
#include "diagnosis/failuregrouping.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/pythonfailure.h"
#include "failureentries.h"
#include "stackframeview.h"
#include "stream/pythontraceback.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>

#include <QTest>
#include <algorithm>
#include <functional>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// Index of the first frame of `frames` that `matches`; -1 if none.
qsizetype frameIndex(const QList<StackFrameRow> &frames,
                     const std::function<bool(const StackFrameRow &)> &matches)
{
    const auto it = std::find_if(frames.cbegin(), frames.cend(), matches);
    return it == frames.cend() ? -1 : it - frames.cbegin();
}

// Whether any frame of any of the stacks has `function` in its function name.
bool hasFunction(const QList<StackSection> &stacks, const QString &function)
{
    return std::any_of(stacks.cbegin(), stacks.cend(), [&](const StackSection &s) {
        return frameIndex(s.frames, [&](const StackFrameRow &f) {
                   return f.function.contains(function);
               }) >= 0;
    });
}

} // namespace

class TestFailureEntries : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void pythonExceptionReadsLikeATraceback();
    void fatalSignalShowsNativeThenPython();
    void manyRanksAliasOneEntry();
    void sameTracebackAsTheRootCauseSaysSo();
    void manyRanksFewEntries_data();
    void manyRanksFewEntries();
    void longLinesWrapOrScroll();

private:
    QTemporaryDir m_home;
    static QString sample(const QString &name)
    {
        QFile f(qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/core/stream/data/"_s + name);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }
};

void TestFailureEntries::initTestCase()
{
    // The page's remembered choices (wrap) live in this test's own settings.
    QVERIFY(m_home.isValid());
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.path()));
    QCoreApplication::setOrganizationName(u"rankdeck-test"_s);
}

void TestFailureEntries::pythonExceptionReadsLikeATraceback()
{
    RankFailure f;
    f.rank = 3;
    f.kind = u"error"_s;
    f.exitCode = 1;
    f.message = u"python exited with code 1"_s;
    mergePython(&f, parsePythonTraceback(sample(u"chained_cause.txt"_s)));
    f.rootCause = true;
    const FailureEntry e = failureEntry(f);
    QVERIFY2(e.title.contains(u"RuntimeError: cannot load config"_s), qPrintable(e.title));
    QCOMPARE(e.rank, 3);
    // The innermost frame in the user's file is marked (and only it); the chained cause is
    // listed too, under its own heading.
    QVERIFY(!e.stacks.isEmpty());
    const QString stacks = stackSectionsText(e.stacks);
    const QList<StackFrameRow> &frames = e.stacks.first().frames;
    const qsizetype marked = frameIndex(frames, [](const StackFrameRow &r) { return r.marked; });
    QVERIFY2(marked >= 0, qPrintable(stacks));
    QCOMPARE(frames[marked].kind, StackFrameRow::Kind::Python);
    QCOMPARE(frames[marked].function, u"read_config"_s);
    QCOMPARE(frames[marked].line, 5);
    QCOMPARE(frames[marked].file, u"/tmp/pygen/cause.py"_s);
    QVERIFY(frames[marked].own);
    QCOMPARE(std::count_if(frames.cbegin(), frames.cend(),
                           [](const StackFrameRow &r) { return r.marked; }),
             1);
    QVERIFY2(std::any_of(
                 e.stacks.cbegin() + 1, e.stacks.cend(),
                 [](const StackSection &s) { return s.heading.contains(u"FileNotFoundError"_s); }),
             qPrintable(stacks));
    // Copy: as Python prints it, cause first, then the separator, then what ended it.
    const qsizetype cause = e.plainText.indexOf(u"FileNotFoundError: [Errno 2]"_s);
    const qsizetype separator = e.plainText.indexOf(
        u"The above exception was the direct cause of the following exception:"_s);
    const qsizetype last =
        e.plainText.lastIndexOf(u"RuntimeError: cannot load config /nonexistent/cfg.yaml"_s);
    QVERIFY2(cause >= 0 && separator > cause && last > separator, qPrintable(e.plainText));
    QVERIFY(e.plainText.contains(u"Traceback (most recent call last):"_s));
}

void TestFailureEntries::fatalSignalShowsNativeThenPython()
{
    RankFailure f;
    f.rank = 1;
    f.kind = u"crash"_s;
    f.signal = 11;
    f.signalName = u"SIGSEGV"_s;
    f.stack = QStringList{
        u"#0 0x00007f876c185ad8 in __strlen_evex at strlen-evex.S:79 [libc.so.6]"_s,
        u"#1 0x00007f876bdc4608 in string_at at _ctypes.c:5558 [_ctypes.cpython-311-x86_64-linux-gnu.so]"_s,
        u"#2 0x00007f876c35861d in _PyObject_MakeTpCall at Objects/call.c:214 [libpython3.11.so.1.0]"_s,
        u"#3 0x00007f876c2fd9c3 in _PyEval_EvalFrameDefault at Python/ceval.c:4769 [libpython3.11.so.1.0]"_s};
    mergePython(&f, {}, parseFaultHandlerDump(sample(u"segv_threads.txt"_s)));
    const FailureEntry e = failureEntry(f);
    // Native frames down to the interpreter, then the Python frames of the faulting thread.
    QVERIFY(e.stacks.size() >= 2);
    const QString stacks = stackSectionsText(e.stacks);
    const QList<StackFrameRow> &frames = e.stacks.first().frames;
    const qsizetype native =
        frameIndex(frames, [](const StackFrameRow &r) { return r.function == u"__strlen_evex"_s; });
    const qsizetype cut = frameIndex(frames, [](const StackFrameRow &r) {
        return r.kind == StackFrameRow::Kind::Note &&
               r.text.contains(u"the interpreter (2 more native frames)"_s);
    });
    const qsizetype python = frameIndex(frames, [](const StackFrameRow &r) {
        return r.kind == StackFrameRow::Kind::Python && r.file.endsWith(u"/segv.py"_s) &&
               r.line == 8 && r.function == u"crash"_s;
    });
    QVERIFY2(native >= 0 && cut > native && python > cut, qPrintable(stacks));
    QCOMPARE(frames[native].module, u"libc.so.6"_s);
    QCOMPARE(frames[native].location(), u"strlen-evex.S:79"_s);
    QVERIFY2(!hasFunction(e.stacks, u"_PyEval_EvalFrameDefault"_s), qPrintable(stacks));
    // The other Python thread comes after, under its own heading.
    const QList<StackFrameRow> &other = e.stacks[1].frames;
    QVERIFY2(e.stacks[1].heading.startsWith(u"Python thread 0x00007fdaaa0776c0"_s),
             qPrintable(e.stacks[1].heading));
    QVERIFY2(frameIndex(other,
                        [](const StackFrameRow &r) {
                            return r.line == 4 && r.function == u"idle"_s;
                        }) >= 0,
             qPrintable(stacks));
    // Copy keeps every native frame and faulthandler's own wording.
    QVERIFY(e.plainText.contains(u"_PyEval_EvalFrameDefault"_s));
    QVERIFY(e.plainText.contains(u"Fatal Python error: Segmentation fault"_s));
}

void TestFailureEntries::manyRanksAliasOneEntry()
{
    FailureReport r;
    const QList<PythonException> chain = parsePythonTraceback(sample(u"gloo_peer_closed.txt"_s));
    QVERIFY(!chain.isEmpty());
    RankFailure root;
    root.rank = 0;
    root.kind = u"crash"_s;
    root.signal = 11;
    root.signalName = u"SIGSEGV"_s;
    root.timeUs = 1000;
    QList<RankFailure> observed{root};
    for (int rank = 1; rank < 200; ++rank) {
        RankFailure f;
        f.rank = rank;
        f.kind = u"consequence"_s;
        f.timeUs = 2000 + rank;
        mergePython(&f, chain);
        observed << f;
    }
    r = FailureReport::build(observed);
    const QList<FailureEntry> entries = failureEntries(r, {});
    QCOMPARE(entries.size(), 2);
    QVERIFY2(entries[1].title.startsWith(u"Ranks 1–199"_s), qPrintable(entries[1].title));
    QVERIFY2(entries[1].html.contains(u"(199 ranks)"_s), qPrintable(entries[1].html));
    // Its frames are the first rank's, and activating one opens that rank's log then.
    QCOMPARE(entries[1].rank, 1);
    QCOMPARE(entries[1].timeUs, 2001);
}

void TestFailureEntries::sameTracebackAsTheRootCauseSaysSo()
{
    // Issue 27: every FSDP2 rank raised the same ValueError; the Failures page showed rank 1's
    // entry as if it were a failure of its own.
    const QList<PythonException> chain = parsePythonTraceback(sample(u"chained_cause.txt"_s));
    QVERIFY(!chain.isEmpty());
    QList<RankFailure> observed;
    for (int rank = 0; rank < 2; ++rank) {
        RankFailure f;
        f.rank = rank;
        f.kind = u"error"_s;
        f.exitCode = 1;
        f.timeUs = 1000 + rank;
        mergePython(&f, chain);
        observed << f;
    }
    const FailureReport r = FailureReport::build(observed);
    QVERIFY(r.rootCause());
    QCOMPARE(r.rootCause()->rank, 0);
    const QList<FailureEntry> entries = failureEntries(r, {});
    QCOMPARE(entries.size(), 2);
    QVERIFY2(!entries[0].plainText.contains(u"the root cause"_s), qPrintable(entries[0].plainText));
    QVERIFY2(entries[1].plainText.startsWith(u"same failure as rank 0, the root cause\n"_s),
             qPrintable(entries[1].plainText));
}

void TestFailureEntries::manyRanksFewEntries_data()
{
    QTest::addColumn<QList<int>>("hung");
    QTest::addColumn<bool>("dumps");
    QTest::addColumn<QStringList>("titles"); // the entries' titles, each the start of one

    // Rank 17 failed; the launcher stopped the other 511: some ended on the stop command (exit
    // 0), some by its SIGTERM, every other rank alike, so each group's ranks are scattered.
    QTest::newRow("one failed, 511 stopped")
        << QList<int>{} << false
        << QStringList{u"Rank 17 @ node00 — exit code 1 (root cause)"_s,
                       u"Ranks 0, 2, 4, 6, 8, 10, 12, 14, … (256 ranks) — stopped as a "
                       "consequence, exit code 0"_s,
                       u"Ranks 1, 3, 5, 7, 9, 11, 13, 15, … (255 ranks) — stopped as a "
                       "consequence, killed by SIGTERM"_s};
    // Ranks 40, 41 and 300 hung; every rank's stacks were dumped (each with its own thread id).
    QTest::newRow("three hung, every rank dumped")
        << QList<int>{40, 41, 300} << true
        << QStringList{u"Rank 40 @ node01 — hung (root cause)"_s, u"Ranks 41, 300 — hung"_s,
                       u"Ranks 0–39, 42–299, 301–511 — stopped as a consequence, exit code 0"_s,
                       u"Ranks 40, 41, 300 — stack dumps alike (3 ranks)"_s,
                       u"Ranks 0–39, 42–299, 301–511 — stack dumps alike (509 ranks)"_s};
}

void TestFailureEntries::manyRanksFewEntries()
{
    QFETCH(QList<int>, hung);
    QFETCH(bool, dumps);
    QFETCH(QStringList, titles);
    constexpr int world = 512;
    QList<RankFailure> observed;
    QHash<int, QString> stackDumps;
    for (int rank = 0; rank < world; ++rank) {
        RankFailure f;
        f.rank = rank;
        f.host = u"node%1"_s.arg(rank / 32, 2, 10, QLatin1Char('0'));
        f.localRank = rank % 32;
        f.timeUs = 1'000'000 + rank;
        if (hung.contains(rank)) {
            f.kind = u"hang"_s;
            f.message = u"no step for 300 s (last step 52)"_s;
        } else if (hung.isEmpty() && rank == 17) {
            f.kind = u"exit"_s;
            f.exitCode = 1;
            f.timeUs = 1000;
        } else {
            f.kind = u"consequence"_s;
            f.reason = hung.isEmpty() ? u"stopped after rank 17 failed"_s
                                      : u"stopped after ranks 40, 41, 300 hung"_s;
            f.timeUs = 2'000'000 + rank;
            if (hung.isEmpty() && rank % 2 == 1) {
                f.signal = 15;
                f.signalName = u"SIGTERM"_s;
            }
        }
        observed << f;
        if (dumps)
            stackDumps.insert(rank, u"thread %1 (main):\n#0 0x%2 in %3"_s.arg(4000 + rank)
                                        .arg(0x7f00 + rank, 0, 16)
                                        .arg(hung.contains(rank)
                                                 ? u"clock_nanosleep"_s
                                                 : u"c10d::ProcessGroupGloo::AsyncWork::wait()"_s));
    }
    const FailureReport report = FailureReport::build(observed);
    const QList<FailureEntry> entries = failureEntries(report, stackDumps);
    QStringList shown;
    for (const FailureEntry &e : entries)
        shown << e.title;
    QCOMPARE(entries.size(), titles.size());
    for (qsizetype i = 0; i < titles.size(); ++i) {
        QVERIFY2(entries[i].title.startsWith(titles[i]), qPrintable(shown.join(u'\n')));
        // One line, short enough for the list, however scattered the ranks.
        QVERIFY2(!entries[i].title.contains(u'\n') && entries[i].title.size() < 160,
                 qPrintable(entries[i].title));
    }
    // Every rank is still named in the details: a group's note lists all of its ranks.
    QList<int> stoppedAlike; // the consequences that ended by their exit code
    for (int rank = 0; rank < world; rank += hung.isEmpty() ? 2 : 1)
        if (!hung.contains(rank))
            stoppedAlike << rank;
    const QString note =
        u"ranks %1: same failure as rank 0 (%2 ranks)"_s.arg(formatRankRanges(stoppedAlike))
            .arg(stoppedAlike.size());
    QVERIFY2(std::any_of(entries.cbegin(), entries.cend(),
                         [&](const FailureEntry &e) { return e.plainText.startsWith(note); }),
             qPrintable(note));
    if (dumps) {
        // A group's entry shows where its ranks wait, by the dump of its first rank.
        const FailureEntry &waiting = entries.last();
        QVERIFY2(waiting.html.contains(u"ProcessGroupGloo"_s), qPrintable(waiting.html));
        QVERIFY2(hasFunction(waiting.stacks, u"c10d::ProcessGroupGloo::AsyncWork::wait()"_s),
                 qPrintable(stackSectionsText(waiting.stacks)));
        QVERIFY2(waiting.plainText.contains(u"wait where rank 0 waits"_s),
                 qPrintable(waiting.plainText));
        const FailureEntry &hungDumps = entries[entries.size() - 2];
        QVERIFY2(hasFunction(hungDumps.stacks, u"clock_nanosleep"_s),
                 qPrintable(stackSectionsText(hungDumps.stacks)));
        QCOMPARE(hungDumps.rank, 40);
    }
}

// A message and a command longer than the page are read whole: wrapped at the page's width (the
// default), or on one line that scrolls; a frame's file:line cut by its column is whole in its
// tooltip; the command has its own copy button.
void TestFailureEntries::longLinesWrapOrScroll()
{
    RankFailure f;
    f.rank = 1;
    f.kind = u"crash"_s;
    f.signal = 11;
    f.signalName = u"SIGSEGV"_s;
    const QString frame = u"#0 0x0000000000401136 in rankdeck::faultinjection::segfaultNow at "_s
                          u"/home/user/src/rankdeck/worker/faultinjection/segfault.cpp:42 "_s
                          u"[rankdeck-worker]"_s;
    f.stack = QStringList{frame};
    f.message = u"could not map /home/user/src/rankdeck/worker/faultinjection/segfault.cpp:42 "_s
                u"into the address space of the worker"_s;
    const FailureEntry crash = failureEntry(f);
    FailureEntry verdict = crash;
    verdict.title = u"Collective"_s;
    verdict.commands = {u"python -m torch.distributed.flight_recorder.fr_trace /tmp/x"_s};

    FailuresPage page;
    page.resize(420, 400);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setEntries({crash, verdict}, u"report"_s);
    auto *details = page.findChild<QTextBrowser *>(u"failureDetails"_s);
    QVERIFY(details);
    // The lines of the summary's layout that hold part of the message.
    auto linesOfMessage = [&] {
        for (QTextBlock b = details->document()->begin(); b.isValid(); b = b.next()) {
            const qsizetype start = b.text().indexOf(f.message);
            if (start < 0)
                continue;
            const qsizetype end = start + f.message.size();
            int lines = 0;
            for (int i = 0; i < b.layout()->lineCount(); ++i) {
                const QTextLine line = b.layout()->lineAt(i);
                lines += line.textStart() < end && line.textStart() + line.textLength() > start;
            }
            return lines;
        }
        return -1;
    };
    QVERIFY(page.wrapLines());
    QTRY_VERIFY2(linesOfMessage() > 1, qPrintable(QString::number(linesOfMessage())));
    page.findChild<QCheckBox *>(u"failureWrapCheck"_s)->setChecked(false);
    QVERIFY(!page.wrapLines());
    QTRY_COMPARE(linesOfMessage(), 1);
    QVERIFY(details->horizontalScrollBar()->maximum() > 0);
    page.setWrapLines(true);
    // The frame's row: its whole path:line in the tooltip however narrow the column.
    StackFrameView *frames = page.frameView();
    const QModelIndex stack = frames->model()->index(0, 0);
    const QModelIndex where = frames->model()->index(0, StackFrameModel::LocationColumn, stack);
    QCOMPARE(where.data(Qt::ToolTipRole).toString(),
             u"/home/user/src/rankdeck/worker/faultinjection/segfault.cpp:42"_s);
    QCOMPARE(stack.data(Qt::ToolTipRole).toString(), crash.stacks.first().heading);

    auto *copy = page.findChild<QPushButton *>(u"copyCommandButton"_s);
    QVERIFY(copy);
    QVERIFY(!copy->isEnabled()); // the crash entry shows no command
    page.selectEntry(1);
    QVERIFY(copy->isEnabled());
    QTest::mouseClick(copy, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), verdict.commands.first());
    // Entry titles are read whole too.
    auto *list = page.findChild<QListWidget *>(u"failureList"_s);
    QCOMPARE(list->item(0)->toolTip(), crash.title);
}

QTEST_MAIN(TestFailureEntries)
#include "tst_failureentries.moc"
