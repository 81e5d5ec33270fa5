// SPDX-License-Identifier: GPL-3.0-or-later
//
// The wire format between rankdeck-worker and the launcher, defined once for both sides.
// This header is plain C++20 (no Qt, no libtorch): the worker writes events with
// WireEventWriter, core finds them with findWireEvent() and parses the JSON payload with Qt.
// docs/protocol.md describes the same format for people; keep the two in step.
//
// An event is one line on stdout or stderr:
//
//     <RS>rdk1 <crc32 of json, 8 lower-case hex digits> <json object>\n
//
// <RS> is the ASCII record separator (0x1e), which ordinary program output never contains.
// Events may land in the middle of a user's partial line (someone printed "abc" without a
// newline, then the worker wrote an event): the parser looks for the marker anywhere in a line
// and treats what precedes it as log text. The CRC rejects torn or forged events, which then
// stay log lines, so user output can never be mistaken for an event.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

namespace rankdeck::wire {

inline constexpr int kProtocolVersion = 1;
inline constexpr char kRecordSeparator = '\x1e';
inline constexpr std::string_view kMarker = "\x1erdk1 ";

// Event types ("t" field).
namespace event {
inline constexpr std::string_view Hello = "hello";           // process is up, who it is
inline constexpr std::string_view Store = "store";           // rank 0 serves the TCPStore on Port
inline constexpr std::string_view Rendezvous = "rendezvous"; // process group formed
inline constexpr std::string_view Step = "step";             // one optimizer step done
inline constexpr std::string_view Heartbeat = "heartbeat";   // at least once a second
inline constexpr std::string_view Checkpoint = "checkpoint"; // a checkpoint was written
inline constexpr std::string_view Stopping = "stopping";     // stop requested, why
inline constexpr std::string_view Finished = "finished";     // clean end, with summary
inline constexpr std::string_view Error = "error";           // fatal error, process exits
inline constexpr std::string_view Crash = "crash";           // fatal signal / uncaught exception
inline constexpr std::string_view Stacks = "stacks";         // on-demand dump of every thread
// New bytes of a TensorBoard event file the user's program writes (rankdeck-supervisor): the
// launcher parses them, the supervisor only follows the file (docs/protocol.md).
inline constexpr std::string_view TfEvents = "tfevents";
// A rank's flight-recorder dump, answering dump-flight-recorder: zero or more chunks of torch's
// files, then exactly one end event (docs/protocol.md).
inline constexpr std::string_view FlightRecorder = "frdump";
// What a supervised program's main thread did over the last window (its Python stack sampled,
// its /proc counters): sent every kSampleWindowMs, the launcher's "why is it slow"
// (docs/protocol.md).
inline constexpr std::string_view Samples = "samples";
// A recorded profile, answering `profile <id> <seconds>`: chunks of collapsed stacks, then one
// end event.
inline constexpr std::string_view Profile = "profile";
} // namespace event

// Field names. Every event has Type, Time and Rank.
namespace field {
inline constexpr std::string_view Type = "t";
inline constexpr std::string_view Time = "ts"; // wall clock, microseconds since the Unix epoch
inline constexpr std::string_view Rank = "rank";
// hello
inline constexpr std::string_view Protocol = "proto";
inline constexpr std::string_view Host = "host";
inline constexpr std::string_view Pid = "pid";
inline constexpr std::string_view LocalRank = "local_rank";
inline constexpr std::string_view WorldSize = "world_size";
inline constexpr std::string_view Device = "device";
inline constexpr std::string_view Backend = "backend";
inline constexpr std::string_view TorchVersion = "torch";
inline constexpr std::string_view WorkerVersion = "worker";
inline constexpr std::string_view BuildId = "build_id";
inline constexpr std::string_view Task = "task";
inline constexpr std::string_view TotalSteps = "total_steps";
// hello of a supervised program: what the supervisor set that the user had not, comma-separated
// NAME=VALUE ("OMP_NUM_THREADS=1", as torchrun with several ranks on a node); empty: nothing.
inline constexpr std::string_view EnvironmentDefaults = "env_defaults";
// store (rank 0 was started with MASTER_PORT=0 and bound a free port)
inline constexpr std::string_view Port = "port";
// rendezvous
inline constexpr std::string_view DurationMs = "duration_ms";
// step
inline constexpr std::string_view Step = "step";
inline constexpr std::string_view Epoch = "epoch";
inline constexpr std::string_view Loss = "loss";
inline constexpr std::string_view LearningRate = "lr";
inline constexpr std::string_view SamplesPerSec = "samples_per_s";
inline constexpr std::string_view StepTimeMs = "step_ms";
inline constexpr std::string_view CommWaitMs = "comm_wait_ms";
inline constexpr std::string_view GpuMemBytes = "gpu_mem";
// finished / checkpoint / stopping / error / crash / stacks
inline constexpr std::string_view Reason = "reason";
inline constexpr std::string_view Message = "msg";
inline constexpr std::string_view Path = "path";
inline constexpr std::string_view Kind = "kind";     // crash: "signal" or "exception"
inline constexpr std::string_view Signal = "signal"; // crash: signal number
inline constexpr std::string_view SignalName = "signal_name";
inline constexpr std::string_view ExceptionType = "exception";
inline constexpr std::string_view Thread = "thread";
inline constexpr std::string_view Stack = "stack"; // frames, one per line, innermost first
inline constexpr std::string_view OwnFrame =
    "own_frame"; // crash: index of the first frame of the worker's own code, -1 none
inline constexpr std::string_view ExitCode = "exit_code";
// Supervised programs (rankdeck-supervisor) on error / crash / stacks:
// the Python side as Python printed it, for the launcher to parse: the traceback text of an
// uncaught exception (from torchelastic's error file), or a faulthandler dump of every thread.
inline constexpr std::string_view Python = "python";
inline constexpr std::string_view ErrorFile = "error_file"; // TORCHELASTIC_ERROR_FILE on the node
inline constexpr std::string_view OutOfMemory = "oom"; // crash: the OOM killer sent the SIGKILL
// tfevents: the event file as the supervisor names it (its directory as given, then the path
// below it), the byte offset of Data in the file, the bytes themselves (base64).
inline constexpr std::string_view File = "file";
inline constexpr std::string_view Offset = "offset";
inline constexpr std::string_view Data = "data";
// frdump: the collection id the launcher chose, which file a chunk belongs to ("json" or
// "pickle", also File), its byte Offset, the file's total Size, the bytes (Data, base64); the
// end event has End true and, when no dump (or only part of one) came, Message saying why.
inline constexpr std::string_view Id = "id";
inline constexpr std::string_view Size = "size";
inline constexpr std::string_view End = "end";
// samples: the window (ms) and rate (hz); the main thread's samples (SampleCount), their
// categories ({category: count}) and innermost frames of the program's own code, the most
// sampled first, each "count TAB category TAB frame"; the same for the program's other
// processes (DataLoader workers: Worker*). /proc over the window: the main thread's share of
// the wall clock on a CPU (CpuShare) and waiting for one (RunQueueShare), the whole process's
// CPU in cores (ProcessCpu), the other processes' CPU in cores and run-queue wait summed, the
// share of the window blocked on block I/O (delay accounting, 0 where off), bytes passed to
// read() per second, major faults per second, RSS bytes, the cgroup's throttled share, the
// main thread's involuntary switches per second, the sampling thread's own CPU (ns).
inline constexpr std::string_view WindowMs = "ms";
inline constexpr std::string_view SampleRate = "hz";
inline constexpr std::string_view SampleCount = "n";
inline constexpr std::string_view Categories = "cat";
inline constexpr std::string_view TopFrames = "top";
inline constexpr std::string_view WorkerSampleCount = "wn";
inline constexpr std::string_view WorkerCategories = "wcat";
inline constexpr std::string_view WorkerTopFrames = "wtop";
inline constexpr std::string_view CpuShare = "cpu";
inline constexpr std::string_view RunQueueShare = "runq";
inline constexpr std::string_view ProcessCpu = "pcpu";
inline constexpr std::string_view WorkerCpu = "wcpu";
inline constexpr std::string_view WorkerRunQueue = "wrunq";
inline constexpr std::string_view BlockIoShare = "blkio";
inline constexpr std::string_view ReadBytesPerSec = "rbps";
inline constexpr std::string_view MajorFaultsPerSec = "majflt";
inline constexpr std::string_view RssBytes = "rss";
inline constexpr std::string_view ThrottledShare = "throttled";
inline constexpr std::string_view InvoluntarySwitchesPerSec = "nivcsw";
inline constexpr std::string_view SamplerCpuNs = "sampler_ns";
// profile: Id, Offset of Data (collapsed-stack text) in the rank's profile, End with the
// SampleCount and, when no samples came, Message saying why.
} // namespace field

// samples events come this often (and a `profile` may be at most kMaxProfileSeconds long).
inline constexpr int kSampleWindowMs = 2000;
inline constexpr int kMaxProfileSeconds = 600;
// The most frames a samples event names per process kind.
inline constexpr std::size_t kSampleTopFrames = 8;

// The most raw bytes one tfevents event carries: with base64 (4/3) and the other fields the line
// stays well under PIPE_BUF (4096), so that one write() of it is atomic even though the program
// writes to the same pipe. Names longer than kTfEventsMaxFileName are not followed.
inline constexpr std::size_t kTfEventsChunkBytes = 2048;
inline constexpr std::size_t kTfEventsMaxFileName = 1024;

// frdump chunks carry at most this many raw bytes each, for the same reason as tfevents.
inline constexpr std::size_t kFlightRecorderChunkBytes = kTfEventsChunkBytes;
inline constexpr std::string_view kFlightRecorderJson = "json";     // torch's JSON dump
inline constexpr std::string_view kFlightRecorderPickle = "pickle"; // torch's pickle dump

// Commands the launcher writes, one per line, on the worker's stdin when it started the
// worker with --control-stdin (or RANKDECK_CONTROL=stdin). End of stdin means the launcher is
// gone: the worker stops and exits.
namespace command {
inline constexpr std::string_view Stop = "stop";              // finish the current step, then end
inline constexpr std::string_view DumpStacks = "dump-stacks"; // emit a Stacks event, keep going
// "dump-flight-recorder <id>": emit FlightRecorder events for collection <id> (a positive
// decimal integer; the command alone means id 0), keep going. It does not dump stacks.
inline constexpr std::string_view DumpFlightRecorder = "dump-flight-recorder";
// "profile <id> <seconds>": record every sampled stack for that long, then emit Profile events
// for <id>; keep going.
inline constexpr std::string_view Profile = "profile";
} // namespace command

inline constexpr std::string_view kControlEnv = "RANKDECK_CONTROL";
inline constexpr std::string_view kControlStdin = "stdin";

namespace detail {
constexpr std::array<std::uint32_t, 256> makeCrc32Table()
{
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t crc = i;
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
        table[i] = crc;
    }
    return table;
}
inline constexpr auto kCrc32Table = makeCrc32Table();
} // namespace detail

// CRC-32 (IEEE 802.3, as zlib computes it). Table-driven: every event line is summed once by the
// worker and once by the launcher, and the bitwise loop cost 3 us per step event.
constexpr std::uint32_t crc32(std::string_view data)
{
    std::uint32_t crc = 0xffffffffu;
    for (unsigned char c : data)
        crc = detail::kCrc32Table[(crc ^ c) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

// Builds one event line. Doubles that JSON cannot hold (NaN, ±Inf) are written as the strings
// "nan", "inf" and "-inf"; the parser maps them back.
class WireEventWriter
{
public:
    WireEventWriter(std::string_view type, int rank, std::int64_t timeUs)
    {
        m_json.reserve(256);
        m_json += '{';
        addString(field::Type, type);
        addInt(field::Time, timeUs);
        addInt(field::Rank, rank);
    }

    WireEventWriter &addString(std::string_view key, std::string_view value)
    {
        appendKey(key);
        appendQuoted(value);
        return *this;
    }
    WireEventWriter &addInt(std::string_view key, std::int64_t value)
    {
        appendKey(key);
        m_json += std::to_string(value);
        return *this;
    }
    WireEventWriter &addBool(std::string_view key, bool value)
    {
        appendKey(key);
        m_json += value ? "true" : "false";
        return *this;
    }
    WireEventWriter &addDouble(std::string_view key, double value)
    {
        appendKey(key);
        appendDouble(value);
        return *this;
    }

    // Bytes as a base64 string (RFC 4648, padded): binary data in a JSON line.
    WireEventWriter &addBase64(std::string_view key, std::string_view bytes)
    {
        static constexpr char alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        appendKey(key);
        m_json += '"';
        std::size_t i = 0;
        for (; i + 3 <= bytes.size(); i += 3) {
            const std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16 |
                                    std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                                    std::uint32_t(static_cast<unsigned char>(bytes[i + 2]));
            m_json += alphabet[v >> 18];
            m_json += alphabet[(v >> 12) & 63];
            m_json += alphabet[(v >> 6) & 63];
            m_json += alphabet[v & 63];
        }
        if (const std::size_t rest = bytes.size() - i; rest > 0) {
            std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
            if (rest == 2)
                v |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
            m_json += alphabet[v >> 18];
            m_json += alphabet[(v >> 12) & 63];
            m_json += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
            m_json += '=';
        }
        m_json += '"';
        return *this;
    }

    // A nested object of numbers, {"name": value, …} (values as addDouble writes them): the
    // `scalars` of a step event that a program reports through rankdeck.log().
    template <typename Pairs> WireEventWriter &addDoubles(std::string_view key, const Pairs &pairs)
    {
        appendKey(key);
        m_json += '{';
        bool first = true;
        for (const auto &[name, value] : pairs) {
            if (!first)
                m_json += ',';
            first = false;
            appendQuoted(name);
            m_json += ':';
            appendDouble(value);
        }
        m_json += '}';
        return *this;
    }

    // An array of strings: a samples event's frames.
    template <typename Strings>
    WireEventWriter &addStrings(std::string_view key, const Strings &strings)
    {
        appendKey(key);
        m_json += '[';
        bool first = true;
        for (const auto &s : strings) {
            if (!first)
                m_json += ',';
            first = false;
            appendQuoted(s);
        }
        m_json += ']';
        return *this;
    }

    // The complete line, newline included; write it with one write() call so that it is not
    // torn by other threads writing to the same stream.
    std::string line() const
    {
        static constexpr char hex[] = "0123456789abcdef";
        std::string out;
        out.reserve(kMarker.size() + 9 + m_json.size() + 2);
        out += kMarker;
        const std::size_t crcAt = out.size();
        out.append("00000000 ");
        const std::size_t jsonAt = out.size();
        out += m_json;
        out += '}';
        std::uint32_t crc = crc32(std::string_view(out).substr(jsonAt));
        for (int i = 7; i >= 0; --i, crc >>= 4)
            out[crcAt + std::size_t(i)] = hex[crc & 0xfu];
        out += '\n';
        return out;
    }

private:
    void appendDouble(double value)
    {
        if (std::isnan(value)) {
            m_json += "\"nan\"";
        } else if (std::isinf(value)) {
            m_json += value > 0 ? "\"inf\"" : "\"-inf\"";
        } else {
            // to_chars with a precision prints exactly what printf("%.9g") prints, several
            // times faster.
            char buf[32];
            const auto end =
                std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, 9).ptr;
            m_json.append(buf, end);
        }
    }
    void appendKey(std::string_view key)
    {
        if (m_json.size() > 1)
            m_json += ',';
        appendQuoted(key);
        m_json += ':';
    }
    void appendQuoted(std::string_view s)
    {
        static constexpr char hex[] = "0123456789abcdef";
        m_json += '"';
        std::size_t plain = 0; // keys and most values need no escaping: append those in one go
        while (plain < s.size() && static_cast<unsigned char>(s[plain]) >= 0x20 &&
               s[plain] != '"' && s[plain] != '\\' && s[plain] != 0x7f)
            ++plain;
        m_json.append(s.substr(0, plain));
        for (unsigned char c : s.substr(plain)) {
            switch (c) {
            case '"':
                m_json += "\\\"";
                break;
            case '\\':
                m_json += "\\\\";
                break;
            case '\n':
                m_json += "\\n";
                break;
            case '\r':
                m_json += "\\r";
                break;
            case '\t':
                m_json += "\\t";
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    m_json += "\\u00";
                    m_json += hex[c >> 4];
                    m_json += hex[c & 0xf];
                } else {
                    m_json += static_cast<char>(c);
                }
            }
        }
        m_json += '"';
    }

    std::string m_json;
};

// Where an event sits in one line (without its trailing newline).
struct WireEventMatch
{
    bool found = false;        // a marker was present
    bool valid = false;        // ... and the CRC matched the payload
    std::size_t markerPos = 0; // text before this is ordinary log output
    std::string_view json;     // the payload, when valid
};

inline WireEventMatch findWireEvent(std::string_view line)
{
    WireEventMatch m;
    const std::size_t pos = line.find(kMarker);
    if (pos == std::string_view::npos)
        return m;
    m.found = true;
    m.markerPos = pos;
    std::string_view rest = line.substr(pos + kMarker.size());
    if (!rest.empty() && rest.back() == '\r')
        rest.remove_suffix(1);
    if (rest.size() < 10 || rest[8] != ' ')
        return m;
    std::uint32_t expected = 0;
    for (int i = 0; i < 8; ++i) {
        const char c = rest[i];
        std::uint32_t digit;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else
            return m;
        expected = (expected << 4) | digit;
    }
    const std::string_view json = rest.substr(9);
    if (crc32(json) != expected)
        return m;
    m.valid = true;
    m.json = json;
    return m;
}

// Whether `line` (without its newline) is a dump-flight-recorder command; *id its collection
// id. A malformed id (not decimal, negative, over 2^53) makes it no command at all.
inline bool parseDumpFlightRecorder(std::string_view line, std::int64_t *id)
{
    if (line.substr(0, command::DumpFlightRecorder.size()) != command::DumpFlightRecorder)
        return false;
    std::string_view rest = line.substr(command::DumpFlightRecorder.size());
    if (rest.empty()) {
        *id = 0;
        return true;
    }
    if (rest.front() != ' ')
        return false;
    while (!rest.empty() && rest.front() == ' ')
        rest.remove_prefix(1);
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || ptr != rest.data() + rest.size() || value < 0 ||
        value > (std::int64_t(1) << 53))
        return false;
    *id = value;
    return true;
}

// "profile <id> <seconds>": id as dump-flight-recorder's, seconds 1..kMaxProfileSeconds.
inline bool parseProfileCommand(std::string_view line, std::int64_t *id, int *seconds)
{
    if (line.substr(0, command::Profile.size()) != command::Profile ||
        line.size() == command::Profile.size() || line[command::Profile.size()] != ' ')
        return false;
    std::string_view rest = line.substr(command::Profile.size() + 1);
    const std::size_t space = rest.find(' ');
    if (space == std::string_view::npos)
        return false;
    std::int64_t value = 0;
    const std::string_view idText = rest.substr(0, space);
    auto [p1, e1] = std::from_chars(idText.data(), idText.data() + idText.size(), value);
    if (e1 != std::errc() || p1 != idText.data() + idText.size() || value < 0 ||
        value > (std::int64_t(1) << 53))
        return false;
    int secs = 0;
    const std::string_view secText = rest.substr(space + 1);
    auto [p2, e2] = std::from_chars(secText.data(), secText.data() + secText.size(), secs);
    if (e2 != std::errc() || p2 != secText.data() + secText.size() || secs < 1 ||
        secs > kMaxProfileSeconds)
        return false;
    *id = value;
    *seconds = secs;
    return true;
}

// The frdump chunk events of one file (`file`: kFlightRecorderJson or kFlightRecorderPickle),
// each line passed to `out` (write each with one write()). Not named `emit`: Qt defines that
// word away, and in a Qt translation unit the call would vanish without a warning.
template <typename Emit>
void emitFlightRecorderChunks(int rank, std::int64_t id, std::string_view file,
                              std::string_view bytes, std::int64_t timeUs, Emit &&out)
{
    for (std::size_t offset = 0; offset < bytes.size(); offset += kFlightRecorderChunkBytes) {
        WireEventWriter w(event::FlightRecorder, rank, timeUs);
        w.addInt(field::Id, id)
            .addString(field::File, file)
            .addInt(field::Offset, std::int64_t(offset))
            .addInt(field::Size, std::int64_t(bytes.size()))
            .addBase64(field::Data, bytes.substr(offset, kFlightRecorderChunkBytes));
        out(w.line());
    }
}

// The end event of one answer; `why` empty when both files were sent whole.
inline std::string flightRecorderEnd(int rank, std::int64_t id, std::string_view why,
                                     std::int64_t timeUs)
{
    WireEventWriter w(event::FlightRecorder, rank, timeUs);
    w.addInt(field::Id, id).addBool(field::End, true);
    if (!why.empty()) {
        // One line under PIPE_BUF: long exception texts are cut, on a UTF-8 character boundary.
        std::size_t n = why.size() < 1000 ? why.size() : 1000;
        while (n < why.size() && n > 0 && (static_cast<unsigned char>(why[n]) & 0xc0) == 0x80)
            --n;
        w.addString(field::Message, why.substr(0, n));
    }
    return w.line();
}

} // namespace rankdeck::wire
