// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/threadcalls.h"

#include <QThread>

#include <utility>

namespace rankdeck {

ThreadCalls *ThreadCalls::movedWith(QObject *object, QThread *thread)
{
    auto *calls = new ThreadCalls(object);
    object->moveToThread(thread);
    // The thread's last act, so that the owner's handOver() after wait() sees all it did.
    QObject::connect(
        thread, &QThread::finished, calls, [calls] { calls->handOver(); }, Qt::DirectConnection);
    return calls;
}

void ThreadCalls::endThread()
{
    QThread *ownThread = thread();
    ownThread->quit();
    ownThread->wait();
    handOver();
}

void ThreadCalls::enqueue(std::function<void()> call)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_calls.push_back(std::move(call));
}

void ThreadCalls::post(std::function<void()> call)
{
    enqueue(std::move(call));
    // One wake-up per call: each runs exactly one, so the order is the order of post().
    QMetaObject::invokeMethod(this, "runOne", Qt::QueuedConnection);
}

void ThreadCalls::postBlocking(std::function<void()> call)
{
    enqueue(std::move(call));
    QMetaObject::invokeMethod(this, "runOne", Qt::BlockingQueuedConnection);
    handOver(); // runOne() handed over after the call
}

void ThreadCalls::handOver()
{
    std::lock_guard<std::mutex> lock(m_mutex);
}

void ThreadCalls::runOne()
{
    std::function<void()> call;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_calls.empty())
            return;
        call = std::move(m_calls.front());
        m_calls.pop_front();
    }
    call();
    handOver();
}

} // namespace rankdeck
