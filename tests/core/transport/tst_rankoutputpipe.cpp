// SPDX-License-Identifier: GPL-3.0-or-later
//
// RankOutputPipe on a real pipe, written from the test itself: a trickle is read once and then
// left alone until the owner resumes it (one wake-up a batch, not one a line); a pipe read half
// full or more is a flood and stays watched, so its writer never waits out a pause; the end of
// the stream closes it.
#include "transport/rankoutputpipe.h"

#include <QSignalSpy>
#include <QTest>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

using namespace rankdeck;

class TestRankOutputPipe : public QObject
{
    Q_OBJECT
private slots:
    void aTrickleWaitsForResume();
    void aFloodIsFollowedAtOnce();
    void drainReadsWhatIsLeftAndTheEnd();
};

void TestRankOutputPipe::aTrickleWaitsForResume()
{
    RankOutputPipe pipe;
    QVERIFY2(pipe.isValid(), qPrintable(pipe.errorString()));
    QSignalSpy output(&pipe, &RankOutputPipe::output);
    QSignalSpy paused(&pipe, &RankOutputPipe::paused);

    QCOMPARE(::write(pipe.writeEnd(), "step 1\n", 7), 7);
    QVERIFY(output.wait());
    QCOMPARE(output.takeFirst().at(0).toByteArray(), QByteArray("step 1\n"));
    QCOMPARE(paused.count(), 1);
    QVERIFY(pipe.isPaused());

    // Paused: the next line waits in the pipe however long the event loop runs.
    QCOMPARE(::write(pipe.writeEnd(), "step 2\n", 7), 7);
    QTest::qWait(100);
    QCOMPARE(output.count(), 0);

    pipe.resume();
    QVERIFY(!pipe.isPaused());
    QVERIFY(output.wait());
    QCOMPARE(output.takeFirst().at(0).toByteArray(), QByteArray("step 2\n"));
}

void TestRankOutputPipe::aFloodIsFollowedAtOnce()
{
    RankOutputPipe pipe;
    QVERIFY(pipe.isValid());
    QSignalSpy output(&pipe, &RankOutputPipe::output);
    QSignalSpy paused(&pipe, &RankOutputPipe::paused);

    // Fill the pipe to the brim, whatever size the system granted it.
    const int w = pipe.writeEnd();
    QVERIFY(::fcntl(w, F_SETFL, ::fcntl(w, F_GETFL) | O_NONBLOCK) == 0);
    const QByteArray block(4096, 'x');
    qsizetype written = 0;
    for (;;) {
        const ssize_t n = ::write(w, block.constData(), size_t(block.size()));
        if (n <= 0) {
            QCOMPARE(errno, EAGAIN);
            break;
        }
        written += n;
    }
    QVERIFY(written >= 64 * 1024);
    QVERIFY(output.wait());
    QCOMPARE(output.takeFirst().at(0).toByteArray().size(), written);
    QCOMPARE(paused.count(), 0);
    QVERIFY(!pipe.isPaused());

    // Still watched: a small write after the flood is read without a resume.
    QCOMPARE(::write(w, "tail\n", 5), 5);
    QVERIFY(output.wait());
    QCOMPARE(output.takeFirst().at(0).toByteArray(), QByteArray("tail\n"));
}

void TestRankOutputPipe::drainReadsWhatIsLeftAndTheEnd()
{
    RankOutputPipe pipe;
    QVERIFY(pipe.isValid());
    QSignalSpy output(&pipe, &RankOutputPipe::output);
    QCOMPARE(::write(pipe.writeEnd(), "last words\n", 11), 11);
    pipe.closeWriteEnd();
    QCOMPARE(pipe.writeEnd(), -1);
    // Without the event loop: what the owner does when the rank has ended.
    QCOMPARE(pipe.drain(), qsizetype(11));
    QCOMPARE(output.count(), 1);
    QCOMPARE(output.takeFirst().at(0).toByteArray(), QByteArray("last words\n"));
    // The end of the stream closed the read end: nothing more, and no error.
    QCOMPARE(pipe.drain(), qsizetype(0));
    QVERIFY(!pipe.isValid());
}

QTEST_GUILESS_MAIN(TestRankOutputPipe)
#include "tst_rankoutputpipe.moc"
