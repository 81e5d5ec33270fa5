// SPDX-License-Identifier: GPL-3.0-or-later
#include "ddp/distributedsampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace rankdeck {

DistributedSampler::DistributedSampler(std::int64_t datasetSize, int rank, int worldSize,
                                       std::int64_t batchSize, bool shuffle, std::int64_t seed)
    : m_datasetSize(datasetSize), m_rank(rank), m_worldSize(worldSize), m_batchSize(batchSize),
      m_shuffle(shuffle), m_seed(seed)
      // drop_last=False: ceil(n / world) samples per rank, padding repeats the head.
      ,
      m_numSamples((datasetSize + worldSize - 1) / worldSize)
{}

std::vector<std::int64_t> DistributedSampler::epochIndices(std::int64_t epoch) const
{
    std::vector<std::int64_t> indices(static_cast<std::size_t>(m_datasetSize));
    if (m_shuffle) {
        // Same generator and call as Python: g.manual_seed(seed + epoch); randperm(n, generator=g).
        auto gen = at::make_generator<at::CPUGeneratorImpl>(std::uint64_t(m_seed + epoch));
        const torch::Tensor perm = torch::randperm(m_datasetSize, gen, torch::kLong);
        const auto *p = perm.data_ptr<std::int64_t>();
        std::copy(p, p + m_datasetSize, indices.begin());
    } else {
        for (std::int64_t i = 0; i < m_datasetSize; ++i)
            indices[std::size_t(i)] = i;
    }
    const std::int64_t totalSize = m_numSamples * m_worldSize;
    std::int64_t padding = totalSize - m_datasetSize;
    const std::vector<std::int64_t> head = indices;
    while (padding > 0) {
        const std::int64_t take = std::min<std::int64_t>(padding, std::int64_t(head.size()));
        indices.insert(indices.end(), head.begin(), head.begin() + take);
        padding -= take;
    }
    std::vector<std::int64_t> mine;
    mine.reserve(std::size_t(m_numSamples));
    for (std::int64_t i = m_rank; i < totalSize; i += m_worldSize)
        mine.push_back(indices[std::size_t(i)]);
    return mine;
}

std::vector<std::int64_t> DistributedSampler::batch(std::int64_t globalBatch, std::int64_t &epoch)
{
    const std::int64_t perEpoch = batchesPerEpoch();
    epoch = globalBatch / perEpoch;
    const std::int64_t b = globalBatch % perEpoch;
    if (epoch != m_cachedEpoch) {
        m_cached = epochIndices(epoch);
        m_cachedEpoch = epoch;
    }
    return {m_cached.begin() + b * m_batchSize, m_cached.begin() + (b + 1) * m_batchSize};
}

} // namespace rankdeck
