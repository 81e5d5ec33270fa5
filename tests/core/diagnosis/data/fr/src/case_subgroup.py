# SPDX-License-Identifier: GPL-3.0-or-later
# (d) A subgroup collective: group [0, 2] all_reduces twice; rank 2 sleeps before the second, so
# rank 0 waits in it. Ranks 1 and 3 (not in the group) wait in their own code.
import time

import torch
import torch.distributed as dist

import frrank

frrank.init()
t = torch.ones(16)
dist.all_reduce(t)
pair = dist.new_group([0, 2])
if frrank.RANK in (0, 2):
    dist.all_reduce(t, group=pair)
frrank.ready()
if frrank.RANK == 0:
    dist.all_reduce(t, group=pair)
elif frrank.RANK == 2:
    time.sleep(3600)
else:
    frrank.park()
