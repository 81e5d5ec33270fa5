// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for the report, case by case
// (its rules and its three forms change together, as failurereport.cpp says).
// FailureReport: root cause selection, per-rank merging, text and JSON, and reading the
// worker's crash/stacks events (made here with the worker's own WireEventWriter).
#include "diagnosis/failurereport.h"

#include "diagnosis/failuregrouping.h"
#include "diagnosis/failureverdict.h"
#include "diagnosis/pythonfailure.h"
#include "stream/pythontraceback.h"
#include "wire/wireprotocol.h"

#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

const QStringList kSegvStack = {
    QStringLiteral("#0 0x00007f1e2a3b4c5d in __pthread_kill_implementation at "
                   "./nptl/pthread_kill.c:44 [libc.so.6]"),
    QStringLiteral("#1 0x000055d0c1a2b3c4 in rankdeck::crash::(anonymous namespace)::helper() at "
                   "/src/worker/crashhandler.cpp:10 [rankdeck-worker]"),
    QStringLiteral(
        "#2 0x000055d0c1a2b3c4 in rankdeck::fault::(anonymous namespace)::crashWithSegv(int) at "
        "/src/worker/faultinjection.cpp:56 [rankdeck-worker]"),
    QStringLiteral("#3 0x000055d0c1a2b400 in rankdeck::Trainer::runStep(int) [clone .isra.0] at "
                   "/src/worker/trainer.cpp:120 [rankdeck-worker]"),
    QStringLiteral("#4 0x00007f1e2a300000 in ?? [libc.so.6+0x29d8f]"),
};

const QStringList kGlooWaitStack = {
    QStringLiteral("#0 0x00007f0000000001 in __futex_abstimed_wait_common at "
                   "./nptl/futex-internal.c:57 [libc.so.6]"),
    QStringLiteral("#1 0x00007f0000000002 in "
                   "std::condition_variable::wait(std::unique_lock<std::mutex>&) [libstdc++.so.6]"),
    QStringLiteral("#2 0x00007f0000000003 in "
                   "c10d::ProcessGroupGloo::AsyncWork::wait(std::chrono::duration<long, "
                   "std::ratio<1l, 1000l> >) [libtorch_cpu.so]"),
    QStringLiteral("#3 0x000055d0c1a2b500 in rankdeck::GradientReducer::waitAll() at "
                   "/src/worker/gradientreducer.cpp:88 [rankdeck-worker]"),
    QStringLiteral("#4 0x000055d0c1a2b600 in main at /src/worker/main.cpp:300 [rankdeck-worker]"),
};

RankFailure failure(int rank, qint64 timeUs, const QString &kind)
{
    RankFailure f;
    f.rank = rank;
    f.localRank = rank;
    f.host = QStringLiteral("node%1").arg(rank / 2);
    f.timeUs = timeUs;
    f.kind = kind;
    return f;
}

QJsonObject eventObject(const std::string &line)
{
    std::string_view view(line);
    if (!view.empty() && view.back() == '\n')
        view.remove_suffix(1);
    const auto m = wire::findWireEvent(view);
    if (!m.valid)
        return {};
    return QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size()))).object();
}

QList<PythonException> parsePython(const QString &text)
{
    return parsePythonTraceback(text);
}

// What a rank of a Python program prints when its batch is bad (the message names the rank).
QList<PythonException> pythonChain(int rank)
{
    return parsePython(
        u"Traceback (most recent call last):\n"
        u"  File \"/job/train.py\", line 40, in <module>\n"
        u"    main()\n"
        u"  File \"/job/train.py\", line 12, in load\n"
        u"    return int(x)\n"
        u"           ^^^^^^\n"
        u"  File \"/venv/lib/python3.11/site-packages/torch/x.py\", line 5, in wrap\n"
        u"    return f()\n"
        u"ValueError: bad batch on rank %1\n"_s.arg(rank));
}

PythonFaultDump pythonDump()
{
    return parseFaultHandlerDump(
        u"Fatal Python error: Segmentation fault\n\n"
        u"Thread 0x00007f0000000002 (most recent call first):\n"
        u"  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n\n"
        u"Current thread 0x00007f0000000001 (most recent call first):\n"
        u"  File \"/venv/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1 in "
        u"_call_impl\n"
        u"  File \"/job/model.py\", line 8 in forward\n"
        u"  File \"/job/train.py\", line 40 in <module>\n"_s);
}

} // namespace

class TestFailureReport : public QObject
{
    Q_OBJECT
private slots:
    void collectiveWaitsAreNotServiceLoops_data()
    {
        QTest::addColumn<QStringList>("frames");
        QTest::addColumn<bool>("waits");
        const QString poll = u"#0 0x00007f0000000001 in epoll_wait [libc.so.6]"_s;
        QTest::newRow("DDP's backward waits for its all-reduce")
            << QStringList{poll,
                           u"#1 0x00007f0000000002 in c10d::Reducer::finalize_backward() [libtorch_cpu.so]"_s}
            << true;
        QTest::newRow("Gloo's event loop")
            << QStringList{poll,
                           u"#1 0x00007f0000000003 in gloo::transport::tcp::Loop::run() [libtorch_cpu.so]"_s}
            << false;
        QTest::newRow("Gloo's work loop")
            << QStringList{poll,
                           u"#1 0x00007f0000000004 in c10d::ProcessGroupGloo::runLoop(int) [libtorch_cpu.so]"_s}
            << false;
        QTest::newRow("the store's daemon")
            << QStringList{poll,
                           u"#1 0x00007f0000000005 in c10d::detail::LibUVStoreDaemon::run() [libtorch_cpu.so]"_s}
            << false;
        QTest::newRow("a plain sleep")
            << QStringList{u"#0 0x00007f0000000006 in clock_nanosleep [libc.so.6]"_s} << false;
        // Issue 27: an idle OpenMP pool thread of every CPU rank was said to wait in one.
        QTest::newRow("an idle OpenMP pool thread")
            << QStringList{u"#0 0x00007f0000000007 in do_wait [libgomp.so.1]"_s,
                           u"#1 0x00007f0000000008 in gomp_barrier_wait_end [libgomp.so.1]"_s,
                           u"#2 0x00007f0000000009 in gomp_thread_start [libgomp.so.1]"_s,
                           u"#3 0x00007f000000000a in start_thread [libc.so.6]"_s}
            << false;
        QTest::newRow("LLVM's OpenMP pool thread")
            << QStringList{u"#0 0x00007f000000000b in __kmp_wait_template [libomp.so]"_s,
                           u"#1 0x00007f000000000c in __kmp_barrier_template [libomp.so]"_s,
                           u"#2 0x00007f000000000d in __kmp_launch_thread [libomp.so]"_s}
            << false;
        // Gloo's work loop runs DDP's async all-reduce: inside it, it waits for its peers.
        QTest::newRow("Gloo's work loop inside an all-reduce")
            << QStringList{u"#0 0x00007f000000000e in pthread_cond_wait [libc.so.6]"_s,
                           u"#1 0x00007f000000000f in gloo::transport::tcp::UnboundBuffer::waitRecv(int*, std::chrono::duration<long, std::ratio<1l, 1000l> >) [libtorch_cpu.so]"_s,
                           u"#2 0x00007f0000000010 in gloo::allreduce(gloo::AllreduceOptions&) [libtorch_cpu.so]"_s,
                           u"#3 0x00007f0000000011 in c10d::(anonymous namespace)::AsyncAllreduceWork::run() [libtorch_cpu.so]"_s,
                           u"#4 0x00007f0000000012 in c10d::ProcessGroupGloo::runLoop(int) [libtorch_cpu.so]"_s,
                           u"#5 0x00007f0000000013 in start_thread [libc.so.6]"_s}
            << true;
        QTest::newRow("Gloo's work loop, idle")
            << QStringList{u"#0 0x00007f0000000014 in pthread_cond_wait [libc.so.6]"_s,
                           u"#1 0x00007f0000000015 in std::condition_variable::wait(std::unique_lock<std::mutex>&) [libstdc++.so.6]"_s,
                           u"#2 0x00007f0000000016 in c10d::ProcessGroupGloo::runLoop(int) [libtorch_cpu.so]"_s}
            << false;
    }
    void collectiveWaitsAreNotServiceLoops()
    {
        QFETCH(QStringList, frames);
        QFETCH(bool, waits);
        QCOMPARE(waitsInCollective(frames), waits);
    }
    void parsesFrames_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("function");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("lineNo");
        QTest::addColumn<QString>("module");
        QTest::addColumn<bool>("inlined");
        QTest::newRow("full") << kSegvStack[2] << 2
                              << "rankdeck::fault::(anonymous namespace)::crashWithSegv(int)"
                              << "/src/worker/faultinjection.cpp" << 56 << "rankdeck-worker"
                              << false;
        QTest::newRow("clone suffix")
            << kSegvStack[3] << 3 << "rankdeck::Trainer::runStep(int) [clone .isra.0]"
            << "/src/worker/trainer.cpp" << 120 << "rankdeck-worker" << false;
        QTest::newRow("raw") << kSegvStack[4] << 4 << ""
                             << "" << 0 << "libc.so.6" << false;
        QTest::newRow("no source") << kGlooWaitStack[2] << 2
                                   << "c10d::ProcessGroupGloo::AsyncWork::wait(std::chrono::"
                                      "duration<long, std::ratio<1l, 1000l> >)"
                                   << "" << 0 << "libtorch_cpu.so" << false;
        QTest::newRow("inlined")
            << "#7 0x0000564937974477 in std::this_thread::sleep_for<long>(long const&) (inlined) "
               "at /usr/include/c++/12/bits/this_thread_sleep.h:80 [rankdeck-worker]"
            << 7 << "std::this_thread::sleep_for<long>(long const&)"
            << "/usr/include/c++/12/bits/this_thread_sleep.h" << 80 << "rankdeck-worker" << true;
        QTest::newRow("not a frame") << "Rank 1: Epoch 3, Loss 0.5" << -1 << ""
                                     << "" << 0 << "" << false;
    }
    void parsesFrames()
    {
        QFETCH(QString, line);
        QFETCH(int, index);
        QFETCH(QString, function);
        QFETCH(QString, file);
        QFETCH(int, lineNo);
        QFETCH(QString, module);
        QFETCH(bool, inlined);
        const FrameParts p = parseFrame(line);
        QCOMPARE(p.index, index);
        QCOMPARE(p.function, function);
        QCOMPARE(p.file, file);
        QCOMPARE(p.line, lineNo);
        QCOMPARE(p.module, module);
        QCOMPARE(p.inlined, inlined);
    }

    void findsFirstOwnFrame_data()
    {
        QTest::addColumn<QStringList>("stack");
        QTest::addColumn<QString>("module");
        QTest::addColumn<int>("expected");
        QTest::newRow("skips libc and the crash handler") << kSegvStack << "rankdeck-worker" << 2;
        QTest::newRow("gloo wait") << kGlooWaitStack << "rankdeck-worker" << 3;
        QTest::newRow("other module name") << kSegvStack << "crashhelper" << -1;
        QStringList deployed = kGlooWaitStack;
        deployed.replaceInStrings(QStringLiteral("[rankdeck-worker]"),
                                  QStringLiteral("[rankdeck-worker-ba72997ab73c]"));
        QTest::newRow("deployed copy") << deployed << "rankdeck-worker" << 3;
        QStringList lookalike = kGlooWaitStack;
        lookalike.replaceInStrings(QStringLiteral("[rankdeck-worker]"),
                                   QStringLiteral("[rankdeck-workers]"));
        QTest::newRow("look-alike module") << lookalike << "rankdeck-worker" << -1;
        QTest::newRow("empty") << QStringList() << "rankdeck-worker" << -1;
    }
    void findsFirstOwnFrame()
    {
        QFETCH(QStringList, stack);
        QFETCH(QString, module);
        QFETCH(int, expected);
        QCOMPARE(firstOwnFrame(stack, module), expected);
    }

    // observed: rank:time:kind triples; expected: ranks in report order, root first.
    void choosesRootCause_data()
    {
        QTest::addColumn<QStringList>("observed");
        QTest::addColumn<QList<int>>("order");
        QTest::newRow("earliest wins, not the lowest rank")
            << QStringList{u"0:300:error"_s, u"3:100:crash"_s, u"1:200:exit"_s}
            << QList<int>{3, 1, 0};
        QTest::newRow("consequences never lead")
            << QStringList{u"0:50:consequence"_s, u"2:100:signal"_s, u"1:60:consequence"_s}
            << QList<int>{2, 0, 1};
        QTest::newRow("all consequences: earliest")
            << QStringList{u"1:70:consequence"_s, u"0:60:consequence"_s} << QList<int>{0, 1};
        QTest::newRow("same time: lower rank")
            << QStringList{u"2:100:crash"_s, u"1:100:exception"_s} << QList<int>{1, 2};
        QTest::newRow("unknown time sorts last")
            << QStringList{u"0:0:lost"_s, u"1:500:exit"_s} << QList<int>{1, 0};
        QTest::newRow("one rank observed twice")
            << QStringList{u"1:100:crash"_s, u"0:150:consequence"_s, u"1:180:signal"_s}
            << QList<int>{1, 0};
    }
    void choosesRootCause()
    {
        QFETCH(QStringList, observed);
        QFETCH(QList<int>, order);
        QList<RankFailure> list;
        for (const QString &o : observed) {
            const QStringList p = o.split(QLatin1Char(':'));
            list << failure(p[0].toInt(), p[1].toLongLong(), p[2]);
        }
        const FailureReport report = FailureReport::build(list);
        QList<int> got;
        for (const RankFailure &f : report.failures)
            got << f.rank;
        QCOMPARE(got, order);
        QVERIFY(report.failures.first().rootCause);
        QVERIFY(report.rootCause() == &report.failures.first());
        for (qsizetype i = 1; i < report.failures.size(); ++i)
            QVERIFY(!report.failures[i].rootCause);
    }

    // The worker's crash event arrives first, the exit status later: one entry with both.
    void mergesObservationsOfOneRank()
    {
        RankFailure crash = failure(1, 1000, QStringLiteral("exception"));
        crash.exceptionType = QStringLiteral("c10::Error");
        crash.message = QStringLiteral("injected fault");
        crash.stack = kSegvStack;
        crash.firstOwnFrame = 2;
        RankFailure exit = failure(1, 1500, QStringLiteral("signal"));
        exit.signal = 6;
        exit.signalName = QStringLiteral("SIGABRT");
        const FailureReport report = FailureReport::build({exit, crash});
        QCOMPARE(report.failures.size(), 1);
        const RankFailure &f = report.failures.first();
        QCOMPARE(f.kind, QStringLiteral("exception"));
        QCOMPARE(f.exceptionType, QStringLiteral("c10::Error"));
        QCOMPARE(f.signal, 6);
        QCOMPARE(f.timeUs, qint64(1000));
        QCOMPARE(f.stack, kSegvStack);
        QCOMPARE(f.firstOwnFrame, 2);
    }

    void rendersRootCauseFirst()
    {
        RankFailure root = failure(3, 1'000'000, QStringLiteral("crash"));
        root.signal = 11;
        root.signalName = QStringLiteral("SIGSEGV");
        root.message = QStringLiteral("Segmentation fault (address not mapped) at address 0x0");
        root.stack = kSegvStack;
        root.firstOwnFrame = 2;
        root.thread = QStringLiteral("rankdeck-worker (tid 77, main thread)");
        root.pid = 77;
        RankFailure peer = failure(0, 1'250'000, QStringLiteral("consequence"));
        peer.signal = 15;
        RankFailure hung = failure(1, 1'500'000, QStringLiteral("hang"));
        hung.stack = kGlooWaitStack;
        const FailureReport report = FailureReport::build({peer, hung, root});
        const QString text = report.toText();
        const QStringList lines = text.split(QLatin1Char('\n'));

        QVERIFY2(lines.first().contains(QLatin1String("rank 3")), qPrintable(text));
        QVERIFY2(lines.first().contains(QLatin1String("node1")), qPrintable(text));
        QVERIFY(text.contains(QLatin1String("SIGSEGV (signal 11)")));
        QVERIFY(text.contains(root.message));
        // The marked line is the first frame of the worker's own code, not the crash handler's.
        const QStringList marked = lines.filter(QStringLiteral("→ #"));
        QCOMPARE(marked.size(), 1);
        QVERIFY2(marked.first().contains(QLatin1String("crashWithSegv")),
                 qPrintable(marked.first()));
        // Every other rank, after the root cause, with why it stopped and when.
        const qsizetype rootPos = text.indexOf(QLatin1String("Root cause"));
        const qsizetype rank0 = text.indexOf(QRegularExpression(QStringLiteral("\\n  rank 0 ")));
        const qsizetype rank1 = text.indexOf(QRegularExpression(QStringLiteral("\\n  rank 1 ")));
        QVERIFY(rootPos == 0);
        QVERIFY2(rank0 > 0 && rank1 > rank0, qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("+0.250 s")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("killed by SIGTERM")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("after rank 3 failed")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("c10d::ProcessGroupGloo::AsyncWork::wait")),
                 qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("GradientReducer::waitAll")), qPrintable(text));
    }

    void emptyReport()
    {
        const FailureReport report = FailureReport::build({});
        QVERIFY(report.isEmpty());
        QVERIFY(report.rootCause() == nullptr);
        QVERIFY(!report.toText().isEmpty());
    }

    void roundTripsThroughJson()
    {
        RankFailure root = failure(2, 123456789, QStringLiteral("exception"));
        root.exceptionType = QStringLiteral("std::runtime_error");
        root.message = QStringLiteral("line one\nline \"two\"");
        root.stack = kSegvStack;
        root.firstOwnFrame = 2;
        root.buildId = QStringLiteral("abc123");
        root.reportPath = QStringLiteral("/tmp/run/crash-rank2.txt");
        root.thread = QStringLiteral("worker (tid 5)");
        root.pid = 5;
        RankFailure other = failure(0, 123456999, QStringLiteral("consequence"));
        other.exitCode = 143;
        const FailureReport report = FailureReport::build({other, root});
        const QByteArray bytes = QJsonDocument(report.toJson()).toJson();
        const FailureReport back = FailureReport::fromJson(QJsonDocument::fromJson(bytes).object());
        QCOMPARE(back.failures.size(), report.failures.size());
        for (qsizetype i = 0; i < back.failures.size(); ++i)
            QVERIFY(back.failures[i] == report.failures[i]);
        QCOMPARE(back.toText(), report.toText());
    }

    void readsCrashEvents_data()
    {
        QTest::addColumn<bool>("exception");
        QTest::newRow("signal") << false;
        QTest::newRow("exception") << true;
    }
    void readsCrashEvents()
    {
        QFETCH(bool, exception);
        wire::WireEventWriter w(wire::event::Crash, 3, 1700000000123456);
        w.addString(wire::field::Kind, exception ? "exception" : "signal");
        if (exception) {
            w.addString(wire::field::ExceptionType, "c10::Error");
        } else {
            w.addInt(wire::field::Signal, 8);
            w.addString(wire::field::SignalName, "SIGFPE");
        }
        w.addString(wire::field::Message, "boom \"quoted\"\nsecond line");
        w.addString(wire::field::Thread, "rankdeck-worker (tid 9, main thread)");
        w.addInt(wire::field::Pid, 9);
        w.addString(wire::field::Stack, kSegvStack.join(QLatin1Char('\n')).toStdString());
        w.addInt(wire::field::OwnFrame, 2);
        w.addString(wire::field::BuildId, "feedbeef");
        w.addString(wire::field::Path, "/run/crash-rank3.txt");
        const QJsonObject ev = eventObject(w.line());
        QVERIFY(!ev.isEmpty());

        const RankFailure f = failureFromCrashEvent(ev);
        QCOMPARE(f.rank, 3);
        QCOMPARE(f.timeUs, qint64(1700000000123456));
        QCOMPARE(f.kind, exception ? QStringLiteral("exception") : QStringLiteral("crash"));
        QCOMPARE(f.signal, exception ? 0 : 8);
        QCOMPARE(f.signalName, exception ? QString() : QStringLiteral("SIGFPE"));
        QCOMPARE(f.exceptionType, exception ? QStringLiteral("c10::Error") : QString());
        QCOMPARE(f.message, QStringLiteral("boom \"quoted\"\nsecond line"));
        QCOMPARE(f.stack, kSegvStack);
        QCOMPARE(f.firstOwnFrame, 2);
        QCOMPARE(f.pid, qint64(9));
        QCOMPARE(f.buildId, QStringLiteral("feedbeef"));
        QCOMPARE(f.reportPath, QStringLiteral("/run/crash-rank3.txt"));

        // The same event as the last line of crash-rank3.txt, after the human text.
        const QByteArray file = QByteArray("rankdeck-worker: rank 3 crashed\nStack:\n  #0 ...\n") +
                                QByteArray::fromStdString(w.line());
        QVERIFY(failureFromCrashReportFile(file) == f);
        // A torn file (the event cut short) gives nothing rather than garbage.
        QVERIFY(failureFromCrashReportFile(file.left(file.size() - 20)).kind.isEmpty());
    }

    // An old worker without own_frame: the launcher finds the frame itself.
    void crashEventWithoutOwnFrame()
    {
        QJsonObject ev;
        ev[QStringLiteral("t")] = QStringLiteral("crash");
        ev[QStringLiteral("kind")] = QStringLiteral("signal");
        ev[QStringLiteral("signal")] = 11;
        ev[QStringLiteral("stack")] = kGlooWaitStack.join(QLatin1Char('\n'));
        const RankFailure f = failureFromCrashEvent(ev);
        QCOMPARE(f.firstOwnFrame, 3);
        QCOMPARE(f.signalName, QStringLiteral("SIGSEGV"));
    }

    // A survivor taken down by NCCL's watchdog reads as the echo of a peer's failure.
    void namesTheNcclWatchdog_data()
    {
        QTest::addColumn<QString>("frame");
        QTest::addColumn<bool>("watchdog");
        QTest::newRow("watchdog")
            << "#5 0x00007f0000000005 in c10d::ProcessGroupNCCL::Watchdog::run() [libtorch_cuda.so]"
            << true;
        QTest::newRow("heartbeat monitor")
            << "#5 0x00007f0000000005 in c10d::ProcessGroupNCCL::HeartbeatMonitor::runLoop() "
               "[libtorch_cuda.so]"
            << true;
        QTest::newRow("other c10d")
            << "#5 0x00007f0000000005 in "
               "c10d::ProcessGroupNCCL::allreduce(std::vector<at::Tensor>&) [libtorch_cuda.so]"
            << false;
        QTest::newRow("own abort") << kSegvStack[2] << false;
    }
    void namesTheNcclWatchdog()
    {
        QFETCH(QString, frame);
        QFETCH(bool, watchdog);
        QJsonObject ev;
        ev[QStringLiteral("kind")] = QStringLiteral("signal");
        ev[QStringLiteral("signal")] = 6;
        ev[QStringLiteral("msg")] = QStringLiteral("Aborted (raised by the process itself)");
        ev[QStringLiteral("stack")] =
            kGlooWaitStack.mid(0, 2).join(QLatin1Char('\n')) + QLatin1Char('\n') + frame;
        const RankFailure f = failureFromCrashEvent(ev);
        QCOMPARE(f.message.contains(QLatin1String("NCCL watchdog")), watchdog);
        QVERIFY(f.message.startsWith(QLatin1String("Aborted")));
    }

    void parsesThreadStacks()
    {
        QString text = QStringLiteral("thread 100 (rankdeck-worker, main thread):\n");
        text += kGlooWaitStack.join(QLatin1Char('\n')) + QLatin1Char('\n');
        text +=
            QStringLiteral("thread 105 (gloo-loop):\n  (no stack: the thread blocks signals)\n");
        text += QStringLiteral("thread 107 (heartbeat):\n") +
                kSegvStack.mid(3).join(QLatin1Char('\n')) + QLatin1Char('\n');
        QJsonObject ev;
        ev[QStringLiteral("stack")] = text;
        const QList<ThreadStack> threads = threadStacksFromEvent(ev);
        QCOMPARE(threads.size(), 3);
        QCOMPARE(threads[0].tid, qint64(100));
        QCOMPARE(threads[0].name, QStringLiteral("rankdeck-worker"));
        QVERIFY(threads[0].mainThread);
        QCOMPARE(threads[0].frames, kGlooWaitStack);
        QVERIFY(!threads[1].mainThread);
        QVERIFY(threads[1].frames.isEmpty());
        QCOMPARE(threads[1].note, QStringLiteral("no stack: the thread blocks signals"));
        QCOMPARE(threads[2].frames.size(), 2);

        QVERIFY(waitsInCollective(threads[0].frames));
        QVERIFY(!waitsInCollective(threads[2].frames));
        const QString where = waitLocation(threads[0].frames);
        QVERIFY2(where.startsWith(QLatin1String("c10d::ProcessGroupGloo::AsyncWork::wait")),
                 qPrintable(where));
        QVERIFY2(where.contains(QLatin1String(
                     "rankdeck::GradientReducer::waitAll() (gradientreducer.cpp:88)")),
                 qPrintable(where));
    }

    // --- A Python rank's failure (pythonfailure.h, failuregrouping.h) ---

    void mergesPython_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("message");
        QTest::addColumn<bool>("withChain");
        QTest::addColumn<bool>("withDump");
        QTest::addColumn<QString>("wantKind");
        QTest::addColumn<QString>("wantType");
        QTest::addColumn<QString>("wantMessage");
        QTest::addColumn<QString>("wantSummary");
        QTest::newRow("exit code 1 with a traceback")
            << u"exit"_s << QString() << QString() << true << false << u"exception"_s
            << u"ValueError"_s << u"bad batch on rank 7"_s << u"ValueError: bad batch on rank 7"_s;
        QTest::newRow("error event keeps its message after Python's")
            << u"error"_s << QString() << u"shard 3 unreadable"_s << true << false << u"exception"_s
            << u"ValueError"_s << u"bad batch on rank 7\nshard 3 unreadable"_s
            << u"ValueError: bad batch on rank 7"_s;
        QTest::newRow("the supervisor's plain exit message gives way")
            << u"error"_s << QString() << u"program exited with code 1"_s << true << false
            << u"exception"_s << u"ValueError"_s << u"bad batch on rank 7"_s
            << u"ValueError: bad batch on rank 7"_s;
        QTest::newRow("same message twice")
            << u"error"_s << QString() << u"bad batch on rank 7"_s << true << false
            << u"exception"_s << u"ValueError"_s << u"bad batch on rank 7"_s
            << u"ValueError: bad batch on rank 7"_s;
        QTest::newRow("crash event keeps kind, signal and message")
            << u"crash"_s << QString() << u"Segmentation fault (address not mapped)"_s << false
            << true << u"crash"_s << QString() << u"Segmentation fault (address not mapped)"_s
            << u"SIGSEGV (signal 11)"_s;
        QTest::newRow("signal with a dump gets its fatal error")
            << u"signal"_s << QString() << QString() << false << true << u"signal"_s << QString()
            << u"Fatal Python error: Segmentation fault"_s << u"killed by SIGSEGV (signal 11)"_s;
        QTest::newRow("worker's exception type stays")
            << u"exception"_s << u"c10::Error"_s << u"CUDA error"_s << true << false
            << u"exception"_s << u"c10::Error"_s << u"CUDA error"_s
            << u"ValueError: bad batch on rank 7"_s;
        // Issue 27: its own uncaught exception was ending it when the launcher's stop came.
        QTest::newRow("consequence with an uncaught traceback is its own exception")
            << u"consequence"_s << QString() << QString() << true << false << u"exception"_s
            << u"ValueError"_s << u"bad batch on rank 7"_s << u"ValueError: bad batch on rank 7"_s;
    }

    // Issue 27: a Dataset segfaulted in a DataLoader worker of rank 1. The worker's
    // faulthandler dump, then the rank's chained traceback (a NUL first), share its stderr.
    void namesTheDataLoaderWorker()
    {
        const QString site = u"/venv/lib/python3.11/site-packages/torch/utils/data/"_s;
        const QString printed =
            u"Fatal Python error: Segmentation fault\n\n"
            u"Current thread 0x00007f5e4b7fe740 (most recent call first):\n"
            u"  File \"/usr/lib/python3.11/ctypes/__init__.py\", line 519 in string_at\n"
            u"  File \"/job/train.py\", line 52 in __getitem__\n"_s +
            u"  File \"%1_utils/fetch.py\", line 52 in fetch\n"
            u"  File \"%1_utils/worker.py\", line 351 in _worker_loop\n"
            u"  File \"/usr/lib/python3.11/multiprocessing/process.py\", line 108 in run\n"
            u"  File \"/job/train.py\", line 82 in <module>\n\n"
            u"Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)\n"_s.arg(site) +
            QChar(0) +
            u"[rank1]: Traceback (most recent call last):\n"
            u"[rank1]:   File \"%1dataloader.py\", line 1275, in _try_get_data\n"
            u"[rank1]:     data = self._data_queue.get(timeout=timeout)\n"
            u"[rank1]:   File \"%1_utils/signal_handling.py\", line 73, in handler\n"
            u"[rank1]:     _error_if_any_worker_fails()\n"
            u"[rank1]: RuntimeError: DataLoader worker (pid 4242) is killed by signal: "
            u"Segmentation fault. \n"
            u"[rank1]: \n"
            u"[rank1]: The above exception was the direct cause of the following exception:\n"
            u"[rank1]: \n"
            u"[rank1]: Traceback (most recent call last):\n"
            u"[rank1]:   File \"/job/train.py\", line 82, in <module>\n"
            u"[rank1]:     main()\n"
            u"[rank1]:   File \"/job/train.py\", line 70, in main\n"
            u"[rank1]:     for batch in loader:\n"
            u"[rank1]:   File \"%1dataloader.py\", line 1288, in _try_get_data\n"
            u"[rank1]:     raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited "
            u"unexpectedly') from e\n"
            u"[rank1]: RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly\n"_s.arg(
                site);
        RankFailure f = failure(1, 1000, u"error"_s);
        f.exitCode = 1;
        const QList<PythonException> chain = parsePythonTraceback(printed);
        QCOMPARE(chain.size(), 2); // the worker's part too
        mergePython(&f, chain, parseFaultHandlerDump(printed));
        QCOMPARE(f.kind, u"exception"_s);
        QCOMPARE(f.child.pid, qint64(4242));
        QCOMPARE(f.child.role, u"DataLoader worker"_s);
        QCOMPARE(f.child.signal, 11);
        QCOMPARE(f.child.signalName, u"SIGSEGV"_s);
        QCOMPARE(f.summary(), u"SIGSEGV (signal 11) in DataLoader worker (pid 4242) of rank 1"_s);
        QCOMPARE(RankFailure::fromJson(f.toJson()), f);
        QCOMPARE(FailureVerdict::summaryOf(FailureReport::build({f})),
                 u"rank 1 (node0): SIGSEGV (signal 11) in DataLoader worker (pid 4242)"_s);
        const QString text = FailureReport::build({f}).toText();
        QVERIFY2(text.contains(u"  what:    SIGSEGV (signal 11) in DataLoader worker (pid 4242) of "
                               u"rank 1\n"_s),
                 qPrintable(text));
        QVERIFY2(
            text.contains(u"Python stacks of DataLoader worker (pid 4242) at its fatal error"_s),
            qPrintable(text));
        QVERIFY2(text.contains(u"→ File \"/job/train.py\", line 52 in __getitem__\n"_s),
                 qPrintable(text));
        QVERIFY2(text.contains(u"is killed by signal: Segmentation fault."_s), qPrintable(text));

        // The rank exited 1 with no traceback printed (tst_frameworks' transformers row, once
        // in CI): the worker's dump alone names the death that ended it.
        RankFailure silent = failure(1, 1000, u"error"_s);
        silent.exitCode = 1;
        silent.message = u"python exited with code 1"_s;
        const QString workerPart = printed.section(QChar(0), 0, 0);
        mergePython(&silent, {}, parseFaultHandlerDump(workerPart));
        QCOMPARE(silent.kind, u"error"_s);
        QCOMPARE(silent.child.signalName, u"SIGSEGV"_s);
        QCOMPARE(silent.child.pid, qint64(0));
        QVERIFY(silent.endedByChild());
        QCOMPARE(silent.summary(), u"SIGSEGV (signal 11) in a DataLoader worker of rank 1"_s);
        QCOMPARE(FailureVerdict::summaryOf(FailureReport::build({silent})),
                 u"rank 1 (node0): SIGSEGV (signal 11) in a DataLoader worker"_s);
        // Without a worker's death, an exit with no traceback stays what it was.
        RankFailure plain = failure(1, 1000, u"error"_s);
        plain.exitCode = 1;
        mergePython(&plain, {}, {});
        QVERIFY(plain.child.isEmpty());
        QCOMPARE(plain.summary(), u"error, exit code 1"_s);

        // A worker that exited with a code of its own.
        RankFailure exited = failure(1, 1000, u"exit"_s);
        exited.exitCode = 1;
        mergePython(&exited,
                    parsePythonTraceback(
                        u"Traceback (most recent call last):\n"
                        u"  File \"/job/train.py\", line 82, in <module>\n"
                        u"RuntimeError: DataLoader worker (pid 77) exited unexpectedly with exit "
                        u"code 3. Details are lost due to multiprocessing.\n"_s));
        QCOMPARE(exited.summary(), u"exit code 3 in DataLoader worker (pid 77) of rank 1"_s);
    }

    // A traceback that stopped short of the module (a handler printed it, or a thread's) did
    // not end the rank: a rank the launcher stopped stays stopped.
    void consequenceWithHandledTracebackStaysOne()
    {
        RankFailure f = failure(7, 1000, u"consequence"_s);
        f.signal = 15;
        const QList<PythonException> handled =
            parsePython(u"Traceback (most recent call last):\n"
                        u"  File \"/job/train.py\", line 12, in load\n"
                        u"    return int(x)\n"
                        u"ValueError: bad batch on rank 7\n"_s);
        QCOMPARE(handled.size(), 1);
        mergePython(&f, handled);
        QCOMPARE(f.kind, u"consequence"_s);
        QCOMPARE(f.summary(), u"stopped as a consequence, killed by SIGTERM (signal 15)"_s);
        QCOMPARE(f.python, handled);
    }

    void mergesPython()
    {
        QFETCH(QString, kind);
        QFETCH(QString, type);
        QFETCH(QString, message);
        QFETCH(bool, withChain);
        QFETCH(bool, withDump);
        QFETCH(QString, wantKind);
        QFETCH(QString, wantType);
        QFETCH(QString, wantMessage);
        QFETCH(QString, wantSummary);
        RankFailure f = failure(7, 1000, kind);
        f.exceptionType = type;
        f.message = message;
        f.exitCode = kind == u"exit"_s || kind == u"error"_s ? 1 : 0;
        if (kind == u"crash"_s || kind == u"signal"_s || kind == u"consequence"_s)
            f.signal = 11;
        const QList<PythonException> chain = withChain ? pythonChain(7) : QList<PythonException>();
        const PythonFaultDump dump = withDump ? pythonDump() : PythonFaultDump();
        mergePython(&f, chain, dump);
        QCOMPARE(f.kind, wantKind);
        QCOMPARE(f.exceptionType, wantType);
        QCOMPARE(f.message, wantMessage);
        QCOMPARE(f.summary(), wantSummary);
        QCOMPARE(f.python, chain);
        QCOMPARE(f.pythonDump, dump);
        const RankFailure once = f;
        mergePython(&f, chain, dump);
        QVERIFY(f == once); // idempotent
    }

    void printsPythonTraceback()
    {
        RankFailure root = failure(7, 1'000'000, QStringLiteral("exit"));
        root.exitCode = 1;
        mergePython(&root, pythonChain(7));
        RankFailure crashed = failure(3, 1'200'000, QStringLiteral("signal"));
        crashed.signal = 11;
        mergePython(&crashed, {}, pythonDump());
        const QString text = FailureReport::build({crashed, root}).toText();
        const QStringList lines = text.split(u'\n');
        QVERIFY2(lines.first().contains(u"rank 7"_s), qPrintable(text));
        QVERIFY2(text.contains(u"  what:    ValueError: bad batch on rank 7\n"_s),
                 qPrintable(text));
        // As Python prints it, outermost first, the user's innermost frame marked.
        const QString expected =
            u"    Traceback (most recent call last):\n"
            u"      File \"/job/train.py\", line 40, in <module>\n"
            u"        main()\n"
            u"    → File \"/job/train.py\", line 12, in load\n"
            u"        return int(x)\n"
            u"      File \"/venv/lib/python3.11/site-packages/torch/x.py\", line 5, in wrap\n"
            u"        return f()\n"
            u"    ValueError: bad batch on rank 7\n"_s;
        QVERIFY2(text.contains(expected), qPrintable(text));
        // The crashed rank's Python stacks, its own frame marked in the current thread.
        QVERIFY2(
            text.contains(u"      Python stacks at the fatal error (faulthandler) (→ marks "_s),
            qPrintable(text));
        QVERIFY2(text.contains(u"        Fatal Python error: Segmentation fault\n"_s),
                 qPrintable(text));
        QVERIFY2(text.contains(u"        → File \"/job/model.py\", line 8 in forward\n"_s),
                 qPrintable(text));
        QVERIFY2(!text.contains(u"stack:   none"_s), qPrintable(text));
        QVERIFY2(!text.contains(u" \n"_s), qPrintable(text)); // no trailing blanks
        // Python first, then native frames.
        RankFailure both = root;
        both.stack = kSegvStack;
        const QString t2 = FailureReport::build({both}).toText();
        QVERIFY2(t2.indexOf(u"Traceback"_s) < t2.indexOf(u"#0 0x"_s), qPrintable(t2));
    }

    void formatsRankRanges_data()
    {
        QTest::addColumn<QList<int>>("ranks");
        QTest::addColumn<QString>("text");
        QTest::newRow("ranges") << QList<int>{1, 2, 3, 5, 7, 8, 9} << u"1–3, 5, 7–9"_s;
        QTest::newRow("unsorted, twice") << QList<int>{9, 3, 2, 3, 1} << u"1–3, 9"_s;
        QTest::newRow("one") << QList<int>{4} << u"4"_s;
        QTest::newRow("pair") << QList<int>{4, 5} << u"4–5"_s;
        QTest::newRow("none") << QList<int>{} << QString();
    }

    void formatsRankRanges()
    {
        QFETCH(QList<int>, ranks);
        QFETCH(QString, text);
        QCOMPARE(formatRankRanges(ranks), text);
    }

    // 200 ranks: rank 0 fails on its own, 198 echo it with the same traceback (their ports and
    // rank ids differ), rank 57 is killed without one.
    void groupsTwoHundredRanks()
    {
        QList<RankFailure> observed;
        for (int r = 199; r >= 0; --r) {
            RankFailure f = failure(r, 1'000'000 + r * 10, QStringLiteral("exit"));
            f.exitCode = 1;
            if (r == 0) {
                mergePython(&f, pythonChain(0));
            } else if (r == 57) {
                f.kind = QStringLiteral("consequence");
                f.exitCode = 0;
                f.signal = 9;
            } else {
                mergePython(&f,
                            parsePython(u"Traceback (most recent call last):\n"
                                        u"  File \"/job/train.py\", line 30, in step\n"
                                        u"    dist.all_reduce(t)\n"
                                        u"RuntimeError: [../third_party/gloo/gloo/transport/tcp/"
                                        u"pair.cc:561] Connection closed by peer [10.0.0.%1]:%2\n"_s
                                            .arg(r % 8)
                                            .arg(20000 + r)));
                f.kind = QStringLiteral("consequence");
                f.reason =
                    QStringLiteral("a peer failed first (this rank's own exception followed)");
            }
            observed << f;
        }
        const FailureReport report = FailureReport::build(observed);
        const QList<FailureGroup> groups = report.groups();
        QCOMPARE(groups.size(), 3);
        QCOMPARE(groups[0].ranks, QList<int>{0});
        QVERIFY(groups[0].representative.rootCause);
        QList<int> echoes;
        for (int r = 1; r < 200; ++r)
            if (r != 57)
                echoes << r;
        QCOMPARE(groups[1].ranks, echoes);
        QCOMPARE(groups[1].representative.rank, 1); // the earliest
        QCOMPARE(groups[2].ranks, QList<int>{57});
        const QString text = report.toText();
        QVERIFY2(
            text.contains(u"      ranks 1–56, 58–199: same traceback as rank 1 (198 ranks)\n"_s),
            qPrintable(text));
        QCOMPARE(text.count(u"Traceback (most recent call last)"_s), 2);
        QCOMPARE(text.count(u"\n  rank "_s), 2); // rank 1 and rank 57
        QVERIFY2(text.size() < 4000, qPrintable(text));

        // The root cause is its own group even when others failed just like it.
        QList<RankFailure> same;
        for (int r = 0; r < 4; ++r) {
            RankFailure f = failure(r, 1000 + r, QStringLiteral("exit"));
            f.exitCode = 1;
            mergePython(&f, pythonChain(r));
            same << f;
        }
        const QList<FailureGroup> g2 = FailureReport::build(same).groups();
        QCOMPARE(g2.size(), 2);
        QCOMPARE(g2[0].ranks, QList<int>{0});
        QCOMPARE(g2[1].ranks, (QList<int>{1, 2, 3}));
        // ... but the others say that they died as it did, without its traceback again
        // (issue 27: every FSDP2 rank's identical ValueError was printed in full).
        QVERIFY(!g2[0].sameAsRoot);
        QVERIFY(g2[1].sameAsRoot);
        const QString sameText = FailureReport::build(same).toText();
        QVERIFY2(
            sameText.contains(QRegularExpression(
                u"\\n  rank 1 \\(local rank 1\\) on [^,]+, \\+0\\.000 s: same traceback as rank 0 "
                u"above\\n      ranks 1–3: same traceback as rank 0 above \\(3 ranks\\)\\n"_s)),
            qPrintable(sameText));
        QCOMPARE(sameText.count(u"Traceback (most recent call last)"_s), 1);
        // Stopped by the launcher's SIGTERM after it printed the same traceback: still the same.
        RankFailure stopped = same[1];
        stopped.exitCode = 0;
        stopped.signal = 15;
        stopped.signalName = u"SIGTERM"_s;
        const QString stoppedText = FailureReport::build({same[0], stopped}).toText();
        QVERIFY2(stoppedText.contains(u": same traceback as rank 0 above; then killed by SIGTERM "
                                      u"(signal 15)\n"_s),
                 qPrintable(stoppedText));
        // A different frame, or a different type, is another group.
        RankFailure other = same[3];
        other.python.last().frames.first().line = 13;
        RankFailure typed = same[2];
        typed.python.last().type = u"TypeError"_s;
        QCOMPARE(FailureReport::build({same[0], same[1], typed, other}).groups().size(), 4);
    }

    // The rank's error event and its exit (with the traceback found in its stderr) are one
    // entry: an uncaught Python exception.
    void mergesPythonAcrossRecords()
    {
        RankFailure event = failure(4, 1000, QStringLiteral("error"));
        event.exitCode = 1;
        event.message = QStringLiteral("program exited with code 1");
        RankFailure exited = failure(4, 1200, QStringLiteral("exit"));
        exited.exitCode = 1;
        exited.python = pythonChain(4);
        const FailureReport report = FailureReport::build({event, exited});
        QCOMPARE(report.failures.size(), 1);
        const RankFailure &f = report.failures.first();
        QCOMPARE(f.kind, u"exception"_s);
        QCOMPARE(f.exceptionType, u"ValueError"_s);
        QCOMPARE(f.message, u"bad batch on rank 4"_s);
        QCOMPARE(f.timeUs, qint64(1000));
        QCOMPARE(f.python, pythonChain(4));
    }

    void roundTripsPythonThroughJson()
    {
        RankFailure root = failure(2, 123456789, QStringLiteral("exit"));
        root.exitCode = 1;
        mergePython(&root, pythonChain(2));
        RankFailure crashed = failure(0, 123456999, QStringLiteral("crash"));
        crashed.signal = 11;
        mergePython(&crashed, {}, pythonDump());
        const FailureReport report = FailureReport::build({crashed, root});
        const QByteArray bytes = QJsonDocument(report.toJson()).toJson();
        const FailureReport back = FailureReport::fromJson(QJsonDocument::fromJson(bytes).object());
        QCOMPARE(back.failures.size(), 2);
        for (qsizetype i = 0; i < back.failures.size(); ++i)
            QVERIFY(back.failures[i] == report.failures[i]);
        QCOMPARE(back.toText(), report.toText());
        // A record from before Python support still loads, with neither.
        const QByteArray old = R"({"schema_version": 1, "failures": [{"rank": 1, "kind": "exit",
            "exit_code": 3, "time_us": 5, "root_cause": true, "stack": []}]})";
        const FailureReport oldReport =
            FailureReport::fromJson(QJsonDocument::fromJson(old).object());
        QCOMPARE(oldReport.failures.size(), 1);
        QVERIFY(oldReport.failures.first().python.isEmpty());
        QVERIFY(oldReport.failures.first().pythonDump.isEmpty());
        QCOMPARE(oldReport.failures.first().summary(), u"exit code 3"_s);
        QVERIFY(!oldReport.failures.first().toJson().contains(u"python"_s));
    }
};

QTEST_GUILESS_MAIN(TestFailureReport)
#include "tst_failurereport.moc"
