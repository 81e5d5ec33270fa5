// SPDX-License-Identifier: GPL-3.0-or-later
// FailureReport: root cause selection, per-rank merging, text and JSON, and reading the
// worker's crash/stacks events (made here with the worker's own WireEventWriter).
#include "run/failurereport.h"

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

} // namespace

class TestFailureReport : public QObject
{
    Q_OBJECT
private slots:
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
};

QTEST_GUILESS_MAIN(TestFailureReport)
#include "tst_failurereport.moc"
