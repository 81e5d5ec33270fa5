# SPDX-License-Identifier: GPL-3.0-or-later
"""Prints numbered lines as fast as it can for SECONDS, then how many it printed: bench/run
checks that the run record holds every one of them. Usage: print_fast.py SECONDS"""
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
out = sys.stdout
end = time.monotonic() + seconds
n = 0
while True:
    for _ in range(1000):
        out.write(f"line {n} of the output benchmark\n")
        n += 1
    if time.monotonic() >= end:
        break
out.flush()
print(f"printed {n} lines", flush=True)
