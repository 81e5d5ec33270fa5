// SPDX-License-Identifier: GPL-3.0-or-later
//
// The run controller's state machine and failure policy, with real processes: the scripted
// worker (scriptedworker.cpp) speaks the real protocol, so every case runs in about a second;
// one case runs a shell program under the real rankdeck-supervisor (launch --exec).
#include "record/runrecord.h"
#include "run/runcontroller.h"
#include "store/logstore.h"
#include "store/metricsstore.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <unistd.h>

using namespace rankdeck;

class TestRunController : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_worker;

    RunController::Options options(int stopGraceMs = 2000, int termGraceMs = 3000) const
    {
        RunController::Options o;
        o.workerPath = m_worker;
        o.runsDirectory = m_dir.path() + QStringLiteral("/runs");
        o.stopGraceMs = stopGraceMs;
        o.termGraceMs = termGraceMs;
        return o;
    }

    static Profile local(int n)
    {
        Profile p = Profile::builtinLocal(n);
        p.heartbeatTimeoutSec = 30;
        return p;
    }

    static TrainingConfig config(const QStringList &args)
    {
        TrainingConfig c;
        c.name = QStringLiteral("scripted");
        c.workerArguments = args;
        return c;
    }

    // Runs to the end; returns false when it did not end in time.
    static bool runToEnd(RunController &c, int timeoutMs = 30000)
    {
        QSignalSpy done(&c, &RunController::finished);
        QString error;
        if (!c.start(&error)) {
            qWarning() << "start failed:" << error;
            return false;
        }
        return done.wait(timeoutMs);
    }

    static bool processGone(qint64 pid)
    {
        return pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
    }

    // Processes of a process group that still run (zombies waiting for a reaper do not count:
    // in containers PID 1 often never reaps).
    static int liveProcessesInGroup(qint64 pgid)
    {
        int n = 0;
        const QStringList pids =
            QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        for (const QString &pid : pids) {
            QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
            if (!f.open(QIODevice::ReadOnly))
                continue;
            const QByteArray stat = f.readAll();
            // pid (comm) state ppid pgrp ...: comm may contain spaces, so split after the ')'.
            const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
            if (fields.size() > 2 && fields[2].toLongLong() == pgid && fields[0] != "Z")
                ++n;
        }
        return n;
    }

    static QStringList fileLines(const QString &path)
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return {};
        QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
        if (!lines.isEmpty() && lines.last().isEmpty())
            lines.removeLast();
        return lines;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_worker = QCoreApplication::applicationDirPath() + QStringLiteral("/scriptedworker");
        QVERIFY2(QFileInfo(m_worker).isExecutable(), qPrintable(m_worker));
    }

    void successfulRunRecordsEverything()
    {
        RunController c(local(3),
                        config({QStringLiteral("--steps"), QStringLiteral("6"),
                                QStringLiteral("--lines-per-step"), QStringLiteral("3")}),
                        options());
        QList<LogLine> seen;
        connect(&c, &RunController::linesAppended, this, [&](const QList<LogLine> &lines) {
            // A line reaches a view only after the run record has it.
            for (const LogLine &l : lines) {
                if (l.partial)
                    continue;
                const QStringList onDisk =
                    fileLines(c.runDirectory() + QStringLiteral("/rank-%1.log").arg(l.rank));
                QVERIFY(onDisk.contains(l.text));
                seen.append(l);
            }
        });
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Finished);
        QVERIFY(c.masterPort() > 0);
        QVERIFY(c.failureReport().isEmpty());
        for (const RankStatus &s : c.rankStatuses()) {
            QCOMPARE(s.state, RankState::Finished);
            QCOMPARE(s.step, 6);
            QVERIFY(processGone(s.pid));
            const QStringList lines =
                fileLines(c.runDirectory() + QStringLiteral("/rank-%1.log").arg(s.rank));
            // Every rank was started with the port rank 0 bound (rank 0 itself with 0).
            QCOMPARE(lines.first(), QStringLiteral("rank %1 MASTER_PORT=%2 RUN=%3")
                                        .arg(s.rank)
                                        .arg(s.rank == 0 ? 0 : c.masterPort())
                                        .arg(c.runId()));
            QCOMPARE(lines.filter(QStringLiteral(": Epoch 0, Loss")).size(), 6 * 3);
            QCOMPARE(lines.last(), QStringLiteral("rank %1 done").arg(s.rank));
            int shown = 0;
            for (const LogLine &l : seen)
                shown += l.rank == s.rank;
            QCOMPARE(shown, lines.size());
        }
        QCOMPARE(c.metricsStore()->pointCount(1, metric::Loss), 6);
        const QJsonObject state = c.record().readState();
        QCOMPARE(state.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        QCOMPARE(QFileInfo(c.runDirectory()).permissions() &
                     (QFile::ReadGroup | QFile::ReadOther | QFile::ExeOther),
                 QFileDevice::Permissions());
    }

    void failurePolicy_data()
    {
        QTest::addColumn<int>("worldSize");
        QTest::addColumn<int>("failRank");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("kind");
        QTest::newRow("exit code on rank 1 of 2")
            << 2 << 1 << QStringLiteral("exit:3") << QStringLiteral("exit");
        QTest::newRow("error event on rank 2 of 3")
            << 3 << 2 << QStringLiteral("error") << QStringLiteral("error");
        QTest::newRow("SIGKILL on rank 1 of 4")
            << 4 << 1 << QStringLiteral("kill") << QStringLiteral("signal");
        QTest::newRow("exit code on rank 0 of 2")
            << 2 << 0 << QStringLiteral("exit:5") << QStringLiteral("exit");
    }
    void failurePolicy()
    {
        QFETCH(int, worldSize);
        QFETCH(int, failRank);
        QFETCH(QString, mode);
        QFETCH(QString, kind);
        // The survivors run long and ignore nothing: the launcher must stop them.
        RunController c(local(worldSize),
                        config({QStringLiteral("--steps"), QStringLiteral("2000"),
                                QStringLiteral("--fail-rank"), QString::number(failRank),
                                QStringLiteral("--fail-at"), QStringLiteral("3"),
                                QStringLiteral("--fail"), mode}),
                        options(500, 1000));
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Failed);
        const RankFailure *root = c.failureReport().rootCause();
        QVERIFY(root);
        QCOMPARE(root->rank, failRank);
        QCOMPARE(root->kind, kind);
        QCOMPARE(c.failureReport().failures.first().rank, failRank);
        QCOMPARE(c.failureReport().failures.size(), worldSize);
        for (const RankStatus &s : c.rankStatuses()) {
            QVERIFY(processGone(s.pid));
            if (s.rank == failRank) {
                QCOMPARE(s.state, RankState::Failed);
                QVERIFY(s.rootCause);
            } else {
                QCOMPARE(s.state, RankState::Stopped);
                QVERIFY(!s.rootCause);
            }
        }
        for (const RankFailure &f : c.failureReport().failures) {
            if (f.rank != failRank)
                QCOMPARE(f.kind, QStringLiteral("consequence"));
        }
        const QJsonObject state = c.record().readState();
        QCOMPARE(state.value(QStringLiteral("root_cause_rank")).toInt(), failRank);
        QVERIFY(QFile::exists(c.runDirectory() + QStringLiteral("/failure.json")));
        QVERIFY(QFile::exists(c.runDirectory() + QStringLiteral("/failure.txt")));
        // Every line the failed rank printed before dying is in the record.
        const QStringList lines =
            fileLines(c.runDirectory() + QStringLiteral("/rank-%1.log").arg(failRank));
        QCOMPARE(lines.filter(QStringLiteral(": Epoch 0, Loss")).size(), 3);
        QCOMPARE(lines.filter(QStringLiteral("rank %1 failing at step 3").arg(failRank)).size(), 1);
    }

    void earliestTimestampIsRootCauseNotFirstObserved()
    {
        // Rank 2 is noticed last (rank 1 dies at step 2, rank 2 at step 4) but its own clock says
        // it failed 10 s earlier, as a rank on a node with slow output would.
        RunController c(
            local(3),
            config({QStringLiteral("--steps"), QStringLiteral("2000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("2"), QStringLiteral("--fail-at"),
                    QStringLiteral("2"), QStringLiteral("--fail"), QStringLiteral("error"),
                    QStringLiteral("--ts-offset-ms"), QStringLiteral("-10000")}),
            options(500, 1000));
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Failed);
        QVERIFY(c.failureReport().rootCause());
        QCOMPARE(c.failureReport().rootCause()->rank, 2);
        QVERIFY(c.rootCauseSummary().startsWith(QStringLiteral("rank 2")));
    }

    void peerErrorIsAConsequence()
    {
        // Rank 1 exits with a code and says nothing; rank 0 then reports "connection closed by
        // peer", and its clock puts that report before rank 1's exit was seen. The echo must not
        // be blamed.
        RunController c(
            local(2),
            config({QStringLiteral("--steps"), QStringLiteral("2000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("1"), QStringLiteral("--fail-at"),
                    QStringLiteral("2"), QStringLiteral("--fail"), QStringLiteral("exit:4"),
                    QStringLiteral("--peer-echo"), QStringLiteral("--peer-ts-offset-ms"),
                    QStringLiteral("-5000")}),
            options(2000, 2000));
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Failed);
        QCOMPARE(c.failureReport().rootCause()->rank, 1);
        QCOMPARE(c.failureReport().rootCause()->exitCode, 4);
        QCOMPARE(c.failureReport().failures.size(), 2);
        const RankFailure &echo = c.failureReport().failures.at(1);
        QCOMPARE(echo.rank, 0);
        QCOMPARE(echo.kind, QStringLiteral("consequence"));
        QVERIFY(echo.timeUs < c.failureReport().rootCause()->timeUs);
    }

    void peerLookingErrorAloneIsStillTheRootCause()
    {
        // Both ranks fail on their own; rank 0's message reads like a peer failure and is the
        // earliest by timestamp, rank 1 exits with a code and no message a moment later.
        RunController c(
            local(2),
            config({QStringLiteral("--steps"), QStringLiteral("2000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("0"), QStringLiteral("--fail-at"),
                    QStringLiteral("3"), QStringLiteral("--fail"), QStringLiteral("peer-error"),
                    QStringLiteral("--ts-offset-ms"), QStringLiteral("-10000")}),
            options(500, 1000));
        QVERIFY(runToEnd(c));
        // Only one rank failed by itself: a peer-looking error with nothing else stays the root.
        QCOMPARE(c.failureReport().rootCause()->rank, 0);
    }

    void stopEscalatesToKillAndLeavesNoProcess()
    {
        RunController c(local(2),
                        config({QStringLiteral("--steps"), QStringLiteral("100000"),
                                QStringLiteral("--ignore-stop"), QStringLiteral("--spawn-child")}),
                        options(300, 300));
        QSignalSpy running(&c, &RunController::stateChanged);
        QSignalSpy done(&c, &RunController::finished);
        QString error;
        QVERIFY2(c.start(&error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(c.state(), RunState::Running, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.rankStatus(1).step >= 1, 15000);
        c.stop();
        QVERIFY(done.wait(15000));
        QCOMPARE(c.state(), RunState::Stopped);
        QVERIFY(c.failureReport().isEmpty());
        for (const RankStatus &s : c.rankStatuses()) {
            QCOMPARE(s.state, RankState::Stopped);
            QCOMPARE(s.signal, SIGKILL);
            QVERIFY(processGone(s.pid));
            // The child it spawned (same process group) is gone too.
            QTRY_COMPARE_WITH_TIMEOUT(liveProcessesInGroup(s.pid), 0, 5000);
        }
    }

    void stopRequestFileStopsTheRun()
    {
        RunController c(local(2), config({QStringLiteral("--steps"), QStringLiteral("100000")}),
                        options(2000, 2000));
        QSignalSpy done(&c, &RunController::finished);
        QString error;
        QVERIFY(c.start(&error));
        QTRY_COMPARE_WITH_TIMEOUT(c.state(), RunState::Running, 15000);
        RunRecord other;
        QVERIFY(other.open(c.runDirectory(), &error));
        QVERIFY(other.requestStop(&error));
        QVERIFY(done.wait(15000));
        QCOMPARE(c.state(), RunState::Stopped);
        // The worker honoured `stop` itself: a clean exit, no signal needed.
        for (const RankStatus &s : c.rankStatuses()) {
            QCOMPARE(s.state, RankState::Stopped);
            QCOMPARE(s.signal, 0);
            QCOMPARE(s.exitCode, 0);
        }
        QVERIFY(!QFile::exists(other.stopRequestPath()));
    }

    void hangIsFlaggedAndStacksAreRequested()
    {
        RunController::Options o = options(300, 300);
        o.hangTimeoutSec = 1;
        RunController c(
            local(2),
            config({QStringLiteral("--steps"), QStringLiteral("100000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("1"), QStringLiteral("--fail-at"),
                    QStringLiteral("3"), QStringLiteral("--fail"), QStringLiteral("hang")}),
            o);
        QSignalSpy hang(&c, &RunController::hangDetected);
        QSignalSpy stacks(&c, &RunController::stacksReceived);
        QSignalSpy done(&c, &RunController::finished);
        QString error;
        QVERIFY(c.start(&error));
        QVERIFY(hang.wait(20000));
        QCOMPARE(hang.first().first().value<QList<int>>(), QList<int>{1});
        QVERIFY(c.rankStatus(1).hung);
        QVERIFY(!c.rankStatus(0).hung);
        QVERIFY(c.isHung());
        QVERIFY(stacks.count() > 0 || stacks.wait(5000));
        QCOMPARE(stacks.first().first().toInt(), 1);
        QVERIFY(c.stacks(1).contains(QStringLiteral("waitForPeers")));
        // Flagged, not killed.
        QCOMPARE(c.rankStatus(1).state, RankState::Running);
        c.stop();
        QVERIFY(done.wait(15000));
        QVERIFY(QFile::exists(c.runDirectory() + QStringLiteral("/stacks-rank-1.txt")));
    }

    void hungProgramStaysHungWhenItPrintsWhileStopped()
    {
        // Issue 27, defect 5: what a hung program printed while it was being stopped (a
        // survivor's "Connection closed by peer") counted as progress and cleared its hang, so
        // the stopped run's root cause in `runs` came out empty. The program here prints once,
        // then nothing until the stop's SIGTERM, at which it prints a line and ends cleanly.
        RunController::Options o = options(2000, 2000);
        o.supervisorPath =
            qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-supervisor");
        QVERIFY2(QFileInfo(o.supervisorPath).isExecutable(), qPrintable(o.supervisorPath));
        o.hangTimeoutSec = 1;
        TrainingConfig cfg;
        cfg.name = QStringLiteral("hungprogram");
        cfg.program = {QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                       QStringLiteral("trap 'echo closing after the stop; exit 0' TERM; "
                                      "echo started; while :; do sleep 0.1; done")};
        RunController c(local(1), cfg, o);
        QSignalSpy hang(&c, &RunController::hangDetected);
        QSignalSpy done(&c, &RunController::finished);
        QString error;
        QVERIFY2(c.start(&error), qPrintable(error));
        QVERIFY(hang.wait(30000));
        QVERIFY(c.rankStatus(0).hung);
        c.stop();
        QVERIFY(done.wait(30000));
        QCOMPARE(c.state(), RunState::Stopped);
        QVERIFY(fileLines(c.runDirectory() + QStringLiteral("/rank-0.log"))
                    .join(QLatin1Char('\n'))
                    .contains(QStringLiteral("closing after the stop")));
        QVERIFY(c.rankStatus(0).hung);
        // What `runs` shows: "stopped (hung)" and why.
        const QList<RunInfo> runs = RunRecord::list(o.runsDirectory);
        const auto it = std::find_if(runs.cbegin(), runs.cend(), [&](const RunInfo &i) {
            return c.runDirectory().endsWith(i.id);
        });
        QVERIFY(it != runs.cend());
        QVERIFY(it->hung);
        QVERIFY2(it->rootCause.startsWith(QStringLiteral("hung: rank")), qPrintable(it->rootCause));
    }

    void silentRankIsFlagged()
    {
        Profile p = local(2);
        p.heartbeatTimeoutSec = 1;
        RunController c(
            p,
            config({QStringLiteral("--steps"), QStringLiteral("100000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("0"), QStringLiteral("--fail-at"),
                    QStringLiteral("2"), QStringLiteral("--fail"), QStringLiteral("silent")}),
            options(300, 300));
        QSignalSpy hang(&c, &RunController::hangDetected);
        QSignalSpy done(&c, &RunController::finished);
        QString error;
        QVERIFY(c.start(&error));
        QVERIFY(hang.wait(20000));
        QVERIFY(c.rankStatus(0).silent);
        QVERIFY(!c.rankStatus(1).silent);
        // Its control channel may be stuck too: the dump was asked for with SIGUSR1.
        QTRY_VERIFY_WITH_TIMEOUT(c.stacks(0).contains(QStringLiteral("waitForPeers")), 5000);
        c.kill();
        QVERIFY(done.wait(15000));
        QCOMPARE(c.state(), RunState::Stopped);
    }

    void rankZeroDiesBeforeItsPort()
    {
        RunController c(local(3),
                        config({QStringLiteral("--fail-rank"), QStringLiteral("0"),
                                QStringLiteral("--fail"), QStringLiteral("before-store")}),
                        options(300, 300));
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Failed);
        QCOMPARE(c.failureReport().rootCause()->rank, 0);
        QCOMPARE(c.rankStatus(0).exitCode, 3);
        for (int r = 1; r < 3; ++r) {
            QCOMPARE(c.rankStatus(r).state, RankState::Stopped);
            QCOMPARE(c.rankStatus(r).pid, 0); // never started
        }
    }

    void missingWorkerFailsCleanly()
    {
        RunController::Options o = options();
        o.workerPath = m_dir.path() + QStringLiteral("/no-such-worker");
        RunController c(local(2), config({}), o);
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Failed);
        QVERIFY(c.errorMessage().contains(QStringLiteral("no-such-worker")));
        QCOMPARE(c.record().readState().value(QStringLiteral("state")).toString(),
                 QStringLiteral("failed"));
    }

    void restartsKeepHistory()
    {
        TrainingConfig cfg =
            config({QStringLiteral("--steps"), QStringLiteral("6"), QStringLiteral("--fail-rank"),
                    QStringLiteral("1"), QStringLiteral("--fail-at"), QStringLiteral("2"),
                    QStringLiteral("--fail"), QStringLiteral("exit:7"),
                    QStringLiteral("--fail-unless-resume"), QStringLiteral("--checkpoint-dir"),
                    m_dir.path() + QStringLiteral("/ckpt")});
        cfg.maxRestarts = 2;
        RunController c(local(2), cfg, options(300, 300));
        QVERIFY(runToEnd(c));
        QCOMPARE(c.state(), RunState::Finished);
        QCOMPARE(c.attempt(), 1);
        const QJsonArray attempts =
            c.record().readState().value(QStringLiteral("attempts")).toArray();
        QCOMPARE(attempts.size(), 1);
        QVERIFY(attempts.first()
                    .toObject()
                    .value(QStringLiteral("root_cause_summary"))
                    .toString()
                    .startsWith(QStringLiteral("rank 1")));
        // Both attempts' lines are in the record; steps restarted, so the loss has two segments.
        const QStringList lines = fileLines(c.runDirectory() + QStringLiteral("/rank-1.log"));
        QCOMPARE(lines.filter(QStringLiteral("failing at step 2")).size(), 1);
        QCOMPARE(lines.filter(QStringLiteral("rank 1 done")).size(), 1);
        QCOMPARE(c.metricsStore()->segmentCount(1, metric::Loss), 2);
    }

    void reopenShowsThePastRun()
    {
        QString dir;
        RankFailure root;
        QList<RankStatus> statuses;
        qint64 lines = 0;
        {
            RunController c(local(2),
                            config({QStringLiteral("--steps"), QStringLiteral("2000"),
                                    QStringLiteral("--fail-rank"), QStringLiteral("1"),
                                    QStringLiteral("--fail-at"), QStringLiteral("4"),
                                    QStringLiteral("--fail"), QStringLiteral("error")}),
                            options(300, 300));
            QVERIFY(runToEnd(c));
            dir = c.runDirectory();
            root = *c.failureReport().rootCause();
            statuses = c.rankStatuses();
            lines = c.logStore()->lineCount(LogStore::AllRanks);
        }
        QString error;
        std::unique_ptr<RunController> r(RunController::reopen(dir, nullptr, &error));
        QVERIFY2(r, qPrintable(error));
        QVERIFY(r->isReadOnly());
        QCOMPARE(r->state(), RunState::Failed);
        QCOMPARE(r->failureReport().rootCause()->rank, root.rank);
        QCOMPARE(r->failureReport().rootCause()->message, root.message);
        QCOMPARE(r->rankStatuses().size(), statuses.size());
        for (int i = 0; i < statuses.size(); ++i) {
            QCOMPARE(r->rankStatus(i).state, statuses[i].state);
            QCOMPARE(r->rankStatus(i).pid, statuses[i].pid);
        }
        QCOMPARE(r->logStore()->lineCount(LogStore::AllRanks), lines);
        QCOMPARE(r->metricsStore()->pointCount(0, metric::Loss), statuses[0].step);
        // The list finds it by id and by name.
        const QString runs = m_dir.path() + QStringLiteral("/runs");
        QCOMPARE(RunRecord::resolve(runs, r->runId(), &error), dir);
        QVERIFY(!RunRecord::resolve(runs, QStringLiteral("scripted"), &error).isEmpty());
    }

    void concurrentRunsAreIsolated()
    {
        RunController a(local(2), config({QStringLiteral("--steps"), QStringLiteral("8")}),
                        options());
        RunController b(
            local(2),
            config({QStringLiteral("--steps"), QStringLiteral("2000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("1"), QStringLiteral("--fail-at"),
                    QStringLiteral("3"), QStringLiteral("--fail"), QStringLiteral("exit:9")}),
            options(300, 300));
        QSignalSpy doneA(&a, &RunController::finished);
        QSignalSpy doneB(&b, &RunController::finished);
        QString error;
        QVERIFY(a.start(&error));
        QVERIFY(b.start(&error));
        QTRY_VERIFY_WITH_TIMEOUT(doneA.count() == 1 && doneB.count() == 1, 30000);
        QCOMPARE(a.state(), RunState::Finished);
        QCOMPARE(b.state(), RunState::Failed);
        QVERIFY(a.runId() != b.runId());
        QVERIFY(a.masterPort() != b.masterPort());
        const QStringList linesA = fileLines(a.runDirectory() + QStringLiteral("/rank-1.log"));
        QVERIFY(!linesA.filter(b.runId()).size());
        QCOMPARE(linesA.filter(a.runId()).size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestRunController)
#include "tst_runcontroller.moc"
