// SPDX-License-Identifier: GPL-3.0-or-later
#include "telemetry.h"

#include "wire/wireprotocol.h"

#include <cerrno>
#include <chrono>
#include <unistd.h>

namespace rankdeck {

Telemetry::Telemetry(int rank, bool eventsEnabled) : m_rank(rank), m_eventsEnabled(eventsEnabled) {}

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

void Telemetry::rawWrite(int fd, std::string_view data)
{
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; // the reader is gone; nothing useful left to do with output
        }
        data.remove_prefix(std::size_t(n));
    }
    if (fd == STDOUT_FILENO)
        m_lastStdoutWrite = std::chrono::steady_clock::now();
}

void Telemetry::flushPendingLocked()
{
    if (m_pending.empty())
        return;
    rawWrite(STDOUT_FILENO, m_pending);
    m_pending.clear();
}

void Telemetry::flushPendingOlderThan(std::chrono::milliseconds age)
{
    std::lock_guard lock(m_writeMutex);
    if (!m_pending.empty() && std::chrono::steady_clock::now() - m_pendingSince >= age)
        flushPendingLocked();
}

void Telemetry::writeAll(int fd, std::string_view data)
{
    std::lock_guard lock(m_writeMutex);
    flushPendingLocked(); // keeps the stream in call order
    rawWrite(fd, data);
}

void Telemetry::emit(const wire::WireEventWriter &event)
{
    if (m_eventsEnabled)
        writeAll(STDOUT_FILENO, event.line());
}

void Telemetry::emitLine(std::string_view line)
{
    if (m_eventsEnabled)
        writeAll(STDOUT_FILENO, line);
}

void Telemetry::emitStep(const wire::WireEventWriter &event)
{
    if (!m_eventsEnabled)
        return;
    const std::string line = event.line();
    std::lock_guard lock(m_writeMutex);
    const auto now = std::chrono::steady_clock::now();
    if (m_pending.empty()) {
        if (now - m_lastStdoutWrite >= kCoalesce) {
            rawWrite(STDOUT_FILENO, line);
            return;
        }
        m_pendingSince = now;
    }
    m_pending += line;
    if (now - m_pendingSince >= kCoalesce || m_pending.size() >= 64 * 1024)
        flushPendingLocked();
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
        constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
        auto nextHeartbeat = std::chrono::steady_clock::now();
        std::unique_lock lock(m_hbMutex);
        while (!m_hbStop) {
            lock.unlock();
            const auto now = std::chrono::steady_clock::now();
            if (now >= nextHeartbeat) {
                wire::WireEventWriter w(wire::event::Heartbeat, m_rank, nowUs());
                w.addInt(wire::field::Step, m_lastStep.load());
                emit(w); // writes waiting step events first
                nextHeartbeat = now + kHeartbeatEvery;
            } else {
                flushPendingOlderThan(kCoalesce);
            }
            lock.lock();
            // Every kCoalesce: step events must not wait longer than that.
            m_hbCv.wait_for(lock, kCoalesce, [this] { return m_hbStop; });
        }
        lock.unlock();
        flushPendingOlderThan(std::chrono::milliseconds(0));
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
