# SPDX-License-Identifier: GPL-3.0-or-later
# A torchrun-style DDP script as PyTorch's DDP tutorial writes it (Gloo, CPU), with a Dataset,
# a DistributedSampler and a DataLoader that uses 2 worker processes. Nothing RankDeck-specific.
#   python torchrun_dataloader.py [--epochs N] [--inject WHAT] [--fail-rank R]
# --inject (what tests/cli/tst_frameworks.cpp checks in the failure report):
#   keyerror      a KeyError in the training loop on --fail-rank
#   keyerror-all  the same KeyError on every rank
#   workersegv    the Dataset segfaults (ctypes) in a DataLoader worker of --fail-rank
# Every line the script prints is also appended to printed-rank<R>.txt in the working
# directory, so that a test knows exactly what the rank printed. The faulting lines end with
# "# FAULT: <what>".
import argparse
import ctypes
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, get_worker_info
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--inject", default="none",
                    choices=["none", "keyerror", "keyerror-all", "workersegv"])
parser.add_argument("--fail-rank", type=int, default=1)
args = parser.parse_args()


def say(rank, text):
    print(text, flush=True)
    with open(f"printed-rank{rank}.txt", "a") as f:
        f.write(text + "\n")


class Regression(Dataset):
    def __init__(self, n, rank):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = self.x.sum(1, keepdim=True)
        self.rank = rank
        self.served = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        self.served += 1  # per worker process: each has its own copy
        worker = get_worker_info()
        if (args.inject == "workersegv" and self.rank == args.fail_rank and worker is not None
                and worker.id == 0 and self.served == 20):
            ctypes.string_at(0)  # FAULT: workersegv
        return {"x": self.x[i], "y": self.y[i]}


def targets(batch, step, rank):
    hit = step == 5 and (args.inject == "keyerror-all" or
                         (args.inject == "keyerror" and rank == args.fail_rank))
    return batch["target" if hit else "y"]  # FAULT: keyerror


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = Regression(256, rank)
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=2)
    model = DDP(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = torch.nn.functional.mse_loss(model(batch["x"]), targets(batch, step, rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            say(rank, f"rank {rank} epoch {epoch} step {step} batch_loss={loss.item():.4f}")
    say(rank, f"rank {rank} done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
