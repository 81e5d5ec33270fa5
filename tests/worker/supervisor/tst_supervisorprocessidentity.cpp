// SPDX-License-Identifier: GPL-3.0-or-later
//
// The supervisor's side of issue 44 (worker/supervisor/processidentity.h, processtree.cpp): a
// pid from a /proc walk is signalled only while it is still the process the walk found. Pid
// reuse cannot be forced, so a live process is given a wrong start time instead: it must be
// refused and stay alive, and the right one must reach it. The walk's signal reaches the whole
// tree, and nothing outside it.
#include "supervisor/processidentity.h"
#include "supervisor/processtree.h"

#include "testprocesses.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <unistd.h>

using namespace rankdeck::supervisor;
using rankdeck::testing::processRuns;

class TestSupervisorProcessIdentity : public QObject
{
    Q_OBJECT

private slots:
    void parseProcStat_data();
    void parseProcStat();
    void signalIfSame_data();
    void signalIfSame();
    void signalDescendantsReachesTheTreeOnly();
};

void TestSupervisorProcessIdentity::parseProcStat_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("ppid");
    QTest::addColumn<qulonglong>("start");
    const QByteArray tail = " S 9 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 3365601 1 2 3\n";
    QTest::newRow("plain") << "77 (sleep)" + tail << true << 9 << 3365601ull;
    // Only the last ')' ends the command name, else the fields shift.
    QTest::newRow("spaces and parentheses")
        << "77 (a) R 1 2 3 ) x)" + tail << true << 9 << 3365601ull;
    QTest::newRow("newline in the name") << "77 (a\nb)" + tail << true << 9 << 3365601ull;
    QTest::newRow("cut before the start time")
        << QByteArray("77 (sleep) S 9 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0") << false << 0
        << 0ull;
    QTest::newRow("no name") << "77 sleep" + tail << false << 0 << 0ull;
    QTest::newRow("start time not a number")
        << QByteArray("77 (x) S 9 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 12x4 1\n") << false
        << 0 << 0ull;
}

void TestSupervisorProcessIdentity::parseProcStat()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QFETCH(int, ppid);
    QFETCH(qulonglong, start);
    ProcStat s;
    QCOMPARE(rankdeck::supervisor::parseProcStat(
                 std::string_view(text.constData(), size_t(text.size())), &s),
             ok);
    if (ok) {
        QCOMPARE(int(s.ppid), ppid);
        QCOMPARE(qulonglong(s.startTicks), start);
    }
}

void TestSupervisorProcessIdentity::signalIfSame_data()
{
    QTest::addColumn<int>("startShift"); // added to the real start; 0: the right one
    QTest::addColumn<bool>("sent");
    QTest::newRow("right start") << 0 << true;
    QTest::newRow("later start (a reused pid)") << 1 << false;
    QTest::newRow("earlier start") << -1 << false;
}

void TestSupervisorProcessIdentity::signalIfSame()
{
    QFETCH(int, startShift);
    QFETCH(bool, sent);
    QProcess p;
    p.start(QStringLiteral("/bin/sleep"), {QStringLiteral("60")});
    QVERIFY(p.waitForStarted(5000));
    const pid_t pid = pid_t(p.processId());
    ProcStat s;
    QVERIFY(readProcStat(pid, &s));
    QCOMPARE(s.ppid, ::getpid());
    QVERIFY(s.startTicks > 0);
    QCOMPARE(rankdeck::supervisor::signalIfSame(pid, s.startTicks + startShift, SIGKILL), sent);
    if (sent) {
        QVERIFY(p.waitForFinished(5000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);
    } else {
        QTest::qWait(100);
        QVERIFY2(processRuns(pid), "a refused signal reached the process");
        p.kill();
        QVERIFY(p.waitForFinished(5000));
    }
    // Reaped now: its start time no longer names anything.
    QVERIFY(!rankdeck::supervisor::signalIfSame(pid, s.startTicks, 0));
    // Pids that name more than one process, even with their real start times (signal 0 only
    // probes, should the guard ever break): kill(0) is the caller's group, kill(1) init.
    ProcStat init;
    QVERIFY(!rankdeck::supervisor::signalIfSame(0, 1, 0));
    QVERIFY(!readProcStat(1, &init) || !rankdeck::supervisor::signalIfSame(1, init.startTicks, 0));
}

// The walk's signal reaches a child and its grandchild (the supervisor's program and what it
// started), and not a process outside the tree.
void TestSupervisorProcessIdentity::signalDescendantsReachesTheTreeOnly()
{
    // A process outside the tree: `setsid -f` forks it off a shell that then ends.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString pidFile = dir.filePath(QStringLiteral("outsider.pid"));
    QVERIFY(QProcess::execute(QStringLiteral("/bin/sh"),
                              {QStringLiteral("-c"),
                               QStringLiteral("setsid -f sh -c 'echo $$ >\"$1\"; exec sleep 60' "
                                              "sh \"$1\" </dev/null >/dev/null 2>&1"),
                               QStringLiteral("sh"), pidFile}) == 0);
    pid_t stranger = 0;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            QFile f(pidFile);
            return f.open(QIODevice::ReadOnly) &&
                   (stranger = pid_t(f.readAll().trimmed().toLongLong())) > 0;
        }(),
        5000);
    QProcess program;
    program.start(QStringLiteral("/bin/sh"),
                  {QStringLiteral("-c"), QStringLiteral("sleep 61 & echo $!; wait")});
    QVERIFY(program.waitForStarted(5000));
    QVERIFY(program.waitForReadyRead(5000));
    const pid_t grandchild = pid_t(program.readAllStandardOutput().trimmed().toLongLong());
    QVERIFY(grandchild > 0);
    const std::vector<pid_t> tree = descendantsOf(::getpid());
    QVERIFY(std::find(tree.begin(), tree.end(), pid_t(program.processId())) != tree.end());
    QVERIFY(std::find(tree.begin(), tree.end(), grandchild) != tree.end());
    QVERIFY(std::find(tree.begin(), tree.end(), stranger) == tree.end());

    QVERIFY(signalDescendants(SIGKILL) >= 2);
    QVERIFY(program.waitForFinished(5000));
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(grandchild), 5000);
    QVERIFY(processRuns(stranger));
    ::kill(stranger, SIGKILL);
}

QTEST_GUILESS_MAIN(TestSupervisorProcessIdentity)
#include "tst_supervisorprocessidentity.moc"
