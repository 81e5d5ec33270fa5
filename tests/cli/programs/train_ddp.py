# SPDX-License-Identifier: GPL-3.0-or-later
# The reference torchrun-style training script, as a user writes it: nothing RankDeck-specific.
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(5):
    x, y = torch.randn(20, 10), torch.randn(20, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"Rank {rank}: Epoch {epoch}, Loss {loss.item()}")
dist.destroy_process_group()
