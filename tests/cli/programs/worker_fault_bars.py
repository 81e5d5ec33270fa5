# SPDX-License-Identifier: GPL-3.0-or-later
# A DataLoader worker's Dataset segfaults while the rank redraws a progress bar on the same
# stderr as fast as it can (as tqdm and Lightning's bar do, "\r" and no newline), for the test
# that the worker's crash dump reaches the record whole (issue 42): faulthandler writes its dump
# a few bytes at a time, so a dump written to the shared stderr was spliced with the bar.
#   python worker_fault_bars.py WORKERS
import ctypes
import sys
import threading

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2


class Shards(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        info = get_worker_info()
        if index == 37 and info is not None:
            ctypes.string_at(0)  # FAULT: worker
        return torch.full((4,), float(index))


def redraw():
    step = 0
    while True:
        sys.stderr.write("\rEpoch 0: %3d%%|%s| %d/64" % (step % 100, "#" * (step % 40), step % 64))
        step += 1


threading.Thread(target=redraw, daemon=True).start()
for batch in DataLoader(Shards(), batch_size=4, num_workers=workers):
    print("batch", int(batch[0][0]), flush=True)
