// SPDX-License-Identifier: GPL-3.0-or-later
// One rank's training run: rendezvous, DDP-equivalent steps, checkpoints, telemetry.
#pragma once

#include <memory>

namespace rankdeck {

struct WorkerOptions;
class Telemetry;
class ControlChannel;

class Trainer
{
public:
    Trainer(const WorkerOptions &options, Telemetry &telemetry, ControlChannel &control);
    ~Trainer();

    // Trains until --steps or an agreed stop; throws std::runtime_error (or c10::Error) on
    // failure. Returns the process exit code.
    int run();

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace rankdeck
