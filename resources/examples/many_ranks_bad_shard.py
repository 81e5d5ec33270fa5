# SPDX-License-Identifier: GPL-3.0-or-later
# A many-rank job without torch, so that ~100 of them fit a laptop: each rank reads its shard
# and prints a progress line a few times a second ("epoch 0 step 12 loss 1.8342 shard 07"), as a
# training script does. Rank BAD_RANK hits a corrupt record in its shard and raises; ranks SLOW
# read a slow disk and fall behind. The screenshot tour launches 96 of them (`launch --exec`) to
# show the views that group alike ranks and pick out the few that differ (issue 31).
# Usage: many_ranks_bad_shard.py [BAD_RANK] [FAIL_STEP] [SLOW,RANKS]
import math
import os
import sys
import time

rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
bad_rank = int(sys.argv[1]) if len(sys.argv) > 1 else 17
fail_step = int(sys.argv[2]) if len(sys.argv) > 2 else 60
slow = {int(r) for r in sys.argv[3].split(",")} if len(sys.argv) > 3 else {40, 41}


def read_record(shard, step):
    if rank == bad_rank and step == fail_step:
        raise ValueError(f"shard {shard:02d}: corrupt record at offset {step * 4096} "
                         f"(checksum mismatch)")
    time.sleep(1.5 if rank in slow else 0.2)


def main():
    print(f"rank {rank} of {world}: reading shard {rank:02d}", flush=True)
    for step in range(1, 10_000):
        read_record(rank, step)
        loss = 2.0 * math.exp(-step / 60.0) + 0.02 * (rank % 5)
        print(f"epoch 0 step {step} loss {loss:.4f} shard {rank:02d}", flush=True)


if __name__ == "__main__":
    main()
