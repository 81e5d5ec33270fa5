// SPDX-License-Identifier: GPL-3.0-or-later
// torch.utils.data.DistributedSampler + a DataLoader with drop_last=True, as index batches.
#pragma once

#include <cstdint>
#include <vector>

namespace rankdeck {

class DistributedSampler
{
public:
    DistributedSampler(std::int64_t datasetSize, int rank, int worldSize, std::int64_t batchSize,
                       bool shuffle, std::int64_t seed);

    // Full batches per rank and epoch (the incomplete last one is dropped). 0 means the batch
    // is larger than this rank's shard.
    std::int64_t batchesPerEpoch() const { return m_numSamples / m_batchSize; }
    std::int64_t samplesPerRank() const { return m_numSamples; }

    // The indices of micro-batch `globalBatch` (counted from the start of training over all
    // epochs) for this rank; sets `epoch`.
    std::vector<std::int64_t> batch(std::int64_t globalBatch, std::int64_t &epoch);

    // This rank's shard of one epoch, in order.
    std::vector<std::int64_t> epochIndices(std::int64_t epoch) const;

private:
    std::int64_t m_datasetSize;
    int m_rank;
    int m_worldSize;
    std::int64_t m_batchSize;
    bool m_shuffle;
    std::int64_t m_seed;
    std::int64_t m_numSamples;
    std::int64_t m_cachedEpoch = -1;
    std::vector<std::int64_t> m_cached;
};

} // namespace rankdeck
