// SPDX-License-Identifier: GPL-3.0-or-later
//
// RunManager with several runs at once, and the rank table and run list models over it,
// checked by QAbstractItemModelTester while real (scripted) runs change them.
#include "models/ranktablemodel.h"
#include "models/runlistmodel.h"
#include "record/runrecord.h"
#include "run/runcontroller.h"
#include "run/runmanager.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

class TestRunModels : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_worker;

    RunController::Options options() const
    {
        RunController::Options o;
        o.workerPath = m_worker;
        o.stopGraceMs = 300;
        o.termGraceMs = 300;
        return o;
    }
    static TrainingConfig config(const QString &name, const QStringList &args)
    {
        TrainingConfig c;
        c.name = name;
        c.workerArguments = args;
        return c;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_worker = QCoreApplication::applicationDirPath() + QStringLiteral("/scriptedworker");
        QVERIFY(QFileInfo(m_worker).isExecutable());
    }

    void managerRunsSeveralAndModelsFollow()
    {
        RunManager manager(m_dir.path() + QStringLiteral("/runs"));
        RunListModel list(&manager);
        QAbstractItemModelTester listTester(&list,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(list.rowCount(), 0);

        QString error;
        RunController *ok = manager.launch(
            Profile::builtinLocal(2),
            config(QStringLiteral("ok"), {QStringLiteral("--steps"), QStringLiteral("10")}),
            options(), &error);
        QVERIFY2(ok, qPrintable(error));
        RunController *bad = manager.launch(
            Profile::builtinLocal(3),
            config(QStringLiteral("bad"),
                   {QStringLiteral("--steps"), QStringLiteral("5000"),
                    QStringLiteral("--fail-rank"), QStringLiteral("2"), QStringLiteral("--fail-at"),
                    QStringLiteral("4"), QStringLiteral("--fail"), QStringLiteral("exit:6")}),
            options(), &error);
        QVERIFY2(bad, qPrintable(error));
        QCOMPARE(list.rowCount(), 2);
        QCOMPARE(manager.activeRuns().size(), 2);

        RankTableModel ranks;
        ranks.setUpdateInterval(20);
        QAbstractItemModelTester rankTester(&ranks,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        ranks.setController(bad);
        QCOMPARE(ranks.rowCount(), 3);
        QCOMPARE(ranks.columnCount(), int(RankTableModel::ColumnCount));

        QSignalSpy finished(&manager, &RunManager::runFinished);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);
        ranks.flush();
        QCOMPARE(manager.activeRuns().size(), 0);
        QCOMPARE(
            ranks.data(ranks.index(2, RankTableModel::StateColumn), RankTableModel::RankStateRole)
                .toInt(),
            int(RankState::Failed));
        QVERIFY(
            ranks.data(ranks.index(2, RankTableModel::StateColumn), RankTableModel::RootCauseRole)
                .toBool());
        QVERIFY(
            !ranks.data(ranks.index(0, RankTableModel::StateColumn), RankTableModel::RootCauseRole)
                 .toBool());
        QCOMPARE(
            ranks.data(ranks.index(0, RankTableModel::StateColumn), RankTableModel::RankStateRole)
                .toInt(),
            int(RankState::Stopped));
        QVERIFY(ranks.data(ranks.index(0, RankTableModel::PidColumn)).toString().toLongLong() > 0);

        // The list shows both with their final state and the bad run's root cause.
        const int okRow = list.rowOf(ok->runId());
        const int badRow = list.rowOf(bad->runId());
        QVERIFY(okRow >= 0 && badRow >= 0);
        QCOMPARE(list.data(list.index(okRow, 0), RunListModel::RunStateRole).toInt(),
                 int(RunState::Finished));
        QCOMPARE(list.data(list.index(badRow, 0), RunListModel::RunStateRole).toInt(),
                 int(RunState::Failed));
        QVERIFY(list.data(list.index(badRow, RunListModel::RootCauseColumn))
                    .toString()
                    .startsWith(QStringLiteral("rank 2")));

        // Switching the table to the other run, and reopening a run by name from the history.
        ranks.setController(ok);
        QCOMPARE(ranks.rowCount(), 2);
        QCOMPARE(manager.open(ok->runId(), &error), ok);
        RunManager other(m_dir.path() + QStringLiteral("/runs"));
        QCOMPARE(other.history().size(), 2);
        RunController *reopened = other.open(QStringLiteral("bad"), &error);
        QVERIFY2(reopened, qPrintable(error));
        QVERIFY(reopened->isReadOnly());
        QCOMPARE(reopened->rankStatus(2).state, RankState::Failed);
        ranks.setController(reopened);
        QCOMPARE(ranks.rowCount(), 3);
        other.closeRun(reopened->runId());
        QTRY_COMPARE(ranks.rowCount(), 0);
    }

    void inCollectiveColumn()
    {
        // A hung run's record once the flight recorder said where each rank waits: the rank
        // table shows it in its "In collective" column (also for a reopened run).
        RunManager manager(m_dir.path() + QStringLiteral("/runs3"));
        QString error;
        RunController *run = manager.launch(
            Profile::builtinLocal(2),
            config(QStringLiteral("fr"), {QStringLiteral("--steps"), QStringLiteral("5")}),
            options(), &error);
        QVERIFY2(run, qPrintable(error));
        QSignalSpy finished(run, &RunController::finished);
        QVERIFY(finished.wait(30000));
        RunRecord record = run->record();
        QJsonObject state = record.readState();
        QJsonArray statuses = state.value(QStringLiteral("ranks")).toArray();
        const QStringList cells{QStringLiteral("#19 barrier"), QStringLiteral("#19 all_reduce")};
        for (int r = 0; r < 2; ++r) {
            QJsonObject s = statuses[r].toObject();
            s[QStringLiteral("in_collective")] = cells[r];
            statuses[r] = s;
        }
        state[QStringLiteral("ranks")] = statuses;
        QVERIFY(record.writeState(state));
        std::unique_ptr<RunController> reopened(
            RunController::reopen(record.directory(), nullptr, &error));
        QVERIFY2(reopened, qPrintable(error));
        RankTableModel ranks;
        QAbstractItemModelTester tester(&ranks,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ranks.setController(reopened.get());
        QCOMPARE(ranks.headerData(RankTableModel::InCollectiveColumn, Qt::Horizontal).toString(),
                 QStringLiteral("In collective"));
        for (int r = 0; r < 2; ++r)
            QCOMPARE(ranks.data(ranks.index(r, RankTableModel::InCollectiveColumn)).toString(),
                     cells[r]);
        ranks.setController(run);
        QVERIFY(
            ranks.data(ranks.index(0, RankTableModel::InCollectiveColumn)).toString().isEmpty());
    }

    void stopAllStopsEveryRun()
    {
        RunManager manager(m_dir.path() + QStringLiteral("/runs2"));
        QString error;
        for (int i = 0; i < 2; ++i)
            QVERIFY(manager.launch(Profile::builtinLocal(2),
                                   config(QStringLiteral("long"),
                                          {QStringLiteral("--steps"), QStringLiteral("100000")}),
                                   options(), &error));
        QSignalSpy finished(&manager, &RunManager::runFinished);
        QTRY_VERIFY_WITH_TIMEOUT(manager.activeRuns().size() == 2 &&
                                     manager.activeRuns().at(0)->state() == RunState::Running &&
                                     manager.activeRuns().at(1)->state() == RunState::Running,
                                 20000);
        manager.stopAll();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 20000);
        for (const QList<QVariant> &args : finished)
            QCOMPARE(args.at(1).value<RunState>(), RunState::Stopped);
    }
};

QTEST_GUILESS_MAIN(TestRunModels)
#include "tst_runmodels.moc"
