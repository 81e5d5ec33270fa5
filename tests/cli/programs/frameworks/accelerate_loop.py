# SPDX-License-Identifier: GPL-3.0-or-later
# An Accelerate 1.15 training loop the way its README writes it: Accelerator(), prepare() of the
# model, optimizer and DataLoader, accelerator.backward(), a tqdm bar on each node's main process
# with the loss as its postfix, accelerator.print() of each epoch's mean loss. Launched
# torchrun-style (Accelerate reads RANK/WORLD_SIZE/LOCAL_RANK/MASTER_* and picks Gloo on CPU).
#   python accelerate_loop.py [--epochs N] [--inject WHAT] [--fail-rank R]
# --inject (what tests/cli/tst_frameworks.cpp checks in the failure report):
#   keyerror      a KeyError in the training loop on --fail-rank
#   keyerror-all  the same KeyError on every rank
#   workersegv    the Dataset segfaults (ctypes) in a DataLoader worker of --fail-rank
# Every line the script prints on every rank is also appended to printed-rank<R>.txt in the
# working directory. The faulting lines end with "# FAULT: <what>".
import argparse
import ctypes
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset, get_worker_info
from tqdm.auto import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--inject", default="none",
                    choices=["none", "keyerror", "keyerror-all", "workersegv"])
parser.add_argument("--fail-rank", type=int, default=1)
args = parser.parse_args()
RANK = int(os.environ.get("RANK", 0))


def say(text):
    print(text, flush=True)
    with open(f"printed-rank{RANK}.txt", "a") as f:
        f.write(text + "\n")


class Regression(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = self.x.sum(1, keepdim=True)
        self.served = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        self.served += 1  # per worker process: each has its own copy
        worker = get_worker_info()
        if (args.inject == "workersegv" and RANK == args.fail_rank and worker is not None
                and worker.id == 0 and self.served == 20):
            ctypes.string_at(0)  # FAULT: workersegv
        return {"x": self.x[i], "y": self.y[i]}


def targets(batch, step):
    hit = step == 5 and (args.inject == "keyerror-all" or
                         (args.inject == "keyerror" and RANK == args.fail_rank))
    return batch["target" if hit else "y"]  # FAULT: keyerror


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    workers = 2 if args.inject == "workersegv" else 0
    loader = DataLoader(Regression(256), batch_size=16, shuffle=False, num_workers=workers)
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        bar = tqdm(loader, desc=f"Epoch {epoch}", disable=not accelerator.is_local_main_process)
        for batch in bar:
            loss = torch.nn.functional.mse_loss(model(batch["x"]), targets(batch, step))
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            total += loss.item()
            bar.set_postfix(loss=f"{loss.item():.4f}")
        bar.close()
        say(f"rank {accelerator.process_index} epoch {epoch} step {step} "
            f"mean_loss={total / len(loader):.4f}")
        accelerator.print(f"epoch {epoch}: train_loss={total / len(loader):.4f}")
    accelerator.wait_for_everyone()
    say(f"rank {accelerator.process_index} done")
    accelerator.end_training()


if __name__ == "__main__":
    main()
