// SPDX-License-Identifier: GPL-3.0-or-later
// Rendezvous (TCPStore served by rank 0) and the process group backend (Gloo or NCCL).
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <memory>
#include <string>

namespace rankdeck {

struct WorkerOptions;
class Telemetry;

class DistributedContext
{
public:
    // Which backend and device `options.backend` means on this machine. Throws UsageError
    // for nccl without CUDA.
    static std::string resolveBackend(const WorkerOptions &options, c10::Device &device);

    // Blocks until every rank arrived or the rendezvous timeout passed; throws
    // std::runtime_error naming the ranks that never arrived.
    DistributedContext(const WorkerOptions &options, Telemetry &telemetry,
                       const std::string &backend, const c10::Device &device);
    ~DistributedContext();

    c10d::Store &store() { return *m_store; }
    c10d::Backend &backend() { return *m_backend; }
    c10::intrusive_ptr<c10d::Backend> backendPtr() { return m_backend; }
    const std::string &backendName() const { return m_backendName; }
    double rendezvousMs() const { return m_rendezvousMs; }

    // Waits until every rank called it (a tiny all-reduce), so rank 0's store outlives them.
    void barrier();

    // Bytes allocated on the GPU by this process, -1 on CPU.
    std::int64_t gpuMemoryBytes() const;

private:
    c10::intrusive_ptr<c10d::Store> m_store;
    c10::intrusive_ptr<c10d::Backend> m_backend;
    std::string m_backendName;
    c10::Device m_device;
    double m_rendezvousMs = 0;
};

} // namespace rankdeck
