# SPDX-License-Identifier: GPL-3.0-or-later
"""PyTorch's DDP tutorial series' torchrun script (distributed/ddp-tutorial-series,
multigpu_torchrun.py) with the edits a CPU user makes: Gloo instead of NCCL, no .to(device).
Its shape is kept: a Trainer class, a 2,048-sample random dataset, Linear(20, 1), SGD, a
DistributedSampler, a snapshot every few epochs on rank 0, destroy_process_group() at the end.
Issue 27, defect 11: torch sometimes aborts such a rank at exit; bench/abort/count_exit_aborts.py
counts how often under rankdeck-cli and under torchrun.
    python ddp_tutorial.py TOTAL_EPOCHS SAVE_EVERY [--batch_size N]"""
import argparse
import os

import torch
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path):
        self.rank = int(os.environ["RANK"])
        self.model = DDP(model)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            snapshot = torch.load(snapshot_path)
            self.model.module.load_state_dict(snapshot["MODEL_STATE"])
            self.epochs_run = snapshot["EPOCHS_RUN"]
            print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[CPU{self.rank}] Epoch {epoch} | Batchsize: {b_sz} | "
              f"Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            self._run_batch(source, targets)

    def _save_snapshot(self, epoch):
        snapshot = {"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch}
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | Training snapshot saved at {self.snapshot_path}")

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def main(save_every, total_epochs, batch_size, snapshot_path):
    init_process_group(backend="gloo")
    dataset = MyTrainDataset(2048)
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=False, shuffle=False,
                        sampler=DistributedSampler(dataset))
    Trainer(model, loader, optimizer, save_every, snapshot_path).train(total_epochs)
    destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("total_epochs", type=int)
    parser.add_argument("save_every", type=int)
    parser.add_argument("--batch_size", default=32, type=int)
    parser.add_argument("--snapshot_path", default="snapshot.pt")
    args = parser.parse_args()
    main(args.save_every, args.total_epochs, args.batch_size, args.snapshot_path)
