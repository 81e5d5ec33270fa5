// SPDX-License-Identifier: GPL-3.0-or-later
#include "ddp/workerflightrecorder.h"

#include "telemetry.h"
#include "workeroptions.h"

#include "wire/wireprotocol.h"

#include <torch/csrc/distributed/c10d/FlightRecorder.hpp>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <atomic>
#include <cstdlib>
#include <exception>

namespace rankdeck {

namespace {

std::atomic<bool> g_nccl{false};

const char *envValue(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// "[0, 1, 2]", as Python's str() of a list, which is how torch writes a group's ranks.
std::string rankList(int worldSize)
{
    std::string s = "[";
    for (int r = 0; r < worldSize; ++r)
        s += (r ? ", " : "") + std::to_string(r);
    return s + "]";
}

// The value of "pg_config" in torch's JSON dump replaced by `config` (a JSON object); false
// when the dump does not have one where expected. Bounded: one pass over the text.
bool replacePgConfig(std::string &json, const std::string &config)
{
    const std::string key = "\"pg_config\":";
    size_t i = json.find(key);
    if (i == std::string::npos)
        return false;
    i += key.size();
    while (i < json.size() && json[i] == ' ')
        ++i;
    if (i >= json.size() || json[i] != '{')
        return false;
    const size_t start = i;
    int depth = 0;
    bool inString = false;
    for (; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{') {
            ++depth;
        } else if (c == '}' && --depth == 0) {
            json.replace(start, i - start + 1, config);
            return true;
        }
    }
    return false;
}

// torch's pickle with "pg_config" replaced by `config`; unchanged when it does not unpickle
// as the dict torch writes.
std::string withPgConfig(const std::string &pickle, const c10::impl::GenericDict &config)
{
    c10::IValue value = torch::jit::unpickle(pickle.data(), pickle.size());
    if (!value.isGenericDict())
        return pickle;
    auto dump = value.toGenericDict();
    dump.insert_or_assign(c10::IValue(std::string("pg_config")), c10::IValue(config));
    std::string out;
    // Plain dicts, as torch writes them: Python's pickle reads them without torch.
    torch::jit::Pickler pickler([&](const char *buf, size_t size) { out.append(buf, size); },
                                nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(c10::IValue(dump));
    pickler.stop();
    return out;
}

} // namespace

WorkerFlightRecorder::WorkerFlightRecorder(const WorkerOptions &options, Telemetry &telemetry)
    : m_telemetry(telemetry), m_worldSize(options.worldSize)
{
    // The names and their order as torch reads them (FlightRecorder.hpp): the user's wins.
    const char *userName = envValue("TORCH_FR_BUFFER_SIZE") ? "TORCH_FR_BUFFER_SIZE"
                           : envValue("TORCH_NCCL_TRACE_BUFFER_SIZE")
                               ? "TORCH_NCCL_TRACE_BUFFER_SIZE"
                               : nullptr;
    if (!options.flightRecorder) {
        m_off = "flight recorder off (--no-flight-recorder or RANKDECK_FLIGHT_RECORDER=0)";
        if (!userName)
            ::setenv("TORCH_FR_BUFFER_SIZE", "0", 1);
    } else if (userName && std::strtol(envValue(userName), nullptr, 10) <= 0) {
        m_off = std::string("flight recorder off: ") + userName + "=" + envValue(userName) +
                " in the worker's environment";
    } else if (!userName) {
        ::setenv("TORCH_FR_BUFFER_SIZE", std::to_string(kBufferSize).c_str(), 1);
    }
}

void WorkerFlightRecorder::usesNccl()
{
    g_nccl = true;
}

void WorkerFlightRecorder::dump(std::int64_t id)
{
    const int rank = m_telemetry.rank();
    if (!m_off.empty()) {
        m_telemetry.emitLine(wire::flightRecorderEnd(rank, id, m_off, Telemetry::nowUs()));
        return;
    }
    std::string json, pickle;
    try {
        // NCCL collectives have their own recorder (its events are CUDA events); the worker
        // uses one backend, so one of the two dumps is the whole story.
#ifdef USE_C10D_NCCL
        if (g_nccl) {
            json = c10d::dump_nccl_trace_json(true, false);
            pickle = c10d::dump_nccl_trace(true, true, false);
        } else
#endif
        {
            json = c10d::dump_fr_trace_json(true, false);
            pickle = c10d::dump_fr_trace(true, true, false);
            // ProcessGroupGloo records its group's ranks in its constructor, before the
            // description can be set, so pg_config says desc "": write the group as the
            // entries name it, for torch's analyser and RankDeck's verdict alike.
            const std::string ranks = rankList(m_worldSize);
            replacePgConfig(json, std::string("{\"") + kGroupName + "\":{\"desc\":\"" + kGroupDesc +
                                      "\",\"name\":\"" + kGroupName + "\",\"ranks\":\"" + ranks +
                                      "\"}}");
            c10::impl::GenericDict group(c10::StringType::get(), c10::StringType::get());
            group.insert(std::string("name"), std::string(kGroupName));
            group.insert(std::string("desc"), std::string(kGroupDesc));
            group.insert(std::string("ranks"), ranks);
            c10::impl::GenericDict config(c10::StringType::get(), c10::AnyType::get());
            config.insert(std::string(kGroupName), group);
            pickle = withPgConfig(pickle, config);
        }
    } catch (const std::exception &e) {
        m_telemetry.emitLine(wire::flightRecorderEnd(
            rank, id, std::string("the dump failed: ") + e.what(), Telemetry::nowUs()));
        return;
    }
    const std::int64_t ts = Telemetry::nowUs();
    auto emit = [this](const std::string &line) { m_telemetry.emitLine(line); };
    wire::emitFlightRecorderChunks(rank, id, wire::kFlightRecorderJson, json, ts, emit);
    wire::emitFlightRecorderChunks(rank, id, wire::kFlightRecorderPickle, pickle, ts, emit);
    m_telemetry.emitLine(wire::flightRecorderEnd(rank, id, {}, Telemetry::nowUs()));
}

} // namespace rankdeck
