# SPDX-License-Identifier: GPL-3.0-or-later
# (c) Size mismatch, 4 ranks: rank 2 all_reduces FR_ODD_SIZE floats (default 264) where the
# others give 256. Gloo aborts a rank that receives more than it expects: with 264 a peer of
# rank 2 (the victim), with 250 (sizemismatch_smaller) rank 2 itself. The ranks that survive
# catch their error and stay alive to be dumped (see ranks.txt and the logs for who died).
import os
import traceback

import torch
import torch.distributed as dist

import frrank

frrank.init()
t = torch.ones(256)
for step in range(3):
    dist.all_reduce(t)
frrank.ready()
try:
    dist.all_reduce(torch.ones(int(os.environ.get("FR_ODD_SIZE", "264")) if frrank.RANK == 2 else 256))
    print("all_reduce returned")
except Exception:
    traceback.print_exc()
frrank.park()
