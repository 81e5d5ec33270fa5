# SPDX-License-Identifier: GPL-3.0-or-later
# A user's DDP script (Gloo, CPU) whose ranks get data shards of different length: rank 1 has
# one batch more, so at the end of the epoch rank 0 enters dist.barrier() while rank 1 still
# waits in DDP's gradient all_reduce, and both wait for ever. RankDeck names the two sides and
# their lines within seconds (the screenshot tour shows it). Usage: ddp_uneven_shards.py [BATCHES]
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

batches = int(sys.argv[1]) if len(sys.argv) > 1 else 20
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(20, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
shard = [torch.randn(8, 20) for _ in range(batches + rank)]  # uneven: rank 1 has one more
for step, x in enumerate(shard):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"Rank {rank}: step {step} loss={loss.item():.4f}", flush=True)
print(f"Rank {rank}: epoch done, waiting for the others", flush=True)
dist.barrier()
dist.destroy_process_group()
