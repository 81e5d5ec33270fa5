# SPDX-License-Identifier: GPL-3.0-or-later
"""The PyTorch DDP reference example (Linear(10,1), SGD lr 0.01, loss = output.sum()), run under
torchrun with Gloo. bench/run times launch → every rank's first printed step against
rankdeck-cli running the same task."""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(steps):
        opt.zero_grad()
        loss = model(torch.randn(20, 10)).sum()
        loss.backward()
        opt.step()
        print(f"Rank {rank}: Epoch {epoch}, Loss {loss.item()}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
