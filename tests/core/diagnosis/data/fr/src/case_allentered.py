# SPDX-License-Identifier: GPL-3.0-or-later
# (e) All entered, none completed, 4 ranks. Gloo on one machine does not stall on its own, so
# rank 3 stops itself: its helper thread polls its own flight recorder until the big all_reduce
# is enqueued, saves its dump at once (entered, not completed) and sends itself SIGSTOP, as a
# stalled link would stall it. The other ranks wait inside the same all_reduce for its data.
import os
import signal
import threading
import time
import json

import torch
import torch.distributed as dist

import frrank

frrank.init(dumper=frrank.RANK != 3)
t = torch.ones(8)
for step in range(3):
    dist.all_reduce(t)
target = 4


def stop_inside():
    while True:
        status = json.loads(torch._C._distributed_c10d._dump_fr_trace_json(True, False))
        if int(status["pg_status"]["0"]["last_enqueued_collective"]) >= target:
            break
        time.sleep(0.001)
    frrank.dump_now()
    os.kill(os.getpid(), signal.SIGSTOP)


if frrank.RANK == 3:
    threading.Thread(target=stop_inside, daemon=True).start()
big = torch.ones(32 * 1024 * 1024)
frrank.ready()
dist.all_reduce(big)
frrank.park()
