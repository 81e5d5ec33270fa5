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
    // An event line built already (WireEventWriter::line(), newline included).
    void emitLine(std::string_view line);
    // Step events of fast steps are written together: one write() per kCoalesce instead of one
    // per step, because every write wakes the launcher's reader, which costs the writer more
    // than building the event (docs/benchmarks.md). A step event that follows a quiet kCoalesce
    // goes out at once (slow steps see no delay); the heartbeat thread writes what waits
    // longer. Any other output (events, log lines) writes the waiting events first, so the
    // order on the stream is the order of the calls. A crash can lose at most kCoalesce of
    // step events; log lines and all other events are never held back.
    void emitStep(const wire::WireEventWriter &event);
    static constexpr std::chrono::milliseconds kCoalesce{20};
    void out(std::string_view line); // stdout, newline appended
    void err(std::string_view line); // stderr, newline appended

    // Heartbeats carry the last completed step; the thread sends one every 500 ms.
    void setLastStep(std::int64_t step) { m_lastStep.store(step); }
    void startHeartbeat();
    void stopHeartbeat();

private:
    void writeAll(int fd, std::string_view data);
    void rawWrite(int fd, std::string_view data);
    void flushPendingLocked();
    void flushPendingOlderThan(std::chrono::milliseconds age);

    int m_rank;
    bool m_eventsEnabled;
    std::mutex m_writeMutex;
    std::string m_pending; // step events not written yet (m_writeMutex)
    std::chrono::steady_clock::time_point m_pendingSince;
    std::chrono::steady_clock::time_point m_lastStdoutWrite;
    std::atomic<std::int64_t> m_lastStep{0};
    std::thread m_heartbeat;
    std::mutex m_hbMutex;
    std::condition_variable m_hbCv;
    bool m_hbStop = false;
};

} // namespace rankdeck
