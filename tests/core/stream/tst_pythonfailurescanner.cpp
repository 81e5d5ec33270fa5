// SPDX-License-Identifier: GPL-3.0-or-later
//
// PythonFailureScanner: per rank, the last complete traceback and the last faulthandler dump of
// what the rank printed, line by line, with ranks interleaved; reset per attempt; bounded.
#include "stream/pythonfailurescanner.h"

#include "diagnosis/failurereport.h"
#include "diagnosis/pythonfailure.h"
#include "stream/linesplitter.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

QStringList sampleLines(const QString &name)
{
    QFile f(QStringLiteral(RANKDECK_TEST_DATA "/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    QStringList lines = QString::fromUtf8(f.readAll()).split(u'\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    return lines;
}

// The last exception's type, "" without one.
QString lastType(const PythonFailureScanner &s, int rank)
{
    const QList<PythonException> chain = s.lastException(rank);
    return chain.isEmpty() ? QString() : chain.last().type;
}

} // namespace

class TestPythonFailureScanner : public QObject
{
    Q_OBJECT
private slots:
    // torch's exit abort after an uncaught exception: the exception is the cause, its message
    // does not take libstdc++'s unprefixed "terminate called …" line, the signal is kept.
    void abortWhileExitingAfterAnException()
    {
        PythonFailureScanner scanner;
        for (const QString &line : sampleLines(u"abort_at_exit.txt"_s))
            scanner.addLine(1, line);
        const QList<PythonException> chain = scanner.lastException(1);
        QCOMPARE(chain.size(), 1);
        QCOMPARE(chain.last().type, u"ValueError"_s);
        QCOMPARE(chain.last().message, u"bad batch at epoch 2"_s);
        QCOMPARE(scanner.lastFaultDump(1).fatalError, u"Aborted"_s);

        RankFailure f;
        f.rank = 1;
        f.kind = u"crash"_s;
        f.signal = 6;
        f.signalName = u"SIGABRT"_s;
        f.message = u"python3.11 was killed by SIGABRT"_s;
        mergePython(&f, chain, scanner.lastFaultDump(1));
        QCOMPARE(f.kind, u"exception"_s);
        QCOMPARE(f.exceptionType, u"ValueError"_s);
        QCOMPARE(f.message, u"bad batch at epoch 2"_s);
        QCOMPARE(f.signalName, u"SIGABRT"_s);
        const RankFailure once = f;
        mergePython(&f, chain, scanner.lastFaultDump(1));
        QCOMPARE(f, once);

        // A crash while Python code still ran is the crash, whatever was printed before.
        RankFailure live;
        live.kind = u"crash"_s;
        live.signalName = u"SIGSEGV"_s;
        PythonFaultDump running = scanner.lastFaultDump(1);
        running.threads.first().frames.append(PythonFrame{u"train.py"_s, 3, u"step"_s, {}});
        mergePython(&live, chain, running);
        QCOMPARE(live.kind, u"crash"_s);
        QVERIFY(live.exceptionType.isEmpty());
    }
    // Issue 42: Gloo aborts a rank that receives data of the wrong size; libstdc++ prints what the
    // escaping exception said. The rank's message is Gloo's, not "killed by SIGABRT"; a rank
    // whose terminate said nothing, or one that another rank's lines interleave, keeps its own.
    void terminateKeepsTheLibrarysWords()
    {
        const QString gloo =
            u"[enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
            "pair.cc:464] op.preamble.length <= op.nbytes. 132 vs 128. Received data size "
            "doesn't match expected size. Is there a distributed collective mismatch in your "
            "code?"_s;
        PythonFailureScanner scanner;
        scanner.addLine(1,
                        u"terminate called after throwing an instance of 'gloo::EnforceNotMet'"_s);
        scanner.addLine(2, u"terminate called without an active exception"_s);
        scanner.addLine(1, u"  what():  "_s + gloo);
        scanner.addLine(1, u"Fatal Python error: Aborted"_s);
        QCOMPARE(scanner.lastTerminate(1), u"gloo::EnforceNotMet: "_s + gloo);
        QVERIFY(scanner.lastTerminate(2).isEmpty());

        RankFailure f;
        f.rank = 1;
        f.kind = u"crash"_s;
        f.signal = 6;
        f.signalName = u"SIGABRT"_s;
        f.message = u"python3.11 was killed by SIGABRT"_s;
        mergePython(&f, {}, scanner.lastFaultDump(1), {}, scanner.lastTerminate(1));
        QCOMPARE(f.kind, u"crash"_s);
        QCOMPARE(f.message, u"gloo::EnforceNotMet: "_s + gloo);
        // A SIGSEGV, or a message of the rank's own, is not replaced.
        RankFailure segv = f;
        segv.signal = 11;
        segv.message = u"python3.11 was killed by SIGSEGV"_s;
        mergePython(&segv, {}, {}, {}, scanner.lastTerminate(1));
        QCOMPARE(segv.message, u"python3.11 was killed by SIGSEGV"_s);

        scanner.reset(1);
        QVERIFY(scanner.lastTerminate(1).isEmpty());
    }

    // Issue 27: a Dataset segfaulted in a DataLoader worker of rank 1 (real stderr of
    // tests/cli/programs/frameworks/torchrun_dataloader.py --inject workersegv with RankDeck's
    // sitecustomize: the worker's faulthandler dump, torch's line, then a NUL and torch's
    // RuntimeError raised inside its own excepthook, then the rank's original
    // ConnectionResetError). The report names the worker, its signal and the Dataset's line.
    // A Dataset that segfaults in a DataLoader worker of rank 1. torch tells the rank in one
    // of two ways, depending on where the worker's SIGCHLD finds it: a RuntimeError raised in
    // its own excepthook, then the rank's original exception (a ConnectionResetError from the
    // dead worker's socket); or a RuntimeError raised by the SIGCHLD handler itself wherever
    // the rank was (here in backward), which ends the rank. Or not at all: the rank tripped over
    // the dead worker's socket before torch noticed the death, and only the worker's own dump
    // says what killed it (with two busy loops beside it, one run in two; its pid is not known).
    void namesTheDataLoaderWorkersDeath_data()
    {
        QTest::addColumn<QString>("sample");
        QTest::addColumn<QString>("type"); // of the last exception
        QTest::addColumn<qint64>("pid");   // 0: the rank does not name the worker
        QTest::newRow("in torch's excepthook")
            << u"dataloader_worker_segv.txt"_s << u"ConnectionResetError"_s << qint64(16863);
        QTest::newRow("raised in backward")
            << u"dataloader_worker_segv_in_backward.txt"_s << u"RuntimeError"_s << qint64(6811);
        QTest::newRow("before torch noticed")
            << u"dataloader_worker_segv_reset.txt"_s << u"ConnectionResetError"_s << qint64(0);
    }

    void namesTheDataLoaderWorkersDeath()
    {
        QFETCH(QString, sample);
        QFETCH(QString, type);
        QFETCH(qint64, pid);
        // As the launcher hands them over: LineSplitter::displayText() shows the NUL as "␀".
        QFile file(QStringLiteral(RANKDECK_TEST_DATA "/") + sample);
        QVERIFY(file.open(QIODevice::ReadOnly));
        PythonFailureScanner scanner;
        for (const QByteArray &line : file.readAll().split('\n'))
            scanner.addLine(1, LineSplitter::displayText(line));
        QCOMPARE(lastType(scanner, 1), type);
        QCOMPARE(
            scanner.lastChildDeath(1),
            pid > 0
                ? u"DataLoader worker (pid %1) is killed by signal: Segmentation fault."_s.arg(pid)
                : QString());
        QCOMPARE(scanner.lastFaultDump(1).fatalError, u"Segmentation fault"_s);
        QVERIFY(scanner.lastChildDeath(0).isEmpty());

        RankFailure f;
        f.rank = 1;
        f.kind = u"error"_s;
        f.exitCode = 1;
        mergePython(&f, scanner.lastException(1), scanner.lastFaultDump(1),
                    scanner.lastChildDeath(1));
        QCOMPARE(f.kind, u"exception"_s);
        QCOMPARE(f.child.pid, pid);
        QCOMPARE(f.child.role, u"DataLoader worker"_s);
        QCOMPARE(f.child.signalName, u"SIGSEGV"_s);
        const QString worker =
            pid > 0 ? u"DataLoader worker (pid %1)"_s.arg(pid) : u"a DataLoader worker"_s;
        QCOMPARE(f.summary(), u"SIGSEGV (signal 11) in %1 of rank 1"_s.arg(worker));
        QCOMPARE(RankFailure::fromJson(f.toJson()), f);
        const QString text = pythonFailureText(f, QString());
        QVERIFY2(text.contains(u"Python stacks of %1 at its fatal error"_s.arg(worker)),
                 qPrintable(text));
        QVERIFY2(text.contains(
                     QRegularExpression(u"→ File \"/work/[^\"]+/tests/cli/programs/frameworks/"
                                        u"torchrun_dataloader\\.py\", line 52 in __getitem__\n"_s)),
                 qPrintable(text));
        scanner.reset(1);
        QVERIFY(scanner.lastChildDeath(1).isEmpty());
    }

    // Rank r prints its sample among other ranks' lines, one line each in turn.
    void keepsEachRanksLast_data()
    {
        QTest::addColumn<QStringList>("samples"); // per rank
        QTest::addColumn<QStringList>("types");   // last exception type per rank
        QTest::addColumn<QStringList>("fatal");   // last dump's fatal error per rank
        QTest::newRow("three ranks, three failures")
            << QStringList{u"simple.txt"_s, u"chained_cause.txt"_s, u"segv_threads.txt"_s}
            << QStringList{u"ValueError"_s, u"RuntimeError"_s, QString()}
            << QStringList{QString(), QString(), u"Segmentation fault"_s};
        QTest::newRow("a traceback, then a crash on the same rank")
            << QStringList{u"simple.txt+segv_stack.txt"_s, u"gloo_peer_closed.txt"_s}
            << QStringList{u"ValueError"_s, u"RuntimeError"_s}
            << QStringList{u"Segmentation fault"_s, QString()};
        QTest::newRow("two tracebacks: the last one")
            << QStringList{u"keyboardinterrupt.txt+multiline_message.txt"_s}
            << QStringList{u"AssertionError"_s} << QStringList{QString()};
    }

    void keepsEachRanksLast()
    {
        QFETCH(QStringList, samples);
        QFETCH(QStringList, types);
        QFETCH(QStringList, fatal);
        QList<QStringList> perRank;
        for (const QString &spec : samples) {
            QStringList lines{u"epoch 0 loss=1.0"_s};
            for (const QString &name : spec.split(u'+'))
                lines += sampleLines(name) << u"cleanup done"_s;
            perRank << lines;
        }
        PythonFailureScanner scanner;
        for (qsizetype i = 0;; ++i) {
            bool any = false;
            for (int r = 0; r < perRank.size(); ++r) {
                if (i < perRank[r].size()) {
                    scanner.addLine(r, perRank[r][i]);
                    any = true;
                }
            }
            if (!any)
                break;
        }
        for (int r = 0; r < perRank.size(); ++r) {
            QCOMPARE(lastType(scanner, r), types[r]);
            QCOMPARE(scanner.lastFaultDump(r).fatalError, fatal[r]);
        }
        QVERIFY(scanner.lastException(99).isEmpty());
        QVERIFY(scanner.lastFaultDump(99).isEmpty());
    }

    // The traceback counts once its "Type: message" line is in, not before.
    void completeAtTheExceptionLine()
    {
        PythonFailureScanner scanner;
        const QStringList lines = sampleLines(u"chained_context.txt"_s);
        quint64 generation = scanner.generation(0);
        for (qsizetype i = 0; i < lines.size(); ++i) {
            const QString &line = lines[i];
            scanner.addLine(0, line);
            const QList<PythonException> chain = scanner.lastException(0);
            if (line.startsWith(u"KeyError"_s))
                QCOMPARE(chain.size(), 1);
            else if (line.startsWith(u"ZeroDivisionError"_s))
                QCOMPARE(chain.size(), 2);
            else if (i < 4)
                QVERIFY(chain.isEmpty());
        }
        QVERIFY(scanner.generation(0) != generation);
        generation = scanner.generation(0);
        scanner.addLine(0, QString());
        scanner.addLine(0, u"an ordinary line"_s);
        QCOMPARE(scanner.generation(0), generation);
        QCOMPARE(lastType(scanner, 0), u"ZeroDivisionError"_s);
    }

    void resetForgetsTheRank()
    {
        PythonFailureScanner scanner;
        for (const QString &line : sampleLines(u"simple.txt"_s)) {
            scanner.addLine(0, line);
            scanner.addLine(1, line);
        }
        for (const QString &line : sampleLines(u"segv_threads.txt"_s))
            scanner.addLine(1, line);
        // Half a traceback before the reset must not join what comes after it.
        scanner.addLine(0, u"Traceback (most recent call last):"_s);
        scanner.reset(0);
        QVERIFY(scanner.lastException(0).isEmpty());
        scanner.addLine(0, u"KeyError: 'x'"_s);
        QVERIFY(scanner.lastException(0).isEmpty());
        QCOMPARE(lastType(scanner, 1), u"ValueError"_s);
        QCOMPARE(scanner.lastFaultDump(1).threads.size(), 2);
        scanner.resetAll();
        QVERIFY(scanner.lastException(1).isEmpty());
        QVERIFY(scanner.lastFaultDump(1).isEmpty());
    }

    // A program that runs on for long after a traceback, with 10^5 threads in a dump and
    // endless frames: what is kept stays within the bounds.
    void staysBounded()
    {
        PythonFailureScanner scanner;
        scanner.addLine(0, u"Traceback (most recent call last):"_s);
        for (int i = 0; i < 300000; ++i)
            scanner.addLine(0, u"  File \"/a.py\", line 1, in f"_s);
        scanner.addLine(0, u"ValueError: x"_s);
        const QString huge(100000, u'y');
        for (int i = 0; i < 1000; ++i)
            scanner.addLine(0, huge);
        scanner.addLine(0, u"Fatal Python error: Aborted"_s);
        for (int i = 0; i < 100000; ++i) {
            scanner.addLine(0, u"Thread 0x%1 (most recent call first):"_s.arg(i, 0, 16));
            scanner.addLine(0, u"  File \"/a.py\", line 1 in f"_s);
        }
        const QList<PythonException> chain = scanner.lastException(0);
        QCOMPARE(chain.size(), 1);
        QCOMPARE(chain.last().frames.size(), pythonlimits::MaxFrames);
        QVERIFY(chain.last().message.size() <= pythonlimits::MaxMessage);
        QCOMPARE(scanner.lastFaultDump(0).threads.size(), pythonlimits::MaxThreads);
    }
};

QTEST_APPLESS_MAIN(TestPythonFailureScanner)
#include "tst_pythonfailurescanner.moc"
