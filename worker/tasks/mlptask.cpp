// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/mlptask.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>

namespace rankdeck {

MlpTask::MlpTask(std::int64_t datasetSize, std::int64_t width, std::int64_t depth,
                 std::int64_t seed)
{
    // A fixed random teacher makes targets learnable; Python reproduces them with the same
    // generator calls (see tests/worker/ddp_reference.py).
    auto gen = at::make_generator<at::CPUGeneratorImpl>(std::uint64_t(seed));
    m_inputs = torch::randn({datasetSize, kInputs}, gen);
    const auto teacher = torch::randn({kInputs, kOutputs}, gen) / std::sqrt(double(kInputs));
    m_targets = torch::sin(m_inputs.matmul(teacher));

    // Same layout as nn.Sequential(Linear, ReLU, ..., Linear): parameter names 0.weight, 2.weight…
    m_model = torch::nn::Sequential();
    m_model->push_back(torch::nn::Linear(kInputs, width));
    m_model->push_back(torch::nn::ReLU());
    for (std::int64_t i = 1; i < depth; ++i) {
        m_model->push_back(torch::nn::Linear(width, width));
        m_model->push_back(torch::nn::ReLU());
    }
    m_model->push_back(torch::nn::Linear(width, kOutputs));
}

NamedTensors MlpTask::namedParameters()
{
    NamedTensors out;
    for (const auto &p : m_model->named_parameters())
        out.emplace_back(p.key(), p.value());
    return out;
}

void MlpTask::to(const c10::Device &device)
{
    m_model->to(device);
    m_inputs = m_inputs.to(device);
    m_targets = m_targets.to(device);
}

at::Tensor MlpTask::loss(const std::vector<std::int64_t> &indices)
{
    const auto idx = torch::tensor(indices, torch::kLong).to(m_inputs.device());
    const auto out = m_model->forward(m_inputs.index_select(0, idx));
    return torch::mse_loss(out.to(torch::kFloat), m_targets.index_select(0, idx));
}

std::string MlpTask::describe() const
{
    std::int64_t params = 0;
    for (const auto &p : m_model->parameters())
        params += p.numel();
    return "mlp: " + std::to_string(params) + " parameters, " + std::to_string(m_inputs.size(0)) +
           " samples";
}

} // namespace rankdeck
