// SPDX-License-Identifier: GPL-3.0-or-later
#include "ddp/distributedcontext.h"

#include "crash/crashhandler.h"
#include "ddp/workerflightrecorder.h"
#include "telemetry.h"
#include "workeroptions.h"

#include "wire/wireprotocol.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/cuda.h>
#include <torch/torch.h>

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace rankdeck {

namespace {
std::string arrivedKey(int rank)
{
    return "rankdeck/arrived/" + std::to_string(rank);
}

std::string hostName()
{
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

bool isLoopback(const std::string &addr)
{
    return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}
} // namespace

std::string DistributedContext::resolveBackend(const WorkerOptions &o, c10::Device &device)
{
    const bool cuda = torch::cuda::is_available();
    if (o.backend == "nccl" || (o.backend == "auto" && cuda)) {
#ifdef USE_C10D_NCCL
        if (!cuda)
            throw UsageError("--backend nccl: CUDA is not available on " + hostName());
        if (o.localRank >= int(torch::cuda::device_count()))
            throw UsageError("LOCAL_RANK " + std::to_string(o.localRank) + ": " + hostName() +
                             " has only " + std::to_string(torch::cuda::device_count()) +
                             " GPU(s)");
        device = c10::Device(c10::kCUDA, c10::DeviceIndex(o.localRank));
        return "nccl";
#else
        if (o.backend == "nccl")
            throw UsageError(
                "--backend nccl: this rankdeck-worker was built against a libtorch without NCCL");
#endif
    }
    device = c10::Device(c10::kCPU);
    return "gloo";
}

DistributedContext::DistributedContext(const WorkerOptions &o, Telemetry &telemetry,
                                       const std::string &backend, const c10::Device &device)
    : m_backendName(backend), m_device(device)
{
    const auto started = std::chrono::steady_clock::now();
    const auto timeout = std::chrono::milliseconds(std::int64_t(o.rendezvousTimeoutSec) * 1000);
    const std::string where = o.masterAddr + ":" + std::to_string(o.masterPort);

    // Under torchrun the elastic agent already serves a store on MASTER_PORT; ranks join it as
    // clients (what Python's env:// init does) under a per-restart prefix.
    const char *agentStoreEnv = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    const bool agentStore = agentStoreEnv && std::string(agentStoreEnv) == "True";
    c10d::TCPStoreOptions storeOpts;
    storeOpts.port = std::uint16_t(o.masterPort);
    storeOpts.isServer = o.rank == 0 && !agentStore;
    storeOpts.waitWorkers = false;
    storeOpts.timeout = timeout;
    c10::intrusive_ptr<c10d::TCPStore> tcp;
    try {
        tcp = c10::make_intrusive<c10d::TCPStore>(o.masterAddr, storeOpts);
    } catch (const std::exception &e) {
        if (storeOpts.isServer)
            throw std::runtime_error("rank 0 could not serve the rendezvous store on " + where +
                                     ": " + c10::GetExceptionString(e));
        throw std::runtime_error("rank " + std::to_string(o.rank) +
                                 " could not reach rank 0's rendezvous store at " + where +
                                 " within " + std::to_string(o.rendezvousTimeoutSec) +
                                 " s (is rank 0 running, and MASTER_ADDR/MASTER_PORT right?)");
    }
    if (o.rank == 0 && o.masterPort == 0) {
        wire::WireEventWriter w(wire::event::Store, o.rank, Telemetry::nowUs());
        w.addInt(wire::field::Port, tcp->getPort());
        telemetry.emit(w);
        telemetry.out("Rank 0: rendezvous store listening on port " +
                      std::to_string(tcp->getPort()));
    }
    if (agentStore) {
        const char *restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
        m_store = c10::make_intrusive<c10d::PrefixStore>(
            std::string("rankdeck/attempt_") + (restart ? restart : "0"), tcp);
    } else {
        m_store = tcp;
    }

    // Our own arrival keys give a timeout that names the missing ranks, which the process
    // group's constructor cannot.
    const std::string host = hostName();
    m_store->set(arrivedKey(o.rank), std::vector<std::uint8_t>(host.begin(), host.end()));
    bool storeLost = false;
    auto missingRanks = [&] {
        std::string missing;
        int count = 0;
        for (int r = 0; r < o.worldSize; ++r) {
            bool present = false;
            try {
                present = m_store->check({arrivedKey(r)});
            } catch (...) {
                storeLost = true;
            }
            if (!present) {
                if (++count <= 16)
                    missing += (missing.empty() ? "" : ", ") + std::to_string(r);
                else if (count == 17)
                    missing += ", …";
            }
        }
        return std::make_pair(count, missing);
    };
    auto timeoutError = [&](const std::pair<int, std::string> &missing) {
        return std::runtime_error(
            "rendezvous timed out after " + std::to_string(o.rendezvousTimeoutSec) + " s at " +
            where + ": " + std::to_string(missing.first) + " of " + std::to_string(o.worldSize) +
            " ranks never arrived (rank" + (missing.first > 1 ? "s " : " ") + missing.second + ")");
    };
    if (o.rank == 0) {
        const auto deadline = started + timeout;
        for (;;) {
            const auto missing = missingRanks();
            if (missing.first == 0)
                break;
            if (std::chrono::steady_clock::now() >= deadline)
                throw timeoutError(missing);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        m_store->set("rankdeck/complete", std::vector<std::uint8_t>{'1'});
    } else {
        try {
            m_store->wait({"rankdeck/complete"}, timeout);
        } catch (const std::exception &) {
            const auto missing = missingRanks();
            if (storeLost)
                throw std::runtime_error(
                    "rank " + std::to_string(o.rank) + " lost rank 0's rendezvous store at " +
                    where +
                    " while waiting for the other ranks (rank 0 gave up or died; "
                    "its log names the ranks that never arrived)");
            throw timeoutError(missing);
        }
    }

    auto pgStore = c10::make_intrusive<c10d::PrefixStore>("rankdeck-pg", m_store);
    const auto collectiveTimeout =
        std::chrono::milliseconds(std::int64_t(o.collectiveTimeoutSec) * 1000);
    if (backend == "gloo") {
        auto opts = c10d::ProcessGroupGloo::Options::create(collectiveTimeout);
        // The flight recorder names the group by its name and description (torch 2.14 reads
        // the name from the options, the description only through setGroupDesc below).
        opts->group_name = WorkerFlightRecorder::kGroupName;
        opts->group_desc = WorkerFlightRecorder::kGroupDesc;
        if (!o.glooIfname.empty())
            opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(o.glooIfname));
        else if (isLoopback(o.masterAddr))
            opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        else
            opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        m_backend = c10::make_intrusive<c10d::ProcessGroupGloo>(pgStore, o.rank, o.worldSize, opts);
        m_backend->setGroupDesc(WorkerFlightRecorder::kGroupDesc);
    } else {
#ifdef USE_C10D_NCCL
        crash::applyNcclDefaults(o.runDir);
        c10::cuda::set_device(c10::DeviceIndex(o.localRank));
        auto opts = c10d::ProcessGroupNCCL::Options::create();
        opts->timeout = collectiveTimeout;
        opts->group_name = WorkerFlightRecorder::kGroupName;
        m_backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(pgStore, o.rank, o.worldSize, opts);
        m_backend->setGroupDesc(WorkerFlightRecorder::kGroupDesc);
        WorkerFlightRecorder::usesNccl();
#endif
    }
    m_rendezvousMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
}

DistributedContext::~DistributedContext() = default;

void DistributedContext::barrier()
{
    std::vector<at::Tensor> t{torch::zeros({1}, torch::TensorOptions().device(m_device))};
    m_backend->allreduce(t)->wait();
}

std::int64_t DistributedContext::gpuMemoryBytes() const
{
#ifdef USE_C10D_NCCL
    if (m_device.is_cuda()) {
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(m_device.index());
        return stats.allocated_bytes[0].current;
    }
#endif
    return -1;
}

} // namespace rankdeck
