// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/lineartask.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace rankdeck {

LinearTask::LinearTask(std::int64_t datasetSize, std::int64_t seed)
{
    // The data comes from its own generator so that Python reproduces it with
    // torch.randn(n, 10, generator=torch.Generator().manual_seed(seed)).
    auto gen = at::make_generator<at::CPUGeneratorImpl>(std::uint64_t(seed));
    m_inputs = torch::randn({datasetSize, 10}, gen);
    m_model = torch::nn::Linear(10, 1);
}

NamedTensors LinearTask::namedParameters()
{
    NamedTensors out;
    for (const auto &p : m_model->named_parameters())
        out.emplace_back(p.key(), p.value());
    return out;
}

void LinearTask::to(const c10::Device &device)
{
    m_model->to(device);
    m_inputs = m_inputs.to(device);
}

at::Tensor LinearTask::loss(const std::vector<std::int64_t> &indices)
{
    const auto idx = torch::tensor(indices, torch::kLong).to(m_inputs.device());
    return m_model->forward(m_inputs.index_select(0, idx)).sum();
}

std::string LinearTask::describe() const
{
    return "linear: Linear(10, 1), loss = output.sum(), " + std::to_string(m_inputs.size(0)) +
           " random samples";
}

} // namespace rankdeck
