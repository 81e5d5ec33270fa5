# SPDX-License-Identifier: GPL-3.0-or-later
# (a) Missing rank: 4 ranks; rank 3 sleeps (stands for I/O) before the all_reduce the others wait in.
import time

import torch
import torch.distributed as dist

import frrank

frrank.init()
t = torch.ones(8)
for step in range(5):
    dist.all_reduce(t)
frrank.ready()
if frrank.RANK == 3:
    time.sleep(3600)
dist.all_reduce(t)
