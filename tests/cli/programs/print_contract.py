# SPDX-License-Identifier: GPL-3.0-or-later
# Prints what a rank was started with: torchrun's environment contract, argv, the first entry
# of sys.path, __file__, and its parent's command line (rankdeck-supervisor when cold, the warm
# server when warm). Then it joins the other ranks through the store (Gloo), as DDP would.
import os
import sys

import torch.distributed as dist

with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
    parent = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
        "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "PYTHONUNBUFFERED")
print("contract " + " ".join("%s=%s" % (k, os.environ.get(k, "")) for k in keys))
print("argv=%r path0=%s file=%s main=%s" % (sys.argv, sys.path[0], __file__, __name__))
print("parent=" + parent)
dist.init_process_group("gloo")
print("joined rank=%d world=%d" % (dist.get_rank(), dist.get_world_size()))
dist.destroy_process_group()
