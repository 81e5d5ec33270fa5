# SPDX-License-Identifier: GPL-3.0-or-later
"""A torchrun-style DDP script as a user writes it, with one rank made slow on purpose (issue 43):
nothing RankDeck-specific, so the launcher must find the rank and the cause from the outside.

    slow_rank.py --cause input --slow-rank 2     rank 2's Dataset burns CPU per sample
    slow_rank.py --cause io --slow-rank 2        rank 2 reads its samples from a slow pipe
    slow_rank.py --cause starved --slow-rank 1   rank 1 runs on CPU 0 beside 3 busy loops it
                                                 starts, the others on CPU 1; every rank has
                                                 work of its own per sample
    slow_rank.py --cause none                    healthy
"""
import argparse
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--cause", choices=["input", "io", "starved", "none"], default="none")
parser.add_argument("--slow-rank", type=int, default=-1)
parser.add_argument("--seconds", type=float, default=60.0)
parser.add_argument("--slow-after", type=float, default=0.0, help="healthy until then")
parser.add_argument("--mark", default="", help="the slow rank writes the wall time its "
                    "slowdown starts to this file (bench/straggler.py)")
parser.add_argument("--work", type=int, default=-1,
                    help="CPU work per sample on every rank (default: some when starved)")
args = parser.parse_args()

# Pinned before the process group starts, so that Gloo's threads are pinned with the main one
# (threads inherit the mask of the thread that creates them), as `taskset` pins a whole rank.
rank = int(os.environ["RANK"])
slow = rank == args.slow_rank
if args.cause == "starved" and os.cpu_count() and os.cpu_count() > 1:
    os.sched_setaffinity(0, {0} if slow else {1})
    if slow:
        # The noisy neighbours, in the rank's own session: with the kernel's autogroup
        # scheduling, busy loops of another session would get their own share and not starve it.
        for _ in range(3):
            subprocess.Popen([sys.executable, "-c",
                              "import os\nos.sched_setaffinity(0, {0})\nwhile True:\n    pass\n"],
                             env=dict(os.environ, RANKDECK_SAMPLE_HZ="0"))
dist.init_process_group("gloo")
start = time.monotonic()

stream = None
if args.cause == "io" and slow:
    # A `pv -L`: a writer that lets 16 KiB/s through a pipe.
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import os, sys, time\n"
         "while True:\n"
         "    os.write(1, b'x' * 160)\n"
         "    time.sleep(0.01)\n"],
        stdout=subprocess.PIPE, env=dict(os.environ, RANKDECK_SAMPLE_HZ="0"))
    stream = writer.stdout


work = args.work if args.work >= 0 else (20000 if args.cause == "starved" else 0)


marked = False


def slow_now():
    global marked
    now = slow and time.monotonic() - start >= args.slow_after
    if now and args.mark and not marked:
        marked = True
        with open(args.mark, "w") as f:
            f.write("%.6f\n" % time.time())
    return now


class Samples(Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        total = 0
        for k in range(work):  # every rank's own work per sample
            total += k
        if slow_now() and args.cause == "input":
            total = 0
            for k in range(60000):  # the extra work per sample the verdict must name
                total += k * k
        if slow_now() and args.cause == "io":
            stream.read(64)  # blocks on the slow pipe
        x = torch.full((16,), float(i % 7) / 7.0)
        return x, x.sum(dim=0, keepdim=True)


model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Samples(), batch_size=8)
step = 0
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    step += 1
    if step % 50 == 0:
        print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    # Every rank stops at the same step: a rank leaving on its own clock would desync.
    if step % 20 == 0:
        done = torch.tensor([1.0 if time.monotonic() - start >= args.seconds else 0.0])
        dist.all_reduce(done, op=dist.ReduceOp.MAX)
        if done.item() > 0:
            break
dist.barrier()
dist.destroy_process_group()
