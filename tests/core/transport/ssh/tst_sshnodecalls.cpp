// SPDX-License-Identifier: GPL-3.0-or-later
//
// SshNodeCalls: the calls run on the node's thread, in the order they were posted, and a blocking
// one hands back everything the node thread did. The data the calls touch is plain (no atomics,
// no lock of its own), so under scripts/sanitize.sh --thread a hand-over TSan cannot see is a
// reported race here.
#include "transport/ssh/sshnodecalls.h"

#include <QObject>
#include <QTest>
#include <QThread>

#include <memory>
#include <vector>

using namespace rankdeck;

class TestSshNodeCalls : public QObject
{
    Q_OBJECT
private slots:
    void callsRunInOrderOnTheNodeThread_data();
    void callsRunInOrderOnTheNodeThread();
    void blockingCallSeesWhatTheCallerWrote();
};

void TestSshNodeCalls::callsRunInOrderOnTheNodeThread_data()
{
    QTest::addColumn<int>("calls");
    QTest::newRow("one") << 1;
    QTest::newRow("a burst of 2000") << 2000;
}

void TestSshNodeCalls::callsRunInOrderOnTheNodeThread()
{
    QFETCH(int, calls);
    QThread thread;
    auto nodeCalls = std::make_unique<SshNodeCalls>();
    nodeCalls->moveToThread(&thread);
    thread.start();
    std::vector<int> order; // written only on the node thread until the blocking call returns
    int onOtherThread = 0;
    for (int i = 0; i < calls; ++i) {
        nodeCalls->post([&order, &onOtherThread, &thread, i] {
            order.push_back(i);
            onOtherThread += QThread::currentThread() != &thread;
        });
    }
    nodeCalls->postBlocking([] {});
    QCOMPARE(int(order.size()), calls);
    for (int i = 0; i < calls; ++i)
        QCOMPARE(order[size_t(i)], i);
    QCOMPARE(onOtherThread, 0);
    thread.quit();
    QVERIFY(thread.wait(10000));
    nodeCalls->handOver(); // as SshTransport does before deleting it here (after the thread)
}

void TestSshNodeCalls::blockingCallSeesWhatTheCallerWrote()
{
    QThread thread;
    auto nodeCalls = std::make_unique<SshNodeCalls>();
    nodeCalls->moveToThread(&thread);
    thread.start();
    // The caller writes, the node reads and writes back, the caller reads: both directions.
    auto shared = std::make_unique<std::vector<int>>(1000, 0);
    for (int round = 1; round <= 50; ++round) {
        for (int &v : *shared)
            v = round;
        int sum = 0;
        nodeCalls->postBlocking([&shared, &sum, round] {
            for (int &v : *shared) {
                sum += v;
                v = 3 * round;
            }
        });
        QCOMPARE(sum, 1000 * round);
        QCOMPARE(shared->front(), 3 * round);
        QCOMPARE(shared->back(), 3 * round);
    }
    thread.quit();
    QVERIFY(thread.wait(10000));
    nodeCalls->handOver(); // as SshTransport does before deleting it here (after the thread)
}

QTEST_GUILESS_MAIN(TestSshNodeCalls)
#include "tst_sshnodecalls.moc"
