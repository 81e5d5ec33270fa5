// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for the supervisor's crash
// reports, each case a real program that dies.
// What killed a rank of the user's own program, and where, as rankdeck-supervisor reports it:
// the real supervisor runs small programs (Python via RANKDECK_TORCH_PYTHON, and a native
// program built with -g) that segfault, abort, are SIGKILLed or OOM-killed, write torchelastic's
// error file, hang while the launcher asks for their stacks, or are stopped and end their own
// way (killed by the stop's SIGTERM, or an exit code of their own). Every case checks the event
// fields the launcher reads, and that no process of the run is left.
#include "testprocesses.h"
#include "wire/wireprotocol.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace {

qint64 wallUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

QString python()
{
    const QString p = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    return p.isEmpty() ? QStringLiteral("python3") : p;
}

QString program(const QString &name)
{
    return QStringLiteral(RANKDECK_SUPERVISOR_PROGRAMS "/") + name;
}

QString supervisorBinary()
{
    return qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-supervisor");
}

// The 1-based line of `programs/<file>` that contains `text`.
int lineOf(const QString &file, const QString &text)
{
    QFile f(program(file));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QStringList lines = QString::fromUtf8(f.readAll()).split(u'\n');
    for (int i = 0; i < lines.size(); ++i)
        if (lines[i].contains(text))
            return i + 1;
    return -1;
}

// One supervised run: stdout split into events (with the wall time each line arrived) and log
// lines, stderr kept whole.
class Run
{
public:
    Run(const QString &runDir, const QStringList &command,
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment(),
        const QString &wrapper = {})
    {
        QStringList args{u"--control-stdin"_s, u"--run-dir"_s, runDir,
                         u"--stop-grace-ms"_s, u"2000"_s,      u"--"_s};
        args += command;
        env.insert(u"RANK"_s, u"0"_s);
        env.insert(u"MASTER_PORT"_s, u"29999"_s);
        m_process.setProcessEnvironment(env);
        if (wrapper.isEmpty()) {
            m_process.setProgram(supervisorBinary());
            m_process.setArguments(args);
        } else {
            // A shell that moves itself into a cgroup first, then becomes the supervisor.
            m_process.setProgram(u"/bin/sh"_s);
            m_process.setArguments(
                QStringList{u"-c"_s, wrapper + u" && exec \"$0\" \"$@\""_s, supervisorBinary()} +
                args);
        }
        QObject::connect(&m_process, &QProcess::readyReadStandardOutput, [this] { readOut(); });
        QObject::connect(&m_process, &QProcess::readyReadStandardError,
                         [this] { m_stderr += m_process.readAllStandardError(); });
        m_process.start();
    }
    ~Run()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    void send(const QByteArray &line) { m_process.write(line + '\n'); }
    bool finish(int ms = 30000)
    {
        // stdin stays open: its end would mean the launcher is gone, and stop the program.
        const bool done = m_process.waitForFinished(ms);
        readOut();
        return done;
    }
    // Waits until an event of `type` (or a log line containing `text`) arrived.
    bool waitFor(std::function<bool()> ready, int ms = 20000)
    {
        QElapsedTimer t;
        t.start();
        while (!ready() && t.elapsed() < ms && m_process.state() != QProcess::NotRunning)
            m_process.waitForReadyRead(50);
        readOut();
        return ready();
    }
    QJsonObject event(QLatin1StringView type) const
    {
        for (const auto &e : m_events)
            if (e.first.value(u"t"_s).toString() == type)
                return e.first;
        return {};
    }
    qint64 arrivalUs(QLatin1StringView type) const
    {
        for (const auto &e : m_events)
            if (e.first.value(u"t"_s).toString() == type)
                return e.second;
        return 0;
    }
    bool hasLog(const QString &text) const
    {
        for (const QString &l : m_logLines)
            if (l.contains(text))
                return true;
        return false;
    }
    QString logLineStarting(const QString &prefix) const
    {
        for (const QString &l : m_logLines)
            if (l.startsWith(prefix))
                return l;
        return {};
    }
    QString stderrText() const { return QString::fromUtf8(m_stderr); }
    QProcess &process() { return m_process; }

private:
    void readOut()
    {
        m_stdout += m_process.readAllStandardOutput();
        qsizetype nl;
        while ((nl = m_stdout.indexOf('\n')) >= 0) {
            const QByteArray line = m_stdout.left(nl);
            m_stdout.remove(0, nl + 1);
            const auto m = rankdeck::wire::findWireEvent(
                std::string_view(line.constData(), size_t(line.size())));
            if (m.valid) {
                m_events.append(
                    {QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())))
                         .object(),
                     wallUs()});
                if (m.markerPos > 0)
                    m_logLines << QString::fromUtf8(line.left(qsizetype(m.markerPos)));
            } else {
                m_logLines << QString::fromUtf8(line);
            }
        }
    }

    QProcess m_process;
    QByteArray m_stdout;
    QByteArray m_stderr;
    QList<std::pair<QJsonObject, qint64>> m_events;
    QStringList m_logLines;
};

// The frame lines of a `stack` field.
QStringList frames(const QJsonObject &e)
{
    return e.value(u"stack"_s).toString().split(u'\n', Qt::SkipEmptyParts);
}

} // namespace

class TestSupervisorCrash : public QObject
{
    Q_OBJECT

private slots:
    void fatalSignal_data();
    void fatalSignal();
    void crashLatency();
    void errorFile_data();
    void errorFile();
    void dumpStacks_data();
    void dumpStacks();
    void userSitecustomizeStillRuns();
    void stopEndsAsTheProgramDid_data();
    void stopEndsAsTheProgramDid();
    void outOfMemoryKill();
    void tracingOverhead();
};

void TestSupervisorCrash::fatalSignal_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<bool>("noPtrace");
    QTest::addColumn<int>("signal");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("frameRegex"); // a frame that must be in the stack ("" none)
    QTest::addColumn<QString>("ownRegex");   // the frame own_frame must point at ("" → -1)
    QTest::addColumn<QString>("stderrText"); // Python's faulthandler dump

    const QString py = python();
    QTest::newRow("python segfault in ctypes")
        << QStringList{py, program(u"segfault.py"_s)} << false << int(SIGSEGV)
        << u"killed by SIGSEGV"_s << uR"(\[(libc\.so\.6|_ctypes[^\]]*)\]$)"_s << QString()
        << u"Fatal Python error: Segmentation fault"_s;
    QTest::newRow("python os.abort")
        << QStringList{py, program(u"abort.py"_s)} << false << int(SIGABRT)
        << u"killed by SIGABRT"_s << uR"( in abort .*\[libc\.so\.6\]$)"_s << QString()
        << u"Fatal Python error: Aborted"_s;
    // The same program as gcc writes it and as clang does by default, with no .debug_aranges:
    // the symbolizer then finds the unit by its ranges (same frames, same lines).
    const struct
    {
        const char *row;
        QString path;
    } natives[] = {
        {"native segfault in a named function", QStringLiteral(RANKDECK_NATIVECRASH)},
        {"native segfault, no .debug_aranges", QStringLiteral(RANKDECK_NATIVECRASH_NOARANGES)}};
    for (const auto &native : natives) {
        QTest::newRow(native.row)
            << QStringList{native.path} << false << int(SIGSEGV) << u"killed by SIGSEGV"_s
            << uR"( in victim::crashHere\(int\) at .*nativecrash\.cpp:\d+ )"_s
            << uR"(^#\d+ 0x[0-9a-f]+ in victim::writeThroughNull\(int volatile\*\) at .*nativecrash\.cpp:%1 \[%2\]$)"_s
                   .arg(lineOf(u"nativecrash.cpp"_s, u"the faulting line"_s))
                   .arg(QFileInfo(native.path).fileName())
            << QString();
    }
    QTest::newRow("SIGKILL") << QStringList{py, program(u"sigkill.py"_s)} << false << int(SIGKILL)
                             << u"was killed by SIGKILL"_s << QString() << QString() << QString();
    QTest::newRow("RANKDECK_NO_PTRACE=1: no stack, the same signal")
        << QStringList{py, program(u"segfault.py"_s)} << true << int(SIGSEGV)
        << u"killed by SIGSEGV"_s << QString() << QString()
        << u"Fatal Python error: Segmentation fault"_s;
}

void TestSupervisorCrash::fatalSignal()
{
    QFETCH(QStringList, command);
    QFETCH(bool, noPtrace);
    QFETCH(int, signal);
    QFETCH(QString, message);
    QFETCH(QString, frameRegex);
    QFETCH(QString, ownRegex);
    QFETCH(QString, stderrText);

    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (noPtrace)
        env.insert(u"RANKDECK_NO_PTRACE"_s, u"1"_s);
    Run run(dir.path(), command, env);
    QVERIFY(run.finish());
    QCOMPARE(run.process().exitStatus(), QProcess::CrashExit); // mirrors the program's death
    const QJsonObject crash = run.event("crash"_L1);
    QVERIFY2(!crash.isEmpty(), qPrintable(run.stderrText()));
    QCOMPARE(crash.value(u"signal"_s).toInt(), signal);
    QVERIFY2(crash.value(u"msg"_s).toString().contains(message),
             qPrintable(crash.value(u"msg"_s).toString()));
    QVERIFY(!crash.contains(u"oom"_s));
    const QStringList stack = frames(crash);
    if (frameRegex.isEmpty()) {
        QVERIFY2(stack.isEmpty(), qPrintable(stack.join(u'\n')));
    } else {
        const QRegularExpression frame(frameRegex);
        QVERIFY2(std::any_of(stack.begin(), stack.end(),
                             [&](const QString &f) { return frame.match(f).hasMatch(); }),
                 qPrintable(stack.join(u'\n')));
        QVERIFY(stack.first().startsWith(u"#0 0x"_s));
        QVERIFY2(crash.value(u"thread"_s).toString().contains(u", main thread)"_s),
                 qPrintable(crash.value(u"thread"_s).toString()));
        // The signal's time, not the exit's: before the supervisor's own reporting.
        QVERIFY(crash.value(u"ts"_s).toInteger() <= run.arrivalUs("crash"_L1));
        const int own = crash.value(u"own_frame"_s).toInt(-2);
        if (ownRegex.isEmpty()) {
            QCOMPARE(own, -1);
        } else {
            QVERIFY2(own >= 0 && own < stack.size(), qPrintable(QString::number(own)));
            QVERIFY2(QRegularExpression(ownRegex).match(stack[own]).hasMatch(),
                     qPrintable(stack[own]));
        }
    }
    if (!stderrText.isEmpty())
        QVERIFY2(run.stderrText().contains(stderrText), qPrintable(run.stderrText()));
    if (noPtrace)
        QVERIFY(!run.stderrText().contains(u"cannot trace"_s));
    const qint64 pid = crash.value(u"pid"_s).toInteger();
    QVERIFY(pid > 0);
    QVERIFY(!rankdeck::testing::processRuns(pid));
}

void TestSupervisorCrash::crashLatency()
{
    // Milliseconds from the program's last timestamp before the fault to the crash event line
    // arriving here, median of 5, for a native and a Python program.
    for (const QStringList &command : {QStringList{QStringLiteral(RANKDECK_NATIVECRASH)},
                                       QStringList{python(), program(u"segfault.py"_s)}}) {
        QList<double> ms;
        for (int i = 0; i < 5; ++i) {
            QTemporaryDir dir;
            Run run(dir.path(), command);
            QVERIFY(run.finish());
            const QString line = run.logLineStarting(u"fault-at-ns "_s);
            QVERIFY2(!line.isEmpty(), qPrintable(run.stderrText()));
            const qint64 faultUs = line.mid(12).trimmed().toLongLong() / 1000;
            const qint64 arrived = run.arrivalUs("crash"_L1);
            QVERIFY(arrived >= faultUs);
            QVERIFY(!frames(run.event("crash"_L1)).isEmpty());
            ms << double(arrived - faultUs) / 1000.0;
        }
        std::sort(ms.begin(), ms.end());
        qInfo("fatal signal → crash event line, %s: median %.1f ms (min %.1f, max %.1f)",
              qPrintable(QFileInfo(command.last()).fileName()), ms[2], ms.first(), ms.last());
        // No bound on the time here: how fast is bench/'s program_crash_report_ms (goal
        // <= 1,000 ms), where a loaded machine cannot fail a landing. This test holds that the
        // fault's time is stamped and a symbolized crash event comes, and prints the latency.
    }
}

void TestSupervisorCrash::errorFile_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("exception");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("traceback"); // text the python field must contain ("" absent)

    QTest::newRow("torchelastic @record format")
        << QStringList{program(u"elasticerror.py"_s)} << u"ValueError"_s << u"shard 7 is corrupt"_s
        << u"line 11, in load_shard\n    raise ValueError(\"shard %d is corrupt\" % index)"_s;
    QTest::newRow("plain format, unicode escapes")
        << QStringList{program(u"errorfile_raw.py"_s), u"plain"_s} << u"RuntimeError"_s
        << u"plain form é😀"_s << QString();
    for (const char *kind : {"invalid", "deep", "huge", "binary", "empty"})
        QTest::newRow(kind) << QStringList{program(u"errorfile_raw.py"_s),
                                           QString::fromLatin1(kind)}
                            << QString() << u"python3 exited with code 1"_s << QString();
}

void TestSupervisorCrash::errorFile()
{
    QFETCH(QStringList, args);
    QFETCH(QString, exception);
    QFETCH(QString, message);
    QFETCH(QString, traceback);

    QTemporaryDir dir;
    // A stale error file of an earlier attempt must not be reported.
    {
        QFile stale(dir.filePath(u"error-rank0.json"_s));
        QVERIFY(stale.open(QIODevice::WriteOnly));
        stale.write(R"({"message": "StaleError: from an earlier attempt"})");
    }
    Run run(dir.path(), QStringList{python()} + args);
    QVERIFY(run.finish());
    QCOMPARE(run.process().exitStatus(), QProcess::NormalExit);
    QCOMPARE(run.process().exitCode(), 1);
    const QJsonObject error = run.event("error"_L1);
    QVERIFY2(!error.isEmpty(), qPrintable(run.stderrText()));
    QCOMPARE(error.value(u"exit_code"_s).toInt(), 1);
    QCOMPARE(error.value(u"exception"_s).toString(), exception);
    if (exception.isEmpty())
        QVERIFY2(error.value(u"msg"_s).toString().endsWith(u"exited with code 1"_s),
                 qPrintable(error.value(u"msg"_s).toString()));
    else
        QCOMPARE(error.value(u"msg"_s).toString(), message);
    if (traceback.isEmpty()) {
        QVERIFY(!error.contains(u"python"_s));
    } else {
        const QString py = error.value(u"python"_s).toString();
        QVERIFY2(py.startsWith(u"Traceback (most recent call last):\n"_s), qPrintable(py));
        QVERIFY2(py.contains(traceback), qPrintable(py));
    }
    if (!exception.isEmpty())
        QCOMPARE(error.value(u"error_file"_s).toString(), dir.filePath(u"error-rank0.json"_s));
}

void TestSupervisorCrash::dumpStacks_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<int>("threads");            // native threads the dump must show
    QTest::addColumn<QStringList>("pythonText"); // lines the Python dump must hold ({} none)
    QTest::addColumn<QString>("nativeFrame");

    // Four threads: main, the program's second, and the startup hook's flight-recorder thread
    // (blocked in read() until dump-flight-recorder) and sampling thread (issue 43).
    QTest::newRow("python, nested sleep and a second thread")
        << QStringList{python(), program(u"hang.py"_s), u"2.5"_s} << 4
        << QStringList{uR"(File ".*hang\.py", line 16 in inner_sleep)"_s,
                       uR"(File ".*hang\.py", line 20 in outer)"_s,
                       uR"(File ".*hang\.py", line 12 in worker_sleeps)"_s,
                       u"^Current thread 0x"_s,
                       u"^Thread 0x"_s,
                       uR"(File ".*sitecustomize\.py", line \d+ in _rankdeck_fr_serve)"_s,
                       uR"(File ".*sitecustomize\.py", line \d+ in _rankdeck_sample)"_s}
        << uR"( in (__)?clock_nanosleep.*\[libc\.so\.6\]$)"_s;
    // A native program never gets the Python dump's signal (its default action would kill it).
    QTest::newRow("native /bin/sleep")
        << QStringList{u"/bin/sh"_s, u"-c"_s, u"echo ready; exec sleep 2.5"_s} << 1 << QStringList{}
        << uR"( in (__)?clock_nanosleep.*\[libc\.so\.6\]$)"_s;
}

void TestSupervisorCrash::dumpStacks()
{
    QFETCH(QStringList, command);
    QFETCH(int, threads);
    QFETCH(QStringList, pythonText);
    QFETCH(QString, nativeFrame);

    QTemporaryDir dir;
    Run run(dir.path(), command);
    QVERIFY(run.waitFor([&] { return run.hasLog(u"ready"_s); }));
    QTest::qWait(300); // both threads asleep
    QElapsedTimer t;
    t.start();
    run.send("dump-stacks");
    QVERIFY(run.waitFor([&] { return !run.event("stacks"_L1).isEmpty(); }, 5000));
    qInfo("dump-stacks answered in %lld ms", t.elapsed());
    const QJsonObject stacks = run.event("stacks"_L1);
    QCOMPARE(stacks.value(u"reason"_s).toString(), u"dump-stacks"_s);

    const QString native = stacks.value(u"stack"_s).toString();
    static const QRegularExpression header(uR"(^thread (\d+) \((.*)\):$)"_s,
                                           QRegularExpression::MultilineOption);
    int headers = 0;
    bool mainThread = false;
    for (auto it = header.globalMatch(native); it.hasNext();) {
        const auto m = it.next();
        ++headers;
        mainThread |= m.captured(2).endsWith(u", main thread"_s) &&
                      m.captured(1).toLongLong() == stacks.value(u"pid"_s).toInteger();
    }
    QVERIFY2(headers == threads && mainThread, qPrintable(native));
    QVERIFY2(QRegularExpression(nativeFrame, QRegularExpression::MultilineOption)
                 .match(native)
                 .hasMatch(),
             qPrintable(native));

    const QString py = stacks.value(u"python"_s).toString();
    if (pythonText.isEmpty())
        QVERIFY2(!stacks.contains(u"python"_s), qPrintable(py));
    for (const QString &line : pythonText)
        QVERIFY2(QRegularExpression(line, QRegularExpression::MultilineOption).match(py).hasMatch(),
                 qPrintable(line + u" in:\n"_s + py));

    // The last dump is kept on the node, as the worker's.
    const QString path = stacks.value(u"path"_s).toString();
    QCOMPARE(path, dir.filePath(u"stacks-rank0.txt"_s));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    QVERIFY(text.contains(native));
    if (!pythonText.isEmpty())
        QVERIFY(text.contains(py));

    // The program goes on undisturbed and ends normally.
    QVERIFY(run.finish());
    QCOMPARE(run.process().exitStatus(), QProcess::NormalExit);
    QCOMPARE(run.process().exitCode(), 0);
    QVERIFY(!run.event("finished"_L1).isEmpty());
    QVERIFY(run.event("crash"_L1).isEmpty());
    QVERIFY(!rankdeck::testing::processRuns(stacks.value(u"pid"_s).toInteger()));
}

void TestSupervisorCrash::userSitecustomizeStillRuns()
{
    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"PYTHONPATH"_s, program(u"user_sitecustomize"_s));
    Run run(dir.path(), {python(), program(u"hello.py"_s)}, env);
    QVERIFY(run.finish());
    QVERIFY2(run.hasLog(u"user-sitecustomize-ran"_s), qPrintable(run.stderrText()));
    QVERIFY(run.hasLog(u"sitecustomize is " RANKDECK_SUPERVISOR_PROGRAMS
                       "/user_sitecustomize/sitecustomize.py"_s));
    // …and the hook registered the stack dump before handing over.
    QVERIFY(QFile::exists(dir.filePath(u"python-stacks-rank0.ready"_s)));
    QVERIFY(!run.event("finished"_L1).isEmpty());
}

void TestSupervisorCrash::stopEndsAsTheProgramDid_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<bool>("bySignal"); // the supervisor mirrors the program's death by signal
    QTest::addColumn<int>("code");      // that signal, or its exit code
    QTest::addColumn<QString>("event"); // the final event it must send ("" none)

    // Issue 27, defect 2: every stopped rank was "exit code 0", whatever ended it.
    QTest::newRow("killed by the stop's SIGTERM")
        << u"default"_s << true << int(SIGTERM) << QString();
    QTest::newRow("its own exit code") << u"exit3"_s << false << 3 << u"error"_s;
    QTest::newRow("its own uncaught exception") << u"keyerror"_s << false << 1 << u"error"_s;
    QTest::newRow("ends cleanly when asked") << u"exit0"_s << false << 0 << QString();
}

void TestSupervisorCrash::stopEndsAsTheProgramDid()
{
    QFETCH(QString, mode);
    QFETCH(bool, bySignal);
    QFETCH(int, code);
    QFETCH(QString, event);
    QTemporaryDir dir;
    Run run(dir.path(), {python(), program(u"onstop.py"_s), mode});
    QVERIFY2(run.waitFor([&] { return run.hasLog(u"ready"_s); }, 60000),
             qPrintable(run.stderrText()));
    run.send("stop");
    QVERIFY(run.finish(60000));
    QVERIFY(!run.hasLog(u"never stopped"_s));
    QVERIFY(!run.event("stopping"_L1).isEmpty());
    QCOMPARE(run.process().exitStatus() == QProcess::CrashExit, bySignal);
    QCOMPARE(run.process().exitCode(), code);
    QVERIFY(run.event("finished"_L1).isEmpty());
    if (event.isEmpty()) {
        QVERIFY2(run.event("error"_L1).isEmpty(), qPrintable(run.stderrText()));
        QVERIFY(run.event("crash"_L1).isEmpty());
    } else {
        QCOMPARE(run.event(QLatin1StringView(event.toLatin1())).value(u"exit_code"_s).toInt(),
                 code);
    }
}

void TestSupervisorCrash::outOfMemoryKill()
{
    // A memory cgroup of our own with a small limit: v2 where the memory controller is there,
    // else v1 (a hybrid host). The supervisor moves in before it starts the program.
    QString group, limitFile, limit = QString::number(64 << 20);
    QString why;
    const QString v2 = u"/sys/fs/cgroup/rdk-tst-oom-%1"_s.arg(getpid());
    const QString v1 = u"/sys/fs/cgroup/memory/rdk-tst-oom-%1"_s.arg(getpid());
    QFile controllers(u"/sys/fs/cgroup/cgroup.controllers"_s);
    if (controllers.open(QIODevice::ReadOnly) && controllers.readAll().contains("memory") &&
        QDir().mkdir(v2)) {
        group = v2;
        limitFile = v2 + u"/memory.max"_s;
    } else if (QDir().mkdir(v1)) {
        group = v1;
        limitFile = v1 + u"/memory.limit_in_bytes"_s;
    } else {
        QSKIP("cannot create a memory cgroup here (neither /sys/fs/cgroup with the memory "
              "controller nor /sys/fs/cgroup/memory is writable)");
    }
    auto cleanup = qScopeGuard([&] {
        for (int i = 0; i < 50 && !QDir().rmdir(group); ++i)
            QTest::qWait(100);
    });
    QFile lim(limitFile);
    QVERIFY(lim.open(QIODevice::WriteOnly));
    QVERIFY(lim.write(limit.toLatin1()) > 0);
    lim.close();

    QTemporaryDir dir;
    Run run(dir.path(), {python(), program(u"oom.py"_s)}, QProcessEnvironment::systemEnvironment(),
            u"echo $$ > "_s + group + u"/cgroup.procs"_s);
    QVERIFY(run.finish(60000));
    const QJsonObject crash = run.event("crash"_L1);
    QVERIFY2(!crash.isEmpty(), qPrintable(run.stderrText()));
    QCOMPARE(crash.value(u"signal"_s).toInt(), int(SIGKILL));
    QCOMPARE(crash.value(u"oom"_s).toBool(), true);
    QVERIFY2(crash.value(u"msg"_s).toString().contains(u"killed by the out-of-memory killer"_s),
             qPrintable(crash.value(u"msg"_s).toString()));
    QVERIFY(!run.hasLog(u"survived"_s));
}

void TestSupervisorCrash::tracingOverhead()
{
    // Many threads (a clone event each) and many lines, traced and not: tracing must not make
    // the program noticeably slower.
    auto timed = [&](bool traced) {
        QTemporaryDir dir;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!traced)
            env.insert(u"RANKDECK_NO_PTRACE"_s, u"1"_s);
        QElapsedTimer t;
        t.start();
        Run run(dir.path(), {python(), program(u"manythreads.py"_s), u"1000"_s, u"200000"_s}, env);
        if (!run.finish(120000) || run.event("finished"_L1).isEmpty())
            return -1.0;
        return double(t.elapsed());
    };
    QList<double> plain, traced;
    for (int i = 0; i < 3; ++i) {
        plain << timed(false);
        traced << timed(true);
    }
    std::sort(plain.begin(), plain.end());
    std::sort(traced.begin(), traced.end());
    QVERIFY(plain.first() > 0 && traced.first() > 0);
    qInfo("1000 threads + 200000 lines: untraced median %.0f ms, traced median %.0f ms", plain[1],
          traced[1]);
    QVERIFY2(traced[1] < plain[1] * 2.0 + 500.0, "tracing slows the program down too much");
}

QTEST_GUILESS_MAIN(TestSupervisorCrash)
#include "tst_supervisorcrash.moc"
