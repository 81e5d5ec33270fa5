// SPDX-License-Identifier: GPL-3.0-or-later
// Gradient averaging as DistributedDataParallel does it: parameters in reverse order packed into
// flat buckets (1 MB first, then 25 MB), each bucket all-reduced asynchronously as soon as the
// autograd engine has accumulated all of its gradients, while backward keeps running (buckets of
// at most 64 KiB are all-gathered and summed in rank order instead: half the round trips); buckets
// are launched in the same order on every rank. A stop flag rides in the last bucket, so that
// all ranks agree to stop after the same step without an extra collective.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <cstddef>
#include <mutex>
#include <vector>

namespace rankdeck {

class GradReducer
{
public:
    static constexpr std::size_t kFirstBucketBytes = 1u << 20;
    static constexpr std::size_t kBucketBytes = 25u << 20;
    static constexpr std::size_t kGatherBucketBytes = 64u << 10;

    GradReducer(c10::intrusive_ptr<c10d::Backend> backend, std::vector<at::Tensor> params,
                int worldSize, bool overlap, std::size_t firstBucketBytes = kFirstBucketBytes,
                std::size_t bucketBytes = kBucketBytes);
    ~GradReducer();
    GradReducer(const GradReducer &) = delete;
    GradReducer &operator=(const GradReducer &) = delete;

    // Before each micro-step's backward: communicate only on the last micro-step (no_sync).
    void beginBackward(bool communicate, bool localStop);
    // After backward of the communicating micro-step: launches what is left, waits for every
    // bucket and points each .grad at its averaged slot in the bucket. Returns whether any rank
    // asked to stop. The views stay valid until the next communicating beginBackward().
    bool finish(double &commWaitMs);

    std::size_t bucketCount() const { return m_buckets.size(); }
    // Parameter indices per bucket, in launch order (for tests and logs).
    std::vector<std::vector<std::size_t>> bucketLayout() const;

    // Fault injection (--fault skip-allreduce): the next communicating backward leaves bucket
    // `index`'s collective out (the last bucket when there are fewer). Returns that bucket.
    std::size_t skipBucketOnce(std::size_t index);

    // Called by the post-accumulate-grad hook of parameter `index`.
    void gradReady(std::size_t index, const at::Tensor &param);

private:
    struct Bucket
    {
        std::vector<std::size_t> params;
        std::vector<at::Tensor> slots;     // per parameter: its flat range of `flat`
        std::vector<at::Tensor> gradViews; // the same ranges in the parameter's shape
        at::Tensor flat;                   // the gradients, plus the stop flag in the last bucket
        at::Tensor gathered; // small buckets: every rank's flat in rank order (Gloo wants it 1-D)
        std::size_t pending = 0;
        c10::intrusive_ptr<c10d::Work> work;
    };
    void fillSlot(Bucket &bucket, std::size_t pos, const at::Tensor &grad);
    void launchReady();
    void launch(Bucket &bucket);

    c10::intrusive_ptr<c10d::Backend> m_backend;
    std::vector<at::Tensor> m_params;
    std::vector<std::size_t> m_bucketOf;
    std::vector<std::size_t> m_posInBucket;
    std::vector<bool> m_seen;
    std::vector<Bucket> m_buckets;
    at::Tensor m_stopFlag; // view of the last element of the last bucket
    at::Tensor m_worldSizeScalar;
    int m_worldSize;
    bool m_overlap;
    bool m_communicate = false;
    bool m_localStop = false;
    std::size_t m_nextBucket = 0;
    std::size_t m_skipBucket = std::size_t(-1);
    std::mutex m_mutex;
};

} // namespace rankdeck
