# SPDX-License-Identifier: GPL-3.0-or-later
# A rank that leaves processes around, as real training does: a worker child (like a DataLoader
# worker) and a grandchild that detached into its own session (setsid). It prints their pids and
# waits to be stopped.
import os, subprocess, sys, time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
detached = subprocess.Popen(["sleep", "600"], start_new_session=True)
print(f"ready rank={os.environ.get('RANK')} child={child.pid} detached={detached.pid} pid={os.getpid()}", flush=True)
time.sleep(600)
