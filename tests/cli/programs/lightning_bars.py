# SPDX-License-Identifier: GPL-3.0-or-later
# A Lightning 2.6 script the way its users write it: a LightningModule that logs train_loss on
# the progress bar every step and val_loss at each epoch's end, Lightning's TQDMProgressBar and
# a TensorBoardLogger(save_dir="tb_logs"), Trainer(strategy="ddp"). Launched torchrun-style (one
# process per rank, RANK/WORLD_SIZE/LOCAL_RANK/MASTER_* set, which Lightning's
# TorchElasticEnvironment takes): devices = the ranks on this node, num_nodes = the nodes.
import os

import lightning as L
import torch
from lightning.pytorch.callbacks import TQDMProgressBar
from lightning.pytorch.loggers import TensorBoardLogger
from torch.utils.data import DataLoader, TensorDataset


class Regression(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y), prog_bar=True,
                 sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    return TensorDataset(x, x.sum(1, keepdim=True))


if __name__ == "__main__":
    torch.manual_seed(0)
    local = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    world = int(os.environ.get("WORLD_SIZE", 1))
    trainer = L.Trainer(strategy="ddp", accelerator="cpu", devices=local,
                        num_nodes=max(1, world // local), max_epochs=3, log_every_n_steps=5,
                        logger=TensorBoardLogger(save_dir="tb_logs"),
                        callbacks=[TQDMProgressBar()], enable_checkpointing=False,
                        enable_model_summary=False)
    trainer.fit(Regression(), DataLoader(data(512, 0), batch_size=16),
                DataLoader(data(128, 1), batch_size=16))
