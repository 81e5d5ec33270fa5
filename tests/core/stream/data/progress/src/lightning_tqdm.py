import os, torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset
from lightning.pytorch.loggers import TensorBoardLogger

class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)
    def training_step(self, batch, i):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss
    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y), prog_bar=True, sync_dist=True)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

def data(n):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=g)
    return TensorDataset(x, x.sum(1, keepdim=True))

if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = L.Trainer(strategy="ddp", accelerator="cpu", devices=int(os.environ.get("LOCAL_WORLD_SIZE", 1)),
                        num_nodes=1, max_epochs=3, log_every_n_steps=5,
                        logger=TensorBoardLogger(save_dir="tb_logs"), enable_checkpointing=False, callbacks=[L.pytorch.callbacks.TQDMProgressBar()])
    trainer.fit(M(), DataLoader(data(512), batch_size=16), DataLoader(data(128), batch_size=16))
