# SPDX-License-Identifier: GPL-3.0-or-later
# An unmodified Lightning 2.6 script (Trainer(strategy="ddp") on CPU, launched torchrun-style)
# with one rank made slow on purpose (issue 43): its Dataset burns CPU for every sample, so the
# other ranks wait for it in DDP's gradient all-reduce. Nothing in it knows of RankDeck.
# Lightning's own work per step (hooks, batch transfer, the broadcasts of its Timer) takes
# ~20 ms here, so the Dataset's work must be of that order to make a straggler.
#   python lightning_slow.py [--slow-rank R] [--seconds S]
import argparse
import os
import time

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--slow-rank", type=int, default=1)
parser.add_argument("--seconds", type=float, default=90.0)
args = parser.parse_args()
RANK = int(os.environ.get("RANK", 0))


class Shard(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(RANK)
        self.x = torch.randn(n, 16, generator=g)
        self.y = self.x.sum(1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if RANK == args.slow_rank:
            spin = 0
            for k in range(40000):  # a decode or augmentation: ~1.6 ms of CPU per sample
                spin += (k * 7919) % 13
        return self.x[i], self.y[i]


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 256), torch.nn.ReLU(),
                                       torch.nn.Linear(256, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    torch.set_num_threads(1)
    trainer = L.Trainer(accelerator="cpu", devices=int(os.environ.get("LOCAL_WORLD_SIZE", 1)),
                        num_nodes=int(os.environ.get("WORLD_SIZE", 1)) //
                        int(os.environ.get("LOCAL_WORLD_SIZE", 1)),
                        strategy="ddp", max_epochs=-1, max_time={"seconds": args.seconds},
                        enable_checkpointing=False, logger=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Regressor(), DataLoader(Shard(4096), batch_size=16, num_workers=0))
