// SPDX-License-Identifier: GPL-3.0-or-later
#include "trainer.h"

#include "buildinfo.h"
#include "controlchannel.h"
#include "cpuaffinity.h"
#include "crash/faultinjection.h"
#include "ddp/distributedcontext.h"
#include "ddp/distributedsampler.h"
#include "ddp/gradreducer.h"
#include "instructioncount.h"
#include "tasks/task.h"
#include "telemetry.h"
#include "workeroptions.h"

#include "wire/wireprotocol.h"

#include <ATen/autocast_mode.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace rankdeck {

namespace fs = std::filesystem;

namespace {
// torch::pickle_save, minus the type tags on dicts: Python's torch.load (weights_only=True, the
// default since 2.6) refuses torch.jit._pickle.restore_type_tag, but reads a plain dict.
std::vector<char> pickleForPython(const c10::IValue &value)
{
    std::vector<char> pickled;
    torch::jit::Pickler pickler(
        [&](const char *buf, std::size_t size) { pickled.insert(pickled.end(), buf, buf + size); },
        nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(value);
    pickler.stop();
    std::vector<char> out;
    caffe2::serialize::PyTorchStreamWriter writer([&](const void *data, std::size_t len) {
        const char *bytes = static_cast<const char *>(data);
        out.insert(out.end(), bytes, bytes + len);
        return len;
    });
    torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(),
                                       writer);
    writer.writeEndOfFile();
    return out;
}
} // namespace

struct Trainer::Private
{
    const WorkerOptions &o;
    Telemetry &telemetry;
    ControlChannel &control;
    std::unique_ptr<Task> task;
    std::unique_ptr<DistributedContext> dist;
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    std::vector<at::Tensor> params;
    std::vector<std::string> names;
    c10::Device device{c10::kCPU};
    std::string backend;

    Private(const WorkerOptions &options, Telemetry &t, ControlChannel &c)
        : o(options), telemetry(t), control(c)
    {}

    double lrAt(std::int64_t step) const
    {
        if (step < o.warmupSteps)
            return o.lr * double(step + 1) / double(o.warmupSteps);
        if (o.schedule == "cosine") {
            const double span = double(std::max<std::int64_t>(1, o.steps - o.warmupSteps));
            const double progress = double(step - o.warmupSteps) / span;
            return o.lr * 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, progress)));
        }
        return o.lr;
    }

    void setLr(double lr)
    {
        for (auto &group : optimizer->param_groups())
            group.options().set_lr(lr);
    }

    void checkShapes()
    {
        // Like DDP's verify_params_across_processes, through the store so a mismatch is
        // reported by name instead of as a failed collective.
        std::string sig;
        for (std::size_t i = 0; i < params.size(); ++i) {
            sig += names[i] + "[";
            for (auto s : params[i].sizes())
                sig += std::to_string(s) + ",";
            sig += std::string(c10::toString(params[i].scalar_type())) + "];";
        }
        dist->store().set("rankdeck/shapes/" + std::to_string(o.rank),
                          std::vector<std::uint8_t>(sig.begin(), sig.end()));
        auto compare = [&](int other) {
            const auto theirs = dist->store().get("rankdeck/shapes/" + std::to_string(other));
            const std::string t(theirs.begin(), theirs.end());
            if (t != sig)
                throw std::runtime_error(
                    "model parameters differ between rank " + std::to_string(o.rank) +
                    " and rank " + std::to_string(other) +
                    " (names, shapes or dtypes); every rank must build the same model");
        };
        if (o.rank == 0) {
            for (int r = 1; r < o.worldSize; ++r)
                compare(r);
        } else {
            compare(0);
        }
    }

    void broadcastFromRankZero(std::vector<at::Tensor> tensors)
    {
        torch::NoGradGuard noGrad;
        std::vector<c10::intrusive_ptr<c10d::Work>> works;
        for (auto &t : tensors) {
            std::vector<at::Tensor> one{t};
            works.push_back(dist->backend().broadcast(one));
        }
        for (auto &w : works)
            w->wait();
    }

    void buildOptimizer()
    {
        if (o.optimizer == "adamw") {
            auto opts = torch::optim::AdamWOptions(o.lr).weight_decay(o.weightDecay);
            optimizer = std::make_unique<torch::optim::AdamW>(params, opts);
        } else {
            auto opts =
                torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weightDecay);
            optimizer = std::make_unique<torch::optim::SGD>(params, opts);
        }
    }

    // ---- checkpoints ----------------------------------------------------------------------
    static std::string checkpointName(std::int64_t step)
    {
        char buf[64];
        std::snprintf(buf, sizeof buf, "checkpoint-%010lld.pt", static_cast<long long>(step));
        return buf;
    }

    std::string latestCheckpoint() const
    {
        std::error_code ec;
        std::string best;
        if (!fs::is_directory(o.checkpointDir, ec))
            return best;
        static const std::regex pattern("checkpoint-[0-9]{10}\\.pt");
        for (const auto &entry : fs::directory_iterator(o.checkpointDir, ec)) {
            const std::string name = entry.path().filename().string();
            if (std::regex_match(name, pattern) && name > fs::path(best).filename().string())
                best = entry.path().string();
        }
        return best;
    }

    void writeCheckpoint(std::int64_t step)
    {
        if (o.rank != 0 || o.checkpointDir.empty())
            return;
        std::error_code ec;
        fs::create_directories(o.checkpointDir, ec);
        if (ec)
            throw std::runtime_error("cannot create checkpoint directory " + o.checkpointDir +
                                     ": " + ec.message());
        torch::serialize::OutputArchive archive;
        archive.write("step", torch::tensor(step, torch::kLong));
        archive.write("param_count", torch::tensor(std::int64_t(params.size()), torch::kLong));
        for (std::size_t i = 0; i < params.size(); ++i)
            archive.write("p" + std::to_string(i), params[i].detach().cpu());
        torch::serialize::OutputArchive optArchive;
        optimizer->save(optArchive);
        archive.write("optimizer", optArchive);

        const fs::path final = fs::path(o.checkpointDir) / checkpointName(step);
        const fs::path tmp = fs::path(o.checkpointDir) / ("." + checkpointName(step) + ".tmp");
        archive.save_to(tmp.string());
        // rename() is atomic: a reader (or a resume after a crash) sees the old or the new file.
        fs::rename(tmp, final, ec);
        if (ec)
            throw std::runtime_error("cannot write checkpoint " + final.string() + ": " +
                                     ec.message());
        // Keep the last three; older ones only cost disk.
        std::vector<std::string> all;
        for (const auto &entry : fs::directory_iterator(o.checkpointDir, ec)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind("checkpoint-", 0) == 0 && name.size() == 24)
                all.push_back(entry.path().string());
        }
        std::sort(all.begin(), all.end());
        for (std::size_t i = 0; i + 3 < all.size(); ++i)
            fs::remove(all[i], ec);

        wire::WireEventWriter w(wire::event::Checkpoint, o.rank, Telemetry::nowUs());
        w.addInt(wire::field::Step, step).addString(wire::field::Path, final.string());
        telemetry.emit(w);
        telemetry.out("Rank 0: checkpoint at step " + std::to_string(step) + " written to " +
                      final.string());
    }

    // Rank 0 reads the latest checkpoint and hands its bytes to the others through the store,
    // so nodes without a shared file system resume from the same state. Returns the step.
    std::int64_t resume()
    {
        std::vector<std::uint8_t> bytes;
        std::string path;
        if (o.rank == 0) {
            path = latestCheckpoint();
            if (!path.empty()) {
                std::ifstream in(path, std::ios::binary);
                if (!in)
                    throw std::runtime_error("cannot read checkpoint " + path);
                bytes.assign(std::istreambuf_iterator<char>(in), {});
            }
            if (o.worldSize > 1) {
                dist->store().set("rankdeck/resume-path",
                                  std::vector<std::uint8_t>(path.begin(), path.end()));
                dist->store().set("rankdeck/resume", bytes);
            }
        } else {
            const auto p = dist->store().get("rankdeck/resume-path");
            path.assign(p.begin(), p.end());
            bytes = dist->store().get("rankdeck/resume");
        }
        if (bytes.empty()) {
            telemetry.out("Rank " + std::to_string(o.rank) + ": no checkpoint in " +
                          o.checkpointDir + ", starting from step 0");
            return 0;
        }
        torch::serialize::InputArchive archive;
        std::int64_t step = 0;
        try {
            archive.load_from(reinterpret_cast<const char *>(bytes.data()), bytes.size(), device);
            // A fresh tensor per read: read() into a defined tensor set_()s its storage.
            auto readTensor = [&](const std::string &key) {
                at::Tensor t;
                archive.read(key, t);
                return t;
            };
            step = readTensor("step").item<std::int64_t>();
            const auto count = readTensor("param_count").item<std::int64_t>();
            if (count != std::int64_t(params.size()))
                throw std::runtime_error("it holds " + std::to_string(count) +
                                         " parameters, the model has " +
                                         std::to_string(params.size()));
            torch::NoGradGuard noGrad;
            for (std::size_t i = 0; i < params.size(); ++i) {
                const auto t = readTensor("p" + std::to_string(i));
                if (!t.sizes().equals(params[i].sizes()))
                    throw std::runtime_error("parameter " + names[i] + " has another shape");
                params[i].copy_(t);
            }
            torch::serialize::InputArchive optArchive;
            archive.read("optimizer", optArchive);
            optimizer->load(optArchive);
        } catch (const c10::Error &e) {
            throw std::runtime_error("checkpoint " + path +
                                     " cannot be loaded: " + e.what_without_backtrace());
        } catch (const std::runtime_error &e) {
            throw std::runtime_error("checkpoint " + path +
                                     " does not fit this model: " + e.what());
        }
        telemetry.out("Rank " + std::to_string(o.rank) + ": resumed from " + path + " at step " +
                      std::to_string(step));
        return step;
    }

    void saveState()
    {
        if (o.saveState.empty())
            return;
        std::string path = o.saveState;
        const auto pos = path.find("{rank}");
        if (pos != std::string::npos)
            path.replace(pos, 6, std::to_string(o.rank));
        else if (o.rank != 0)
            return; // one file for the job; ranks hold identical parameters anyway
        c10::Dict<std::string, at::Tensor> dict;
        for (std::size_t i = 0; i < params.size(); ++i)
            dict.insert(names[i], params[i].detach().cpu().clone());
        const std::vector<char> bytes = pickleForPython(c10::IValue(dict));
        const std::string tmp = path + ".tmp";
        {
            std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
            out.write(bytes.data(), std::streamsize(bytes.size()));
            if (!out)
                throw std::runtime_error("cannot write --save-state file " + tmp);
        }
        std::error_code ec;
        fs::rename(tmp, path, ec);
        if (ec)
            throw std::runtime_error("cannot write --save-state file " + path + ": " +
                                     ec.message());
    }
};

Trainer::Trainer(const WorkerOptions &options, Telemetry &telemetry, ControlChannel &control)
    : d(std::make_unique<Private>(options, telemetry, control))
{}

Trainer::~Trainer() = default;

int Trainer::run()
{
    const WorkerOptions &o = d->o;
    Telemetry &tel = d->telemetry;
    const auto runStart = std::chrono::steady_clock::now();
    if (o.countFrom >= 0 && !instructioncount::available())
        throw UsageError("environment variable RANKDECK_COUNT_STEPS: this worker was built without "
                         "valgrind's <valgrind/callgrind.h>, so it cannot mark the steps to count");
    d->backend = DistributedContext::resolveBackend(o, d->device);
    // CPU ranks that share a node each get their own slice of its CPUs, before any thread of
    // Gloo or of the intra-op pool exists (threads inherit the mask). Unbound, the scheduler
    // migrates the ranks' compute, Gloo and socket threads across all cores: on the 2-core
    // benchmark machine a 25M-parameter step took 540-570 ms unbound and 350-385 ms bound, a
    // tiny step 0.42-0.47 ms and 0.29 ms (docs/benchmarks.md).
    std::vector<int> boundCpus; // empty: not bound
    if (o.cpuAffinity == "auto" && !d->device.is_cuda() && o.localWorldSize > 1) {
        const auto slice = cpuSliceFor(allowedCpus(), o.localRank, o.localWorldSize);
        if (!slice.empty()) {
            if (const auto error = bindToCpus(slice); error.empty())
                boundCpus = slice;
            else
                tel.err("Rank " + std::to_string(o.rank) + ": cannot bind to CPUs " +
                        formatCpuList(slice) + ": " + error + " (continuing unbound)");
        }
    }
    // torchrun gives each rank OMP_NUM_THREADS=1 when several share a node; without it,
    // ranks on one node oversubscribe the cores. Share them out unless the user chose.
    if (!std::getenv("OMP_NUM_THREADS") && o.localWorldSize > 1) {
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        torch::set_num_threads(boundCpus.empty()
                                   ? int(std::max(1u, cores / unsigned(o.localWorldSize)))
                                   : int(boundCpus.size()));
    }

    {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        wire::WireEventWriter w(wire::event::Hello, o.rank, Telemetry::nowUs());
        w.addInt(wire::field::Protocol, wire::kProtocolVersion)
            .addString(wire::field::Host, host)
            .addInt(wire::field::Pid, ::getpid())
            .addInt(wire::field::LocalRank, o.localRank)
            .addInt(wire::field::WorldSize, o.worldSize)
            .addString(wire::field::Device, d->device.str())
            .addString(wire::field::Backend, d->backend)
            .addString(wire::field::TorchVersion, buildinfo::torchVersion())
            .addString(wire::field::WorkerVersion, buildinfo::workerVersion())
            .addString(wire::field::BuildId, buildinfo::buildId())
            .addString(wire::field::Task, o.task)
            .addInt(wire::field::TotalSteps, o.steps);
        tel.emit(w);
    }
    tel.startHeartbeat();

    // --fault without --fault-rank targets rank 0.
    std::optional<fault::FaultInjector> injector;
    if (!o.fault.empty()) {
        std::string error;
        injector =
            fault::FaultInjector::parse(o.fault, o.faultRank < 0 ? 0 : o.faultRank, o.rank, &error);
        if (!injector)
            throw UsageError(error);
    }

    // Build the task before the rendezvous: a missing file fails fast on every rank.
    d->task = Task::create(o);
    d->task->to(d->device);
    for (auto &[name, p] : d->task->namedParameters()) {
        d->names.push_back(name);
        d->params.push_back(p);
    }
    if (d->params.empty())
        throw std::runtime_error("the model has no parameters to train");
    DistributedSampler sampler(d->task->datasetSize(), o.rank, o.worldSize, o.batchSize, o.shuffle,
                               o.seed);
    if (sampler.batchesPerEpoch() == 0)
        throw UsageError("--batch-size " + std::to_string(o.batchSize) +
                         " is larger than this rank's shard of " +
                         std::to_string(sampler.samplesPerRank()) + " samples (dataset " +
                         std::to_string(d->task->datasetSize()) + " over " +
                         std::to_string(o.worldSize) + " ranks)");
    if (o.rank == 0)
        tel.out("Rank 0: " + d->task->describe());

    d->dist = std::make_unique<DistributedContext>(o, tel, d->backend, d->device);
    {
        wire::WireEventWriter w(wire::event::Rendezvous, o.rank, Telemetry::nowUs());
        w.addDouble(wire::field::DurationMs, d->dist->rendezvousMs())
            .addString(wire::field::Backend, d->backend)
            .addInt(wire::field::WorldSize, o.worldSize);
        tel.emit(w);
        tel.out("Rank " + std::to_string(o.rank) + ": joined " + std::to_string(o.worldSize) +
                " ranks over " + d->backend + " on " + d->device.str() +
                (boundCpus.empty() ? "" : ", CPUs " + formatCpuList(boundCpus)));
    }
    d->checkShapes();

    std::vector<at::Tensor> buffers;
    for (auto &[name, b] : d->task->namedBuffers())
        buffers.push_back(b);
    {
        std::vector<at::Tensor> all = d->params;
        all.insert(all.end(), buffers.begin(), buffers.end());
        d->broadcastFromRankZero(all);
    }
    d->buildOptimizer();
    std::int64_t step = 0;
    if (o.resume)
        step = d->resume();

    GradReducer reducer(d->dist->backendPtr(), d->params, o.worldSize, !o.noOverlap);
    const bool autocast = d->device.is_cuda();
    const double globalSamples = double(o.batchSize * o.accumSteps * o.worldSize);
    double lastLoss = std::nan("");
    bool stopped = false;
    tel.setLastStep(step);

    // RANKDECK_COUNT_STEPS (instructioncount.h): callgrind counts steps FROM..TO-1 only.
    const auto countWindowAt = [&o](std::int64_t s) {
        if (s == o.countFrom)
            instructioncount::start();
        else if (s == o.countTo)
            instructioncount::stop();
    };
    while (step < o.steps) {
        countWindowAt(step);
        const auto t0 = std::chrono::steady_clock::now();
        // The step index as the log prints it ("Epoch E"): --fault KIND@E fires before it.
        if (injector) {
            injector->maybeInject(int(step));
            if (const int bucket = injector->skippedBucket(int(step)); bucket >= 0) {
                const std::size_t skipped = reducer.skipBucketOnce(std::size_t(bucket));
                tel.err("rankdeck-worker: rank " + std::to_string(o.rank) + " leaves out bucket " +
                        std::to_string(skipped) + " of " + std::to_string(reducer.bucketCount()) +
                        " (" + std::to_string(reducer.bucketLayout()[skipped].size()) +
                        " parameters) in step " + std::to_string(step));
            }
        }
        // A straggler's extra work, inside its step and before its gradients join the
        // all-reduce: its step takes longer and the other ranks wait for it there, as behind a
        // slow GPU or a busy node.
        if (o.stragglerDelay() && o.rank == o.faultRank)
            std::this_thread::sleep_for(std::chrono::milliseconds(o.stepDelayMs));
        if (!buffers.empty())
            d->broadcastFromRankZero(buffers); // DDP's broadcast_buffers before each forward
        const double lr = d->lrAt(step);
        d->setLr(lr);
        double lossSum = 0;
        std::int64_t epoch = 0;
        for (std::int64_t micro = 0; micro < o.accumSteps; ++micro) {
            const bool last = micro + 1 == o.accumSteps;
            const auto indices = sampler.batch(step * o.accumSteps + micro, epoch);
            reducer.beginBackward(last, d->control.stopRequested());
            at::Tensor loss;
            if (autocast) {
                at::autocast::set_autocast_enabled(at::kCUDA, true);
                at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
                loss = d->task->loss(indices);
                at::autocast::set_autocast_enabled(at::kCUDA, false);
                at::autocast::clear_cache();
            } else {
                loss = d->task->loss(indices);
            }
            // Scaled so that accumulated gradients are the mean over the global batch.
            (o.accumSteps > 1 ? loss / double(o.accumSteps) : loss).backward();
            lossSum += loss.item<double>();
        }
        double commWaitMs = 0;
        const bool anyStop = reducer.finish(commWaitMs);
        if (o.clipGradNorm > 0)
            torch::nn::utils::clip_grad_norm_(d->params, o.clipGradNorm);
        d->optimizer->step();
        // zero_grad(set_to_none) without Optimizer::zero_grad's detach_(), which views (the
        // reducer's bucket slots) refuse.
        for (auto &p : d->params)
            p.mutable_grad().reset();
        ++step;
        lastLoss = lossSum / double(o.accumSteps);
        const double stepMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        tel.setLastStep(step);
        if (tel.eventsEnabled()) { // with --telemetry off the step costs nothing for events
            wire::WireEventWriter w(wire::event::Step, o.rank, Telemetry::nowUs());
            w.addInt(wire::field::Step, step)
                .addInt(wire::field::Epoch, epoch)
                .addDouble(wire::field::Loss, lastLoss)
                .addDouble(wire::field::LearningRate, lr)
                .addDouble(wire::field::SamplesPerSec,
                           stepMs > 0 ? globalSamples * 1000.0 / stepMs : 0.0)
                .addDouble(wire::field::StepTimeMs, stepMs)
                .addDouble(wire::field::CommWaitMs, commWaitMs);
            if (const auto mem = d->dist->gpuMemoryBytes(); mem >= 0)
                w.addInt(wire::field::GpuMemBytes, mem);
            tel.emitStep(w);
        }
        if ((step - 1) % o.logEvery == 0 || step == o.steps) {
            char buf[128];
            std::snprintf(buf, sizeof buf, "Rank %d: Epoch %lld, Loss %.10g", o.rank,
                          static_cast<long long>(step - 1), lastLoss);
            tel.out(buf);
        }
        if (o.checkpointEvery > 0 && step % o.checkpointEvery == 0)
            d->writeCheckpoint(step);
        if (anyStop) {
            stopped = true;
            if (!o.checkpointDir.empty() &&
                !(o.checkpointEvery > 0 && step % o.checkpointEvery == 0))
                d->writeCheckpoint(step);
            break;
        }
        if (o.stepDelayMs > 0 && !o.stragglerDelay())
            std::this_thread::sleep_for(std::chrono::milliseconds(o.stepDelayMs));
    }
    countWindowAt(step);
    if (!stopped && !o.checkpointDir.empty() && o.checkpointEvery > 0 &&
        step % o.checkpointEvery != 0)
        d->writeCheckpoint(step);

    d->saveState();
    const double totalMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - runStart)
            .count();
    {
        wire::WireEventWriter w(wire::event::Finished, o.rank, Telemetry::nowUs());
        w.addInt(wire::field::Step, step)
            .addDouble(wire::field::Loss, lastLoss)
            .addDouble(wire::field::DurationMs, totalMs);
        if (stopped)
            w.addString(wire::field::Reason,
                        d->control.stopReason().empty() ? "peer-stop" : d->control.stopReason());
        tel.emit(w);
    }
    tel.out("Rank " + std::to_string(o.rank) + ": " + (stopped ? "stopped" : "finished") +
            " after step " + std::to_string(step));
    // Rank 0 serves the store: keep it up until every rank is done with it.
    d->dist->barrier();
    return 0;
}

} // namespace rankdeck
