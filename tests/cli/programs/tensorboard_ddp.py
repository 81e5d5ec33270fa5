# SPDX-License-Identifier: GPL-3.0-or-later
# A DDP program (Gloo, CPU) that logs the way users do, with torch.utils.tensorboard's
# SummaryWriter and nothing RankDeck-specific: `loss` and `acc` with add_scalar and `grad` with
# add_scalars every step, flushed. Every rank writes the same tags into the same directory
# unless --per-rank, so a rank's curves must come from its own files. It records what it wrote
# (as the float32 that simple_value holds) in --record.rank<R>.json, and before it closes the
# writer and ends it waits for --gate to exist: a test sees the curves while it still runs.
import argparse
import json
import os
import struct
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--logdir", help="SummaryWriter's log_dir (default: its own, runs/…)")
parser.add_argument("--dir", help="the same, under a name RankDeck does not look for")
parser.add_argument("--per-rank", action="store_true", help="log_dir/rank<R> per rank")
parser.add_argument("--steps", type=int, default=8)
parser.add_argument("--record", required=True)
parser.add_argument("--gate", required=True)
args = parser.parse_args()

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
log_dir = args.logdir or args.dir
if log_dir and args.per_rank:
    log_dir = os.path.join(log_dir, f"rank{rank}")
writer = SummaryWriter(log_dir=log_dir)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


written = {"loss": {}, "acc": {}, "grad/norm": {}}
for step in range(args.steps):
    x = torch.randn(16, 4)
    y = x.sum(dim=1, keepdim=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    # Different on every rank, so that a rank shown another rank's file is caught.
    acc = 1.0 / (1.0 + loss.item()) + 10 * rank
    norm = float(sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5)
    writer.add_scalar("loss", loss.item(), step)
    writer.add_scalar("acc", acc, step)
    writer.add_scalars("grad", {"norm": norm}, step)
    writer.flush()
    written["loss"][step] = f32(loss.item())
    written["acc"][step] = f32(acc)
    written["grad/norm"][step] = f32(norm)
    print(f"rank {rank} wrote step {step}", flush=True)

with open(f"{args.record}.rank{rank}.json", "w") as f:
    json.dump(written, f)
print(f"rank {rank} waits for {args.gate}", flush=True)
while not os.path.exists(args.gate):
    time.sleep(0.05)
writer.close()
dist.destroy_process_group()
