// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/scripttask.h"

#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace rankdeck {

namespace {
std::vector<char> readBytes(const std::string &path, const char *what)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(std::string("cannot read ") + what + " " + path);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}
} // namespace

ScriptTask::ScriptTask(const std::string &modelPath, const std::string &dataPath,
                       const std::string &loss)
    : m_modelPath(modelPath), m_loss(loss)
{
    {
        std::ifstream probe(modelPath, std::ios::binary);
        if (!probe)
            throw std::runtime_error("cannot read model file " + modelPath);
    }
    try {
        m_module = torch::jit::load(modelPath);
    } catch (const c10::Error &e) {
        throw std::runtime_error(
            "model file " + modelPath +
            " is not a TorchScript module (save it with torch.jit.script(m).save): " + e.msg());
    }
    const auto bytes = readBytes(dataPath, "data file");
    c10::IValue data;
    try {
        data = torch::pickle_load(bytes);
    } catch (const c10::Error &e) {
        throw std::runtime_error("data file " + dataPath +
                                 " is not a torch.save() file: " + e.msg());
    }
    if (!data.isGenericDict())
        throw std::runtime_error("data file " + dataPath +
                                 " must hold a dict {\"x\": X, \"y\": Y}");
    const auto dict = data.toGenericDict();
    for (const char *key : {"x", "y"}) {
        if (!dict.contains(key) || !dict.at(key).isTensor())
            throw std::runtime_error("data file " + dataPath + " has no tensor under key \"" + key +
                                     "\"");
    }
    m_x = dict.at("x").toTensor();
    m_y = dict.at("y").toTensor();
    if (m_x.dim() == 0 || m_y.dim() == 0 || m_x.size(0) != m_y.size(0))
        throw std::runtime_error("data file " + dataPath +
                                 ": x and y must have the same first dimension");
    if (m_x.size(0) == 0)
        throw std::runtime_error("data file " + dataPath + " holds no samples");
    if (loss == "cross-entropy" && m_y.is_floating_point())
        throw std::runtime_error("data file " + dataPath +
                                 ": --loss cross-entropy needs integer class labels in y");
    m_module.train();
}

NamedTensors ScriptTask::namedParameters()
{
    NamedTensors out;
    for (const auto &p : m_module.named_parameters(/*recurse=*/true))
        out.emplace_back(p.name, p.value);
    return out;
}

NamedTensors ScriptTask::namedBuffers()
{
    NamedTensors out;
    for (const auto &b : m_module.named_buffers(/*recurse=*/true))
        out.emplace_back(b.name, b.value);
    return out;
}

void ScriptTask::to(const c10::Device &device)
{
    m_module.to(device);
    m_x = m_x.to(device);
    m_y = m_y.to(device);
}

at::Tensor ScriptTask::loss(const std::vector<std::int64_t> &indices)
{
    const auto idx = torch::tensor(indices, torch::kLong).to(m_x.device());
    const auto out = m_module.forward({m_x.index_select(0, idx)});
    if (!out.isTensor())
        throw std::runtime_error("model " + m_modelPath + " must return one tensor from forward()");
    const auto pred = out.toTensor();
    const auto target = m_y.index_select(0, idx);
    if (m_loss == "cross-entropy")
        return torch::cross_entropy_loss(pred.to(torch::kFloat), target.to(torch::kLong));
    return torch::mse_loss(pred.to(torch::kFloat), target.to(torch::kFloat));
}

std::string ScriptTask::describe() const
{
    std::int64_t params = 0;
    for (const auto &p : m_module.parameters())
        params += p.numel();
    return "script: " + m_modelPath + ", " + std::to_string(params) + " parameters, " +
           std::to_string(m_x.size(0)) + " samples, " + m_loss + " loss";
}

} // namespace rankdeck
