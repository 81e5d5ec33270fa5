// SPDX-License-Identifier: GPL-3.0-or-later
// Stop requests from the launcher (stdin commands, end of stdin) and from signals.
// A stop is graceful (after the current step, agreed by all ranks); when the launcher is gone
// or a signal asked, a deadline also ends the process if the step cannot finish in time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace rankdeck {

class Telemetry;

class ControlChannel
{
public:
    explicit ControlChannel(Telemetry &telemetry);
    ~ControlChannel();

    // stdin control (--control-stdin / RANKDECK_CONTROL=stdin); without it stdin is ignored.
    // The callbacks run on the reader thread.
    void start(bool readStdin, std::function<void()> dumpStacks,
               std::function<void(std::int64_t id)> dumpFlightRecorder = {});

    bool stopRequested() const { return m_reason.load() != nullptr; }
    // "stdin-stop", "stdin-closed", "signal"; empty when no stop was requested.
    std::string stopReason() const;
    void requestStop(const char *reason);

    // Seconds between a hard stop (launcher gone, signal) and the forced exit.
    static constexpr int kHardStopDeadlineMs = 4500;

private:
    void readLoop();
    void monitorLoop();

    Telemetry &m_telemetry;
    std::function<void()> m_dumpStacks;
    std::function<void(std::int64_t)> m_dumpFlightRecorder;
    std::atomic<const char *> m_reason{nullptr};
    std::atomic<bool> m_hardStop{false};
    std::atomic<bool> m_quit{false};
    std::thread m_reader;
    std::thread m_monitor;
};

} // namespace rankdeck
