// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshnodecalls.h"

#include <utility>

namespace rankdeck {

void SshNodeCalls::enqueue(std::function<void()> call)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_calls.push_back(std::move(call));
}

void SshNodeCalls::post(std::function<void()> call)
{
    enqueue(std::move(call));
    // One wake-up per call: each runs exactly one, so the order is the order of post().
    QMetaObject::invokeMethod(this, "runOne", Qt::QueuedConnection);
}

void SshNodeCalls::postBlocking(std::function<void()> call)
{
    enqueue(std::move(call));
    QMetaObject::invokeMethod(this, "runOne", Qt::BlockingQueuedConnection);
    handOver(); // runOne() handed over after the call
}

void SshNodeCalls::handOver()
{
    std::lock_guard<std::mutex> lock(m_mutex);
}

void SshNodeCalls::runOne()
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
