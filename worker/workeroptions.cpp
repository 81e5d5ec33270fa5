// SPDX-License-Identifier: GPL-3.0-or-later
#include "workeroptions.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

extern char **environ;

namespace rankdeck {

namespace {

std::int64_t toInt(const std::string &what, const std::string &value, std::int64_t min,
                   std::int64_t max)
{
    if (value.empty())
        throw UsageError(what + ": expected an integer, got an empty value");
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (errno != 0 || end == value.c_str() || *end != '\0')
        throw UsageError(what + ": expected an integer, got '" + value + "'");
    if (v < min || v > max)
        throw UsageError(what + ": " + value + " is out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
    return v;
}

double toDouble(const std::string &what, const std::string &value, double min)
{
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || errno != 0 || end == value.c_str() || *end != '\0' || !std::isfinite(v))
        throw UsageError(what + ": expected a number, got '" + value + "'");
    if (v < min)
        throw UsageError(what + ": " + value + " must be at least " + std::to_string(min));
    return v;
}

std::string oneOf(const std::string &what, const std::string &value,
                  const std::set<std::string> &allowed)
{
    if (allowed.count(value))
        return value;
    std::string list;
    for (const auto &a : allowed)
        list += (list.empty() ? "" : "|") + a;
    throw UsageError(what + ": '" + value + "' is not one of " + list);
}

} // namespace

std::map<std::string, std::string> processEnvironment()
{
    std::map<std::string, std::string> env;
    for (char **e = environ; e && *e; ++e) {
        const std::string kv(*e);
        const auto eq = kv.find('=');
        if (eq != std::string::npos)
            env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return env;
}

WorkerOptions parseWorkerOptions(const std::vector<std::string> &args,
                                 const std::map<std::string, std::string> &env)
{
    WorkerOptions o;
    constexpr std::int64_t kMaxInt = 2147483647;
    constexpr std::int64_t kMaxSteps = std::int64_t(1) << 50;

    auto envInt = [&](const char *name, int &out, std::int64_t min, std::int64_t max) {
        const auto it = env.find(name);
        if (it != env.end())
            out = int(toInt(std::string("environment variable ") + name, it->second, min, max));
    };
    envInt("RANK", o.rank, 0, kMaxInt);
    envInt("WORLD_SIZE", o.worldSize, 1, kMaxInt);
    envInt("LOCAL_RANK", o.localRank, 0, kMaxInt);
    envInt("LOCAL_WORLD_SIZE", o.localWorldSize, 1, kMaxInt);
    envInt("GROUP_RANK", o.groupRank, 0, kMaxInt);
    envInt("MASTER_PORT", o.masterPort, 0, 65535);
    if (auto it = env.find("MASTER_ADDR"); it != env.end()) {
        if (it->second.empty())
            throw UsageError("environment variable MASTER_ADDR is empty");
        o.masterAddr = it->second;
    }
    if (auto it = env.find("RANKDECK_RUN_ID"); it != env.end())
        o.runId = it->second;
    if (auto it = env.find("RANKDECK_CONTROL"); it != env.end()) {
        if (it->second == "stdin")
            o.controlStdin = true;
        else if (!it->second.empty())
            throw UsageError("environment variable RANKDECK_CONTROL: '" + it->second +
                             "' is not supported (only 'stdin')");
    }
    if (auto it = env.find("RANKDECK_FLIGHT_RECORDER"); it != env.end())
        o.flightRecorder = !(it->second == "0" || it->second == "off" || it->second == "false" ||
                             it->second == "no");
    if (auto it = env.find("GLOO_SOCKET_IFNAME"); it != env.end())
        o.glooIfname = it->second;
    if (auto it = env.find("RANKDECK_COUNT_STEPS"); it != env.end()) {
        const std::string what = "environment variable RANKDECK_COUNT_STEPS";
        const auto colon = it->second.find(':');
        if (colon == std::string::npos)
            throw UsageError(what + ": expected FROM:TO (steps), got '" + it->second + "'");
        o.countFrom = toInt(what + " (FROM)", it->second.substr(0, colon), 0, kMaxSteps);
        o.countTo = toInt(what + " (TO)", it->second.substr(colon + 1), o.countFrom + 1, kMaxSteps);
    }

    // Flags: name → handler taking the value (nullptr value for booleans).
    using Handler = std::function<void(const std::string &flag, const std::string &value)>;
    struct Flag
    {
        bool takesValue;
        Handler handle;
    };
    auto intFlag = [](auto &out, std::int64_t min, std::int64_t max) {
        return Flag{true, [&out, min, max](const std::string &f, const std::string &v) {
                        out = static_cast<std::remove_reference_t<decltype(out)>>(
                            toInt(f, v, min, max));
                    }};
    };
    auto doubleFlag = [](double &out, double min) {
        return Flag{true, [&out, min](const std::string &f, const std::string &v) {
                        out = toDouble(f, v, min);
                    }};
    };
    auto stringFlag = [](std::string &out) {
        return Flag{true, [&out](const std::string &f, const std::string &v) {
                        if (v.empty())
                            throw UsageError(f + ": empty value");
                        out = v;
                    }};
    };
    auto choiceFlag = [](std::string &out, std::set<std::string> allowed) {
        return Flag{true, [&out, allowed](const std::string &f, const std::string &v) {
                        out = oneOf(f, v, allowed);
                    }};
    };
    auto boolFlag = [](bool &out) {
        return Flag{false, [&out](const std::string &, const std::string &) { out = true; }};
    };

    bool weightDecaySet = false;
    std::map<std::string, Flag> flags = {
        {"--rank", intFlag(o.rank, 0, kMaxInt)},
        {"--world-size", intFlag(o.worldSize, 1, kMaxInt)},
        {"--local-rank", intFlag(o.localRank, 0, kMaxInt)},
        {"--local-world-size", intFlag(o.localWorldSize, 1, kMaxInt)},
        {"--master-addr", stringFlag(o.masterAddr)},
        {"--master-port", intFlag(o.masterPort, 0, 65535)},
        {"--task", choiceFlag(o.task, {"linear", "mlp", "charlm", "script"})},
        {"--steps", intFlag(o.steps, 0, kMaxSteps)},
        {"--batch-size", intFlag(o.batchSize, 1, kMaxInt)},
        {"--lr", doubleFlag(o.lr, 0)},
        {"--optimizer", choiceFlag(o.optimizer, {"sgd", "adamw"})},
        {"--momentum", doubleFlag(o.momentum, 0)},
        {"--weight-decay", Flag{true,
                                [&](const std::string &f, const std::string &v) {
                                    o.weightDecay = toDouble(f, v, 0);
                                    weightDecaySet = true;
                                }}},
        {"--schedule", choiceFlag(o.schedule, {"constant", "cosine"})},
        {"--warmup-steps", intFlag(o.warmupSteps, 0, kMaxSteps)},
        {"--clip-grad-norm", doubleFlag(o.clipGradNorm, 0)},
        {"--seed", intFlag(o.seed, 0, std::int64_t(1) << 62)},
        {"--shuffle", boolFlag(o.shuffle)},
        {"--accum-steps", intFlag(o.accumSteps, 1, 1 << 20)},
        {"--backend", choiceFlag(o.backend, {"auto", "nccl", "gloo"})},
        {"--gloo-ifname", stringFlag(o.glooIfname)},
        {"--rendezvous-timeout", intFlag(o.rendezvousTimeoutSec, 1, 86400 * 7)},
        {"--collective-timeout", intFlag(o.collectiveTimeoutSec, 1, 86400 * 7)},
        {"--mlp-width", intFlag(o.mlpWidth, 1, 1 << 20)},
        {"--mlp-depth", intFlag(o.mlpDepth, 1, 1024)},
        {"--dataset-size", intFlag(o.datasetSize, 1, std::int64_t(1) << 40)},
        {"--corpus", stringFlag(o.corpus)},
        {"--model", stringFlag(o.modelPath)},
        {"--data", stringFlag(o.dataPath)},
        {"--loss", choiceFlag(o.loss, {"mse", "cross-entropy"})},
        {"--save-state", stringFlag(o.saveState)},
        {"--checkpoint-dir", stringFlag(o.checkpointDir)},
        {"--checkpoint-every", intFlag(o.checkpointEvery, 1, kMaxSteps)},
        {"--resume", boolFlag(o.resume)},
        {"--log-every", intFlag(o.logEvery, 1, kMaxSteps)},
        {"--telemetry", Flag{true,
                             [&](const std::string &f, const std::string &v) {
                                 o.telemetry = oneOf(f, v, {"on", "off"}) == "on";
                             }}},
        {"--control-stdin", boolFlag(o.controlStdin)},
        {"--run-dir", stringFlag(o.runDir)},
        {"--fault", stringFlag(o.fault)},
        {"--fault-rank", intFlag(o.faultRank, 0, kMaxInt)},
        {"--step-delay-ms", intFlag(o.stepDelayMs, 0, 3600 * 1000)},
        {"--no-overlap", boolFlag(o.noOverlap)},
        {"--no-flight-recorder",
         Flag{false, [&](const std::string &, const std::string &) { o.flightRecorder = false; }}},
        {"--cpu-affinity", choiceFlag(o.cpuAffinity, {"auto", "off"})},
        {"--help", boolFlag(o.help)},
    };

    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name = args[i];
        std::string value;
        bool inlineValue = false;
        if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inlineValue = true;
        }
        if (name == "-h")
            name = "--help";
        const auto it = flags.find(name);
        if (it == flags.end())
            throw UsageError("unknown flag '" + args[i] + "' (see --help)");
        if (it->second.takesValue && !inlineValue) {
            if (i + 1 >= args.size())
                throw UsageError(name + ": missing value");
            value = args[++i];
        } else if (!it->second.takesValue && inlineValue) {
            throw UsageError(name + ": takes no value");
        }
        it->second.handle(name, value);
    }
    if (o.help)
        return o;

    if (o.countTo > o.steps)
        throw UsageError("environment variable RANKDECK_COUNT_STEPS: the window ends at step " +
                         std::to_string(o.countTo) + ", after the last step (--steps " +
                         std::to_string(o.steps) + ")");
    if (o.rank >= o.worldSize)
        throw UsageError("rank " + std::to_string(o.rank) +
                         " (RANK / --rank) must be below the world size " +
                         std::to_string(o.worldSize) + " (WORLD_SIZE / --world-size)");
    if (o.localRank >= o.localWorldSize && env.count("LOCAL_WORLD_SIZE"))
        throw UsageError("local rank " + std::to_string(o.localRank) +
                         " (LOCAL_RANK / --local-rank) must be below LOCAL_WORLD_SIZE " +
                         std::to_string(o.localWorldSize));
    if (o.masterPort == 0 && o.rank != 0)
        throw UsageError("MASTER_PORT / --master-port is 0 on rank " + std::to_string(o.rank) +
                         ": only rank 0 may bind a free port; start the other ranks with the port "
                         "its 'store' event reports");
    if (o.task == "script") {
        if (o.modelPath.empty())
            throw UsageError("--task script needs --model M.pt (a torch.jit.script module)");
        if (o.dataPath.empty())
            throw UsageError("--task script needs --data D.pt (torch.save({'x': X, 'y': Y}))");
    } else {
        if (!o.modelPath.empty())
            throw UsageError("--model is only used with --task script");
        if (!o.dataPath.empty())
            throw UsageError("--data is only used with --task script");
    }
    if (!o.corpus.empty() && o.task != "charlm")
        throw UsageError("--corpus is only used with --task charlm");
    if (o.resume && o.checkpointDir.empty())
        throw UsageError("--resume needs --checkpoint-dir");
    if (o.checkpointEvery > 0 && o.checkpointDir.empty())
        throw UsageError("--checkpoint-every needs --checkpoint-dir");
    if (o.faultRank >= 0 && o.fault.empty() && o.stepDelayMs == 0)
        throw UsageError(
            "--fault-rank needs --fault KIND@STEP, or --step-delay-ms N (a straggler)");

    // Task defaults: the linear task is the reference example (SGD, lr 0.01, batch 20).
    if (o.optimizer.empty())
        o.optimizer = o.task == "charlm" ? "adamw" : "sgd";
    if (o.lr < 0)
        o.lr = o.optimizer == "adamw" ? 3e-3 : 0.01;
    if (!weightDecaySet)
        o.weightDecay = o.optimizer == "adamw" ? 0.01 : 0.0;
    if (o.batchSize == 0)
        o.batchSize = o.task == "linear" ? 20 : (o.task == "charlm" ? 16 : 32);
    if (o.datasetSize == 0 && (o.task == "linear" || o.task == "mlp"))
        o.datasetSize = o.task == "linear" ? 1000 : 4096;
    return o;
}

std::string workerUsage()
{
    return R"(Usage: rankdeck-worker [flags]
Trains one rank of a DistributedDataParallel job. Identity comes from the torchrun
environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT);
flags override it.

  --rank N --world-size N --local-rank N --local-world-size N --master-addr A --master-port P
  --task linear|mlp|charlm|script   (default linear)
  --steps N (default 100)  --batch-size B  --lr X  --optimizer sgd|adamw  --momentum X
  --weight-decay X  --schedule constant|cosine  --warmup-steps N  --clip-grad-norm X
  --seed N  --shuffle  --accum-steps N
  --backend auto|nccl|gloo  --gloo-ifname IF  --rendezvous-timeout SEC (60)
  --collective-timeout SEC (300)
  --mlp-width N --mlp-depth N  --dataset-size N  --corpus PATH
  --model M.pt --data D.pt --loss mse|cross-entropy   (script task)
  --save-state OUT.pt  --checkpoint-dir DIR --checkpoint-every N --resume
  --log-every N  --telemetry on|off  --control-stdin  --run-dir DIR
  --fault KIND@STEP --fault-rank R  --step-delay-ms N  --no-overlap  --cpu-affinity auto|off
  (--step-delay-ms N --fault-rank R without --fault: rank R alone is N ms slower per step)
  --no-flight-recorder   (also RANKDECK_FLIGHT_RECORDER=0: no record of the collectives)
  --help
Exit codes: 0 finished or stopped, 1 runtime error, 2 bad flags or environment.
)";
}

} // namespace rankdeck
