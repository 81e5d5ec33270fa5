# SPDX-License-Identifier: GPL-3.0-or-later
# A Lightning 2.6 script the way its users write it: a LightningModule that logs train_loss on
# the progress bar (self.log(..., prog_bar=True)) and val_loss at each epoch's end, a callback
# that prints each rank's batch loss, a TensorBoardLogger(save_dir="tb_logs"),
# Trainer(strategy="ddp") on CPU. Launched torchrun-style (Lightning's TorchElasticEnvironment
# takes RANK/WORLD_SIZE/LOCAL_RANK/MASTER_*): devices = the ranks on this node.
#   python lightning_module.py [--epochs N] [--inject WHAT] [--fail-rank R]
# --inject (what tests/cli/tst_frameworks.cpp checks in the failure report):
#   keyerror      a KeyError in training_step on --fail-rank
#   keyerror-all  the same KeyError on every rank
#   workersegv    the Dataset segfaults (ctypes) in a DataLoader worker of --fail-rank
# Every line the script prints itself is also appended to printed-rank<R>.txt in the working
# directory. The faulting lines end with "# FAULT: <what>".
import argparse
import ctypes
import os

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, TQDMProgressBar
from lightning.pytorch.loggers import TensorBoardLogger
from torch.utils.data import DataLoader, Dataset, get_worker_info

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
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
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


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        hit = self.global_step == 5 and (args.inject == "keyerror-all" or
                                         (args.inject == "keyerror" and RANK == args.fail_rank))
        y = batch["target" if hit else "y"]  # FAULT: keyerror
        loss = torch.nn.functional.mse_loss(self.net(batch["x"]), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = torch.nn.functional.mse_loss(self.net(batch["x"]), batch["y"])
        self.log("val_loss", loss, prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class PrintLoss(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        say(f"rank {trainer.global_rank} step {trainer.global_step} "
            f"batch_loss={outputs['loss'].item():.4f}")

    def on_train_end(self, trainer, pl_module):
        say(f"rank {trainer.global_rank} done")


if __name__ == "__main__":
    torch.manual_seed(0)
    local = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    world = int(os.environ.get("WORLD_SIZE", 1))
    workers = 2 if args.inject == "workersegv" else 0
    trainer = L.Trainer(strategy="ddp", accelerator="cpu", devices=local,
                        num_nodes=max(1, world // local), max_epochs=args.epochs,
                        log_every_n_steps=2, logger=TensorBoardLogger(save_dir="tb_logs"),
                        callbacks=[TQDMProgressBar(), PrintLoss()], enable_checkpointing=False,
                        enable_model_summary=False)
    trainer.fit(Regressor(), DataLoader(Regression(256, 0), batch_size=16, num_workers=workers),
                DataLoader(Regression(64, 1), batch_size=16))
