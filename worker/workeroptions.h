// SPDX-License-Identifier: GPL-3.0-or-later
// Command line and torchrun environment of rankdeck-worker (contract: docs/worker.md).
// Plain C++ on purpose: parsing must be cheap to compile and testable without libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rankdeck {

// Thrown for bad flags or environment; main() turns it into exit code 2.
class UsageError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

struct WorkerOptions
{
    // Distributed identity (torchrun environment, flags override).
    int rank = 0;
    int worldSize = 1;
    int localRank = 0;
    int localWorldSize = 1;
    int groupRank = 0;
    std::string masterAddr = "127.0.0.1";
    int masterPort = 29500;
    std::string runId;

    std::string task = "linear";
    std::int64_t steps = 100;
    std::int64_t batchSize = 0; // 0: the task's default
    double lr = -1;             // < 0: the task's default
    std::string optimizer;      // empty: the task's default
    double momentum = 0;
    double weightDecay = -1; // < 0: the optimizer's default
    std::string schedule = "constant";
    std::int64_t warmupSteps = 0;
    double clipGradNorm = 0; // 0: off
    std::int64_t seed = 0;
    bool shuffle = false;
    std::int64_t accumSteps = 1;

    std::string backend = "auto";
    std::string glooIfname;
    int rendezvousTimeoutSec = 60;
    int collectiveTimeoutSec = 300;

    std::int64_t mlpWidth = 64;
    std::int64_t mlpDepth = 2;
    std::int64_t datasetSize = 0; // 0: the task's default
    std::string corpus;

    std::string modelPath;
    std::string dataPath;
    std::string loss = "mse";

    std::string saveState;
    std::string checkpointDir;
    std::int64_t checkpointEvery = 0;
    bool resume = false;

    std::int64_t logEvery = 1;
    bool telemetry = true;
    bool controlStdin = false;
    std::string runDir;

    std::string fault;
    int faultRank = -1;
    std::int64_t stepDelayMs = 0;
    // --step-delay-ms with --fault-rank and no --fault: only that rank is slow, inside its step
    // (a straggler the others wait for in the all-reduce). Otherwise every rank sleeps after
    // each step.
    bool stragglerDelay() const { return stepDelayMs > 0 && faultRank >= 0 && fault.empty(); }
    bool noOverlap = false;
    // torch's flight recorder of this rank's collectives (dump-flight-recorder);
    // --no-flight-recorder or RANKDECK_FLIGHT_RECORDER=0 turn it off.
    bool flightRecorder = true;
    std::string cpuAffinity = "auto"; // auto: CPU ranks sharing a node get disjoint CPU slices
    // RANKDECK_COUNT_STEPS=FROM:TO: under valgrind --tool=callgrind --instr-atstart=no, only
    // steps FROM..TO-1 are counted (bench/run's telemetry benchmark); -1: no window.
    std::int64_t countFrom = -1;
    std::int64_t countTo = -1;
    bool help = false;
};

// Parses argv over the environment `env` (name → value). Throws UsageError naming the flag or
// variable that is wrong.
WorkerOptions parseWorkerOptions(const std::vector<std::string> &args,
                                 const std::map<std::string, std::string> &env);

// The process environment as a map, for parseWorkerOptions.
std::map<std::string, std::string> processEnvironment();

std::string workerUsage();

} // namespace rankdeck
