# SPDX-License-Identifier: GPL-3.0-or-later
# (g) Point-to-point: 3 all_reduces, then rank 0 sends 2 micro-batches while rank 1 receives 3.
# Gloo records no send or recv, so both dumps end at all_reduce #3, completed; only the stacks
# say that rank 1 waits in recv from rank 0 and that rank 0 is asleep after its sends.
import time

import torch
import torch.distributed as dist

import frrank

frrank.init()
t = torch.ones(4)
for step in range(3):
    dist.all_reduce(t)
if frrank.RANK == 0:
    for micro in range(2):
        dist.send(torch.full((4,), float(micro)), dst=1)
    frrank.ready()
    time.sleep(3600)
else:
    frrank.ready()
    for micro in range(3):
        dist.recv(t, src=0)
