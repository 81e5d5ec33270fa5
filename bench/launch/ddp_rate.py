# SPDX-License-Identifier: GPL-3.0-or-later
"""A user's DDP script that prints every step, for bench/run's program benchmarks: steps/s
between step WARMUP and the last one, measured by the script itself, so that the launcher's
reading of its output (a pipe that must never fill up) is part of what is measured; and the
process's CPU time per step over the same steps.
Usage: ddp_rate.py STEPS [WARMUP]"""
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else steps // 5
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(20, 10)
    t0 = c0 = None
    for step in range(steps):
        if step == warmup:
            t0 = time.perf_counter()
            c0 = time.process_time()
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(f"Rank {rank}: step {step} loss={loss.item():.6f}", flush=True)
    rate = (steps - warmup) / (time.perf_counter() - t0)
    # CPU of the whole process (every thread: Gloo's too) per step: what recording adds, and
    # much less moved than the rate by other processes on a shared, loaded machine.
    cpu_us = (time.process_time() - c0) / (steps - warmup) * 1e6
    print(f"Rank {rank}: steady rate {rate:.3f} steps/s", flush=True)
    print(f"Rank {rank}: steady cpu {cpu_us:.2f} us/step", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
