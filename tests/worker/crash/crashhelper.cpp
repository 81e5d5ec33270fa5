// SPDX-License-Identifier: GPL-3.0-or-later
//
// A stand-in for rankdeck-worker's training loop, linking the real crash handler and fault
// injector: it prints the worker's log lines, sends heartbeats from a second thread and fails
// as --fault asks. tst_crashhandler drives it as a real process.
//   crashhelper --rank R [--run-dir D] [--fault KIND@STEP --fault-rank F] [--steps N]
//               [--step-delay-ms MS] [--train-thread]
// --train-thread runs the loop on a second thread named "rdk-train", as a crash away from the
// main thread.
#include "crash/crashhandler.h"
#include "crash/faultinjection.h"
#include "wire/wireprotocol.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

std::atomic<int> g_lastStep{-1};

std::int64_t nowUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void emit(const std::string &line)
{
    (void)!::write(STDOUT_FILENO, line.data(), line.size());
}

[[gnu::noinline]] double trainOneStep(rankdeck::fault::FaultInjector *fault, int rank, int step)
{
    if (fault)
        fault->maybeInject(step);
    const double loss = 1.0 / (1.0 + step);
    std::printf("Rank %d: Epoch %d, Loss %.6f\n", rank, step, loss);
    std::fflush(stdout);
    return loss;
}

} // namespace

int main(int argc, char **argv)
{
    int rank = 0, steps = 10, stepDelayMs = 20, faultRank = 0;
    bool trainThread = false;
    std::string runDir, faultSpec;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "crashhelper: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--rank")
            rank = std::atoi(value().c_str());
        else if (a == "--run-dir")
            runDir = value();
        else if (a == "--fault")
            faultSpec = value();
        else if (a == "--fault-rank")
            faultRank = std::atoi(value().c_str());
        else if (a == "--steps")
            steps = std::atoi(value().c_str());
        else if (a == "--step-delay-ms")
            stepDelayMs = std::atoi(value().c_str());
        else if (a == "--train-thread")
            trainThread = true;
        else {
            std::fprintf(stderr, "crashhelper: unknown flag %s\n", a.c_str());
            return 2;
        }
    }

    rankdeck::crash::install({rank, runDir, rankdeck::crash::ownBuildId()});

    std::optional<rankdeck::fault::FaultInjector> fault;
    if (!faultSpec.empty()) {
        std::string error;
        fault = rankdeck::fault::FaultInjector::parse(faultSpec, faultRank, rank, &error);
        if (!fault) {
            std::fprintf(stderr, "crashhelper: %s\n", error.c_str());
            return 2;
        }
    }

    std::thread([rank] {
        for (;;) {
            emit(rankdeck::wire::WireEventWriter(rankdeck::wire::event::Heartbeat, rank, nowUs())
                     .addInt(rankdeck::wire::field::Step, g_lastStep.load())
                     .line());
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }).detach();

    auto train = [&] {
        for (int step = 0; step < steps; ++step) {
            trainOneStep(fault ? &*fault : nullptr, rank, step);
            g_lastStep = step;
            std::this_thread::sleep_for(std::chrono::milliseconds(stepDelayMs));
        }
    };
    if (trainThread) {
        std::thread t([&] {
            ::pthread_setname_np(::pthread_self(), "rdk-train");
            train();
        });
        t.join();
    } else {
        train();
    }
    std::printf("Rank %d: done\n", rank);
    return 0;
}
