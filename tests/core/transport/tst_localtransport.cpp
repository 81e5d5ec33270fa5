// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for one transport, case by case.
//
// LocalTransport with real child processes: /bin/sh scripts for the process-level contract
// (streams, stdin, exit status, signals, process groups, start failures) and the scripted worker
// for the control channel of the real launch contract.
#include "transport/localtransport.h"

#include "util/clock.h"
#include "util/processidentity.h"

#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <csignal>
#include <memory>
#include <unistd.h>

using namespace rankdeck;
using rankdeck::testing::processRuns;

namespace {

// Everything a transport reported, per rank, in arrival order.
struct Recorder
{
    struct RankLog
    {
        QList<qint64> pids;
        QByteArray out;
        QByteArray err;
        QList<RankExit> exits;
        // Bytes of stdout / stderr seen when the first exit came.
        qint64 outAtExit = -1;
        qint64 errAtExit = -1;
    };
    QHash<int, RankLog> ranks;

    explicit Recorder(Transport *t)
    {
        QObject::connect(t, &Transport::rankStarted, t,
                         [this](int rank, qint64 pid) { ranks[rank].pids.append(pid); });
        QObject::connect(t, &Transport::rankOutput, t,
                         [this](int rank, StreamKind s, const QByteArray &chunk) {
                             QVERIFY(!chunk.isEmpty());
                             (s == StreamKind::Stdout ? ranks[rank].out : ranks[rank].err) += chunk;
                         });
        QObject::connect(t, &Transport::rankExited, t, [this](int rank, const RankExit &e) {
            RankLog &r = ranks[rank];
            if (r.exits.isEmpty()) {
                r.outAtExit = r.out.size();
                r.errAtExit = r.err.size();
            }
            r.exits.append(e);
        });
    }
};

RankLaunchSpec shellRank(int rank, const QString &script, const QStringList &args = {})
{
    RankLaunchSpec s;
    s.rank = rank;
    s.program = QStringLiteral("/bin/sh");
    s.arguments =
        QStringList{QStringLiteral("-c"), script, QStringLiteral("rank%1").arg(rank)} + args;
    return s;
}

// Field `index` (1-based, as in proc(5)) of /proc/<pid>/stat, read by the rank itself.
const char kPrintIds[] =
    "read -r _ _ _ _ pgrp sid _ </proc/$$/stat; echo \"pid=$$ pgrp=$pgrp sid=$sid\"; ";

} // namespace

class TestLocalTransport : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_worker;

    // Waits until rank `rank` has exited `count` times.
    static bool waitForExits(QSignalSpy &exited, int count, int timeoutMs = 10000)
    {
        while (exited.count() < count) {
            if (!exited.wait(timeoutMs))
                return false;
        }
        return true;
    }
    // Waits until `log` holds `needle` (output arrives in chunks of any size).
    static bool waitForOutput(Transport *t, const QByteArray &log, const QByteArray &needle,
                              int timeoutMs = 10000)
    {
        QSignalSpy output(t, &Transport::rankOutput);
        while (!log.contains(needle)) {
            if (!output.wait(timeoutMs))
                return false;
        }
        return true;
    }

private slots:
    void initTestCase();
    void describesItselfAndHasNoCapabilities();
    void prepare_data();
    void prepare();
    void startReportsPidOfItsOwnSession();
    void startTimeNamesTheProcess();
    void streamsStayApartAndAreDrainedBeforeExit();
    void stdinReachesTheRank();
    void closeStdinEndsInput();
    void stdinWrittenBeforeStarted();
    void exitCodes_data();
    void exitCodes();
    void deathBySignal_data();
    void deathBySignal();
    void signalReachesTheWholeGroup();
    void leftoversAreKilledWhenRankEnds();
    void startFailure_data();
    void startFailure();
    void startWhileRunningIsRefused();
    void restartAfterExit();
    void ranksRunSideBySide();
    void environmentIsAddedAndOverrides();
    void workingAndRunDirectories();
    void attachRankAnswersQueuedExit();
    void destructorKillsRunningRanks();
    void controlChannelStopsScriptedWorker();
};

void TestLocalTransport::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_worker = QCoreApplication::applicationDirPath() + QStringLiteral("/scriptedworker");
    QVERIFY2(QFileInfo(m_worker).isExecutable(), qPrintable(m_worker));
}

void TestLocalTransport::describesItselfAndHasNoCapabilities()
{
    LocalTransport t;
    QCOMPARE(t.describe(), QStringLiteral("local"));
    QCOMPARE(t.capabilities(), Transport::Capabilities());
    QVERIFY(!t.can(Transport::Capability::Detach));
    QVERIFY(!t.can(Transport::Capability::Reattach));
    t.setDetached(true); // ignored: no capability
    QCOMPARE(t.capabilities(), Transport::Capabilities());
}

void TestLocalTransport::prepare_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("messageContains");

    QFile plain(m_dir.filePath(QStringLiteral("not-executable")));
    QVERIFY(plain.open(QIODevice::WriteOnly));
    plain.close();
    QVERIFY(plain.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));

    QTest::newRow("scripted worker") << m_worker << true << QString();
    QTest::newRow("missing") << m_dir.filePath(QStringLiteral("no-such-worker")) << false
                             << QStringLiteral("worker not found");
    QTest::newRow("not executable")
        << plain.fileName() << false << QStringLiteral("worker is not executable");
    QTest::newRow("empty path") << QString() << false << QStringLiteral("worker");
    QTest::newRow("a directory") << m_dir.path() << false
                                 << QStringLiteral("worker is not executable");
}

void TestLocalTransport::prepare()
{
    QFETCH(QString, path);
    QFETCH(bool, ok);
    QFETCH(QString, messageContains);

    LocalTransport t;
    QSignalSpy prepared(&t, &Transport::prepared);
    QSignalSpy failed(&t, &Transport::prepareFailed);
    t.prepare(path);
    // Asynchronous, like every transport: a caller may connect after calling prepare().
    QCOMPARE(prepared.count() + failed.count(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(prepared.count() + failed.count(), 1, 5000);
    QVERIFY(!prepared.wait(100) && !failed.wait(0)); // exactly one answer
    // A directory has the x bit and QFileInfo::isExecutable() says yes: prepare() must refuse
    // it, or every rank fails to start with "Permission denied".
    QCOMPARE(prepared.count(), ok ? 1 : 0);
    if (ok) {
        QCOMPARE(t.workerPath(0), QFileInfo(path).absoluteFilePath());
        QCOMPARE(t.workerPath(3), t.workerPath(0));
    } else {
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(messageContains), qPrintable(message));
    }
}

void TestLocalTransport::startReportsPidOfItsOwnSession()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    t.startRank(shellRank(0, QString::fromLatin1(kPrintIds)));
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.first().at(0).toInt(), 0);
    const qint64 pid = started.first().at(1).toLongLong();
    QVERIFY(pid > 0);
    // Its own session and process group, led by the pid the transport reported.
    QCOMPARE(rec.ranks[0].out, QStringLiteral("pid=%1 pgrp=%1 sid=%1\n").arg(pid).toLatin1());
    QVERIFY(getpgid(0) != pid);
}

// What state.json records beside the pid (issue 44): the start time of the process itself, read
// before it could be reaped, so that a later process with its pid is not taken for it.
void TestLocalTransport::startTimeNamesTheProcess()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    QCOMPARE(t.rankStartTicks(0), qint64(0));
    t.startRank(shellRank(0, QStringLiteral("echo up; sleep 60")));
    QVERIFY(started.wait(5000));
    const qint64 pid = started.first().at(1).toLongLong();
    const qint64 ticks = t.rankStartTicks(0);
    QVERIFY(ticks > 0);
    QCOMPARE(ticks, ProcessIdentity::of(pid).startTicks);
    QVERIFY(waitForOutput(&t, rec.ranks[0].out, "up\n"));
    t.signalRank(0, SIGKILL);
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(rec.ranks[0].exits.first().signal, SIGKILL);
    QCOMPARE(t.rankStartTicks(0), ticks); // still the record of that process
}

void TestLocalTransport::streamsStayApartAndAreDrainedBeforeExit()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    // Interleaved writes to both streams, then a burst far larger than a pipe buffer, then an
    // immediate exit: nothing may be lost or arrive after rankExited.
    t.startRank(shellRank(0, QStringLiteral("i=0; while [ $i -lt 50 ]; do printf 'o%d\\n' $i; "
                                            "printf 'e%d\\n' $i >&2; i=$((i+1)); done; "
                                            "head -c 300000 /dev/zero | tr '\\0' x; head -c 200000 "
                                            "/dev/zero | tr '\\0' y >&2; exit 0")));
    QVERIFY(waitForExits(exited, 1));

    QByteArray out, err;
    for (int i = 0; i < 50; ++i) {
        out += 'o' + QByteArray::number(i) + '\n';
        err += 'e' + QByteArray::number(i) + '\n';
    }
    out += QByteArray(300000, 'x');
    err += QByteArray(200000, 'y');
    const Recorder::RankLog &r = rec.ranks[0];
    QCOMPARE(r.out.size(), out.size());
    QCOMPARE(r.err.size(), err.size());
    QVERIFY(r.out == out);
    QVERIFY(r.err == err);
    QCOMPARE(r.outAtExit, out.size());
    QCOMPARE(r.errAtExit, err.size());
    QCOMPARE(r.exits.size(), 1);
}

void TestLocalTransport::stdinReachesTheRank()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    // cat copies stdin byte for byte; the rank ends after its input ends.
    t.startRank(shellRank(0, QStringLiteral("exec cat")));
    QVERIFY(started.wait(5000));
    QByteArray sent;
    for (int i = 0; i < 256; ++i)
        sent += char(i);             // NUL and every other byte
    sent += QByteArray(100000, 'z'); // more than a pipe holds at once
    t.writeStdin(0, sent.left(10));
    t.writeStdin(0, sent.mid(10));
    t.closeStdin(0);
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(rec.ranks[0].out.size(), sent.size());
    QVERIFY(rec.ranks[0].out == sent);
    QCOMPARE(rec.ranks[0].exits.first().exitCode, 0);
    // Writes to a rank that ended, or never existed, go nowhere and do not crash.
    t.writeStdin(0, "late\n");
    t.closeStdin(0);
    t.writeStdin(42, "nobody\n");
    t.closeStdin(42);
    t.signalRank(42, SIGTERM);
}

// Callers that write right after startRank() (before rankStarted came) lose the bytes: QProcess
// is still Starting and writeStdin() only writes to a Running process. RunController works
// around it (it sends a pending stop on rankStarted); other callers may not.
void TestLocalTransport::stdinWrittenBeforeStarted()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    t.startRank(shellRank(0, QStringLiteral("exec cat")));
    t.writeStdin(0, "early\n");
    t.closeStdin(0);
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(rec.ranks[0].out, QByteArray("early\n"));
}

void TestLocalTransport::closeStdinEndsInput()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    t.startRank(shellRank(0, QStringLiteral("read -r line; echo \"got=$line\"; if read -r more; "
                                            "then exit 1; fi; echo eof; exit 7")));
    QVERIFY(started.wait(5000));
    t.writeStdin(0, "stop\n");
    QVERIFY(waitForOutput(&t, rec.ranks[0].out, "got=stop\n"));
    QCOMPARE(exited.count(), 0); // still waiting for more input
    t.closeStdin(0);
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(rec.ranks[0].out, QByteArray("got=stop\neof\n"));
    QCOMPARE(rec.ranks[0].exits.first().exitCode, 7);
}

void TestLocalTransport::exitCodes_data()
{
    QTest::addColumn<int>("code");
    for (int code : {0, 1, 2, 42, 125, 127, 255})
        QTest::addRow("exit %d", code) << code;
}

void TestLocalTransport::exitCodes()
{
    QFETCH(int, code);
    LocalTransport t;
    QSignalSpy exited(&t, &Transport::rankExited);
    const qint64 before = nowUs();
    t.startRank(shellRank(3, QStringLiteral("exit %1").arg(code)));
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(exited.first().at(0).toInt(), 3);
    const RankExit e = exited.first().at(1).value<RankExit>();
    QCOMPARE(e.crashed, false);
    QCOMPARE(e.exitCode, code);
    QCOMPARE(e.signal, 0);
    QVERIFY2(e.detail.isEmpty(), qPrintable(e.detail));
    QVERIFY(e.timeUs >= before);
    QVERIFY(e.timeUs <= nowUs());
    QVERIFY(!exited.wait(200)); // exactly one exit
}

void TestLocalTransport::deathBySignal_data()
{
    QTest::addColumn<int>("signal");
    QTest::newRow("SIGKILL") << int(SIGKILL);
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGSEGV") << int(SIGSEGV);
    QTest::newRow("SIGABRT") << int(SIGABRT);
    QTest::newRow("SIGINT") << int(SIGINT);
    QTest::newRow("SIGUSR1") << int(SIGUSR1);
}

void TestLocalTransport::deathBySignal()
{
    QFETCH(int, signal);
    LocalTransport t;
    QSignalSpy exited(&t, &Transport::rankExited);
    // No core dump: it would only slow the test down.
    t.startRank(
        shellRank(0, QStringLiteral("ulimit -c 0; trap - INT; kill -%1 $$; sleep 5").arg(signal)));
    QVERIFY(waitForExits(exited, 1));
    const RankExit e = exited.first().at(1).value<RankExit>();
    QVERIFY(e.crashed);
    QCOMPARE(e.signal, signal);
}

// signalRank() knows only the rank's pid; a child of the rank must get the signal as well.
// Both trap SIGTERM and report it, so the test sees who received it before anything is killed.
void TestLocalTransport::signalReachesTheWholeGroup()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    t.startRank(shellRank(
        0, QStringLiteral("sh -c 'trap \"echo child-term; exit 0\" TERM; echo child-ready; while "
                          ":; do sleep 0.05; done' & c=$!; "
                          "trap 'wait $c; echo parent-term; exit 5' TERM; echo parent-ready; "
                          "while :; do sleep 0.05; done")));
    QVERIFY(started.wait(5000));
    QVERIFY(waitForOutput(&t, rec.ranks[0].out, "child-ready"));
    QVERIFY(waitForOutput(&t, rec.ranks[0].out, "parent-ready"));
    t.signalRank(0, SIGTERM);
    QVERIFY(waitForExits(exited, 1));
    QVERIFY2(rec.ranks[0].out.contains("child-term\n"), rec.ranks[0].out.constData());
    QVERIFY2(rec.ranks[0].out.endsWith("parent-term\n"), rec.ranks[0].out.constData());
    const RankExit e = rec.ranks[0].exits.first();
    QCOMPARE(e.crashed, false);
    QCOMPARE(e.exitCode, 5);
    // After the rank ended, signals to it are ignored (its pid may be someone else's soon).
    t.signalRank(0, SIGKILL);
}

void TestLocalTransport::leftoversAreKilledWhenRankEnds()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    // The rank leaves a child behind that ignores SIGTERM and SIGHUP, and ends.
    t.startRank(shellRank(
        0,
        QStringLiteral("trap '' TERM HUP; sleep 60 >/dev/null 2>&1 </dev/null & echo $!; exit 0")));
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(rec.ranks[0].exits.first().exitCode, 0);
    bool ok = false;
    const qint64 child = rec.ranks[0].out.trimmed().toLongLong(&ok);
    QVERIFY2(ok && child > 0, rec.ranks[0].out.constData());
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
}

void TestLocalTransport::startFailure_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QString>("workingDirectory");

    QFile plain(m_dir.filePath(QStringLiteral("plain-file")));
    QVERIFY(plain.open(QIODevice::WriteOnly));
    plain.write("#!/bin/sh\necho should not run\n");
    plain.close();
    QVERIFY(plain.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));

    QTest::newRow("absolute path that does not exist")
        << m_dir.filePath(QStringLiteral("no/such/program")) << QString();
    QTest::newRow("name not on PATH")
        << QStringLiteral("rankdeck-no-such-program-4711") << QString();
    QTest::newRow("not executable") << plain.fileName() << QString();
    QTest::newRow("a directory") << m_dir.path() << QString();
    QTest::newRow("working directory missing")
        << QStringLiteral("/bin/true") << m_dir.filePath(QStringLiteral("no-such-dir"));
}

// A rank that cannot start is reported as an exit with a reason, once, and never as started.
void TestLocalTransport::startFailure()
{
    QFETCH(QString, program);
    QFETCH(QString, workingDirectory);

    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    RankLaunchSpec spec;
    spec.rank = 1;
    spec.program = program;
    spec.workingDirectory = workingDirectory;
    t.startRank(spec);
    QVERIFY(waitForExits(exited, 1));
    QVERIFY(!exited.wait(300));
    const RankExit e = rec.ranks[1].exits.first();
    QCOMPARE(e.crashed, false);
    QCOMPARE(e.exitCode, -1);
    QVERIFY2(e.detail.startsWith(QStringLiteral("failed to start")), qPrintable(e.detail));
    QVERIFY2(e.detail.contains(program), qPrintable(e.detail));
    QVERIFY(e.timeUs > 0);
    QVERIFY(rec.ranks[1].pids.isEmpty());
    QVERIFY(rec.ranks[1].out.isEmpty());

    // The rank can be started again, now with something that runs.
    t.startRank(shellRank(1, QStringLiteral("echo second")));
    QVERIFY(waitForExits(exited, 2));
    QCOMPARE(rec.ranks[1].pids.size(), 1);
    QCOMPARE(rec.ranks[1].out, QByteArray("second\n"));
    QCOMPARE(rec.ranks[1].exits.last().exitCode, 0);
}

void TestLocalTransport::startWhileRunningIsRefused()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    t.startRank(shellRank(2, QStringLiteral("read -r x; echo first; exit 3")));
    QVERIFY(started.wait(5000));
    t.startRank(shellRank(2, QStringLiteral("echo second")));
    QCOMPARE(exited.count(), 0); // the refusal is queued, like every answer
    QVERIFY(waitForExits(exited, 1));
    QCOMPARE(started.count(), 1);
    const RankExit refusal = rec.ranks[2].exits.first();
    QCOMPARE(refusal.exitCode, -1);
    QVERIFY2(refusal.detail.contains(QStringLiteral("already running")),
             qPrintable(refusal.detail));

    // The first process is untouched and still takes stdin.
    t.writeStdin(2, "go\n");
    QVERIFY(waitForExits(exited, 2));
    QCOMPARE(rec.ranks[2].out, QByteArray("first\n"));
    QCOMPARE(rec.ranks[2].exits.last().exitCode, 3);
}

void TestLocalTransport::restartAfterExit()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    t.startRank(shellRank(0, QStringLiteral("echo one; exit 1")));
    QVERIFY(waitForExits(exited, 1));
    t.startRank(shellRank(0, QStringLiteral("echo two; exit 0")));
    QVERIFY(waitForExits(exited, 2));
    const Recorder::RankLog &r = rec.ranks[0];
    QCOMPARE(r.pids.size(), 2);
    QVERIFY(r.pids[0] != r.pids[1]);
    QCOMPARE(r.out, QByteArray("one\ntwo\n"));
    QCOMPARE(r.exits[0].exitCode, 1);
    QCOMPARE(r.exits[1].exitCode, 0);
}

void TestLocalTransport::ranksRunSideBySide()
{
    constexpr int kRanks = 6;
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    for (int r = 0; r < kRanks; ++r)
        t.startRank(shellRank(
            r,
            QStringLiteral(
                "i=0; while [ $i -lt 200 ]; do echo \"r$1 $i\"; i=$((i+1)); done; exit $1"),
            {QString::number(r)}));
    QVERIFY(waitForExits(exited, kRanks, 20000));
    for (int r = 0; r < kRanks; ++r) {
        QByteArray expected;
        for (int i = 0; i < 200; ++i)
            expected += "r" + QByteArray::number(r) + ' ' + QByteArray::number(i) + '\n';
        QCOMPARE(rec.ranks[r].out, expected);
        QCOMPARE(rec.ranks[r].exits.size(), 1);
        QCOMPARE(rec.ranks[r].exits.first().exitCode, r);
    }
}

void TestLocalTransport::environmentIsAddedAndOverrides()
{
    qputenv("RANKDECK_TEST_INHERITED", "from-launcher");
    qputenv("RANKDECK_TEST_OVERRIDDEN", "old");
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    RankLaunchSpec spec =
        shellRank(0, QStringLiteral("printf '%s|' \"$RANKDECK_TEST_INHERITED\" "
                                    "\"$RANKDECK_TEST_OVERRIDDEN\" \"$RANKDECK_TEST_HOSTILE\" "
                                    "\"${RANKDECK_TEST_EMPTY-unset}\" \"$RANK\""));
    spec.environment.insert(QStringLiteral("RANKDECK_TEST_OVERRIDDEN"), QStringLiteral("new"));
    spec.environment.insert(QStringLiteral("RANKDECK_TEST_HOSTILE"),
                            QStringLiteral(u"$(id) `id` 'q' \"d\"\nline2 \u00e9"));
    spec.environment.insert(QStringLiteral("RANKDECK_TEST_EMPTY"), QString());
    spec.environment.insert(QStringLiteral("RANK"), QStringLiteral("0"));
    t.startRank(spec);
    QVERIFY(waitForExits(exited, 1));
    qunsetenv("RANKDECK_TEST_INHERITED");
    qunsetenv("RANKDECK_TEST_OVERRIDDEN");
    QCOMPARE(QString::fromUtf8(rec.ranks[0].out),
             QStringLiteral(u"from-launcher|new|$(id) `id` 'q' \"d\"\nline2 \u00e9||0|"));
}

void TestLocalTransport::workingAndRunDirectories()
{
    const QString work = m_dir.filePath(QStringLiteral("work dir 'with' $quotes"));
    QVERIFY(QDir().mkpath(work));
    const QString runDir = m_dir.filePath(QStringLiteral("runs/run 1/node 0"));
    QVERIFY(!QFileInfo::exists(runDir));

    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy exited(&t, &Transport::rankExited);
    RankLaunchSpec spec = shellRank(0, QStringLiteral("pwd -P"));
    spec.workingDirectory = work;
    spec.nodeRunDirectory = runDir;
    t.startRank(spec);
    // Empty working directory: the launcher's own.
    t.startRank(shellRank(1, QStringLiteral("pwd -P")));
    QVERIFY(waitForExits(exited, 2));
    QCOMPARE(QString::fromLocal8Bit(rec.ranks[0].out.trimmed()),
             QFileInfo(work).canonicalFilePath());
    QCOMPARE(QString::fromLocal8Bit(rec.ranks[1].out.trimmed()), QDir::current().canonicalPath());
    QVERIFY(QFileInfo(runDir).isDir());
}

// The local transport cannot take over ranks: it says so with a queued exit, never a start.
void TestLocalTransport::attachRankAnswersQueuedExit()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy prepared(&t, &Transport::prepared);
    t.prepare(m_worker);
    QVERIFY(prepared.wait(5000));
    QSignalSpy exited(&t, &Transport::rankExited);
    RankLaunchSpec spec;
    spec.rank = 4;
    spec.program = m_worker;
    t.attachRank(spec, 2, 100, 50);
    spec.rank = 5;
    t.attachRank(spec, 1, 0, 0);
    QCOMPARE(exited.count(), 0);
    QVERIFY(waitForExits(exited, 2));
    QCOMPARE(exited.at(0).at(0).toInt(), 4);
    QCOMPARE(exited.at(1).at(0).toInt(), 5);
    const RankExit e = exited.first().at(1).value<RankExit>();
    QCOMPARE(e.crashed, false);
    QCOMPARE(e.exitCode, -1);
    QVERIFY2(e.detail.contains(QStringLiteral("local")) &&
                 e.detail.contains(QStringLiteral("cannot re-attach")),
             qPrintable(e.detail));
    QVERIFY(e.timeUs > 0);
    QVERIFY(rec.ranks[4].pids.isEmpty());
}

void TestLocalTransport::destructorKillsRunningRanks()
{
    auto t = std::make_unique<LocalTransport>();
    Recorder rec(t.get());
    QSignalSpy started(t.get(), &Transport::rankStarted);
    // A rank that ignores SIGTERM and has a child: both must go with the transport.
    t->startRank(shellRank(0, QStringLiteral("trap '' TERM; sleep 60 & echo $!; wait")));
    QVERIFY(started.wait(5000));
    const qint64 pid = started.first().at(1).toLongLong();
    QVERIFY(waitForOutput(t.get(), rec.ranks[0].out, "\n"));
    const qint64 child = rec.ranks[0].out.trimmed().toLongLong();
    QVERIFY(child > 0);
    QVERIFY(processRuns(pid));
    QVERIFY(processRuns(child));
    t.reset();
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(pid), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
}

// The real launch contract: the scripted worker reads its control channel on stdin, and `stop`
// written there ends it cleanly with a stopping event.
void TestLocalTransport::controlChannelStopsScriptedWorker()
{
    LocalTransport t;
    Recorder rec(&t);
    QSignalSpy started(&t, &Transport::rankStarted);
    QSignalSpy exited(&t, &Transport::rankExited);
    RankLaunchSpec spec;
    spec.rank = 0;
    spec.program = m_worker;
    spec.arguments = {QStringLiteral("--steps"), QStringLiteral("100000"),
                      QStringLiteral("--step-delay-ms"), QStringLiteral("5"),
                      QStringLiteral("--control-stdin")};
    const QList<std::pair<const char *, const char *>> env{
        {"RANK", "0"},
        {"WORLD_SIZE", "1"},
        {"LOCAL_RANK", "0"},
        {"GROUP_RANK", "0"},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", "0"},
        {"RANKDECK_RUN_ID", "tst-localtransport"},
        {"RANKDECK_CONTROL", "stdin"}};
    for (const auto &[k, v] : env)
        spec.environment.insert(QString::fromLatin1(k), QString::fromLatin1(v));
    t.startRank(spec);
    QVERIFY(started.wait(5000));
    QVERIFY(waitForOutput(&t, rec.ranks[0].out, "RUN=tst-localtransport\n"));
    QVERIFY(waitForOutput(&t, rec.ranks[0].out, "\"t\":\"step\""));
    t.writeStdin(0, "stop\n");
    QVERIFY(waitForExits(exited, 1, 15000));
    QVERIFY2(rec.ranks[0].out.contains("\"reason\":\"stdin-stop\""),
             rec.ranks[0].out.right(500).constData());
    QVERIFY(rec.ranks[0].out.contains("\"t\":\"finished\""));
    QVERIFY(rec.ranks[0].out.endsWith("rank 0 done\n"));
    const RankExit e = rec.ranks[0].exits.first();
    QCOMPARE(e.crashed, false);
    QCOMPARE(e.exitCode, 0);
}

QTEST_GUILESS_MAIN(TestLocalTransport)
#include "tst_localtransport.moc"
