// SPDX-License-Identifier: GPL-3.0-or-later
// rankdeck-worker: one rank of a DistributedDataParallel training job (docs/worker.md).
#include "buildinfo.h"
#include "controlchannel.h"
#include "crashhandler.h"
#include "telemetry.h"
#include "trainer.h"
#include "workeroptions.h"

#include <wireprotocol.h>

#include <c10/util/Exception.h>

#include <cstdio>
#include <exception>
#include <unistd.h>

using namespace rankdeck;

namespace {

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
    telemetry.err("rankdeck-worker: rank " + std::to_string(telemetry.rank()) + ": error: " + message);
    finish(code);
}

} // namespace

int main(int argc, char **argv)
{
    WorkerOptions options;
    try {
        options = parseWorkerOptions(std::vector<std::string>(argv + 1, argv + argc), processEnvironment());
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

    ControlChannel control(telemetry);
    control.start(options.controlStdin, [] { crash::requestStackDump("dump-stacks"); });

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
