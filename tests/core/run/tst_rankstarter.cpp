// SPDX-License-Identifier: GPL-3.0-or-later
// RankStarter (issue 31): the ranks after rank 0 start in slices of the event loop, all of them,
// in order, with rank 0's port; a stop, a failure or a new attempt stops the rest.
#include "run/rankstarter.h"

#include "run/runactions.h"
#include "run/rundata.h"

#include <QElapsedTimer>
#include <QThread>
#include <QtTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// What the starter asks of the run: each start costs ~1 ms, as a fork of a big process does.
class StartRecorder : public RunActions
{
public:
    QList<QPair<int, int>> started; // (rank, port)

    void startRank(int rank, int masterPort) override
    {
        started.append({rank, masterPort});
        QThread::usleep(1000);
    }
    void note(const QString &) override {}
    void requestStop() override {}
    void requestKill() override {}
    void requestStacks(int) override {}
    void requestProfile(int, const QList<int> &) override {}
    void profileEvent(int, const WorkerEvent &) override {}
    void announceSlowVerdict() override {}
    void recordFailure(const RankFailure &, const QString &) override {}
    void stopRank(int, bool) override {}
    void writeState() override {}
    void setState(RunState) override {}
    void setRankState(int, RankState, const QString &) override {}
    void checkAllDone() override {}
    Transport *runTransport() const override { return nullptr; }
    void announceRank(int) override {}
    void announceHang(const QList<int> &) override {}
    void announceRecordProblem(const QString &) override {}
    void announceLines(const QList<LogLine> &) override {}
    void announceEvent(const WorkerEvent &) override {}
    void announceStacks(int, const QString &) override {}
    void announceReport() override {}
    void announceVerdict() override {}
};

constexpr int kRanks = 300;
constexpr int kPort = 29512;

} // namespace

class TestRankStarter : public QObject
{
    Q_OBJECT

private slots:
    void init()
    {
        m_run = std::make_unique<RunData>();
        m_run->ranks.resize(kRanks);
        m_run->masterPort = kPort;
        m_actions = StartRecorder();
    }

    void startsEveryRankInSlices()
    {
        RankStarter starter(*m_run, m_actions);
        starter.startOthers(kPort);
        // ~300 ms of starts: the call returns after its first slice, whatever the load (a
        // slower machine only ends the slice sooner, in ranks).
        QVERIFY(!m_actions.started.isEmpty());
        QVERIFY2(m_actions.started.size() < kRanks - 1,
                 qPrintable(QString::number(m_actions.started.size())));
        QVERIFY(starter.busy());
        QTRY_COMPARE_WITH_TIMEOUT(m_actions.started.size(), kRanks - 1, 60000);
        for (int i = 0; i < m_actions.started.size(); ++i)
            QCOMPARE(m_actions.started[i], qMakePair(i + 1, kPort));
        QTRY_VERIFY(!starter.busy());
    }

    void stopsTheRest_data()
    {
        QTest::addColumn<QString>("what");
        QTest::newRow("stop") << u"stop"_s;
        QTest::newRow("new attempt") << u"attempt"_s;
    }

    void stopsTheRest()
    {
        QFETCH(QString, what);
        RankStarter starter(*m_run, m_actions);
        starter.startOthers(kPort);
        const qsizetype before = m_actions.started.size();
        QVERIFY(before < kRanks - 1);
        if (what == u"stop"_s) {
            m_run->userStop = true;
        } else {
            m_run->attempt = 1;
            m_run->masterPort = 0;
        }
        QTRY_VERIFY(!starter.busy());
        QCOMPARE(m_actions.started.size(), before);
    }

    // A new attempt's rank 0 reported its port while the last slices of the previous one were
    // pending: the rest start with the new port, from rank 1 (RunController skips those started).
    void restartsWithTheNewPort()
    {
        RankStarter starter(*m_run, m_actions);
        starter.startOthers(kPort);
        m_run->attempt = 1;
        m_run->masterPort = kPort + 1;
        starter.startOthers(kPort + 1);
        QTRY_VERIFY_WITH_TIMEOUT(!starter.busy(), 60000);
        QCOMPARE(m_actions.started.last(), qMakePair(kRanks - 1, kPort + 1));
        QVERIFY(std::none_of(m_actions.started.cbegin(), m_actions.started.cend(),
                             [](const QPair<int, int> &s) { return s.first == 0; }));
    }

private:
    std::unique_ptr<RunData> m_run;
    StartRecorder m_actions;
};

QTEST_GUILESS_MAIN(TestRankStarter)
#include "tst_rankstarter.moc"
