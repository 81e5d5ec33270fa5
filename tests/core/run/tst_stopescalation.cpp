// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/stopescalation.h"

#include "runparts.h"

#include <QSignalSpy>
#include <QtTest>

#include <csignal>

using namespace rankdeck;
using rankdeck::testing::RecordingTransport;
using Sent = RecordingTransport::Signal;

namespace {

constexpr int kStopGraceMs = 50;
constexpr int kTermGraceMs = 50;
// Long enough for every pending step of one escalation to have fired, had it not been cancelled.
constexpr int kAfterAllMs = 4 * (kStopGraceMs + kTermGraceMs);

} // namespace

class TestStopEscalation : public QObject
{
    Q_OBJECT
private slots:
    void init();
    void cleanup();

    void stopEscalatesToKill();
    void exitCancels_data();
    void exitCancels();
    void resetCancelsAndForgets();
    void killIsImmediate();
    void killAfterGrace();
    void killAfterGraceCancelledByExit();
    void ranksAreIndependent();
    void restartAfterExitEscalatesAgain();
    void worksWithoutTransport();

private:
    RecordingTransport *m_transport = nullptr;
    StopEscalation *m_stops = nullptr;
};

void TestStopEscalation::init()
{
    m_transport = new RecordingTransport;
    m_stops = new StopEscalation(kStopGraceMs, kTermGraceMs);
    m_stops->setTransport(m_transport);
}

void TestStopEscalation::cleanup()
{
    delete m_stops;
    delete m_transport;
    m_stops = nullptr;
    m_transport = nullptr;
}

void TestStopEscalation::stopEscalatesToKill()
{
    QCOMPARE(m_stops->stopGraceMs(), kStopGraceMs);
    QCOMPARE(m_stops->termGraceMs(), kTermGraceMs);
    QSignalSpy messages(m_stops, &StopEscalation::message);
    m_stops->stop(1);
    // `stop` right away on the control channel, no signal yet.
    QCOMPARE(m_transport->stdinWrites.size(), 1);
    QCOMPARE(m_transport->stdinWrites[0].first, 1);
    QCOMPARE(m_transport->stdinWrites[0].second, QByteArray("stop\n"));
    QVERIFY(m_transport->sentSignals.isEmpty());
    QVERIFY(!m_stops->sent(1, SIGTERM));

    QVERIFY(messages.wait(5000));
    QCOMPARE(messages.last().at(0).toString(),
             QStringLiteral("rank 1 did not stop within 50 ms; sending SIGTERM"));
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{1, SIGTERM}}));
    QVERIFY(m_stops->sent(1, SIGTERM));
    QVERIFY(!m_stops->sent(1, SIGKILL));

    QVERIFY(messages.wait(5000));
    QCOMPARE(messages.last().at(0).toString(),
             QStringLiteral("rank 1 ignored SIGTERM for 50 ms; sending SIGKILL"));
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{1, SIGTERM}, {1, SIGKILL}}));
    QVERIFY(m_stops->sent(1, SIGKILL));
    QVERIFY(!m_stops->sent(0, SIGKILL));

    // Nothing after SIGKILL.
    QVERIFY(!messages.wait(kAfterAllMs));
    QCOMPARE(m_transport->sentSignals.size(), 2);
    QCOMPARE(m_transport->stdinWrites.size(), 1);
}

void TestStopEscalation::exitCancels_data()
{
    QTest::addColumn<int>("signalsBeforeExit");
    QTest::newRow("exits after stop") << 0;
    QTest::newRow("exits after SIGTERM") << 1;
}

void TestStopEscalation::exitCancels()
{
    QFETCH(int, signalsBeforeExit);
    QSignalSpy messages(m_stops, &StopEscalation::message);
    m_stops->stop(2);
    // wait() returns right after the SIGTERM step, well before the SIGKILL step is due.
    if (signalsBeforeExit > 0)
        QVERIFY(messages.wait(5000));
    QCOMPARE(m_transport->sentSignals.size(), signalsBeforeExit);
    m_stops->rankExited(2);
    QVERIFY(!messages.wait(kAfterAllMs));
    QCOMPARE(m_transport->sentSignals.size(), signalsBeforeExit);
    QVERIFY(!m_stops->sent(2, SIGKILL));
    // What was sent stays known: the failure policy reads it right after the exit.
    QCOMPARE(m_stops->sent(2, SIGTERM), signalsBeforeExit > 0);
}

void TestStopEscalation::resetCancelsAndForgets()
{
    QSignalSpy messages(m_stops, &StopEscalation::message);
    m_stops->stop(0);
    m_stops->stop(1);
    while (messages.size() < 2) // both SIGTERMed, their SIGKILL steps pending
        QVERIFY(messages.wait(5000));
    QCOMPARE(m_transport->sentSignals.size(), 2);
    QVERIFY(m_transport->sentSignals.contains(Sent{0, SIGTERM}));
    QVERIFY(m_transport->sentSignals.contains(Sent{1, SIGTERM}));
    QVERIFY(m_stops->sent(0, SIGTERM));
    m_stops->reset();
    QVERIFY(!m_stops->sent(0, SIGTERM));
    QVERIFY(!m_stops->sent(1, SIGTERM));
    const qsizetype before = messages.size();
    QTest::qWait(kAfterAllMs);
    QCOMPARE(messages.size(), before);
    QCOMPARE(m_transport->sentSignals.size(), 2); // no SIGKILL reaches the new attempt's processes
    QVERIFY(!m_stops->sent(0, SIGKILL));
}

void TestStopEscalation::killIsImmediate()
{
    QSignalSpy messages(m_stops, &StopEscalation::message);
    m_stops->kill(3);
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{3, SIGKILL}}));
    QVERIFY(m_stops->sent(3, SIGKILL));
    QVERIFY(m_transport->stdinWrites.isEmpty());
    QVERIFY(messages.isEmpty());

    // A kill supersedes a pending escalation.
    m_stops->stop(4);
    m_stops->kill(4);
    QVERIFY(!messages.wait(kAfterAllMs));
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{3, SIGKILL}, {4, SIGKILL}}));
}

void TestStopEscalation::killAfterGrace()
{
    QSignalSpy messages(m_stops, &StopEscalation::message);
    QElapsedTimer timer;
    timer.start();
    m_stops->killIfStillRunningAfterGrace(1);
    QVERIFY(m_transport->stdinWrites.isEmpty()); // no `stop`, no SIGTERM
    QVERIFY(messages.wait(5000));
    QVERIFY2(timer.elapsed() >= kStopGraceMs + kTermGraceMs - 10,
             qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(messages.size(), 1);
    QCOMPARE(messages.last().at(0).toString(),
             QStringLiteral("rank 1 did not exit after its failure; killing it"));
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{1, SIGKILL}}));
    QVERIFY(!m_stops->sent(1, SIGTERM));
    QVERIFY(m_transport->stdinWrites.isEmpty());
}

void TestStopEscalation::killAfterGraceCancelledByExit()
{
    QSignalSpy messages(m_stops, &StopEscalation::message);
    m_stops->killIfStillRunningAfterGrace(1);
    m_stops->rankExited(1);
    QVERIFY(!messages.wait(kAfterAllMs));
    QVERIFY(m_transport->sentSignals.isEmpty());
}

void TestStopEscalation::ranksAreIndependent()
{
    m_stops->stop(0);
    m_stops->stop(1);
    m_stops->rankExited(0); // rank 0 obeys `stop`, rank 1 does not
    QTRY_COMPARE_WITH_TIMEOUT(m_transport->sentSignals.size(), 2, 5000);
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{1, SIGTERM}, {1, SIGKILL}}));
    QTest::qWait(kAfterAllMs);
    QCOMPARE(m_transport->sentSignals.size(), 2);
    QVERIFY(!m_stops->sent(0, SIGTERM));
}

void TestStopEscalation::restartAfterExitEscalatesAgain()
{
    // The serial of an exit must not also cancel the escalation of the rank's next process.
    m_stops->stop(0);
    m_stops->rankExited(0);
    m_stops->reset();
    m_stops->stop(0);
    QTRY_COMPARE_WITH_TIMEOUT(m_transport->sentSignals.size(), 2, 5000);
    QCOMPARE(m_transport->sentSignals, (QList<Sent>{{0, SIGTERM}, {0, SIGKILL}}));
    QCOMPARE(m_transport->stdinWrites.size(), 2);
}

void TestStopEscalation::worksWithoutTransport()
{
    StopEscalation stops(10, 10);
    QSignalSpy messages(&stops, &StopEscalation::message);
    stops.stop(0);
    QTRY_COMPARE_WITH_TIMEOUT(messages.size(), 2, 5000);
    // It still remembers what it would have sent.
    QVERIFY(stops.sent(0, SIGTERM));
    QVERIFY(stops.sent(0, SIGKILL));
    // A transport that went away (QPointer) is not used either.
    auto *gone = new RecordingTransport;
    stops.setTransport(gone);
    delete gone;
    stops.kill(1);
    QVERIFY(stops.sent(1, SIGKILL));
}

QTEST_GUILESS_MAIN(TestStopEscalation)
#include "tst_stopescalation.moc"
