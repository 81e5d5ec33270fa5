# SPDX-License-Identifier: GPL-3.0-or-later
# (b) Uneven shards under DDP, 2 ranks: rank 1 has one batch more, so rank 0 enters barrier()
# while rank 1 is in DDP's gradient all_reduce of the same collective number.
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import frrank

frrank.init()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(20, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
batches = 4 + frrank.RANK
for i in range(batches):
    if i == batches - 1:
        frrank.ready()
    loss = model(torch.randn(8, 20)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
frrank.ready()
dist.barrier()
