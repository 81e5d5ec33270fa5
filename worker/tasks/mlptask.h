// SPDX-License-Identifier: GPL-3.0-or-later
// Synthetic regression with a configurable MLP: large widths make all-reduce dominate.
#pragma once

#include "tasks/task.h"

#include <torch/nn/modules/container/sequential.h>

namespace rankdeck {

class MlpTask : public Task
{
public:
    static constexpr std::int64_t kInputs = 64;
    static constexpr std::int64_t kOutputs = 8;

    MlpTask(std::int64_t datasetSize, std::int64_t width, std::int64_t depth, std::int64_t seed);

    std::int64_t datasetSize() const override { return m_inputs.size(0); }
    NamedTensors namedParameters() override;
    void to(const c10::Device &device) override;
    at::Tensor loss(const std::vector<std::int64_t> &indices) override;
    std::string describe() const override;

private:
    torch::nn::Sequential m_model{nullptr};
    at::Tensor m_inputs;
    at::Tensor m_targets;
};

} // namespace rankdeck
