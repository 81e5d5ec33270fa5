# SPDX-License-Identifier: GPL-3.0-or-later
# A user's DDP script (Gloo, CPU) whose data loader hits a bad batch on one rank: the screenshot
# tour runs it with `launch --exec` to show the merged log (identical lines of every rank
# collapsed) and the Failures page for a Python exception. Usage: ddp_bad_batch.py [BAD_RANK]
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

bad_rank = int(sys.argv[1]) if len(sys.argv) > 1 else 2


def check(batch, epoch):
    if torch.isnan(batch).any():
        raise ValueError(f"batch {epoch} has NaN values (shard 0{epoch})")


def next_batch(rank, epoch):
    batch = torch.randn(32, 10)
    if rank == bad_rank and epoch == 6:
        batch[3, 4] = float("nan")
    check(batch, epoch)
    return batch, torch.randn(32, 1)


dist.init_process_group("gloo")
rank = dist.get_rank()
print("Loading dataset: 6 shards, 32 samples per batch", flush=True)
print("Model: Linear(10, 1), SGD lr=0.05", flush=True)
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(10):
    x, y = next_batch(rank, epoch)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"Rank {rank}: Epoch {epoch}, Loss {loss.item():.4f}", flush=True)
    print(f"checkpoint: epoch {epoch} done", flush=True)
    time.sleep(0.2)
dist.destroy_process_group()
