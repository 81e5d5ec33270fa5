# SPDX-License-Identifier: GPL-3.0-or-later
"""A rank of a user's program that dies of a segfault (through ctypes) right after printing the
wall-clock time of the fault; the other ranks sleep. bench/run measures from that time to the
launcher's "rank R failed". Usage: crash_now.py [CRASHING_RANK]"""
import ctypes
import os
import sys
import time

crashing = int(sys.argv[1]) if len(sys.argv) > 1 else 1
if int(os.environ.get("RANK", "0")) == crashing:
    time.sleep(0.5)  # let the launcher settle: the measure is the crash path, not the start
    print(f"fault at {time.time():.6f}", flush=True)
    ctypes.string_at(0)
time.sleep(60)
