// SPDX-License-Identifier: GPL-3.0-or-later
#include "telemetry.h"

#include <wireprotocol.h>

#include <cerrno>
#include <chrono>
#include <unistd.h>

namespace rankdeck {

Telemetry::Telemetry(int rank, bool eventsEnabled)
    : m_rank(rank)
    , m_eventsEnabled(eventsEnabled)
{
}

Telemetry::~Telemetry()
{
    stopHeartbeat();
}

std::int64_t Telemetry::nowUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void Telemetry::writeAll(int fd, std::string_view data)
{
    std::lock_guard lock(m_writeMutex);
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; // the reader is gone; nothing useful left to do with output
        }
        data.remove_prefix(std::size_t(n));
    }
}

void Telemetry::emit(const wire::WireEventWriter &event)
{
    if (m_eventsEnabled)
        writeAll(STDOUT_FILENO, event.line());
}

void Telemetry::out(std::string_view line)
{
    std::string s(line);
    s += '\n';
    writeAll(STDOUT_FILENO, s);
}

void Telemetry::err(std::string_view line)
{
    std::string s(line);
    s += '\n';
    writeAll(STDERR_FILENO, s);
}

void Telemetry::startHeartbeat()
{
    if (!m_eventsEnabled || m_heartbeat.joinable())
        return;
    m_heartbeat = std::thread([this] {
        std::unique_lock lock(m_hbMutex);
        while (!m_hbStop) {
            wire::WireEventWriter w(wire::event::Heartbeat, m_rank, nowUs());
            w.addInt(wire::field::Step, m_lastStep.load());
            lock.unlock();
            emit(w);
            lock.lock();
            m_hbCv.wait_for(lock, std::chrono::milliseconds(500), [this] { return m_hbStop; });
        }
    });
}

void Telemetry::stopHeartbeat()
{
    {
        std::lock_guard lock(m_hbMutex);
        m_hbStop = true;
    }
    m_hbCv.notify_all();
    if (m_heartbeat.joinable())
        m_heartbeat.join();
}

} // namespace rankdeck
