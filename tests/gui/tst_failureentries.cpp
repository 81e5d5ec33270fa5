// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the Failures page makes of a Python rank's failure: one stack of native frames down to
// the interpreter and then the Python frames, the user's own frames highlighted (the innermost
// one marked), a "copy" that reads like Python's own traceback, and many ranks that died alike
// as one entry, and ranks that died of the root cause's own traceback said so first.
#include "failureentries.h"
#include "run/failurereport.h"
#include "run/pythonfailure.h"
#include "stream/pythontraceback.h"

#include <QApplication>
#include <QFile>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestFailureEntries : public QObject
{
    Q_OBJECT

private slots:
    void pythonExceptionReadsLikeATraceback();
    void fatalSignalShowsNativeThenPython();
    void manyRanksAliasOneEntry();
    void sameTracebackAsTheRootCauseSaysSo();

private:
    static QString sample(const QString &name)
    {
        QFile f(qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/core/stream/data/"_s + name);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }
};

void TestFailureEntries::pythonExceptionReadsLikeATraceback()
{
    RankFailure f;
    f.rank = 3;
    f.kind = u"error"_s;
    f.exitCode = 1;
    f.message = u"python exited with code 1"_s;
    mergePython(&f, parsePythonTraceback(sample(u"chained_cause.txt"_s)));
    f.rootCause = true;
    const FailureEntry e = failureEntry(f, QApplication::palette());
    QVERIFY2(e.title.contains(u"RuntimeError: cannot load config"_s), qPrintable(e.title));
    // The innermost frame in the user's file is marked; the chained cause is listed too.
    QVERIFY2(e.html.contains(u"line 5, in read_config"_s), qPrintable(e.html));
    QVERIFY2(e.html.contains(u"◀"_s), qPrintable(e.html));
    QVERIFY2(e.html.contains(u"FileNotFoundError"_s), qPrintable(e.html));
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
    const FailureEntry e = failureEntry(f, QApplication::palette());
    // Native frames down to the interpreter, then the Python frames of the faulting thread.
    const qsizetype native = e.html.indexOf(u"__strlen_evex"_s);
    const qsizetype cut = e.html.indexOf(u"the interpreter (2 more native frames)"_s);
    const qsizetype python = e.html.indexOf(u"segv.py&quot;, line 8, in crash"_s);
    QVERIFY2(native >= 0 && cut > native && python > cut, qPrintable(e.html));
    QVERIFY2(!e.html.contains(u"_PyEval_EvalFrameDefault"_s), qPrintable(e.html));
    // The other Python thread comes after, under its own heading.
    QVERIFY2(e.html.indexOf(u"line 4, in idle"_s) > python, qPrintable(e.html));
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
    const QList<FailureEntry> entries = failureEntries(r, {}, QApplication::palette());
    QCOMPARE(entries.size(), 2);
    QVERIFY2(entries[1].title.startsWith(u"Ranks 1–199"_s), qPrintable(entries[1].title));
    QVERIFY2(entries[1].html.contains(u"(199 ranks)"_s), qPrintable(entries[1].html));
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
    const QList<FailureEntry> entries = failureEntries(r, {}, QApplication::palette());
    QCOMPARE(entries.size(), 2);
    QVERIFY2(!entries[0].plainText.contains(u"the root cause"_s), qPrintable(entries[0].plainText));
    QVERIFY2(entries[1].plainText.startsWith(u"same failure as rank 0, the root cause\n"_s),
             qPrintable(entries[1].plainText));
}

QTEST_MAIN(TestFailureEntries)
#include "tst_failureentries.moc"
