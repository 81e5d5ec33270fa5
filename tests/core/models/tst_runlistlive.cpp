// SPDX-License-Identifier: GPL-3.0-or-later
//
// The run list follows the runs directory (issue 31): a run that another process records shows
// in an open list within seconds, with its state, and its state changes show as they are
// written, without a restart. Opened from the list, such a run is followed too: its lines,
// points and ranks go on arriving, and it ends when that process ends it. Checked by
// QAbstractItemModelTester while it happens; waits are generous (QTRY_ with 30 s) and nothing here
// times how fast it was, so a loaded machine only makes it slower.
#include "models/logmodel.h"
#include "models/ranktablemodel.h"
#include "models/runlistmodel.h"
#include "record/runrecord.h"
#include "record/runstatefile.h"
#include "run/runmanager.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "testprocesses.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestRunListLive : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_home;
    QString m_cli;
    QString m_worker;

    QProcessEnvironment cliEnvironment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"XDG_DATA_HOME"_s, m_home.path() + u"/data"_s);
        env.insert(u"XDG_CONFIG_HOME"_s, m_home.path() + u"/config"_s);
        env.insert(u"RANKDECK_WORKER"_s, m_worker);
        return env;
    }
    QString runsDir() const { return m_home.path() + u"/data/rankdeck/runs"_s; }

    static int rowNamed(const RunListModel &list, const QString &name)
    {
        for (int r = 0; r < list.rowCount(); ++r)
            if (list.run(r).name == name)
                return r;
        return -1;
    }
    static RunState stateOf(const RunListModel &list, const QString &name)
    {
        const int row = rowNamed(list, name);
        return row < 0
                   ? RunState::Preparing
                   : RunState(list.data(list.index(row, 0), RunListModel::RunStateRole).toInt());
    }

    // A run recorded as another launcher would, in state `state` with `world` ranks.
    static bool writeState(RunRecord &record, RunState state, int world, RankState rankState)
    {
        RunStateFile s;
        s.id = record.id();
        s.name = record.name();
        s.state = state;
        s.launcherPid = QCoreApplication::applicationPid(); // alive: not "launcher gone"
        for (int r = 0; r < world; ++r) {
            RankStatus rank;
            rank.rank = r;
            rank.state = rankState;
            s.ranks << rank;
        }
        return record.writeState(s.toJson());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        m_cli = bin + u"/rankdeck-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        m_worker = QCoreApplication::applicationDirPath() + u"/scriptedworker"_s;
        QVERIFY2(QFileInfo(m_worker).isExecutable(), qPrintable(m_worker));
    }

    void recordWrittenElsewhereShows()
    {
        // The list is open before the run exists; the record is written by hand, as another
        // launcher writes it (no controller of this manager behind it).
        const QString dir = m_home.path() + u"/byhand"_s;
        RunManager manager(dir);
        RunListModel list(&manager);
        QAbstractItemModelTester tester(&list,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(list.rowCount(), 0);

        RunRecord record;
        QString error;
        TrainingConfig config;
        config.name = u"byhand"_s;
        QVERIFY2(record.create(dir, RunRecord::newRunId(config.name), config.name,
                               Profile::builtinLocal(32), config, &error),
                 qPrintable(error));
        QVERIFY(writeState(record, RunState::Running, 32, RankState::Running));
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(list, u"byhand"_s), RunState::Running, 30000);
        const int row = rowNamed(list, u"byhand"_s);
        QCOMPARE(list.data(list.index(row, RunListModel::RanksColumn)).toInt(), 32);
        QCOMPARE(list.data(list.index(row, RunListModel::RanksColumn), Qt::ToolTipRole).toString(),
                 u"ranks 0–31 running"_s);

        // Its state as it changes: the run in progress is followed.
        QVERIFY(writeState(record, RunState::Finished, 32, RankState::Finished));
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(list, u"byhand"_s), RunState::Finished, 30000);
        QCOMPARE(list.data(list.index(rowNamed(list, u"byhand"_s), RunListModel::RanksColumn),
                           Qt::ToolTipRole)
                     .toString(),
                 u"ranks 0–31 finished"_s);

        // A second run comes in as a row of its own: a row the user had selected stays where it
        // is (no reset).
        const QPersistentModelIndex selected = list.index(rowNamed(list, u"byhand"_s), 0);
        QSignalSpy resets(&list, &QAbstractItemModel::modelReset);
        RunRecord second;
        QVERIFY2(second.create(dir, RunRecord::newRunId(u"second"_s), u"second"_s,
                               Profile::builtinLocal(2), config, &error),
                 qPrintable(error));
        QVERIFY(writeState(second, RunState::Running, 2, RankState::Running));
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(list, u"second"_s), RunState::Running, 30000);
        QCOMPARE(list.rowCount(), 2);
        QVERIFY(selected.isValid());
        QCOMPARE(selected.data(RunListModel::RunIdRole).toString(), record.id());
        QCOMPARE(resets.count(), 0);

        // A run directory removed (by hand, or by another GUI's delete) leaves the list.
        QVERIFY(QDir(record.directory()).removeRecursively());
        QTRY_COMPARE_WITH_TIMEOUT(list.rowCount(), 1, 30000);
        QCOMPARE(list.run(0).id, second.id());
        QCOMPARE(resets.count(), 0);
    }

    void cliRunShowsAndFollows()
    {
        // A GUI's list open while rankdeck-cli, another process, launches a run into the same
        // runs directory: the run appears running, and its end (stopped from a second CLI)
        // shows too.
        RunManager manager(runsDir());
        RunListModel list(&manager);
        QAbstractItemModelTester tester(&list,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(list.rowCount(), 0);

        QProcess launcher;
        launcher.setProcessEnvironment(cliEnvironment());
        launcher.setProcessChannelMode(QProcess::MergedChannels);
        launcher.start(m_cli,
                       {u"launch"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s, u"fromcli"_s,
                        u"--"_s, u"--steps"_s, u"100000"_s, u"--step-delay-ms"_s, u"50"_s});
        QVERIFY2(launcher.waitForStarted(30000), qPrintable(launcher.errorString()));
        auto cleanup = qScopeGuard([&] {
            if (launcher.state() != QProcess::NotRunning) {
                launcher.terminate();
                if (!launcher.waitForFinished(30000))
                    launcher.kill();
                launcher.waitForFinished(10000);
            }
        });

        QTRY_COMPARE_WITH_TIMEOUT(stateOf(list, u"fromcli"_s), RunState::Running, 30000);
        const RunInfo shown = list.run(rowNamed(list, u"fromcli"_s));
        QCOMPARE(shown.worldSize, 2);
        QVERIFY2(!shown.launcherGone, "the CLI launcher runs: not \"launcher gone\"");
        // Nothing was asked of the manager: the list was read again on its own.
        QCOMPARE(manager.activeRuns().size(), 0);

        const rankdeck::testing::CommandResult stop =
            rankdeck::testing::runCommand(m_cli, {u"stop"_s, shown.id}, cliEnvironment(), 60000);
        QVERIFY2(stop.code == 0, qPrintable(stop.out + stop.err));
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(list, u"fromcli"_s), RunState::Stopped, 30000);
        // The launcher ends with its run (it may have ended while the list was awaited).
        QTRY_COMPARE_WITH_TIMEOUT(launcher.state(), QProcess::NotRunning, 30000);
    }

    void openedCliRunFollows()
    {
        // A run rankdeck-cli drives, opened here from the list while it goes on: what the CLI
        // writes after the opening reaches this controller's stores and ranks, the models over
        // them take it in, and the run's end arrives as finished().
        RunManager manager(runsDir());
        RunListModel list(&manager);
        QProcess launcher;
        launcher.setProcessEnvironment(cliEnvironment());
        launcher.setProcessChannelMode(QProcess::MergedChannels);
        launcher.start(m_cli, {u"launch"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s,
                               u"followed"_s, u"--"_s, u"--steps"_s, u"100000"_s,
                               u"--step-delay-ms"_s, u"50"_s, u"--lines-per-step"_s, u"2"_s});
        QVERIFY2(launcher.waitForStarted(30000), qPrintable(launcher.errorString()));
        auto cleanup = qScopeGuard([&] {
            if (launcher.state() != QProcess::NotRunning) {
                launcher.terminate();
                if (!launcher.waitForFinished(30000))
                    launcher.kill();
                launcher.waitForFinished(10000);
            }
        });
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(list, u"followed"_s), RunState::Running, 30000);
        const QString id = list.run(rowNamed(list, u"followed"_s)).id;

        QString error;
        RunController *run = manager.open(id, &error);
        QVERIFY2(run, qPrintable(error));
        QVERIFY(run->isReadOnly());
        QVERIFY(!isTerminal(run->state()));
        QCOMPARE(manager.activeRuns().size(), 0); // followed, not driven here
        LogStore *logs = run->logStore();
        MetricsStore *metrics = run->metricsStore();
        LogModel merged(logs, LogStore::AllRanks);
        QAbstractItemModelTester logTester(&merged,
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
        RankTableModel table;
        table.setController(run);
        QAbstractItemModelTester tableTester(
            &table, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy ranksChanged(run, &RunController::rankChanged);
        QSignalSpy stateChanged(run, &RunController::stateChanged);
        QSignalSpy finished(run, &RunController::finished);

        const qint64 linesAtOpen = logs->lineCount(LogStore::AllRanks);
        const qint64 pointsAtOpen = metrics->pointCount(0, u"loss"_s);
        const qint64 stepAtOpen = run->rankStatus(0).step;
        QTRY_VERIFY_WITH_TIMEOUT(logs->lineCount(LogStore::AllRanks) > linesAtOpen + 20, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(metrics->pointCount(0, u"loss"_s) > pointsAtOpen + 5, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(run->rankStatus(0).step > stepAtOpen + 5, 30000);
        QVERIFY(!ranksChanged.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(merged.rowCount() > 20, 30000);
        // The new lines are the ranks' own, in order, each once.
        const QList<LogLine> arrived = logs->recentLines(LogStore::AllRanks, linesAtOpen, 200);
        QVERIFY(!arrived.isEmpty());
        for (qsizetype i = 0; i < arrived.size(); ++i) {
            QCOMPARE(arrived[i].sequence, arrived.first().sequence + i);
            QVERIFY2(arrived[i].rank == 0 || arrived[i].rank == 1, qPrintable(arrived[i].text));
        }
        const auto stepColumn = [&](int rank) {
            return table.data(table.index(rank, RankTableModel::StepColumn), Qt::DisplayRole)
                .toString();
        };
        const QString stepShown = stepColumn(0);
        QTRY_VERIFY_WITH_TIMEOUT(stepColumn(0) != stepShown, 30000);

        const rankdeck::testing::CommandResult stop =
            rankdeck::testing::runCommand(m_cli, {u"stop"_s, id}, cliEnvironment(), 60000);
        QVERIFY2(stop.code == 0, qPrintable(stop.out + stop.err));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QCOMPARE(run->state(), RunState::Stopped);
        QCOMPARE(stateChanged.last().first().value<RunState>(), RunState::Stopped);
        QTRY_COMPARE_WITH_TIMEOUT(launcher.state(), QProcess::NotRunning, 30000);
        for (int r = 0; r < 2; ++r)
            QVERIFY2(isTerminal(run->rankStatus(r).state), qPrintable(QString::number(r)));

        // Followed to the end, the views hold what a reopening of the finished record holds:
        // no line or point missing or twice.
        std::unique_ptr<RunController> reopened(
            RunController::reopen(run->runDirectory(), nullptr, &error));
        QVERIFY2(reopened, qPrintable(error));
        for (int r : {LogStore::AllRanks, 0, 1})
            QCOMPARE(logs->lineCount(r), reopened->logStore()->lineCount(r));
        QCOMPARE(metrics->totalPoints(), reopened->metricsStore()->totalPoints());
        QCOMPARE(logs->recentLines(LogStore::AllRanks, 0).last().text,
                 reopened->logStore()->recentLines(LogStore::AllRanks, 0).last().text);
    }
};

QTEST_GUILESS_MAIN(TestRunListLive)
#include "tst_runlistlive.moc"
