# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/launch/ddp_linear.py with a timeline: each rank prints when its supervisor (parent)
and its own process started, when its first line ran, and when the torch import,
init_process_group and the first step were done (wall clock, seconds). bench/launch/breakdown.py
subtracts the launcher's start from them."""
import os
import time

T_MAIN = time.time()


def _started(pid):
    # /proc/PID/stat field 22: start time in clock ticks after boot (CLOCK_BOOTTIME); the wall
    # time of the boot from that clock now (btime in /proc/stat is rounded to a second).
    with open("/proc/%d/stat" % pid) as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    return boot + ticks / os.sysconf("SC_CLK_TCK")


import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

T_TORCH = time.time()


def main():
    dist.init_process_group("gloo")
    t_pg = time.time()
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    opt.zero_grad()
    loss = model(torch.randn(20, 10)).sum()
    loss.backward()
    opt.step()
    t_step = time.time()
    print("timeline rank=%d parent=%.3f process=%.3f main=%.6f torch=%.6f pg=%.6f step=%.6f"
          % (rank, _started(os.getppid()), _started(os.getpid()), T_MAIN, T_TORCH, t_pg, t_step),
          flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
