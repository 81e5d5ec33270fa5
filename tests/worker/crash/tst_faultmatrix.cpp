// SPDX-License-Identifier: GPL-3.0-or-later
// The fault matrix, end to end: real rankdeck-worker processes under a RunController (Gloo),
// every --fault KIND on the last (non-zero) rank of a 2- and a 4-rank local run, and of a 4-rank
// run over SSH on two nodes of the sshd fixture (skipped where sshd cannot run). For each: the run
// fails, the root cause is that rank with the right signal or exception and its message, its stack
// names the faulting worker function, every other rank is reported as a consequence and ended
// within 10 s, no process of the run remains, and every line the faulty rank printed before the
// fault is in the run record. `hang`: the run is flagged hung, and the stack dumps show the hung
// rank in the fault and its peers in a collective, without killing anyone.
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "diagnosis/failurereport.h"
#include "fixtureprofile.h"
#include "run/runcontroller.h"
#include "sshfixture.h"
#include "transport/ssh/policysshinteraction.h"

#include <QDir>
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

constexpr int kFaultStep = 3;
constexpr qint64 kConsequenceLimitUs = 10'000'000;

QString workerPath()
{
    return qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-worker");
}

bool processesOfRunRemain(const QString &runId)
{
    QProcess pgrep;
    pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), runId});
    pgrep.waitForFinished(10000);
    return pgrep.exitCode() == 0 && !pgrep.readAllStandardOutput().trimmed().isEmpty();
}

struct Expected
{
    QString kind;     // RankFailure::kind of the root cause
    QString name;     // signal name or exception type
    QString function; // the faulting worker function in the stack
    QString message;  // part of the message
    int exitCode = 0;
};

Expected expectationFor(const QString &fault)
{
    if (fault == QLatin1String("segv"))
        return {u"crash"_s, u"SIGSEGV"_s, u"crashWithSegv"_s, u"Segmentation fault"_s, 0};
    if (fault == QLatin1String("abort"))
        return {u"crash"_s, u"SIGABRT"_s, u"crashWithAbort"_s, u"Aborted"_s, 0};
    if (fault == QLatin1String("fpe"))
        return {u"crash"_s, u"SIGFPE"_s, u"crashWithFpe"_s, u"divide by zero"_s, 0};
    if (fault == QLatin1String("throw"))
        return {u"exception"_s, u"std::runtime_error"_s, u"throwRuntimeError"_s,
                u"injected fault: std::runtime_error"_s, 0};
    if (fault == QLatin1String("torch-check"))
        return {u"exception"_s, u"c10::Error"_s, u"failTorchCheck"_s,
                u"injected fault: TORCH_CHECK failed"_s, 0};
    if (fault.startsWith(QLatin1String("exit:")))
        return {u"exit"_s, QString(), QString(), QString(), fault.mid(5).toInt()};
    return {};
}

TrainingConfig configFor(const QString &fault, int faultRank)
{
    TrainingConfig c;
    c.name = QStringLiteral("faultmatrix");
    c.workerArguments = {u"--task"_s,          u"linear"_s,
                         u"--steps"_s,         u"1000"_s,
                         u"--dataset-size"_s,  u"256"_s,
                         u"--batch-size"_s,    u"8"_s,
                         u"--backend"_s,       u"gloo"_s,
                         u"--step-delay-ms"_s, u"20"_s,
                         u"--log-every"_s,     u"1"_s,
                         u"--fault"_s,         QStringLiteral("%1@%2").arg(fault).arg(kFaultStep),
                         u"--fault-rank"_s,    QString::number(faultRank)};
    return c;
}

Profile sshProfile(const SshFixture &ssh, int worldSize)
{
    Profile p = rankdeck::testing::fixtureProfile(ssh, QStringLiteral("faultmatrix-ssh"),
                                                  ssh.nodeCount(), worldSize / ssh.nodeCount());
    p.backend = QStringLiteral("gloo");
    p.connectTimeoutSec = 10;
    return p;
}

RunController::Options optionsFor(const QString &runsDirectory)
{
    RunController::Options o;
    o.workerPath = workerPath();
    o.runsDirectory = runsDirectory;
    o.stopGraceMs = 1000;
    o.termGraceMs = 2000;
    o.hangTimeoutSec = 2;
    return o;
}

QStringList logLines(const QString &runDirectory, int rank)
{
    QFile f(runDirectory + QStringLiteral("/rank-%1.log").arg(rank));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
}

} // namespace

class TestFaultMatrix : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!QFile::exists(workerPath()))
            QSKIP("rankdeck-worker was not built (RANKDECK_BUILD_WORKER=OFF)");
        m_sshUnavailable = SshFixture::unavailableReason();
        if (!m_sshUnavailable.isEmpty())
            return;
        // The SSH client reads ~/.ssh/known_hosts, and the nodes' caches live under their homes:
        // keep both away from the real ones.
        QVERIFY(m_home.isValid());
        QVERIFY(rankdeck::testing::isolateUserDirectories(
            m_home.path(), {"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"}));
        QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
        QVERIFY(m_ssh.writeKnownHosts(m_home.filePath(QStringLiteral("HOME/.ssh/known_hosts"))));
    }

    Profile profileFor(bool ssh, int worldSize)
    {
        return ssh ? sshProfile(m_ssh, worldSize) : Profile::builtinLocal(worldSize);
    }
    RunController::Options options(bool ssh, const QString &runsDirectory)
    {
        RunController::Options o = optionsFor(runsDirectory);
        if (ssh)
            o.sshInteraction = &m_interaction;
        return o;
    }

    void fatalFault_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<int>("worldSize");
        QTest::addColumn<bool>("ssh");
        for (int world : {2, 4}) {
            for (const char *fault : {"segv", "abort", "fpe", "throw", "torch-check", "exit:3"})
                QTest::addRow("%s, %d ranks", fault, world)
                    << QString::fromLatin1(fault) << world << false;
        }
        for (const char *fault : {"segv", "abort", "fpe", "throw", "torch-check", "exit:3"})
            QTest::addRow("%s, 4 ranks on 2 ssh nodes", fault)
                << QString::fromLatin1(fault) << 4 << true;
    }
    void fatalFault()
    {
        QFETCH(QString, fault);
        QFETCH(int, worldSize);
        QFETCH(bool, ssh);
        if (ssh && !m_sshUnavailable.isEmpty())
            QSKIP(qPrintable(m_sshUnavailable));
        const int faultRank = worldSize - 1;
        const Expected expected = expectationFor(fault);
        QTemporaryDir runs;
        QVERIFY(runs.isValid());

        RunController run(profileFor(ssh, worldSize), configFor(fault, faultRank),
                          options(ssh, runs.path()));
        QSignalSpy finished(&run, &RunController::finished);
        QString error;
        QVERIFY2(run.start(&error), qPrintable(error));
        QVERIFY2(finished.wait(180000), qPrintable(run.failureReport().toText()));
        const QString runId = run.runId();

        QCOMPARE(run.state(), RunState::Failed);
        const FailureReport &report = run.failureReport();
        const QString text = report.toText();
        const RankFailure *root = report.rootCause();
        QVERIFY2(root, qPrintable(text));
        if (root->message.contains(QLatin1String("fault injection is not available")))
            QSKIP("this rankdeck-worker was built without fault injection");
        QCOMPARE(root->rank, faultRank);
        QCOMPARE(root->kind, expected.kind);
        if (expected.kind == QLatin1String("crash")) {
            QCOMPARE(root->signalName, expected.name);
        } else if (expected.kind == QLatin1String("exception")) {
            QCOMPARE(root->exceptionType, expected.name);
            QCOMPARE(root->signal, SIGABRT);
        } else {
            QCOMPARE(root->exitCode, expected.exitCode);
        }
        QVERIFY2(root->message.contains(expected.message), qPrintable(text));
        if (!expected.function.isEmpty()) {
            QVERIFY2(root->stack.join(QLatin1Char('\n')).contains(expected.function),
                     qPrintable(text));
            QVERIFY2(root->firstOwnFrame >= 0 &&
                         root->stack.at(root->firstOwnFrame).contains(expected.function),
                     qPrintable(text));
            QVERIFY2(text.contains(QStringLiteral("→ ")), qPrintable(text));
        }

        // Every other rank: a consequence, ended within 10 s of the root cause.
        QCOMPARE(report.failures.size(), worldSize);
        for (const RankFailure &f : report.failures) {
            if (f.rootCause)
                continue;
            QVERIFY2(f.kind == QLatin1String("consequence"), qPrintable(text));
        }
        for (const RankStatus &s : run.rankStatuses()) {
            QVERIFY2(s.endTimeUs > 0,
                     qPrintable(QStringLiteral("rank %1 has no end time").arg(s.rank)));
            QVERIFY2(s.endTimeUs - root->timeUs < kConsequenceLimitUs,
                     qPrintable(QStringLiteral("rank %1 ended %2 ms after the root cause")
                                    .arg(s.rank)
                                    .arg((s.endTimeUs - root->timeUs) / 1000)));
        }
        qint64 lastEnd = 0;
        for (const RankStatus &s : run.rankStatuses())
            lastEnd = std::max(lastEnd, s.endTimeUs);
        qInfo("all ranks ended %lld ms after the root cause", (lastEnd - root->timeUs) / 1000);
        QTRY_VERIFY2_WITH_TIMEOUT(!processesOfRunRemain(runId), qPrintable(runId), 20000);

        // Every line the faulty rank printed before its fault is in the run record: its training
        // lines up to the fault, then the injector's own announcement.
        const QStringList lines = logLines(run.runDirectory(), faultRank);
        const QString prefix = QStringLiteral("Rank %1: Epoch").arg(faultRank);
        qsizetype trainingLines = 0;
        for (const QString &l : lines)
            trainingLines += l.startsWith(prefix) ? 1 : 0;
        QVERIFY2(trainingLines >= kFaultStep - 1, qPrintable(lines.join(QLatin1Char('\n'))));
        QVERIFY2(lines.filter(QStringLiteral("injecting fault %1@%2").arg(fault).arg(kFaultStep))
                         .size() == 1,
                 qPrintable(lines.join(QLatin1Char('\n'))));

        // The stored report reads back the same.
        const FailureReport stored = FailureReport::fromJson(run.record().readFailureReport());
        QVERIFY(stored.rootCause());
        QCOMPARE(stored.rootCause()->rank, faultRank);
    }

    void hang_data()
    {
        QTest::addColumn<int>("worldSize");
        QTest::addColumn<bool>("ssh");
        QTest::newRow("2 ranks") << 2 << false;
        QTest::newRow("4 ranks") << 4 << false;
        QTest::newRow("4 ranks on 2 ssh nodes") << 4 << true;
    }
    void hang()
    {
        QFETCH(int, worldSize);
        QFETCH(bool, ssh);
        if (ssh && !m_sshUnavailable.isEmpty())
            QSKIP(qPrintable(m_sshUnavailable));
        const int faultRank = worldSize - 1;
        QTemporaryDir runs;
        RunController run(profileFor(ssh, worldSize), configFor(QStringLiteral("hang"), faultRank),
                          options(ssh, runs.path()));
        QSignalSpy hung(&run, &RunController::hangDetected);
        QSignalSpy finished(&run, &RunController::finished);
        QString error;
        QVERIFY2(run.start(&error), qPrintable(error));

        // Flagged hung, and the hung ranks' stacks arrive on their own (autoDumpStacks).
        QTRY_VERIFY_WITH_TIMEOUT(run.isHung() || !finished.isEmpty(), 120000);
        if (const RankFailure *root = run.failureReport().rootCause();
            root && root->message.contains(QLatin1String("fault injection is not available")))
            QSKIP("this rankdeck-worker was built without fault injection");
        QVERIFY2(run.isHung(), qPrintable(run.failureReport().toText()));
        QTRY_VERIFY_WITH_TIMEOUT(!run.stacks(faultRank).isEmpty(), 30000);
        QVERIFY(!hung.isEmpty());

        const auto mainFrames = [](const QString &stacks) {
            for (const ThreadStack &t : parseThreadStacks(stacks))
                if (t.mainThread)
                    return t.frames;
            return QStringList();
        };
        const QStringList faulty = mainFrames(run.stacks(faultRank));
        QVERIFY2(waitLocation(faulty).contains(QLatin1String("hangWithoutJoiningCollectives")),
                 qPrintable(run.stacks(faultRank)));
        // Its peers wait for it in a collective.
        run.dumpStacks(0);
        QTRY_VERIFY_WITH_TIMEOUT(!run.stacks(0).isEmpty(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(waitsInCollective(mainFrames(run.stacks(0))), 30000);

        // Nobody was killed for it.
        QVERIFY(finished.isEmpty());
        for (const RankStatus &s : run.rankStatuses())
            QVERIFY2(!isTerminal(s.state), qPrintable(QStringLiteral("rank %1 ended").arg(s.rank)));

        run.stop();
        QVERIFY(finished.wait(60000));
        QTRY_VERIFY_WITH_TIMEOUT(!processesOfRunRemain(run.runId()), 20000);
    }

private:
    QTemporaryDir m_home;
    SshFixture m_ssh;
    PolicySshInteraction m_interaction;
    QString m_sshUnavailable;
};

QTEST_GUILESS_MAIN(TestFaultMatrix)
#include "tst_faultmatrix.moc"
