// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-loadgen: a synthetic rank for benchmarks and scale tests. It speaks the worker's wire
// format (hello, store, rendezvous, step, heartbeat, finished) and prints numbered log lines at
// a set rate, so that the launcher's real transport, parser, stores and views can be loaded
// with 64–512 ranks without 64–512 libtorch processes. Every line carries "rank R line N" so a
// benchmark can prove that none went missing.
//
//   --lines-per-sec N   log lines per second (0: as fast as possible, with --total-lines)
//   --steps-per-sec N   step events per second
//   --duration S        seconds to run (ignored with --total-lines)
//   --total-lines N     stop after N lines
//   --control-stdin     read `stop` on stdin; end of stdin ends the process
//   --scalars N         N more metrics in each step event ("scalars", as rankdeck.log() sends):
//                       with the step event's own six, 14 make the 20 a chatty job logs a step
// The launcher passes worker flags it knows nothing about; unknown flags are ignored on purpose.
#include "wire/wireprotocol.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};

std::int64_t nowUs()
{
    using namespace std::chrono;
    return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

void writeAll(const std::string &s)
{
    const char *p = s.data();
    std::size_t left = s.size();
    while (left > 0) {
        const ssize_t n = ::write(1, p, left);
        if (n <= 0)
            std::exit(0); // the launcher is gone
        p += n;
        left -= std::size_t(n);
    }
}

long envInt(const char *name, long fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

} // namespace

int main(int argc, char **argv)
{
    double linesPerSec = 2000, stepsPerSec = 20, duration = 10;
    long long totalLines = -1;
    int scalarCount = 0;
    bool controlStdin = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&](double &out) {
            if (i + 1 < argc)
                out = std::atof(argv[++i]);
        };
        if (a == "--lines-per-sec")
            next(linesPerSec);
        else if (a == "--steps-per-sec")
            next(stepsPerSec);
        else if (a == "--duration")
            next(duration);
        else if (a == "--total-lines" && i + 1 < argc)
            totalLines = std::atoll(argv[++i]);
        else if (a == "--scalars" && i + 1 < argc)
            scalarCount = std::max(0, std::atoi(argv[++i]));
        else if (a == "--control-stdin")
            controlStdin = true;
    }
    // The names are made once: a step then only formats the values.
    std::vector<std::pair<std::string, double>> scalars;
    scalars.reserve(std::size_t(scalarCount));
    for (int k = 0; k < scalarCount; ++k)
        scalars.emplace_back("metric_" + std::to_string(k), 0.0);
    if (const char *c = std::getenv("RANKDECK_CONTROL"); c && std::string(c) == "stdin")
        controlStdin = true;

    // The launcher sends SIGUSR1 to a rank it finds silent, for the stacks the worker then dumps
    // and goes on; on a machine loaded by 512 of these the default action (death) turned a late
    // heartbeat into a failed run.
    std::signal(SIGUSR1, SIG_IGN);
    const int rank = int(envInt("RANK", 0));
    const int world = int(envInt("WORLD_SIZE", 1));
    namespace w = rankdeck::wire;

    if (controlStdin) {
        std::thread([] {
            std::string line;
            while (std::getline(std::cin, line)) {
                if (line == w::command::Stop)
                    break;
            }
            g_stop = true;
        }).detach();
    }

    char host[256] = "localhost";
    ::gethostname(host, sizeof host - 1);
    writeAll(w::WireEventWriter(w::event::Hello, rank, nowUs())
                 .addInt(w::field::Protocol, w::kProtocolVersion)
                 .addString(w::field::Host, host)
                 .addInt(w::field::Pid, ::getpid())
                 .addInt(w::field::WorldSize, world)
                 .addString(w::field::Device, "cpu")
                 .addString(w::field::Backend, "loadgen")
                 .addString(w::field::Task, "loadgen")
                 .line());
    if (rank == 0 && envInt("MASTER_PORT", -1) == 0) {
        // Nothing listens: the synthetic ranks never rendezvous, they only need the launcher to
        // go on starting the others.
        writeAll(w::WireEventWriter(w::event::Store, 0, nowUs()).addInt(w::field::Port, 1).line());
    }
    writeAll(w::WireEventWriter(w::event::Rendezvous, rank, nowUs())
                 .addInt(w::field::DurationMs, 0)
                 .addInt(w::field::WorldSize, world)
                 .line());

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    long long linesDone = 0, stepsDone = 0;
    auto lastBeat = start;
    std::string batch;
    batch.reserve(1 << 16);
    char buf[160];
    while (!g_stop) {
        const double t = std::chrono::duration<double>(clock::now() - start).count();
        if (totalLines < 0 && t >= duration)
            break;
        if (totalLines >= 0 && linesDone >= totalLines)
            break;
        long long lineTarget = linesPerSec > 0 ? (long long)(t * linesPerSec) : linesDone + 512;
        if (totalLines >= 0)
            lineTarget = std::min(lineTarget, totalLines);
        batch.clear();
        while (linesDone < lineTarget) {
            const int n = std::snprintf(buf, sizeof buf,
                                        "loadgen rank %d line %lld: the quick brown fox jumps\n",
                                        rank, linesDone);
            batch.append(buf, std::size_t(n));
            ++linesDone;
            if (batch.size() > 60000)
                break;
        }
        const long long stepTarget = (long long)(t * stepsPerSec);
        while (stepsDone < stepTarget) {
            ++stepsDone;
            const double loss = 2.0 * std::exp(-double(stepsDone) / 500.0) + 0.01 * (rank % 7);
            w::WireEventWriter step(w::event::Step, rank, nowUs());
            step.addInt(w::field::Step, stepsDone)
                .addInt(w::field::Epoch, 0)
                .addDouble(w::field::Loss, loss)
                .addDouble(w::field::LearningRate, 0.01)
                .addDouble(w::field::SamplesPerSec, 1000)
                .addDouble(w::field::StepTimeMs, 1000.0 / std::max(1.0, stepsPerSec))
                .addDouble(w::field::CommWaitMs, 0);
            if (!scalars.empty()) {
                for (std::size_t k = 0; k < scalars.size(); ++k)
                    scalars[k].second = loss * double(k + 1) + 0.001 * double(stepsDone % 97);
                step.addDoubles("scalars", scalars);
            }
            batch += step.line();
        }
        if (clock::now() - lastBeat > std::chrono::seconds(1)) {
            lastBeat = clock::now();
            batch += w::WireEventWriter(w::event::Heartbeat, rank, nowUs())
                         .addInt(w::field::Step, stepsDone)
                         .line();
        }
        if (!batch.empty()) {
            writeAll(batch);
        } else if (linesPerSec > 0 || stepsPerSec > 0) {
            // Sleep until the next line, step or heartbeat is due (at most 50 ms, so that a
            // `stop` is seen soon): a fixed 2 ms nap woke 512 idle ranks 256,000 times a
            // second, which alone filled the two cores a 512-rank run is measured on.
            double next = t + 0.05;
            if (linesPerSec > 0)
                next = std::min(next, double(linesDone + 1) / linesPerSec);
            if (stepsPerSec > 0)
                next = std::min(next, double(stepsDone + 1) / stepsPerSec);
            const double nap = std::max(0.0, next - t);
            std::this_thread::sleep_for(std::chrono::microseconds(std::int64_t(nap * 1e6) + 100));
        }
    }
    writeAll(
        w::WireEventWriter(w::event::Finished, rank, nowUs())
            .addInt(w::field::Step, stepsDone)
            .addInt(
                w::field::DurationMs,
                std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start).count())
            .line());
    std::fprintf(stderr, "loadgen rank %d wrote %lld lines, %lld steps\n", rank, linesDone,
                 stepsDone);
    return 0;
}
