# SPDX-License-Identifier: GPL-3.0-or-later
# A user's DDP script (Gloo, CPU) that fails on one rank at a known epoch, the way real code
# fails: python faulty_ddp.py MODE [FAIL_RANK] [FAIL_EPOCH]
#   valueerror   a ValueError raised in a nested function
#   segfault     a segfault through ctypes
#   abort        os.abort()
#   nativeabort  abort() inside a native library (libc) called through ctypes
#   hang         time.sleep while the other ranks block in DDP's all-reduce
# The tests find the faulting lines by the "FAULT:" markers at their ends.
import ctypes
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1]
fail_rank = int(sys.argv[2]) if len(sys.argv) > 2 else 1
fail_epoch = int(sys.argv[3]) if len(sys.argv) > 3 else 2


def check_batch(x, epoch):
    if x.shape[0] != 20 or epoch == fail_epoch:
        raise ValueError(f"bad batch at epoch {epoch}")  # FAULT: valueerror


def load_batch(epoch):
    x = torch.randn(20, 10)
    check_batch(x, epoch)
    return x, torch.randn(20, 1)


def fail(epoch):
    if mode == "valueerror":
        load_batch(epoch)
    elif mode == "segfault":
        ctypes.string_at(0)  # FAULT: segfault
    elif mode == "abort":
        os.abort()  # FAULT: abort
    elif mode == "nativeabort":
        ctypes.CDLL(None).abort()  # FAULT: nativeabort
    elif mode == "hang":
        time.sleep(3600)  # FAULT: hang


dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(1000 if mode == "hang" else 5):
    if rank == fail_rank and epoch == fail_epoch:
        fail(epoch)
    x, y = torch.randn(20, 10), torch.randn(20, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()  # FAULT: allreduce
    opt.step()
    print(f"Rank {rank}: Epoch {epoch}, Loss {loss.item()}")
dist.destroy_process_group()
