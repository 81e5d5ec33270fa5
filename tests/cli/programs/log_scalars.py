# SPDX-License-Identifier: GPL-3.0-or-later
# A program that reports metrics other than loss with one line of code per step.
import os
import rankdeck

rank = int(os.environ.get("RANK", "0"))
for step in range(6):
    rankdeck.log(step=step, acc=0.5 + 0.05 * step + rank, tokens_per_s=1000.0 * (step + 1))
    print(f"rank {rank} step {step} done", flush=True)
