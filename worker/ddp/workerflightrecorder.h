// SPDX-License-Identifier: GPL-3.0-or-later
// torch's flight recorder in rankdeck-worker: c10d records the worker's own Gloo (or NCCL)
// collectives, the bucket all-reduces and all-gathers, the broadcasts and the final barrier,
// and dump-flight-recorder <id> on the control channel answers with the same `frdump` events
// as rankdeck-supervisor (docs/protocol.md): torch's JSON and pickle, then one end event.
// No libtorch in this header: it is included by main.cpp.
#pragma once

#include <cstdint>
#include <string>

namespace rankdeck {

struct WorkerOptions;
class Telemetry;

class WorkerFlightRecorder
{
public:
    // Collectives kept per rank, as rankdeck-supervisor keeps them for a user's program.
    static constexpr int kBufferSize = 500;
    // The group's name in the records (what torch names a default process group).
    static constexpr const char *kGroupName = "0";
    static constexpr const char *kGroupDesc = "default_pg";

    // Before any process group exists: TORCH_FR_BUFFER_SIZE is set to kBufferSize unless the
    // user set it (or TORCH_NCCL_TRACE_BUFFER_SIZE); to 0 when --no-flight-recorder or
    // RANKDECK_FLIGHT_RECORDER=0 turned recording off.
    WorkerFlightRecorder(const WorkerOptions &options, Telemetry &telemetry);

    // Why there is nothing to dump, empty when recording is on.
    const std::string &offReason() const { return m_off; }

    // The process group is NCCL's: dumps come from its recorder (DistributedContext).
    static void usesNccl();

    // dump-flight-recorder <id>: the frdump events. Safe from any thread; c10d's recorder
    // takes its own lock. Before the process group exists the dump has no entries.
    void dump(std::int64_t id);

private:
    Telemetry &m_telemetry;
    int m_worldSize = 1;
    std::string m_off;
};

} // namespace rankdeck
