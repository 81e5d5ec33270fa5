# SPDX-License-Identifier: GPL-3.0-or-later
# A training loop the way tqdm's users write it: one bar per epoch with set_postfix on every
# batch, nothing RankDeck-specific. The loss it shows is (rank + 1) / (1 + global step) with 4
# decimals, so a test knows every value and the step it belongs to. With --tensorboard it also
# logs train_loss with a SummaryWriter under tb_logs/lightning_logs/version_<rank>/ (where
# Lightning's TensorBoardLogger(save_dir="tb_logs") writes), 10 × rank + step: the same name as
# the bar's, another source.
import argparse
import os
import time

from tqdm import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batches", type=int, default=20)
parser.add_argument("--tensorboard", action="store_true")
parser.add_argument("--sleep", type=float, default=0.01, help="seconds a batch")
args = parser.parse_args()
rank = int(os.environ.get("RANK", 0))

writer = None
if args.tensorboard:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=f"tb_logs/lightning_logs/version_{rank}")

for epoch in range(args.epochs):
    bar = tqdm(range(args.batches), desc=f"Epoch {epoch}")
    for i in bar:
        step = epoch * args.batches + i
        bar.set_postfix(train_loss=f"{(rank + 1) / (1 + step):.4f}", lr=1e-3)
        if writer is not None:
            writer.add_scalar("train_loss", 10 * rank + step, step)
            writer.flush()
        time.sleep(args.sleep)
if writer is not None:
    writer.close()
print(f"rank {rank} done", flush=True)
