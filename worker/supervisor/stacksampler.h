// SPDX-License-Identifier: GPL-3.0-or-later
//
// Why a rank is slow, from the outside of an unmodified program: the startup hook
// (python/startup/sitecustomize.py) samples the main thread's Python stack of every Python
// process of the program at RANKDECK_SAMPLE_HZ (20 by default; 0: off) and writes the counts,
// once a second, to a pipe the supervisor hands down (RANKDECK_SAMPLES_FD). Every
// kSampleWindowMs the supervisor sends one `samples` event: what the main process's and the
// other processes' (DataLoader workers') samples were doing, by category and by the program's
// own innermost line, with the /proc counters of the same window (ProcessStats). The launcher
// compares the ranks (diagnosis/SlowRankAnalysis).
//   `profile <id> <seconds>` records every sampled stack for that long, then sends them as
// `profile` events in the collapsed format flamegraph.pl reads.
// The pipe is non-blocking on both sides: a supervisor that does not read costs the program
// samples, never time.
#pragma once

#include "supervisor/processstats.h"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rankdeck::supervisor {

class StackSampler
{
public:
    using Clock = std::chrono::steady_clock;
    using Write = std::function<void(const std::string &line)>;

    // Before the program starts: the pipe and the hook's environment.
    void prepare(int rank, Write write);
    // After it started: the supervisor's copy of the write end goes, so that the pipe ends
    // with the program.
    void programStarted();
    // The read end to poll, -1 when sampling is off.
    int fd() const { return m_readFd; }
    void onReadable();
    // Sends the window's event when it is due, ends a profile whose time is up. `main`: the
    // program's process (cold child or warm rank) for /proc; its descendants are the others.
    void poll(pid_t program);
    int timeoutMs() const;
    // profile <id> <seconds>
    void requestProfile(std::int64_t id, int seconds);
    // The program is gone: a profile being recorded is sent with what it has.
    void finish();

    // One line of the hook ("pid TAB count TAB category TAB user index TAB stack"), apart for
    // the tests. Returns false for a line that is not one (it is ignored).
    struct SampleLine
    {
        pid_t pid = 0;
        int count = 0;
        std::string category;
        std::string frame;           // the program's own innermost frame, else the innermost
        std::string stack;           // root first
        std::int64_t samplerNs = -1; // a "pid TAB cpu TAB ns" line
    };
    static bool parseLine(std::string_view line, SampleLine *out);

private:
    struct Part
    {
        int samples = 0;
        std::map<std::string, int> categories;
        std::map<std::string, int> frames; // "category TAB frame"
    };
    void take(const SampleLine &line);
    void sendWindow(pid_t program);
    void sendProfile(const std::string &why);

    Write m_write;
    int m_rank = 0;
    int m_readFd = -1;
    int m_writeFd = -1;
    double m_hz = 0;
    std::string m_buffer;
    pid_t m_mainPid = 0; // the first process that sampled: the program's own
    Part m_main;
    Part m_others;
    std::unordered_map<pid_t, std::int64_t> m_samplerNs; // each process's sampler CPU so far
    std::int64_t m_samplerNsWindow = 0;
    Clock::time_point m_windowStart;
    ProcessCounters m_counters;
    // The profile being recorded.
    bool m_profiling = false;
    std::int64_t m_profileId = 0;
    Clock::time_point m_profileEnd;
    std::map<std::string, std::int64_t> m_profile;
    std::int64_t m_profileSamples = 0;
};

} // namespace rankdeck::supervisor
