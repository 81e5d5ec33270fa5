# SPDX-License-Identifier: GPL-3.0-or-later
# What every case's rank shares: joining the Gloo group, and a helper thread that, when the
# launcher creates the trigger file, saves this rank's flight-recorder JSON (torch's own
# _dump_fr_trace_json(True, False)) and a faulthandler dump of all threads, the way RankDeck's
# hook will collect them from a live rank whose main thread is blocked.
import faulthandler
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
OUT = os.environ["FR_OUT"]


def path(suffix):
    return os.path.join(OUT, "rank_%d%s" % (RANK, suffix))


def write(suffix, data):
    # The JSON is kept byte for byte as torch returned it (bytes).
    with open(path(suffix) + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path(suffix) + ".tmp", path(suffix))


def dump_now():
    # Main thread still blocked: _dump_fr_trace_json releases nothing it needs.
    write(".json", torch._C._distributed_c10d._dump_fr_trace_json(True, False))
    with open(path(".stack.txt"), "w") as f:
        faulthandler.dump_traceback(f, all_threads=True)
    write(".done", b"")


def _wait_for_trigger():
    while not os.path.exists(os.path.join(OUT, "trigger")):
        time.sleep(0.02)
    dump_now()


def init(dumper=True):
    dist.init_process_group("gloo", init_method=os.environ["FR_INIT"], rank=RANK,
                            world_size=WORLD)
    if dumper:
        threading.Thread(target=_wait_for_trigger, daemon=True).start()


def ready():
    """Called just before the rank blocks: the launcher triggers the dumps once all are ready."""
    write(".ready", b"")


def park():
    """Stay alive (as a rank waiting in its own code) until the launcher ends the case."""
    ready()
    while True:
        time.sleep(60)
