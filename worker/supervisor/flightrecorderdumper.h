// SPDX-License-Identifier: GPL-3.0-or-later
//
// torch's flight recorder of the user's program, on dump-flight-recorder <id>, without
// stopping the program and without blocking the supervisor's loop.
//   - Recording: before the program starts, TORCH_FR_BUFFER_SIZE is set to kBufferSize unless
//     the user set it or its older NCCL name TORCH_NCCL_TRACE_BUFFER_SIZE; the opt-out
//     (--no-flight-recorder, RANKDECK_FLIGHT_RECORDER=0) sets it to 0 instead, since torch 2.14
//     records 2000 collectives when neither is set. For NCCL the debug pipe
//     (TORCH_NCCL_DEBUG_INFO_PIPE_FILE) and the dump file (TORCH_FR_DUMP_TEMP_FILE) go into the
//     run directory unless the user set them.
//   - Asking: the startup hook (python/startup/sitecustomize.py) of every Python process of the
//     program creates <dir>/fr-<pid>.fifo, serves it from a daemon thread and then appends its
//     pid to the ready marker. A request writes "<id>\n" to the FIFO of each registered process
//     that is still the program or below it; the hook writes <dir>/fr-<pid>.json and .pickle,
//     then <dir>/fr-<pid>.answer ("<id> ok|uninitialised|failed <why>").
//   - NCCL fallback: a process that cannot answer (the GIL is held) or is not Python at all is
//     asked through torch's debug pipe after kPipeAfter; torch's watchdog then writes its
//     pickle (no JSON) to the dump file, which is sent when complete.
//   - Answer: the `frdump` chunk events of the JSON and the pickle, then one end event; or the
//     end event alone with the reason (off, no hook, no answer within kDeadline, not
//     initialised, the dump failed, the program ended).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rankdeck::supervisor {

class FlightRecorderDumper
{
public:
    // Collectives each rank keeps (see docs/protocol.md for the measurement behind it).
    static constexpr int kBufferSize = 500;
    static constexpr auto kDeadline = std::chrono::milliseconds(2000);
    static constexpr auto kPipeAfter = std::chrono::milliseconds(400);
    // Larger files are not sent (the end event says so): a user's TORCH_FR_BUFFER_SIZE of
    // millions must not flood the launcher.
    static constexpr std::int64_t kMaxFileBytes = 32ll << 20;

    using Write = std::function<void(const std::string &line)>;

    // Before the program starts: the environment as described above, stale files removed.
    // `optOut`: --no-flight-recorder; RANKDECK_FLIGHT_RECORDER=0 is read here too.
    void prepare(const std::string &runDirectory, int rank, bool optOut, Write write);

    // Variables prepare() points into the run's directory: torch reads them when a process
    // group starts, not at import, so a warm server (WarmStartClient) ignores them.
    static bool perRunVariable(std::string_view name)
    {
        return name == "TORCH_NCCL_DEBUG_INFO_PIPE_FILE" || name == "TORCH_FR_DUMP_TEMP_FILE";
    }

    // Why dump-flight-recorder cannot be answered at all, empty when recording is on.
    const std::string &offReason() const { return m_off; }

    // dump-flight-recorder <id>: answered by later poll() calls (at once when off).
    void request(std::int64_t id);

    // Drives the requests; call on every turn of the loop. `program`: the pid of the program
    // (cold child or warm rank), `gone`: it has ended.
    void poll(pid_t program, bool gone);
    // Milliseconds until poll() wants to run again, -1 when nothing is pending.
    int timeoutMs() const;
    // The program and everything below it are gone: pending requests end with `why`, and the
    // hooks' files are removed.
    void finish(const std::string &why);

private:
    struct Pending
    {
        std::int64_t id = 0;
        std::chrono::steady_clock::time_point start;
        std::vector<pid_t> asked;          // processes that got the request
        std::vector<std::string> statuses; // their answers, "" while none
        bool piped = false;                // asked through NCCL's debug pipe
        std::int64_t pipeFileBefore = -1;  // the dump file's mtime (ns) before, -1: none
        std::int64_t pipeFileSize = -1;    // its size at the last look (complete when stable)
    };

    std::vector<pid_t> registeredPids() const;
    void start(pid_t program);
    bool pipeUsable() const;
    void pokePipe();
    bool tryPipeFile();
    bool sendAnswer(pid_t pid);
    void end(const std::string &why);
    void send(const char *file, const std::string &bytes);

    Write m_write;
    int m_rank = 0;
    std::string m_dir;
    std::string m_readyPath;
    std::string m_pipePath;     // NCCL's debug pipe of this rank, empty when not set
    std::string m_pipeDumpPath; // the file torch's debug dump writes, empty when not set
    std::string m_off;
    std::deque<std::int64_t> m_queue;
    bool m_active = false;
    Pending m_pending;
};

} // namespace rankdeck::supervisor
