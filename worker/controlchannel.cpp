// SPDX-License-Identifier: GPL-3.0-or-later
#include "controlchannel.h"

#include "telemetry.h"

#include "wire/wireprotocol.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <unistd.h>

namespace rankdeck {

namespace {
std::atomic<int> g_signal{0};

extern "C" void onStopSignal(int sig)
{
    if (g_signal.exchange(sig) != 0)
        ::_exit(128 + sig); // a second signal: the user means it
}
} // namespace

ControlChannel::ControlChannel(Telemetry &telemetry) : m_telemetry(telemetry) {}

ControlChannel::~ControlChannel()
{
    m_quit = true;
    if (m_monitor.joinable())
        m_monitor.join();
    // The reader may sit in read() on a stdin that never closes; the process exits with _exit,
    // so leaving it is harmless.
    if (m_reader.joinable())
        m_reader.detach();
}

std::string ControlChannel::stopReason() const
{
    const char *r = m_reason.load();
    return r ? r : "";
}

void ControlChannel::requestStop(const char *reason)
{
    const char *expected = nullptr;
    if (m_reason.compare_exchange_strong(expected, reason)) {
        wire::WireEventWriter w(wire::event::Stopping, m_telemetry.rank(), Telemetry::nowUs());
        w.addString(wire::field::Reason, reason);
        m_telemetry.emit(w);
        m_telemetry.out(std::string("Rank ") + std::to_string(m_telemetry.rank()) +
                        ": stop requested (" + reason + "), finishing the current step");
    }
}

void ControlChannel::start(bool readStdin, std::function<void()> dumpStacks,
                           std::function<void(std::int64_t id)> dumpFlightRecorder)
{
    m_dumpStacks = std::move(dumpStacks);
    m_dumpFlightRecorder = std::move(dumpFlightRecorder);
    struct sigaction sa = {};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    // A launcher that vanished leaves a broken pipe; writes then fail with EPIPE instead.
    signal(SIGPIPE, SIG_IGN);

    m_monitor = std::thread([this] { monitorLoop(); });
    if (readStdin)
        m_reader = std::thread([this] { readLoop(); });
}

void ControlChannel::readLoop()
{
    std::string buffer;
    char chunk[256];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            m_hardStop = true;
            requestStop("stdin-closed");
            return;
        }
        buffer.append(chunk, std::size_t(n));
        std::size_t nl;
        while ((nl = buffer.find('\n')) != std::string::npos) {
            std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
                line.pop_back();
            if (line == wire::command::Stop) {
                requestStop("stdin-stop");
            } else if (line == wire::command::DumpStacks) {
                if (m_dumpStacks)
                    m_dumpStacks();
            } else if (std::int64_t id = 0; wire::parseDumpFlightRecorder(line, &id)) {
                if (m_dumpFlightRecorder)
                    m_dumpFlightRecorder(id);
            } else if (!line.empty()) {
                m_telemetry.err("rankdeck-worker: ignoring unknown control command '" + line + "'");
            }
        }
        if (buffer.size() > 4096)
            buffer.clear(); // not a command; someone is writing junk into stdin
    }
}

void ControlChannel::monitorLoop()
{
    using clock = std::chrono::steady_clock;
    clock::time_point deadline = clock::time_point::max();
    while (!m_quit) {
        if (g_signal.load() != 0 && !m_hardStop) {
            m_hardStop = true;
            requestStop("signal");
        }
        if (m_hardStop && deadline == clock::time_point::max())
            deadline = clock::now() + std::chrono::milliseconds(kHardStopDeadlineMs);
        if (clock::now() >= deadline) {
            m_telemetry.err("rankdeck-worker: rank " + std::to_string(m_telemetry.rank()) +
                            " could not finish its step in time after '" + stopReason() +
                            "'; exiting now");
            ::_exit(g_signal.load() ? 128 + g_signal.load() : 1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

} // namespace rankdeck
