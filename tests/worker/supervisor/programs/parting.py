# SPDX-License-Identifier: GPL-3.0-or-later
# Ranks that part at a collective, for the flight-recorder tests (torch, Gloo, any world size).
# Every rank all-reduces a [21] float32 tensor STEPS times, then:
#   barrier   rank 0 enters barrier(), the others one more all_reduce (uneven data shards);
#   sleep     the last rank sleeps (never joins), the others enter one more all_reduce;
#   gil       the last rank waits in native code holding the GIL (system() through ctypes.PyDLL),
#             the others enter one more all_reduce: that rank cannot answer a flight-recorder
#             request;
#   subgroup  ranks 0 and 1 all_reduce on a new_group([0, 1]) subgroup, except that rank 1
#             enters barrier() there instead;
#   none      no process group at all: sleeps, "ready" printed.
# Each rank prints "parting <rank>" just before its parting call, then blocks until stopped.
import ctypes
import datetime
import os
import sys
import time

mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
if mode == "none":
    print("parting 0", flush=True)
    time.sleep(600)
    sys.exit(0)

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
rank = dist.get_rank()
last = dist.get_world_size() - 1
t = torch.ones(21)
for _ in range(steps):
    dist.all_reduce(t)
sub = dist.new_group([0, 1]) if mode == "subgroup" else None
if mode != "gil" or rank != last:
    print("parting %d" % rank, flush=True)
if mode == "barrier":
    if rank == 0:
        dist.barrier()
    else:
        dist.all_reduce(t)
elif mode in ("sleep", "gil"):
    if rank != last:
        dist.all_reduce(t)
    elif mode == "sleep":
        time.sleep(600)
    else:
        # The GIL stays held in system() (ctypes.PyDLL does not release it): "parting" comes
        # from the shell inside the call, so the hook's thread cannot run once it is printed.
        ctypes.PyDLL(None).system(b"echo parting %d; exec sleep 600" % rank)
elif mode == "subgroup":
    if rank == 1:
        dist.barrier(group=sub)
    elif rank == 0:
        dist.all_reduce(t, group=sub)
    else:
        time.sleep(600)
time.sleep(600)
