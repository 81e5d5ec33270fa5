// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/charlmtask.h"

#include <torch/torch.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rankdeck {

extern const char kEmbeddedCorpus[];
extern const std::size_t kEmbeddedCorpusSize;

namespace {

constexpr std::int64_t kDim = 64;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kLayers = 2;

struct BlockImpl : torch::nn::Module
{
    BlockImpl()
    {
        ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDim})));
        qkv = register_module("qkv", torch::nn::Linear(kDim, 3 * kDim));
        proj = register_module("proj", torch::nn::Linear(kDim, kDim));
        ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDim})));
        fc1 = register_module("fc1", torch::nn::Linear(kDim, 4 * kDim));
        fc2 = register_module("fc2", torch::nn::Linear(4 * kDim, kDim));
    }
    torch::Tensor forward(torch::Tensor x)
    {
        const auto b = x.size(0), t = x.size(1);
        auto parts = qkv->forward(ln1->forward(x)).chunk(3, -1);
        auto heads = [&](const torch::Tensor &y) {
            return y.view({b, t, kHeads, kDim / kHeads}).transpose(1, 2);
        };
        auto att = at::scaled_dot_product_attention(heads(parts[0]), heads(parts[1]),
                                                    heads(parts[2]), {}, 0.0, /*is_causal=*/true);
        x = x + proj->forward(att.transpose(1, 2).reshape({b, t, kDim}));
        return x + fc2->forward(torch::gelu(fc1->forward(ln2->forward(x))));
    }
    torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
    torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Block);

struct CharTransformer : torch::nn::Module
{
    explicit CharTransformer(std::int64_t vocab)
    {
        tokEmb = register_module("tok_emb", torch::nn::Embedding(vocab, kDim));
        posEmb = register_parameter("pos_emb", torch::randn({CharLmTask::kContext, kDim}) * 0.02);
        blocks = register_module("blocks", torch::nn::ModuleList());
        for (std::int64_t i = 0; i < kLayers; ++i)
            blocks->push_back(Block());
        lnF = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDim})));
        head = register_module("head", torch::nn::Linear(kDim, vocab));
    }
    torch::Tensor forward(const torch::Tensor &tokens)
    {
        auto x = tokEmb->forward(tokens) + posEmb.narrow(0, 0, tokens.size(1));
        for (const auto &block : *blocks)
            x = block->as<BlockImpl>()->forward(x);
        return head->forward(lnF->forward(x));
    }
    torch::nn::Embedding tokEmb{nullptr};
    torch::Tensor posEmb;
    torch::nn::ModuleList blocks{nullptr};
    torch::nn::LayerNorm lnF{nullptr};
    torch::nn::Linear head{nullptr};
};

std::string readFile(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read corpus file " + path.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

std::string CharLmTask::loadCorpus(const std::string &path, std::string &origin)
{
    namespace fs = std::filesystem;
    if (!path.empty()) {
        origin = path;
        return readFile(path);
    }
    std::vector<fs::path> candidates;
    if (const char *res = std::getenv("RANKDECK_RESOURCES"); res && *res)
        candidates.push_back(fs::path(res) / "corpus" / "corpus.txt");
    std::error_code ec;
    const fs::path exeDir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec) {
        candidates.push_back(exeDir / "resources" / "corpus" / "corpus.txt");
        candidates.push_back(exeDir / ".." / "share" / "rankdeck" / "corpus" / "corpus.txt");
    }
    for (const auto &c : candidates) {
        if (fs::is_regular_file(c, ec)) {
            origin = c.string();
            return readFile(c);
        }
    }
    origin = "built-in corpus";
    return std::string(kEmbeddedCorpus, kEmbeddedCorpusSize);
}

CharLmTask::CharLmTask(const std::string &text, std::int64_t datasetSize, std::int64_t seed)
{
    if (std::int64_t(text.size()) < kContext + 2)
        throw std::runtime_error("the corpus has " + std::to_string(text.size()) +
                                 " bytes; charlm needs at least " + std::to_string(kContext + 2));
    // Byte-level vocabulary in sorted order, like sorted(set(text)) on bytes.
    std::array<std::int64_t, 256> id;
    id.fill(-1);
    for (unsigned char c : text)
        id[c] = 0;
    for (int c = 0; c < 256; ++c)
        if (id[std::size_t(c)] == 0)
            id[std::size_t(c)] = m_vocab++;
    std::vector<std::int64_t> tokens(text.size());
    for (std::size_t i = 0; i < text.size(); ++i)
        tokens[i] = id[static_cast<unsigned char>(text[i])];
    m_tokens = torch::tensor(tokens, torch::kLong);
    m_windows = (std::int64_t(text.size()) - kContext - 1) / kStride + 1;
    if (datasetSize > 0)
        m_windows = std::min(m_windows, datasetSize);
    torch::manual_seed(std::uint64_t(seed));
    m_model = std::make_shared<CharTransformer>(m_vocab);
}

NamedTensors CharLmTask::namedParameters()
{
    NamedTensors out;
    for (const auto &p : m_model->named_parameters())
        out.emplace_back(p.key(), p.value());
    return out;
}

void CharLmTask::to(const c10::Device &device)
{
    m_model->to(device);
    m_tokens = m_tokens.to(device);
}

at::Tensor CharLmTask::loss(const std::vector<std::int64_t> &indices)
{
    std::vector<at::Tensor> inputs, targets;
    for (const auto i : indices) {
        inputs.push_back(m_tokens.narrow(0, i * kStride, kContext));
        targets.push_back(m_tokens.narrow(0, i * kStride + 1, kContext));
    }
    const auto x = torch::stack(inputs);
    const auto y = torch::stack(targets);
    const auto logits = static_cast<CharTransformer &>(*m_model).forward(x);
    return torch::cross_entropy_loss(logits.reshape({-1, m_vocab}).to(torch::kFloat),
                                     y.reshape({-1}));
}

std::string CharLmTask::describe() const
{
    std::int64_t params = 0;
    for (const auto &p : m_model->parameters())
        params += p.numel();
    return "charlm: transformer with " + std::to_string(params) + " parameters, vocabulary " +
           std::to_string(m_vocab) + ", " + std::to_string(m_windows) + " windows of " +
           std::to_string(kContext) + " characters";
}

} // namespace rankdeck
