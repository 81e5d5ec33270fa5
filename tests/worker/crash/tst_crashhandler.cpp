// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's crash handler, end to end in a real process (crashhelper links the same
// rankdeck_crash library as rankdeck-worker): every fatal fault gives
// one crash event with the right signal or exception, its message and a symbolized stack that
// names the faulting function, the same report in <runDir>/crash-rank<R>.txt, and death by the
// signal; stack dumps arrive while the process keeps running.
#include "diagnosis/failurereport.h"

#include "wire/wireprotocol.h"

#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// The helper's executable is the "own" module of its stacks, as rankdeck-worker is in a run.
const QString kOwnModule = QStringLiteral("crashhelper");

struct Output
{
    QList<QJsonObject> events;
    QStringList logLines;
};

Output parseOutput(const QByteArray &bytes)
{
    Output out;
    for (const QByteArray &line : bytes.split('\n')) {
        const auto m = wire::findWireEvent(std::string_view(line.constData(), size_t(line.size())));
        if (m.valid) {
            out.events << QJsonDocument::fromJson(
                              QByteArray(m.json.data(), qsizetype(m.json.size())))
                              .object();
            if (m.markerPos > 0)
                out.logLines << QString::fromUtf8(line.left(qsizetype(m.markerPos)));
        } else if (!line.isEmpty()) {
            out.logLines << QString::fromUtf8(line);
        }
    }
    return out;
}

QList<QJsonObject> eventsOfType(const Output &out, std::string_view type)
{
    QList<QJsonObject> list;
    for (const QJsonObject &e : out.events)
        if (e.value(QStringLiteral("t")).toString() ==
            QLatin1String(type.data(), qsizetype(type.size())))
            list << e;
    return list;
}

class Helper
{
public:
    Helper(const QStringList &args,
           const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment(),
           const QString &program = QStringLiteral(RANKDECK_CRASHHELPER))
    {
        m_process.setProgram(program);
        m_process.setArguments(args);
        m_process.setProcessEnvironment(env);
        QObject::connect(&m_process, &QProcess::readyReadStandardOutput,
                         [this] { m_stdout += m_process.readAllStandardOutput(); });
        QObject::connect(&m_process, &QProcess::readyReadStandardError,
                         [this] { m_stderr += m_process.readAllStandardError(); });
        m_process.start();
        if (m_process.waitForStarted(10000))
            m_pid = m_process.processId();
    }
    ~Helper()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    QProcess &process() { return m_process; }
    qint64 pid() const { return m_pid; }
    const QByteArray &out() const { return m_stdout; }
    const QByteArray &err() const { return m_stderr; }
    bool finish(int ms = 30000)
    {
        const bool ok = m_process.waitForFinished(ms);
        m_stdout += m_process.readAllStandardOutput();
        m_stderr += m_process.readAllStandardError();
        return ok;
    }

private:
    QProcess m_process;
    QByteArray m_stdout;
    QByteArray m_stderr;
    qint64 m_pid = 0;
};

} // namespace

class TestCrashHandler : public QObject
{
    Q_OBJECT
private slots:
    void fatalFaults_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<int>("signal");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("name");     // signal name or exception type
        QTest::addColumn<QString>("function"); // where it faulted
        QTest::addColumn<QString>("message");  // part of the message
        QTest::newRow("segv") << "segv" << SIGSEGV << "crash"
                              << "SIGSEGV"
                              << "crashWithSegv"
                              << "Segmentation fault";
        QTest::newRow("abort") << "abort" << SIGABRT << "crash"
                               << "SIGABRT"
                               << "crashWithAbort"
                               << "Aborted";
        QTest::newRow("fpe") << "fpe" << SIGFPE << "crash"
                             << "SIGFPE"
                             << "crashWithFpe"
                             << "divide by zero";
        QTest::newRow("throw") << "throw" << SIGABRT << "exception"
                               << "std::runtime_error"
                               << "throwRuntimeError"
                               << "injected fault: std::runtime_error thrown at step 3";
        QTest::newRow("torch-check") << "torch-check" << SIGABRT << "exception"
                                     << "c10::Error"
                                     << "failTorchCheck"
                                     << "injected fault: TORCH_CHECK failed at step 3";
    }
    void fatalFaults()
    {
        QFETCH(QString, fault);
        QFETCH(int, signal);
        QFETCH(QString, kind);
        QFETCH(QString, name);
        QFETCH(QString, function);
        QFETCH(QString, message);
        QTemporaryDir runDir;
        QVERIFY(runDir.isValid());
        Helper h({u"--rank"_s, u"1"_s, u"--run-dir"_s, runDir.path(), u"--fault"_s, fault + u"@3"_s,
                  u"--fault-rank"_s, u"1"_s, u"--steps"_s, u"10"_s, u"--step-delay-ms"_s, u"1"_s});
        QVERIFY(h.finish());
        QCOMPARE(h.process().exitStatus(), QProcess::CrashExit);
        QCOMPARE(h.process().exitCode(), signal); // QProcess reports the terminating signal

        const Output out = parseOutput(h.out());
        const QList<QJsonObject> crashes = eventsOfType(out, wire::event::Crash);
        QCOMPARE(crashes.size(), 1);
        const RankFailure f = failureFromCrashEvent(crashes.first());
        QCOMPARE(f.rank, 1);
        QCOMPARE(f.kind, kind);
        if (kind == QLatin1String("crash")) {
            QCOMPARE(f.signalName, name);
            QCOMPARE(f.signal, signal);
        } else {
            QCOMPARE(f.exceptionType, name);
            // c10::Error's own backtrace is left out: the report has a better one.
            QVERIFY2(!f.message.contains(QLatin1String("frame #")), qPrintable(f.message));
        }
        QVERIFY2(f.message.contains(message), qPrintable(f.message));
        QCOMPARE(f.pid, h.pid());
        QVERIFY(f.thread.contains(QLatin1String("main thread")));

        // The stack names the faulting function, symbolized with its source line, and the first
        // frame of the program's own code is that function.
        const QString stack = f.stack.join(QLatin1Char('\n'));
        QVERIFY2(stack.contains(function), qPrintable(stack));
        QVERIFY2(stack.contains(QLatin1String("trainOneStep")), qPrintable(stack));
        QVERIFY2(f.firstOwnFrame >= 0, qPrintable(stack));
        const FrameParts own = parseFrame(f.stack.at(f.firstOwnFrame));
        QVERIFY2(own.function.contains(function), qPrintable(f.stack.at(f.firstOwnFrame)));
        QVERIFY2(own.file.endsWith(QLatin1String("worker/crash/faultinjection.cpp")),
                 qPrintable(own.file));
        QVERIFY(own.line > 0);
        QCOMPARE(own.module, kOwnModule);
        QCOMPARE(firstOwnFrame(f.stack, kOwnModule), f.firstOwnFrame);

        // Nothing printed before the fault is lost, and the training stopped at the fault.
        for (int step = 0; step < 3; ++step)
            QVERIFY2(out.logLines.contains(QStringLiteral("Rank 1: Epoch %1, Loss %2")
                                               .arg(step)
                                               .arg(1.0 / (1 + step), 0, 'f', 6)),
                     qPrintable(out.logLines.join(QLatin1Char('\n'))));
        QVERIFY(!out.logLines.join(QLatin1Char('\n')).contains(QLatin1String("Epoch 3,")));

        // The same report on disk, for when the connection to the node is lost.
        QCOMPARE(f.reportPath, runDir.filePath(QStringLiteral("crash-rank1.txt")));
        QFile file(f.reportPath);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY(failureFromCrashReportFile(text) == f);
        QVERIFY(text.contains(function.toUtf8()));
        // And for people, on stderr.
        QVERIFY2(h.err().contains(function.toUtf8()), h.err().constData());
        QVERIFY2(h.err().contains(name.toUtf8()), h.err().constData());
    }

    // Without the symbolizer the report still arrives, with module+offset frames.
    void rawReportWithoutSymbolizer()
    {
        QTemporaryDir runDir;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("RANKDECK_CRASH_RAW"), QStringLiteral("1"));
        Helper h({u"--rank"_s, u"2"_s, u"--run-dir"_s, runDir.path(), u"--fault"_s, u"segv@1"_s,
                  u"--fault-rank"_s, u"2"_s, u"--step-delay-ms"_s, u"1"_s},
                 env);
        QVERIFY(h.finish());
        QCOMPARE(h.process().exitStatus(), QProcess::CrashExit);
        QCOMPARE(h.process().exitCode(), SIGSEGV);
        const QList<QJsonObject> crashes = eventsOfType(parseOutput(h.out()), wire::event::Crash);
        QCOMPARE(crashes.size(), 1);
        const RankFailure f = failureFromCrashEvent(crashes.first());
        QCOMPARE(f.rank, 2);
        QCOMPARE(f.signalName, QStringLiteral("SIGSEGV"));
        QVERIFY(f.stack.size() >= 2);
        const FrameParts top = parseFrame(f.stack.first());
        QCOMPARE(top.module, kOwnModule);
        QVERIFY2(f.stack.first().contains(QLatin1String("[crashhelper+0x")),
                 qPrintable(f.stack.first()));
        QVERIFY(QFile::exists(runDir.filePath(QStringLiteral("crash-rank2.txt"))));
    }

    // A fault on another thread than main: that thread is named, and its stack is reported.
    void crashOnWorkerThread_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<int>("signal");
        QTest::addColumn<QString>("function");
        QTest::newRow("segv") << "segv" << SIGSEGV << "crashWithSegv";
        QTest::newRow("throw") << "throw" << SIGABRT << "throwRuntimeError";
    }
    void crashOnWorkerThread()
    {
        QFETCH(QString, fault);
        QFETCH(int, signal);
        QFETCH(QString, function);
        Helper h({u"--rank"_s, u"0"_s, u"--fault"_s, fault + u"@1"_s, u"--fault-rank"_s, u"0"_s,
                  u"--step-delay-ms"_s, u"1"_s, u"--train-thread"_s});
        QVERIFY(h.finish());
        QCOMPARE(h.process().exitStatus(), QProcess::CrashExit);
        QCOMPARE(h.process().exitCode(), signal);
        const QList<QJsonObject> crashes = eventsOfType(parseOutput(h.out()), wire::event::Crash);
        QCOMPARE(crashes.size(), 1);
        const RankFailure f = failureFromCrashEvent(crashes.first());
        QVERIFY2(f.thread.startsWith(QLatin1String("rdk-train (tid ")), qPrintable(f.thread));
        QVERIFY(!f.thread.contains(QLatin1String("main thread")));
        QVERIFY(f.firstOwnFrame >= 0);
        QVERIFY2(f.stack.at(f.firstOwnFrame).contains(function),
                 qPrintable(f.stack.join(QLatin1Char('\n'))));
    }

    // The binary was replaced on disk while it ran (a redeploy): still symbolized.
    void crashAfterBinaryWasDeleted()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("crashhelper"));
        QVERIFY(QFile::copy(QStringLiteral(RANKDECK_CRASHHELPER), copy));
        QVERIFY(QFile::setPermissions(copy, QFile::ReadOwner | QFile::ExeOwner));
        Helper h({u"--rank"_s, u"0"_s, u"--fault"_s, u"segv@3"_s, u"--fault-rank"_s, u"0"_s,
                  u"--step-delay-ms"_s, u"200"_s},
                 QProcessEnvironment::systemEnvironment(), copy);
        QTRY_VERIFY_WITH_TIMEOUT(h.out().contains("Epoch 0,"), 20000);
        QVERIFY(QFile::remove(copy));
        QVERIFY(h.finish());
        QCOMPARE(h.process().exitCode(), SIGSEGV);
        const QList<QJsonObject> crashes = eventsOfType(parseOutput(h.out()), wire::event::Crash);
        QCOMPARE(crashes.size(), 1);
        const RankFailure f = failureFromCrashEvent(crashes.first());
        QVERIFY2(f.firstOwnFrame >= 0, qPrintable(f.stack.join(QLatin1Char('\n'))));
        const FrameParts own = parseFrame(f.stack.at(f.firstOwnFrame));
        QVERIFY2(own.function.contains(QLatin1String("crashWithSegv")),
                 qPrintable(f.stack.join(QLatin1Char('\n'))));
        QCOMPARE(own.module, kOwnModule);
        QVERIFY(own.line > 0);
    }

    void exitFault()
    {
        Helper h({u"--rank"_s, u"1"_s, u"--fault"_s, u"exit:7@2"_s, u"--fault-rank"_s, u"1"_s,
                  u"--step-delay-ms"_s, u"1"_s});
        QVERIFY(h.finish());
        QCOMPARE(h.process().exitStatus(), QProcess::NormalExit);
        QCOMPARE(h.process().exitCode(), 7);
        const Output out = parseOutput(h.out());
        QVERIFY(eventsOfType(out, wire::event::Crash).isEmpty());
        QVERIFY(out.logLines.contains(QStringLiteral("Rank 1: Epoch 1, Loss 0.500000")));
    }

    void otherRanksAreUntouched()
    {
        Helper h({u"--rank"_s, u"0"_s, u"--fault"_s, u"segv@2"_s, u"--fault-rank"_s, u"1"_s,
                  u"--steps"_s, u"5"_s, u"--step-delay-ms"_s, u"1"_s});
        QVERIFY(h.finish());
        QCOMPARE(h.process().exitStatus(), QProcess::NormalExit);
        QCOMPARE(h.process().exitCode(), 0);
        QVERIFY(parseOutput(h.out()).logLines.contains(QStringLiteral("Rank 0: done")));
    }

    // SIGUSR1: every thread's stack, and the process goes on training.
    void stackDumpKeepsRunning()
    {
        QTemporaryDir runDir;
        Helper h({u"--rank"_s, u"0"_s, u"--run-dir"_s, runDir.path(), u"--steps"_s, u"100000"_s,
                  u"--step-delay-ms"_s, u"20"_s});
        QTRY_VERIFY_WITH_TIMEOUT(h.out().contains("Epoch 2,"), 20000);
        QCOMPARE(::kill(pid_t(h.pid()), SIGUSR1), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!eventsOfType(parseOutput(h.out()), wire::event::Stacks).isEmpty(),
                                 20000);

        const Output out = parseOutput(h.out());
        const QJsonObject ev = eventsOfType(out, wire::event::Stacks).first();
        QCOMPARE(ev.value(QStringLiteral("reason")).toString(), QStringLiteral("SIGUSR1"));
        QCOMPARE(ev.value(QStringLiteral("rank")).toInt(), 0);
        const QList<ThreadStack> threads = threadStacksFromEvent(ev);
        QVERIFY2(threads.size() >= 2, qPrintable(ev.value(QStringLiteral("stack")).toString()));
        int mains = 0;
        for (const ThreadStack &t : threads) {
            if (!t.mainThread)
                continue;
            ++mains;
            QCOMPARE(t.tid, h.pid());
            QVERIFY2(t.frames.join(QLatin1Char('\n')).contains(QLatin1String("main")),
                     qPrintable(t.frames.join(QLatin1Char('\n'))));
        }
        QCOMPARE(mains, 1);
        QVERIFY(QFile::exists(runDir.filePath(QStringLiteral("stacks-rank0.txt"))));

        // Still training: a step after the dump.
        const qsizetype seen = h.out().size();
        QTRY_VERIFY_WITH_TIMEOUT(h.out().mid(seen).contains("Epoch"), 20000);
        QCOMPARE(h.process().state(), QProcess::Running);
    }

    // hang: the rank stops stepping but keeps its heartbeats; its dump shows where it waits.
    void hangDumpShowsWhereItWaits()
    {
        Helper h({u"--rank"_s, u"1"_s, u"--fault"_s, u"hang@2"_s, u"--fault-rank"_s, u"1"_s,
                  u"--steps"_s, u"100"_s, u"--step-delay-ms"_s, u"1"_s});
        QTRY_VERIFY_WITH_TIMEOUT(h.err().contains("injecting fault hang@2"), 20000);
        // Heartbeats go on after the hang began.
        const qsizetype hangStart = h.out().size();
        QTRY_VERIFY_WITH_TIMEOUT(
            eventsOfType(parseOutput(h.out().mid(hangStart)), wire::event::Heartbeat).size() >= 2,
            20000);
        QCOMPARE(::kill(pid_t(h.pid()), SIGUSR1), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!eventsOfType(parseOutput(h.out()), wire::event::Stacks).isEmpty(),
                                 20000);

        const Output out = parseOutput(h.out());
        QVERIFY(!out.logLines.join(QLatin1Char('\n')).contains(QLatin1String("Epoch 2,")));
        const QList<ThreadStack> threads =
            threadStacksFromEvent(eventsOfType(out, wire::event::Stacks).first());
        QStringList mainFrames;
        for (const ThreadStack &t : threads)
            if (t.mainThread)
                mainFrames = t.frames;
        const QString where = waitLocation(mainFrames, kOwnModule);
        QVERIFY2(where.contains(QLatin1String("hangWithoutJoiningCollectives")),
                 qPrintable(mainFrames.join(QLatin1Char('\n'))));
        QVERIFY(!waitsInCollective(mainFrames));
        QCOMPARE(h.process().state(), QProcess::Running);
    }
};

QTEST_GUILESS_MAIN(TestCrashHandler)
#include "tst_crashhandler.moc"
