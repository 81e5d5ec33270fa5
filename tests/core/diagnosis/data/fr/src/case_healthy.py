# SPDX-License-Identifier: GPL-3.0-or-later
# (f) Healthy, 2 ranks: DDP steps, a barrier, then each rank waits in its own code; every
# collective completed.
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import frrank

frrank.init()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(20, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(3):
    loss = model(torch.randn(8, 20)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.barrier()
frrank.park()
