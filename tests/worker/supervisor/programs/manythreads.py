# SPDX-License-Identifier: GPL-3.0-or-later
# Load for the tracing overhead check: starts and joins many threads and prints many lines
# (every thread start is a ptrace clone event; printing makes no stops at all).
import sys
import threading

threads = int(sys.argv[1])
lines = int(sys.argv[2])
for start in range(0, threads, 50):
    batch = [threading.Thread(target=lambda: None) for _ in range(min(50, threads - start))]
    for t in batch:
        t.start()
    for t in batch:
        t.join()
out = sys.stdout
for i in range(lines):
    out.write("line %d of the overhead check\n" % i)
