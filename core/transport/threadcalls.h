// SPDX-License-Identifier: GPL-3.0-or-later
//
// How a transport and the connection it runs on a thread of its own call each other: the calls
// run on the receiving thread in the order they were made. A queued QMetaObject::invokeMethod or
// queued connection would do the same, but the hand-over would then be Qt's event queue alone,
// whose futex mutex ThreadSanitizer cannot see while Qt itself is not TSan-built: every call's
// captures and everything the caller wrote before it would be reported as a race. Here the call
// goes through a std::mutex that TSan sees, and only a bare "run one" wake-up goes through Qt
// (see docs/reliability.md, Sanitizers). The SSH transport (a connection per node) and the Slurm
// transport (one connection to the login) both use it, one way with post() and back with relay().
// A ThreadCalls lives on the receiving thread (a child of the connection, so it moves with it);
// post() and postBlocking() may be called from any other.
#pragma once

#include <QObject>

class QThread;

#include <deque>
#include <functional>
#include <mutex>

namespace rankdeck {

class ThreadCalls : public QObject
{
    Q_OBJECT
public:
    explicit ThreadCalls(QObject *parent = nullptr) : QObject(parent) {}

    // The calls to `object` once it lives on `thread`: a child of it, moved there with it, that
    // hands over when the thread finishes. Before thread->start().
    static ThreadCalls *movedWith(QObject *object, QThread *thread);

    // Runs call on this object's thread once the calls posted before it have run.
    void post(std::function<void()> call);
    // The same, and waits until it has run; everything it did is then visible to the caller.
    // Not from this object's own thread (it would wait for itself).
    void postBlocking(std::function<void()> call);
    // Takes the mutex and lets it go. Called on the node's thread as its last act
    // (QThread::finished) and by the owner after QThread::wait(), it makes everything the thread
    // did visible to the owner in a way TSan sees too (QThread::wait alone is a futex in Qt).
    void handOver();
    // Ends the thread this object lives on (quit, wait) and takes over what it did (handOver()),
    // after which the objects that lived there may be deleted from the caller's thread.
    void endThread();

private:
    Q_INVOKABLE void runOne();
    void enqueue(std::function<void()> call);

    std::mutex m_mutex;
    std::deque<std::function<void()>> m_calls;
};

// Delivers sender's signal to receiver's slot through to (on receiver's thread), in the order
// of the emits as a queued connection would, but with the arguments handed over through to's
// mutex. The signal's arguments are copied on the sender's thread.
template <typename Sender, typename Signal, typename Receiver, typename Slot>
void relay(Sender *sender, Signal signal, ThreadCalls *to, Receiver *receiver, Slot slot)
{
    QObject::connect(
        sender, signal, sender,
        [to, receiver, slot](auto... args) {
            to->post([receiver, slot, args...] { (receiver->*slot)(args...); });
        },
        Qt::DirectConnection);
}

} // namespace rankdeck
