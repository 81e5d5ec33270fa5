// SPDX-License-Identifier: GPL-3.0-or-later
// The reference DDP example: Linear(10, 1), loss = output.sum(), on random inputs.
#pragma once

#include "tasks/task.h"

#include <torch/nn/modules/linear.h>

namespace rankdeck {

class LinearTask : public Task
{
public:
    LinearTask(std::int64_t datasetSize, std::int64_t seed);

    std::int64_t datasetSize() const override { return m_inputs.size(0); }
    NamedTensors namedParameters() override;
    void to(const c10::Device &device) override;
    at::Tensor loss(const std::vector<std::int64_t> &indices) override;
    std::string describe() const override;

private:
    torch::nn::Linear m_model{nullptr};
    at::Tensor m_inputs;
};

} // namespace rankdeck
