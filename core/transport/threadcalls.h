// SPDX-License-Identifier: GPL-3.0-or-later
//
// The calls SshTransport makes on a node's thread, in the order it makes them. A queued
// QMetaObject::invokeMethod would do the same, but the hand-over would then be Qt's event queue
// alone, whose futex mutex ThreadSanitizer cannot see while Qt itself is not TSan-built: every
// call's captures and everything the caller wrote before it would be reported as a race. Here the
// call goes through a std::mutex that TSan sees, and only a bare "run one" wake-up goes through
// Qt (see docs/reliability.md, Sanitizers). It lives on the node's thread (a child of the node's
// SshNodeConnection, so it moves with it); post() and postBlocking() may be called from any other.
#pragma once

#include <QObject>

#include <deque>
#include <functional>
#include <mutex>

namespace rankdeck {

class ThreadCalls : public QObject
{
    Q_OBJECT
public:
    explicit ThreadCalls(QObject *parent = nullptr) : QObject(parent) {}

    // Runs call on this object's thread once the calls posted before it have run.
    void post(std::function<void()> call);
    // The same, and waits until it has run; everything it did is then visible to the caller.
    // Not from this object's own thread (it would wait for itself).
    void postBlocking(std::function<void()> call);
    // Takes the mutex and lets it go. Called on the node's thread as its last act
    // (QThread::finished) and by the owner after QThread::wait(), it makes everything the thread
    // did visible to the owner in a way TSan sees too (QThread::wait alone is a futex in Qt).
    void handOver();

private:
    Q_INVOKABLE void runOne();
    void enqueue(std::function<void()> call);

    std::mutex m_mutex;
    std::deque<std::function<void()>> m_calls;
};

} // namespace rankdeck
