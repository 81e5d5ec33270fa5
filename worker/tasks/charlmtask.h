// SPDX-License-Identifier: GPL-3.0-or-later
// A small character-level transformer language model on a text corpus, so curves show real
// learning rather than synthetic noise.
#pragma once

#include "tasks/task.h"

#include <torch/nn/module.h>

namespace rankdeck {

class CharLmTask : public Task
{
public:
    static constexpr std::int64_t kContext = 64;
    static constexpr std::int64_t kStride = 32;

    // `text` is the corpus; `datasetSize` 0 means every window.
    CharLmTask(const std::string &text, std::int64_t datasetSize, std::int64_t seed);

    // The corpus: --corpus, $RANKDECK_RESOURCES/corpus/corpus.txt, resources/ next to the
    // binary, else the copy built into the binary. Throws naming an unreadable path.
    static std::string loadCorpus(const std::string &path, std::string &origin);

    std::int64_t datasetSize() const override { return m_windows; }
    NamedTensors namedParameters() override;
    void to(const c10::Device &device) override;
    at::Tensor loss(const std::vector<std::int64_t> &indices) override;
    std::string describe() const override;

private:
    std::shared_ptr<torch::nn::Module> m_model;
    at::Tensor m_tokens;
    std::int64_t m_vocab = 0;
    std::int64_t m_windows = 0;
};

} // namespace rankdeck
