// SPDX-License-Identifier: GPL-3.0-or-later
#include "ddp/gradreducer.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <chrono>

namespace rankdeck {

namespace {
// Fires after AccumulateGrad wrote param.grad, so it sees the gradient accumulated over all
// micro-steps, like the Reducer's hook on the grad accumulator.
struct ReadyHook : torch::autograd::PostAccumulateGradHook
{
    ReadyHook(GradReducer *reducer, std::size_t index) : m_reducer(reducer), m_index(index) {}
    void operator()(const torch::autograd::Variable &param) override
    {
        m_reducer->gradReady(m_index, param);
    }
    GradReducer *m_reducer;
    std::size_t m_index;
};
} // namespace

GradReducer::GradReducer(c10::intrusive_ptr<c10d::Backend> backend, std::vector<at::Tensor> params,
                         int worldSize, bool overlap, std::size_t firstBucketBytes,
                         std::size_t bucketBytes)
    : m_backend(std::move(backend)), m_params(std::move(params)), m_bucketOf(m_params.size()),
      m_posInBucket(m_params.size()), m_seen(m_params.size()), m_worldSize(worldSize),
      m_overlap(overlap)
{
    // DDP's _compute_bucket_assignment_by_size over the reversed parameter list: a bucket closes
    // once it holds at least its limit; the first limit is small so communication starts early.
    std::size_t limit = firstBucketBytes;
    Bucket current;
    std::size_t currentBytes = 0;
    auto close = [&] {
        if (current.params.empty())
            return;
        m_buckets.push_back(std::move(current));
        current = Bucket();
        currentBytes = 0;
        limit = bucketBytes;
    };
    for (std::size_t k = m_params.size(); k-- > 0;) {
        const auto &p = m_params[k];
        if (!current.params.empty()) {
            const auto &first = m_params[current.params.front()];
            if (first.scalar_type() != p.scalar_type() || first.device() != p.device())
                close();
        }
        current.params.push_back(k);
        currentBytes += std::size_t(p.numel()) * p.element_size();
        if (currentBytes >= limit)
            close();
    }
    close();

    for (std::size_t b = 0; b < m_buckets.size(); ++b) {
        auto &bucket = m_buckets[b];
        std::int64_t size = 0;
        for (std::size_t i = 0; i < bucket.params.size(); ++i) {
            m_bucketOf[bucket.params[i]] = b;
            m_posInBucket[bucket.params[i]] = i;
            size += m_params[bucket.params[i]].numel();
        }
        const bool last = b + 1 == m_buckets.size();
        const auto &proto = m_params[bucket.params.front()];
        bucket.flat = torch::zeros({size + (last ? 1 : 0)}, proto.options().requires_grad(false));
        // Views made once: slicing costs a few microseconds per parameter and step, which the
        // tiny models notice.
        std::int64_t offset = 0;
        for (const auto k : bucket.params) {
            const auto &p = m_params[k];
            bucket.slots.push_back(bucket.flat.narrow(0, offset, p.numel()));
            bucket.gradViews.push_back(bucket.slots.back().view(p.sizes()));
            offset += p.numel();
        }
        if (last)
            m_stopFlag = bucket.flat.narrow(0, size, 1);
        if (m_worldSize > 1 &&
            std::size_t(bucket.flat.numel() * bucket.flat.element_size()) <= kGatherBucketBytes)
            bucket.gathered =
                torch::empty({m_worldSize * bucket.flat.numel()}, bucket.flat.options());
    }
    m_worldSizeScalar =
        torch::scalar_tensor(double(m_worldSize), m_params.front().options().requires_grad(false));
    for (std::size_t k = 0; k < m_params.size(); ++k)
        torch::autograd::impl::set_post_acc_grad_hooks(m_params[k],
                                                       std::make_unique<ReadyHook>(this, k));
}

GradReducer::~GradReducer()
{
    for (auto &p : m_params)
        torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

std::vector<std::vector<std::size_t>> GradReducer::bucketLayout() const
{
    std::vector<std::vector<std::size_t>> out;
    for (const auto &b : m_buckets)
        out.push_back(b.params);
    return out;
}

void GradReducer::beginBackward(bool communicate, bool localStop)
{
    std::lock_guard lock(m_mutex);
    m_communicate = communicate;
    m_localStop = localStop;
    if (!communicate)
        return;
    m_nextBucket = 0;
    std::fill(m_seen.begin(), m_seen.end(), false);
    for (auto &b : m_buckets) {
        b.pending = b.params.size();
        b.work.reset();
    }
}

void GradReducer::gradReady(std::size_t index, const at::Tensor &param)
{
    std::lock_guard lock(m_mutex);
    if (!m_communicate || m_seen[index])
        return;
    m_seen[index] = true;
    auto &bucket = m_buckets[m_bucketOf[index]];
    const auto &grad = param.grad();
    fillSlot(bucket, m_posInBucket[index], grad);
    --bucket.pending;
    if (m_overlap)
        launchReady();
}

void GradReducer::fillSlot(Bucket &bucket, std::size_t pos, const at::Tensor &grad)
{
    auto &slot = bucket.slots[pos];
    // DDP's default comm hook divides by the world size and then sums; dividing on the way into
    // the bucket gives the same values in one pass over the gradient instead of two.
    if (grad.defined())
        at::div_out(slot, grad.reshape({-1}), m_worldSizeScalar);
    else
        slot.zero_();
}

std::size_t GradReducer::skipBucketOnce(std::size_t index)
{
    std::lock_guard lock(m_mutex);
    m_skipBucket = std::min(index, m_buckets.size() - 1);
    return m_skipBucket;
}

void GradReducer::launch(Bucket &bucket)
{
    if (&bucket == &m_buckets.back())
        m_stopFlag.fill_(m_localStop ? 1.0 : 0.0);
    if (std::size_t(&bucket - m_buckets.data()) == m_skipBucket) {
        // The injected fault: this rank never joins the bucket's collective, so its next one
        // meets the other ranks' collective for this bucket.
        m_skipBucket = std::size_t(-1);
    } else if (m_worldSize == 1) {
        // Nothing to average with: a collective would only hand the bucket to Gloo's thread
        // and back (50 us a step on the tiny task).
    } else if (bucket.gathered.defined()) {
        bucket.work = m_backend->all_gather_single(bucket.gathered, bucket.flat);
    } else {
        std::vector<at::Tensor> tensors{bucket.flat};
        bucket.work = m_backend->allreduce(tensors);
    }
}

void GradReducer::launchReady()
{
    // Strictly in bucket order: every rank must issue the same collectives in the same order.
    while (m_nextBucket < m_buckets.size() && m_buckets[m_nextBucket].pending == 0) {
        launch(m_buckets[m_nextBucket]);
        ++m_nextBucket;
    }
}

bool GradReducer::finish(double &commWaitMs)
{
    std::lock_guard lock(m_mutex);
    // Parameters that got no gradient this step count as zero, so no rank waits forever.
    for (std::size_t k = 0; k < m_params.size(); ++k) {
        if (m_seen[k])
            continue;
        m_seen[k] = true;
        auto &bucket = m_buckets[m_bucketOf[k]];
        fillSlot(bucket, m_posInBucket[k], m_params[k].grad());
        --bucket.pending;
    }
    launchReady();

    const auto t0 = std::chrono::steady_clock::now();
    for (auto &b : m_buckets) {
        if (b.work)
            b.work->wait();
        // Every rank adds the same rows in the same order: identical bits everywhere.
        if (b.gathered.defined())
            at::sum_out(b.flat, b.gathered.view({m_worldSize, b.flat.numel()}), 0);
    }
    commWaitMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    // The averaged gradients stay where the all-reduce left them: each .grad becomes a view of
    // its bucket instead of receiving a copy (a 100 MB memcpy per step on the 25M-parameter MLP).
    // zero_grad(set_to_none) drops the views before the next backward, so autograd never
    // accumulates into a bucket that the next step's hooks are about to overwrite.
    for (auto &b : m_buckets) {
        for (std::size_t i = 0; i < b.params.size(); ++i)
            m_params[b.params[i]].mutable_grad() = b.gradViews[i];
    }
    m_communicate = false;
    return m_stopFlag.item<double>() > 0;
}

} // namespace rankdeck
