// SPDX-License-Identifier: GPL-3.0-or-later
//
// ThreadCalls: the calls run on the node's thread, in the order they were posted, and a blocking
// one hands back everything the node thread did. The data the calls touch is plain (no atomics,
// no lock of its own), so under scripts/sanitize.sh --thread a hand-over TSan cannot see is a
// reported race here.
#include "transport/threadcalls.h"

#include <QObject>
#include <QTest>
#include <QThread>

#include <memory>
#include <vector>

using namespace rankdeck;

// A connection that emits from its own thread, as SshNodeConnection and SlurmJobConnection do.
class Emitter : public QObject
{
    Q_OBJECT
signals:
    void chunk(int index, const QByteArray &data);
};

// The transport's side: it records what arrived and on which thread.
class Receiver : public QObject
{
    Q_OBJECT
public:
    void onChunk(int index, const QByteArray &data)
    {
        indexes.push_back(index);
        sizes.push_back(int(data.size()));
        offThread += QThread::currentThread() != thread();
    }
    std::vector<int> indexes;
    std::vector<int> sizes;
    int offThread = 0;
};

class TestThreadCalls : public QObject
{
    Q_OBJECT
private slots:
    void callsRunInOrderOnTheNodeThread_data();
    void callsRunInOrderOnTheNodeThread();
    void blockingCallSeesWhatTheCallerWrote();
    void relayDeliversSignalsInOrderOnTheReceiversThread();
};

void TestThreadCalls::callsRunInOrderOnTheNodeThread_data()
{
    QTest::addColumn<int>("calls");
    QTest::newRow("one") << 1;
    QTest::newRow("a burst of 2000") << 2000;
}

void TestThreadCalls::callsRunInOrderOnTheNodeThread()
{
    QFETCH(int, calls);
    QThread thread;
    auto nodeCalls = std::make_unique<ThreadCalls>();
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
    nodeCalls->handOver(); // as the transports do before deleting it here (after the thread)
}

void TestThreadCalls::blockingCallSeesWhatTheCallerWrote()
{
    QThread thread;
    auto nodeCalls = std::make_unique<ThreadCalls>();
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
    nodeCalls->handOver(); // as the transports do before deleting it here (after the thread)
}

void TestThreadCalls::relayDeliversSignalsInOrderOnTheReceiversThread()
{
    QThread thread;
    Emitter emitter;
    Receiver receiver;
    ThreadCalls fromEmitter; // on this (the receiver's) thread
    relay(&emitter, &Emitter::chunk, &fromEmitter, &receiver, &Receiver::onChunk);
    emitter.moveToThread(&thread);
    thread.start();
    constexpr int kChunks = 500;
    QMetaObject::invokeMethod(&emitter, [&emitter] {
        for (int i = 0; i < kChunks; ++i)
            emit emitter.chunk(i, QByteArray(i % 64, 'x'));
    });
    QTRY_COMPARE_WITH_TIMEOUT(int(receiver.indexes.size()), kChunks, 30000);
    for (int i = 0; i < kChunks; ++i) {
        QCOMPARE(receiver.indexes[size_t(i)], i);
        QCOMPARE(receiver.sizes[size_t(i)], i % 64);
    }
    QCOMPARE(receiver.offThread, 0);
    thread.quit();
    QVERIFY(thread.wait(10000));
}

QTEST_GUILESS_MAIN(TestThreadCalls)
#include "tst_threadcalls.moc"
