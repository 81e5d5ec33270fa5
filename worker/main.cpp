// SPDX-License-Identifier: GPL-3.0-or-later
// rankdeck-worker: one rank of a DistributedDataParallel training job (docs/worker.md).
#include "buildinfo.h"
#include "controlchannel.h"
#include "crash/crashhandler.h"
#include "ddp/workerflightrecorder.h"
#include "telemetry.h"
#include "trainer.h"
#include "workeroptions.h"

#include "wire/wireprotocol.h"

#include <c10/util/Exception.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <malloc.h>
#include <unistd.h>

using namespace rankdeck;

namespace {

// A training step allocates and frees the same large tensors (activations, gradients, GEMM
// outputs) over and over. glibc's defaults hand blocks above its mmap threshold back to the
// kernel on every free and trim the heap top, so every step page-faults them in again: 10 % of
// a 25M-parameter MLP step went to clear_page and the fault path (perf, docs/benchmarks.md).
// Keeping freed memory in the heap costs no more than the step's peak. Users who tune malloc
// themselves (MALLOC_*_ or GLIBC_TUNABLES) keep their settings.
void keepFreedMemoryForReuse()
{
    for (const char *userTuned :
         {"GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"})
        if (std::getenv(userTuned))
            return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's upper limit for this setting
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

[[noreturn]] void finish(int code)
{
    std::fflush(nullptr);
    // Skip static destructors: a process group torn down while a peer is gone can block.
    ::_exit(code);
}

[[noreturn]] void fail(Telemetry &telemetry, const std::string &message, int code)
{
    wire::WireEventWriter w(wire::event::Error, telemetry.rank(), Telemetry::nowUs());
    w.addString(wire::field::Message, message).addInt(wire::field::ExitCode, code);
    telemetry.emit(w);
    telemetry.err("rankdeck-worker: rank " + std::to_string(telemetry.rank()) +
                  ": error: " + message);
    finish(code);
}

} // namespace

int main(int argc, char **argv)
{
    keepFreedMemoryForReuse();
    WorkerOptions options;
    try {
        options = parseWorkerOptions(std::vector<std::string>(argv + 1, argv + argc),
                                     processEnvironment());
    } catch (const UsageError &e) {
        // Events may be wanted even here: the launcher shows the reason next to the rank.
        int rank = 0;
        if (const char *r = std::getenv("RANK"))
            rank = std::atoi(r);
        Telemetry telemetry(rank, true);
        telemetry.err(std::string("rankdeck-worker: ") + e.what());
        fail(telemetry, e.what(), 2);
    }
    if (options.help) {
        std::fputs(workerUsage().c_str(), stdout);
        finish(0);
    }

    Telemetry telemetry(options.rank, options.telemetry);
    crash::install(crash::Config{options.rank, options.runDir, buildinfo::buildId()});

    // Before any process group: torch reads the recorder's size once, at its first use.
    WorkerFlightRecorder flightRecorder(options, telemetry);
    ControlChannel control(telemetry);
    control.start(
        options.controlStdin, [] { crash::requestStackDump("dump-stacks"); },
        [&flightRecorder](std::int64_t id) { flightRecorder.dump(id); });

    try {
        Trainer trainer(options, telemetry, control);
        const int code = trainer.run();
        telemetry.stopHeartbeat();
        finish(code);
    } catch (const UsageError &e) {
        fail(telemetry, e.what(), 2);
    } catch (const c10::Error &e) {
        fail(telemetry, e.what_without_backtrace(), 1);
    } catch (const std::exception &e) {
        fail(telemetry, e.what(), 1);
    }
}
