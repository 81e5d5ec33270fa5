// SPDX-License-Identifier: GPL-3.0-or-later
// A training task: a model, a dataset addressed by sample index, and a loss.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rankdeck {

struct WorkerOptions;

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class Task
{
public:
    virtual ~Task() = default;

    // Builds the task named by options.task; throws std::runtime_error naming the bad file.
    static std::unique_ptr<Task> create(const WorkerOptions &options);

    virtual std::int64_t datasetSize() const = 0;
    // Names as Python's named_parameters() gives them, in registration order.
    virtual NamedTensors namedParameters() = 0;
    virtual NamedTensors namedBuffers() { return {}; }
    // Model and data to `device`; called once, before the optimizer is built.
    virtual void to(const c10::Device &device) = 0;
    // The loss of one micro-batch (the task's reduction: sum for linear, mean otherwise).
    virtual at::Tensor loss(const std::vector<std::int64_t> &indices) = 0;
    virtual std::string describe() const = 0;
};

} // namespace rankdeck
