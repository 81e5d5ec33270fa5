import os, sys, time, torch, torch.distributed as dist
rank = int(sys.argv[1])
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533", rank=rank, world_size=2)
t = torch.ones(4)
dist.all_reduce(t)
if rank == 1:
    os._exit(3)
time.sleep(0.5)
dist.all_reduce(t)
# SPDX-License-Identifier: GPL-3.0-or-later
