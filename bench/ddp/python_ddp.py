# SPDX-License-Identifier: GPL-3.0-or-later
"""PyTorch's own DistributedDataParallel on the tasks rankdeck-worker trains, for the benchmark.

Launch with torchrun (e.g. `torchrun --nproc-per-node 2 python_ddp.py --task mlp`). The model,
data, sampler, batch and optimizer match rankdeck-worker's `linear` and `mlp` tasks; rank 0
prints `samples_per_s <median over the timed steps>` (global samples per second, the
definition the worker's step events use).
"""
import argparse
import math
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--task", choices=["linear", "mlp"], default="mlp")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--dataset-size", type=int, default=4096)
    p.add_argument("--mlp-width", type=int, default=64)
    p.add_argument("--mlp-depth", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    p.add_argument("--no-overlap", action="store_true", help="ignored (rankdeck-worker only)")
    a = p.parse_args()

    dist.init_process_group(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    # Like rankdeck-worker on GPUs: one device per local rank, bf16 autocast.
    device = torch.device("cpu")
    if a.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    if a.task == "linear":
        x = torch.randn(a.dataset_size, 10, generator=g)
        y = None
        model = torch.nn.Linear(10, 1)
    else:
        x = torch.randn(a.dataset_size, 64, generator=g)
        y = torch.sin(x @ (torch.randn(64, 8, generator=g) / 8.0))
        layers = [torch.nn.Linear(64, a.mlp_width), torch.nn.ReLU()]
        for _ in range(1, a.mlp_depth):
            layers += [torch.nn.Linear(a.mlp_width, a.mlp_width), torch.nn.ReLU()]
        layers.append(torch.nn.Linear(a.mlp_width, 8))
        model = torch.nn.Sequential(*layers)
    model, x = model.to(device), x.to(device)
    y = None if y is None else y.to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr)
    sampler = torch.utils.data.DistributedSampler(range(a.dataset_size), num_replicas=world, rank=rank, shuffle=False)
    indices = list(sampler)
    per_epoch = len(indices) // a.batch_size

    times = []
    for step in range(a.steps):
        b = step % per_epoch
        idx = torch.tensor(indices[b * a.batch_size:(b + 1) * a.batch_size], device=device)
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            out = ddp(x.index_select(0, idx))
        out = out.float()
        loss = out.sum() if y is None else torch.nn.functional.mse_loss(out, y.index_select(0, idx))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        dt = time.perf_counter() - t0
        if step >= a.warmup:
            times.append(dt)
    if rank == 0:
        print(f"samples_per_s {a.batch_size * world / statistics.median(times):.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
