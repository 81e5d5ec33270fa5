// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/flightrecorderdumper.h"

#include "supervisor/processtree.h"
#include "supervisor/wallclock.h"
#include "wire/wireprotocol.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

namespace rankdeck::supervisor {

namespace {

using Clock = std::chrono::steady_clock;
// Processes asked at once: the program and what it started (a wrapper's Python, spawned
// workers); more would only be more requests nobody answers with a dump.
constexpr size_t kMaxAsked = 16;
constexpr size_t kMaxQueued = 16;

const char *envValue(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// The whole file if it has at most `limit` bytes; *tooLarge (and empty) otherwise.
std::string readFile(const std::string &path, std::int64_t limit, bool *ok, bool *tooLarge)
{
    *ok = false;
    *tooLarge = false;
    std::string s;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return s;
    struct stat st
    {
    };
    if (::fstat(fd, &st) != 0 || st.st_size > limit) {
        *tooLarge = st.st_size > limit;
        ::close(fd);
        return s;
    }
    s.reserve(size_t(st.st_size));
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && std::int64_t(s.size()) <= limit)
        s.append(buf, size_t(n));
    ::close(fd);
    *ok = n == 0 && std::int64_t(s.size()) <= limit;
    if (!*ok)
        s.clear();
    return s;
}

std::string readSmall(const std::string &path)
{
    bool ok = false, tooLarge = false;
    return readFile(path, 4096, &ok, &tooLarge);
}

bool isFifo(const std::string &path)
{
    struct stat st
    {
    };
    return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// Writes `line` to a FIFO without blocking; false when nobody has it open for reading (the
// process is gone, or never served it).
bool writeFifo(const std::string &path, const std::string &line)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    const ssize_t n = ::write(fd, line.data(), line.size());
    ::close(fd);
    return n == ssize_t(line.size());
}

bool switchedOff(const char *value)
{
    const std::string_view v = value ? value : "";
    return v == "0" || v == "off" || v == "false" || v == "no";
}

} // namespace

void FlightRecorderDumper::prepare(const std::string &runDirectory, int rank, bool optOut,
                                   Write write)
{
    m_write = std::move(write);
    m_rank = rank;
    m_dir = runDirectory;
    const std::string r = std::to_string(rank);
    m_readyPath = runDirectory + "/flight-recorder-rank" + r + ".ready";
    ::unlink(m_readyPath.c_str());

    // torch reads TORCH_FR_BUFFER_SIZE first, then TORCH_NCCL_TRACE_BUFFER_SIZE
    // (FlightRecorder.hpp); a user who set either made the choice, for both. We set only the
    // first: with the NCCL name set, torch 2.14 prints "TORCH_NCCL_TRACE_BUFFER_SIZE is
    // deprecated" into every program's stderr, and its NCCL process group reads that name
    // alone, defaulting to 2000, only to decide whether its debug pipe and dump exist.
    const char *names[] = {"TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE"};
    const char *userName = nullptr;
    for (const char *name : names)
        if (!userName && envValue(name))
            userName = name;
    const bool envOptOut = switchedOff(std::getenv("RANKDECK_FLIGHT_RECORDER"));
    if (optOut || envOptOut) {
        m_off = optOut ? "flight recorder off (--no-flight-recorder)"
                       : "flight recorder off (RANKDECK_FLIGHT_RECORDER=0)";
        if (!userName)
            ::setenv(names[0], "0", 1);
    } else if (userName && std::strtol(envValue(userName), nullptr, 10) <= 0) {
        m_off = std::string("flight recorder off: ") + userName + "=" + envValue(userName) +
                " in the program's environment";
    } else if (!userName) {
        ::setenv(names[0], std::to_string(kBufferSize).c_str(), 1);
    }
    if (!m_off.empty()) {
        // No hook thread, no FIFO: nothing of this costs the program anything.
        ::unsetenv("RANKDECK_FLIGHT_RECORDER_DIR");
        ::unsetenv("RANKDECK_FLIGHT_RECORDER_READY");
        return;
    }
    ::setenv("RANKDECK_FLIGHT_RECORDER_DIR", runDirectory.c_str(), 1);
    ::setenv("RANKDECK_FLIGHT_RECORDER_READY", m_readyPath.c_str(), 1);

    // NCCL's debug pipe (<stem><rank>.pipe, read by the watchdog's monitor thread about once a
    // second) and the file its dump goes to (<prefix><rank>; torch reads TORCH_FR_DUMP_TEMP_FILE,
    // then the deprecated TORCH_NCCL_DEBUG_INFO_TEMP_FILE): the user's names win.
    const std::string ours = runDirectory + "/nccl-";
    if (!envValue("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")) {
        ::setenv("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", (ours + "pipe-rank").c_str(), 1);
        ::unlink((ours + "pipe-rank" + r + ".pipe").c_str());
    }
    if (!envValue("TORCH_FR_DUMP_TEMP_FILE") && !envValue("TORCH_NCCL_DEBUG_INFO_TEMP_FILE")) {
        ::setenv("TORCH_FR_DUMP_TEMP_FILE", (ours + "trace-rank").c_str(), 1);
    }
    // The rank torch appends is the global one, which is RANK under the supervisor.
    m_pipePath = std::string(envValue("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")) + r + ".pipe";
    const char *dumpPrefix = envValue("TORCH_FR_DUMP_TEMP_FILE");
    if (!dumpPrefix)
        dumpPrefix = envValue("TORCH_NCCL_DEBUG_INFO_TEMP_FILE");
    m_pipeDumpPath = std::string(dumpPrefix) + r;
}

void FlightRecorderDumper::request(std::int64_t id)
{
    if (!m_off.empty()) {
        m_write(wire::flightRecorderEnd(m_rank, id, m_off, wallUs()));
        return;
    }
    if (m_queue.size() >= kMaxQueued) {
        m_write(wire::flightRecorderEnd(m_rank, id,
                                        "not asked: " + std::to_string(kMaxQueued) +
                                            " flight-recorder requests still wait",
                                        wallUs()));
        return;
    }
    m_queue.push_back(id);
}

int FlightRecorderDumper::timeoutMs() const
{
    // The answers are files: look every few milliseconds while one is awaited.
    return m_active || !m_queue.empty() ? 5 : -1;
}

std::vector<pid_t> FlightRecorderDumper::registeredPids() const
{
    std::vector<pid_t> pids;
    bool ok = false, tooLarge = false;
    std::stringstream lines(readFile(m_readyPath, 1 << 20, &ok, &tooLarge));
    long pid = 0;
    while (lines >> pid)
        if (pid > 0 && std::find(pids.begin(), pids.end(), pid_t(pid)) == pids.end())
            pids.push_back(pid_t(pid));
    return pids;
}

bool FlightRecorderDumper::pipeUsable() const
{
    return !m_pipePath.empty() && isFifo(m_pipePath);
}

void FlightRecorderDumper::start(pid_t program)
{
    m_pending = Pending();
    m_pending.id = m_queue.front();
    m_queue.pop_front();
    m_pending.start = Clock::now();
    m_active = true;
    // Only a process that registered, is alive and is the program or below it: a pid in the
    // marker may have ended and been reused by anything.
    std::vector<pid_t> candidates;
    const pid_t self = ::getpid();
    for (pid_t pid : registeredPids()) {
        if (::kill(pid, 0) != 0)
            continue;
        if (pid != program && !isDescendant(pid, program) && !isDescendant(pid, self))
            continue;
        if (pid == program)
            candidates.insert(candidates.begin(), pid);
        else
            candidates.push_back(pid);
    }
    const std::string line = std::to_string(m_pending.id) + "\n";
    for (pid_t pid : candidates) {
        if (m_pending.asked.size() >= kMaxAsked)
            break;
        const std::string base = m_dir + "/fr-" + std::to_string(pid);
        // An answer left from an earlier request with the same id must not pass for this one.
        ::unlink((base + ".answer").c_str());
        if (writeFifo(base + ".fifo", line)) {
            m_pending.asked.push_back(pid);
            m_pending.statuses.emplace_back();
        }
    }
    // A native NCCL program has no hook: its only way is torch's pipe.
    if (m_pending.asked.empty() && pipeUsable())
        pokePipe();
}

void FlightRecorderDumper::pokePipe()
{
    struct stat st
    {
    };
    m_pending.pipeFileBefore =
        ::stat(m_pipeDumpPath.c_str(), &st) == 0
            ? std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec
            : -1;
    m_pending.pipeFileSize = -1;
    m_pending.piped = writeFifo(m_pipePath, "1\n");
}

bool FlightRecorderDumper::tryPipeFile()
{
    struct stat st
    {
    };
    if (::stat(m_pipeDumpPath.c_str(), &st) != 0)
        return false;
    const std::int64_t mtime = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (mtime == m_pending.pipeFileBefore || st.st_size == 0)
        return false;
    // torch writes the file with a plain ofstream: it is complete once its size held still
    // between two looks and it ends with pickle's STOP opcode.
    if (st.st_size != m_pending.pipeFileSize) {
        m_pending.pipeFileSize = st.st_size;
        return false;
    }
    bool ok = false, tooLarge = false;
    const std::string bytes = readFile(m_pipeDumpPath, kMaxFileBytes, &ok, &tooLarge);
    if (tooLarge) {
        end("torch's NCCL dump " + m_pipeDumpPath + " is larger than " +
            std::to_string(kMaxFileBytes >> 20) + " MiB; not sent");
        return true;
    }
    if (!ok || bytes.empty() || bytes.back() != '.')
        return false;
    send("pickle", bytes);
    end(m_pending.asked.empty()
            ? "only torch's pickle, through the NCCL debug pipe (no RankDeck hook registered)"
            : "only torch's pickle, through the NCCL debug pipe: the RankDeck hook did not "
              "answer (the program holds the GIL)");
    return true;
}

void FlightRecorderDumper::send(const char *file, const std::string &bytes)
{
    wire::emitFlightRecorderChunks(m_rank, m_pending.id, file, bytes, wallUs(), m_write);
}

void FlightRecorderDumper::end(const std::string &why)
{
    m_write(wire::flightRecorderEnd(m_rank, m_pending.id, why, wallUs()));
    m_active = false;
}

bool FlightRecorderDumper::sendAnswer(pid_t pid)
{
    const std::string base = m_dir + "/fr-" + std::to_string(pid);
    bool jsonOk = false, pickleOk = false, jsonBig = false, pickleBig = false;
    const std::string json = readFile(base + ".json", kMaxFileBytes, &jsonOk, &jsonBig);
    const std::string pickle = readFile(base + ".pickle", kMaxFileBytes, &pickleOk, &pickleBig);
    if (jsonBig || pickleBig) {
        end("the dump is larger than " + std::to_string(kMaxFileBytes >> 20) +
            " MiB (TORCH_FR_BUFFER_SIZE too large?); not sent");
        return true;
    }
    if (!jsonOk || !pickleOk) {
        end("the dump's files are missing in " + m_dir);
        return true;
    }
    send("json", json);
    send("pickle", pickle);
    end({});
    return true;
}

void FlightRecorderDumper::poll(pid_t program, bool gone)
{
    if (!m_active) {
        if (m_queue.empty())
            return;
        if (gone) {
            m_write(wire::flightRecorderEnd(m_rank, m_queue.front(), "the program has ended",
                                            wallUs()));
            m_queue.pop_front();
            return;
        }
        start(program);
    }
    Pending &p = m_pending;
    // Answers of the hooks, in the order asked (the program first).
    bool allAnswered = true;
    for (size_t i = 0; i < p.asked.size(); ++i) {
        if (p.statuses[i].empty()) {
            const std::string line =
                readSmall(m_dir + "/fr-" + std::to_string(p.asked[i]) + ".answer");
            std::int64_t id = -1;
            size_t used = 0;
            try {
                id = std::stoll(line, &used);
            } catch (...) {
            }
            if (id == p.id && used < line.size()) {
                std::string status = line.substr(used + 1);
                while (!status.empty() && (status.back() == '\n' || status.back() == '\r'))
                    status.pop_back();
                p.statuses[i] = status.empty() ? "failed" : status;
            }
        }
        if (p.statuses[i] == "ok") {
            sendAnswer(p.asked[i]);
            return;
        }
        if (p.statuses[i].empty())
            allAnswered = false;
    }
    if (p.piped && tryPipeFile())
        return;
    const auto waited = Clock::now() - p.start;
    if (!p.asked.empty() && allAnswered) {
        // Nobody had a dump: say why, as the first asked (the program itself) answered.
        const std::string &status = p.statuses.front();
        if (status == "uninitialised")
            end("torch.distributed is not initialised in the program");
        else if (status.rfind("failed", 0) == 0)
            end("the dump failed: " + (status.size() > 7 ? status.substr(7) : status));
        else
            end("the RankDeck hook answered '" + status + "'");
        return;
    }
    if (p.asked.empty() && !p.piped) {
        end("not a Python program (no RankDeck hook registered)");
        return;
    }
    if (gone) {
        end("the program ended before it answered");
        return;
    }
    if (!p.piped && waited >= kPipeAfter && pipeUsable())
        pokePipe();
    if (waited >= kDeadline) {
        if (p.asked.empty())
            end("torch's NCCL debug pipe gave no dump within 2 s");
        else
            end("no answer within 2 s: the program holds the GIL in native code or is stopped");
    }
}

void FlightRecorderDumper::finish(const std::string &why)
{
    if (m_active)
        end(why);
    while (!m_queue.empty()) {
        m_write(wire::flightRecorderEnd(m_rank, m_queue.front(), why, wallUs()));
        m_queue.pop_front();
    }
    for (pid_t pid : registeredPids())
        for (const char *ext : {".fifo", ".json", ".pickle", ".answer"})
            ::unlink((m_dir + "/fr-" + std::to_string(pid) + ext).c_str());
}

} // namespace rankdeck::supervisor
