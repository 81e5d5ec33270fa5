// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/scripttask.h"

#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace rankdeck {

namespace {
std::vector<char> readBytes(const std::string &path, const char *what)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(std::string("cannot read ") + what + " " + path);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}
// A TorchScript error's own message is "The following operation failed in the TorchScript
// interpreter.", then the script's traceback, then the real error ("RuntimeError: mat1 and mat2
// shapes cannot be multiplied (4x6 and 5x16)"). That last part is what the user must read.
std::string scriptErrorSummary(const std::string &msg)
{
    std::string text = msg;
    const std::size_t frames = text.find("\nframe #");
    if (frames != std::string::npos)
        text.resize(frames);
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t nl = text.find('\n', at);
        std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
            line.pop_back();
        if (!line.empty())
            lines.push_back(line);
        if (nl == std::string::npos)
            break;
        at = nl + 1;
    }
    // The real error is the last line naming an exception type ("…Error: …").
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const std::size_t colon = it->find(": ");
        if (colon != std::string::npos && colon >= 5 && it->compare(colon - 5, 5, "Error") == 0 &&
            it->find(' ') > colon - 1 && (*it)[0] != ' ')
            return *it;
    }
    return lines.empty() ? msg : lines.front();
}

std::string shapeOf(const at::Tensor &t)
{
    std::string s = "[";
    for (std::int64_t i = 0; i < t.dim(); ++i)
        s += (i ? ", " : "") + std::to_string(t.size(i));
    return s + "]";
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
    const auto batch = m_x.index_select(0, idx);
    c10::IValue out;
    try {
        out = m_module.forward({batch});
    } catch (const c10::Error &e) {
        // Most often the data does not fit the model: say so with the shapes, not only the
        // interpreter's first line.
        throw std::runtime_error("model " + m_modelPath + " forward() failed on a batch of x " +
                                 shapeOf(batch) + ": " + scriptErrorSummary(e.msg()));
    } catch (const std::exception &e) {
        throw std::runtime_error("model " + m_modelPath + " forward() failed on a batch of x " +
                                 shapeOf(batch) + ": " + scriptErrorSummary(e.what()));
    }
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
