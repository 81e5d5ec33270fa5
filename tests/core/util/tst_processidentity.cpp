// SPDX-License-Identifier: GPL-3.0-or-later
//
// util/processidentity.h on real processes (issue 44): a pid is signalled only while it is the
// process recorded. Pid reuse cannot be forced, so a live process is given a wrong start time
// instead: it must be refused and stay alive, and the right one must reach it. Pids 0 and 1 are
// refused whatever else is said of them (kill(0) is our own group, kill(-1) everyone); a record
// without a start time (an older RankDeck's) needs its check to accept the process; a group that
// outlived its leader is signalled only while it is still the leader's. With
// RANKDECK_TEST_NO_PIDFD set (ctest's tst_processidentity_nopidfd) a seccomp filter answers
// pidfd_open with ENOSYS, as an old kernel or a container's filter does: the same cases then go
// through the fallback, a start-time check and kill().
#include "util/processidentity.h"

#include "testprocesses.h"

#include <QProcess>
#include <QTest>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <memory>
#include <unistd.h>

using namespace rankdeck;
using rankdeck::testing::processRuns;

namespace {

// `sleep 60`, in a session and group of its own when `ownGroup` (as a rank is).
std::unique_ptr<QProcess> sleeper(bool ownGroup, const QStringList &env = {})
{
    auto p = std::make_unique<QProcess>();
    p->setProgram(QStringLiteral("/bin/sleep"));
    p->setArguments({QStringLiteral("60")});
    if (!env.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString &kv : env)
            e.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
        p->setProcessEnvironment(e);
    }
    if (ownGroup)
        p->setChildProcessModifier([] { ::setsid(); });
    p->start();
    return p;
}

// pidfd_open fails with ENOSYS from now on, in this process and its children.
bool refusePidfds()
{
#ifdef SYS_pidfd_open
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
#else
    return true; // no pidfds to refuse
#endif
}

bool withoutPidfds()
{
    return qEnvironmentVariableIsSet("RANKDECK_TEST_NO_PIDFD");
}

bool endedWithin(QProcess *p, int ms)
{
    return p->state() == QProcess::NotRunning || p->waitForFinished(ms);
}

} // namespace

class TestProcessIdentity : public QObject
{
    Q_OBJECT

private slots:
    void parseProcStat_data();
    void parseProcStat();
    void readsItsOwnStart();
    void signalRecordedProcess_data();
    void signalRecordedProcess();
    void pidsThatNameMoreThanOneProcessAreRefused_data();
    void pidsThatNameMoreThanOneProcessAreRefused();
    void heldProcessIsNotSignalledOnceReaped();
    void orphanedGroup_data();
    void orphanedGroup();
};

void TestProcessIdentity::parseProcStat_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("pgrp");
    QTest::addColumn<qint64>("start");
    const QByteArray tail = " S 1 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 3365601 1 2 3\n";
    QTest::newRow("plain") << "77 (sleep)" + tail << true << qint64(77) << qint64(3365601);
    // A command name may hold spaces and ')' (prctl, or a program named so): only the last ')'
    // ends it, else the fields shift and another number passes for the start time.
    QTest::newRow("spaces and parentheses")
        << "77 (a) R 1 2 3 ) x)" + tail << true << qint64(77) << qint64(3365601);
    QTest::newRow("newline in the name")
        << "77 (a\nb)" + tail << true << qint64(77) << qint64(3365601);
    QTest::newRow("last field without newline")
        << QByteArray("77 (sleep) S 1 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 42") << true
        << qint64(77) << qint64(42);
    QTest::newRow("cut before the start time")
        << QByteArray("77 (sleep) S 1 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0") << false
        << qint64(0) << qint64(0);
    QTest::newRow("no name") << "77 sleep" + tail << false << qint64(0) << qint64(0);
    QTest::newRow("no pid") << "(sleep)" + tail << false << qint64(0) << qint64(0);
    QTest::newRow("start time not a number")
        << QByteArray("77 (sleep) S 1 77 77 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 12x4 1\n")
        << false << qint64(0) << qint64(0);
    QTest::newRow("empty") << QByteArray() << false << qint64(0) << qint64(0);
}

void TestProcessIdentity::parseProcStat()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QFETCH(qint64, pgrp);
    QFETCH(qint64, start);
    ProcStat s;
    QCOMPARE(rankdeck::parseProcStat(text, &s), ok);
    if (ok) {
        QCOMPARE(s.ppid, qint64(1));
        QCOMPARE(s.pgrp, pgrp);
        QCOMPARE(s.startTicks, start);
    }
}

void TestProcessIdentity::readsItsOwnStart()
{
    const ProcessIdentity self = ProcessIdentity::of(::getpid());
    QVERIFY(self.startTicks > 0);
    QVERIFY(self.startTicks <= bootTicksNow());
    QVERIFY(self.isCurrent());
    QVERIFY(!(ProcessIdentity{::getpid(), self.startTicks + 1}.isCurrent()));
    ProcStat s;
    QVERIFY(readProcStat(::getpid(), &s));
    QCOMPARE(s.ppid, qint64(::getppid()));
    QCOMPARE(s.pgrp, qint64(::getpgrp()));
}

void TestProcessIdentity::signalRecordedProcess_data()
{
    QTest::addColumn<bool>("ownGroup");
    QTest::addColumn<int>("target");
    QTest::addColumn<int>("startShift");      // added to the real start; 0: right
    QTest::addColumn<bool>("recordStart");    // false: an older record without a start time
    QTest::addColumn<QString>("legacyEntry"); // what the legacy check looks for in environ
    QTest::addColumn<bool>("sent");
    const int process = int(SignalTarget::Process), group = int(SignalTarget::Group);
    QTest::newRow("process, right start") << false << process << 0 << true << QString() << true;
    QTest::newRow("process, wrong start") << false << process << 1 << true << QString() << false;
    QTest::newRow("process, earlier start") << false << process << -1 << true << QString() << false;
    QTest::newRow("group, right start") << true << group << 0 << true << QString() << true;
    QTest::newRow("group, wrong start") << true << group << 7 << true << QString() << false;
    // Right process, but it leads no group: kill(-pid) would be ESRCH or someone else's group.
    QTest::newRow("group of a process that leads none")
        << false << group << 0 << true << QString() << false;
    QTest::newRow("old record, no check") << true << group << 0 << false << QString() << false;
    QTest::newRow("old record, its own run id")
        << true << group << 0 << false << QStringLiteral("RANKDECK_RUN_ID=tst-pi-1") << true;
    QTest::newRow("old record, another run id")
        << true << group << 0 << false << QStringLiteral("RANKDECK_RUN_ID=tst-pi-2") << false;
}

void TestProcessIdentity::signalRecordedProcess()
{
    QFETCH(bool, ownGroup);
    QFETCH(int, target);
    QFETCH(int, startShift);
    QFETCH(bool, recordStart);
    QFETCH(QString, legacyEntry);
    QFETCH(bool, sent);
    auto p = sleeper(ownGroup, {QStringLiteral("RANKDECK_RUN_ID=tst-pi-1")});
    QVERIFY(p->waitForStarted(5000));
    const qint64 pid = p->processId();
    if (ownGroup) // setsid() runs in the child before exec; wait until it has
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                ProcStat s;
                return readProcStat(pid, &s) && s.pgrp == pid;
            }(),
            5000);
    const ProcessIdentity real = ProcessIdentity::of(pid);
    QVERIFY(real.startTicks > 0);
    ProcessIdentity recorded{pid, recordStart ? real.startTicks + startShift : 0};
    std::function<bool(qint64)> check;
    if (!legacyEntry.isEmpty())
        check = [&](qint64 live) { return processEnvironmentContains(live, legacyEntry.toUtf8()); };
    QString why;
    QCOMPARE(rankdeck::signalRecordedProcess(recorded, SIGKILL, SignalTarget(target), check, &why),
             sent);
    if (sent) {
        QVERIFY(why.isEmpty());
        QVERIFY(endedWithin(p.get(), 5000));
        QCOMPARE(p->exitStatus(), QProcess::CrashExit);
        QCOMPARE(p->exitCode(), SIGKILL);
    } else {
        QVERIFY(!why.isEmpty());
        qInfo("refused: %s", qPrintable(why));
        QVERIFY(why.contains(QString::number(pid)));
        QTest::qWait(100);
        QVERIFY2(processRuns(pid), "a refused signal reached the process");
        p->kill();
        QVERIFY(endedWithin(p.get(), 5000));
    }
}

void TestProcessIdentity::pidsThatNameMoreThanOneProcessAreRefused_data()
{
    QTest::addColumn<qint64>("pid");
    QTest::addColumn<int>("target");
    // kill(0) is the caller's own group (the test runner's: ctest, its shell, `timeout`),
    // kill(-1) every process the caller may signal, kill(1) init.
    QTest::newRow("0, process") << qint64(0) << int(SignalTarget::Process);
    QTest::newRow("0, group") << qint64(0) << int(SignalTarget::Group);
    QTest::newRow("1, process") << qint64(1) << int(SignalTarget::Process);
    QTest::newRow("1, group") << qint64(1) << int(SignalTarget::Group);
    QTest::newRow("-1, group") << qint64(-1) << int(SignalTarget::Group);
}

void TestProcessIdentity::pidsThatNameMoreThanOneProcessAreRefused()
{
    QFETCH(qint64, pid);
    QFETCH(int, target);
    // Signal 0 only probes: should the guard ever break, nothing is hit.
    const ProcessIdentity id{pid, ProcessIdentity::of(pid).startTicks};
    QString why;
    QVERIFY(!rankdeck::signalRecordedProcess(
        id, 0, SignalTarget(target), [](qint64) { return true; }, &why));
    QVERIFY2(why.contains(QStringLiteral("no single process")), qPrintable(why));
    QVERIFY(!signalOrphanedGroup(id, bootTicksNow(), 0));
    const HeldProcess held(pid);
    QVERIFY(!held.signal(0));
    QVERIFY(!held.signalGroup(0));
}

// A QProcess reaps its child before `finished`: from then on the pid may be anyone's, and the
// handle taken at the start refuses instead of signalling whatever has it now.
void TestProcessIdentity::heldProcessIsNotSignalledOnceReaped()
{
    auto p = sleeper(true);
    QVERIFY(p->waitForStarted(5000));
    const HeldProcess held(p->processId());
    QCOMPARE(held.identity(), ProcessIdentity::of(p->processId()));
    qInfo("pidfd: %s", held.hasPidfd() ? "yes" : "no (kill() after a start-time check)");
    if (withoutPidfds())
        QVERIFY(!held.hasPidfd());
    QVERIFY(held.signal(0));
    QTRY_VERIFY_WITH_TIMEOUT(held.signalGroup(0), 5000); // once setsid() ran
    QVERIFY(held.signal(SIGTERM));
    QVERIFY(endedWithin(p.get(), 5000));
    QVERIFY(!held.signal(0));
    QVERIFY(!held.signalGroup(0));
}

void TestProcessIdentity::orphanedGroup_data()
{
    QTest::addColumn<bool>("endAfterMembers");
    QTest::addColumn<bool>("signalled");
    // The leader's child is still in the group: the group is the leader's, and goes.
    QTest::newRow("member from the leader's time") << true << true;
    // As if the leader had ended before the child started: what is in the group now may be a
    // new group that got the reused id, and is left alone.
    QTest::newRow("members only from after its end") << false << false;
}

void TestProcessIdentity::orphanedGroup()
{
    QFETCH(bool, endAfterMembers);
    QFETCH(bool, signalled);
    // A leader in its own group leaves a child there and ends.
    QProcess leader;
    leader.setProgram(QStringLiteral("/bin/sh"));
    leader.setArguments(
        {QStringLiteral("-c"), QStringLiteral("sleep 60 >/dev/null 2>&1 </dev/null & echo $!")});
    leader.setChildProcessModifier([] { ::setsid(); });
    leader.start();
    QVERIFY(leader.waitForStarted(5000));
    const ProcessIdentity id = ProcessIdentity::of(leader.processId());
    QVERIFY(leader.waitForFinished(5000));
    const qint64 child = leader.readAllStandardOutput().trimmed().toLongLong();
    QVERIFY(child > 0);
    QVERIFY(processRuns(child));
    const qint64 end = endAfterMembers ? bootTicksNow() : id.startTicks - 1;
    QString why;
    QCOMPARE(signalOrphanedGroup(id, end, SIGKILL, &why), signalled);
    if (signalled) {
        QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
    } else {
        QVERIFY2(why.contains(QStringLiteral("not the one its leader made")), qPrintable(why));
        QTest::qWait(100);
        QVERIFY(processRuns(child));
        ::kill(pid_t(child), SIGKILL);
    }
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
}

int main(int argc, char **argv)
{
    if (withoutPidfds() && !refusePidfds()) {
        std::perror("tst_processidentity: cannot install the seccomp filter");
        return 1;
    }
    QCoreApplication app(argc, argv);
    TestProcessIdentity test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_processidentity.moc"
