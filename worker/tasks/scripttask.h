// SPDX-License-Identifier: GPL-3.0-or-later
// Any user TorchScript module on a tensor dataset saved from Python as {"x": X, "y": Y}.
#pragma once

#include "tasks/task.h"

#include <torch/csrc/jit/api/module.h>

namespace rankdeck {

class ScriptTask : public Task
{
public:
    // Throws std::runtime_error naming the file and what is wrong with it.
    ScriptTask(const std::string &modelPath, const std::string &dataPath, const std::string &loss);

    std::int64_t datasetSize() const override { return m_x.size(0); }
    NamedTensors namedParameters() override;
    NamedTensors namedBuffers() override;
    void to(const c10::Device &device) override;
    at::Tensor loss(const std::vector<std::int64_t> &indices) override;
    std::string describe() const override;

private:
    torch::jit::Module m_module;
    std::string m_modelPath;
    std::string m_loss;
    at::Tensor m_x;
    at::Tensor m_y;
};

} // namespace rankdeck
