# SPDX-License-Identifier: GPL-3.0-or-later
# Transformers 5.24's Trainer the way its users write it, with no download: a tiny GPT-2 built
# from a config (2 layers, 64 wide) on random tokens, a data collator of the user's, the Trainer's
# own bar and its logged dicts ({'loss': …, 'grad_norm': …}), evaluation each epoch. Launched
# torchrun-style: the Trainer reads RANK/WORLD_SIZE/LOCAL_RANK and runs DDP with Gloo on CPU.
#   python transformers_gpt2.py [--epochs N] [--inject WHAT] [--fail-rank R]
# --inject (what tests/cli/tst_frameworks.cpp checks in the failure report):
#   keyerror      a KeyError in a callback's on_step_end on --fail-rank at step 5
#   keyerror-all  the same KeyError on every rank (right after the step's all-reduce, so that
#                 every rank raises it before the launcher stops the others)
#   workersegv    the Dataset segfaults (ctypes) in a DataLoader worker of --fail-rank
# Every line the script prints itself is also appended to printed-rank<R>.txt in the working
# directory. The faulting lines end with "# FAULT: <what>".
import argparse
import ctypes
import os

import torch
from torch.utils.data import Dataset, get_worker_info
from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,
                          TrainingArguments)

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


class RandomTokens(Dataset):
    def __init__(self, n, seq=32, vocab=128):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, vocab, (n, seq), generator=g)
        self.served = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        self.served += 1  # per worker process: each has its own copy
        worker = get_worker_info()
        if (args.inject == "workersegv" and RANK == args.fail_rank and worker is not None
                and worker.id == 0 and self.served == 20):
            ctypes.string_at(0)  # FAULT: workersegv
        return {"input_ids": self.x[i]}


def collate(features):
    """Causal LM batches: the labels are the inputs (the model shifts them)."""
    ids = torch.stack([f["input_ids"] for f in features])
    return {"input_ids": ids, "labels": ids.clone()}


class LossPrintingTrainer(Trainer):
    """Each rank's own loss per training batch (the Trainer logs on rank 0 only)."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        result = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if model.training:
            loss = result[0] if return_outputs else result
            say(f"rank {RANK} step {self.state.global_step + 1} batch_loss={loss.item():.4f}")
        return result


class Monitor(TrainerCallback):
    def __init__(self):
        self.limits = {"max_grad_norm": 1.0}

    def on_step_end(self, targs, state, control, **kwargs):
        hit = state.global_step == 5 and (args.inject == "keyerror-all" or
                                          (args.inject == "keyerror" and RANK == args.fail_rank))
        self.limits["clip" if hit else "max_grad_norm"]  # FAULT: keyerror

    def on_train_end(self, targs, state, control, **kwargs):
        say(f"rank {RANK} done")


if __name__ == "__main__":
    cfg = GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(cfg)
    workers = 2 if args.inject == "workersegv" else 0
    targs = TrainingArguments(output_dir="out", per_device_train_batch_size=8,
                              per_device_eval_batch_size=8, num_train_epochs=args.epochs,
                              logging_steps=4, eval_strategy="epoch", save_strategy="no",
                              report_to="none", use_cpu=True, learning_rate=5e-4, seed=0,
                              dataloader_num_workers=workers)
    LossPrintingTrainer(model=model, args=targs, data_collator=collate,
                        train_dataset=RandomTokens(128), eval_dataset=RandomTokens(32),
                        callbacks=[Monitor()]).train()
