# SPDX-License-Identifier: GPL-3.0-or-later
# A user's DDP/Gloo program whose ranks part at a collective, for the collective-verdict tests
# (issue 26). Usage: collectives.py MODE [STEPS]. Every rank first all-reduces a [21] float32
# tensor STEPS times (default 3), printing "step <i> rank <r>" after each, then:
#   sleep     the last rank prints "sleeping" and sleeps; the others enter one more all_reduce
#             (a rank that never reaches a collective, e.g. stuck in I/O);
#   uneven    DDP over nn.Linear(20, 1) with uneven data shards: rank 1 has one batch more, so
#             at the end of the epoch rank 0 enters barrier() while rank 1 waits in DDP's
#             gradient all_reduce (21 floats) of the same collective number;
#   size      rank 2 all-reduces 264 floats where the others give 256: Gloo aborts a peer of
#             rank 2 ("Received data size doesn't match expected size"); the ranks that survive
#             catch their error, print it and stay (as a program that cleans up would);
#   subgroup  ranks 0 and 1 form new_group([0, 1]); rank 0 all-reduces on it, rank 1 enters
#             barrier() on it instead; the other ranks sleep;
#   gil       like sleep, but the last rank holds the GIL in native code (system() through
#             ctypes.PyDLL), so its flight recorder cannot be dumped;
#   garbage   like sleep, but rank 1's dump is garbage: its torch JSON dump function is replaced
#             by one that returns JSON of the wrong shape;
#   p2p       rank 0 sends 2 micro-batches to rank 1 and sleeps; rank 1 receives 3 (Gloo's
#             flight recorder records no send or recv: only the stacks show it);
#   batch     batch_isend_irecv with a missing peer op: rank 0 posts a send to and a receive
#             from rank 1 and waits on both; rank 1 posts only its send, then sleeps.
# Each rank prints "parting <rank>" just before its parting call, then blocks until stopped.
import ctypes
import datetime
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist

mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
rank = dist.get_rank()
last = dist.get_world_size() - 1

if mode == "garbage" and rank == 1:
    import torch._C._distributed_c10d as c10d

    c10d._dump_fr_trace_json = lambda *args: '{"version": "2.10", "entries": "garbage"}'

if mode == "uneven":
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(20, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = steps + rank
    for i in range(batches):
        if i == batches - 1 and rank == 1:
            print("parting %d" % rank, flush=True)
        loss = model(torch.randn(8, 20)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d rank %d loss=%.4f" % (i, rank, loss.item()), flush=True)
    print("parting %d" % rank, flush=True)
    dist.barrier()
    time.sleep(3600)
    sys.exit(0)

t = torch.ones(21)
for i in range(steps):
    dist.all_reduce(t)
    print("step %d rank %d" % (i, rank), flush=True)
sub = dist.new_group([0, 1]) if mode == "subgroup" else None

if mode in ("sleep", "garbage"):
    print("parting %d" % rank, flush=True)
    if rank == last:
        print("sleeping", flush=True)
        time.sleep(3600)
    dist.all_reduce(t)
elif mode == "gil":
    if rank == last:
        # "parting" comes from the shell inside the call: once it is printed, the GIL is held.
        ctypes.PyDLL(None).system(b"echo parting %d; exec sleep 3600" % rank)
    else:
        print("parting %d" % rank, flush=True)
        dist.all_reduce(t)
elif mode == "size":
    print("parting %d" % rank, flush=True)
    try:
        dist.all_reduce(torch.ones(264 if rank == 2 else 256))
        print("all_reduce returned", flush=True)
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
elif mode == "p2p":
    if rank == 0:
        for micro in range(2):
            dist.send(torch.full((21,), float(micro)), dst=1)
        print("parting %d" % rank, flush=True)
        time.sleep(3600)
    elif rank == 1:
        print("parting %d" % rank, flush=True)
        for micro in range(3):
            dist.recv(t, src=0)
elif mode == "batch":
    if rank <= 1:
        peer = 1 - rank
        ops = [dist.P2POp(dist.isend, torch.full((21,), float(rank)), peer)]
        if rank == 0:
            ops.append(dist.P2POp(dist.irecv, t, peer))
        requests = dist.batch_isend_irecv(ops)
        print("parting %d" % rank, flush=True)
        if rank == 0:
            for request in requests:
                request.wait()
elif mode == "subgroup":
    print("parting %d" % rank, flush=True)
    if rank == 0:
        dist.all_reduce(t, group=sub)
    elif rank == 1:
        dist.barrier(group=sub)
time.sleep(3600)
