// SPDX-License-Identifier: GPL-3.0-or-later
// Everything the worker writes: human log lines and wire events (core/wire/wireprotocol.h).
// Both go through one mutex and one ::write() per line, so threads (heartbeat, control,
// training) never tear each other's lines.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace rankdeck::wire {
class WireEventWriter;
}

namespace rankdeck {

class Telemetry
{
public:
    Telemetry(int rank, bool eventsEnabled);
    ~Telemetry();

    static std::int64_t nowUs();

    int rank() const { return m_rank; }
    bool eventsEnabled() const { return m_eventsEnabled; }

    // The writer is created with this rank and the current time.
    void emit(const wire::WireEventWriter &event);
    void out(std::string_view line);   // stdout, newline appended
    void err(std::string_view line);   // stderr, newline appended

    // Heartbeats carry the last completed step; the thread sends one every 500 ms.
    void setLastStep(std::int64_t step) { m_lastStep.store(step); }
    void startHeartbeat();
    void stopHeartbeat();

private:
    void writeAll(int fd, std::string_view data);

    int m_rank;
    bool m_eventsEnabled;
    std::mutex m_writeMutex;
    std::atomic<std::int64_t> m_lastStep{0};
    std::thread m_heartbeat;
    std::mutex m_hbMutex;
    std::condition_variable m_hbCv;
    bool m_hbStop = false;
};

} // namespace rankdeck
