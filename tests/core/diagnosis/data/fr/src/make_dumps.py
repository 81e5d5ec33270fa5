#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs one case (case_<name>.py) as N local Gloo ranks (TORCH_FR_BUFFER_SIZE=2000 unless set) and keeps each rank's flight-recorder
# JSON, faulthandler dump, output and exit in ../<name>/:
#     ~/.cache/rankdeck/torch-venv/bin/python make_dumps.py NAME RANKS [OUTNAME]
# Dumps are triggered 1.5 s after every rank said it is about to block (or exited), then every
# rank still running is killed with SIGKILL.
import glob
import os
import signal
import socket
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
name, world = sys.argv[1], int(sys.argv[2])
out = os.path.join(here, "..", sys.argv[3] if len(sys.argv) > 3 else name)
os.makedirs(out, exist_ok=True)
for f in glob.glob(os.path.join(out, "*")):
    os.remove(f)

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]

procs = []
for r in range(world):
    env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world), FR_OUT=out,
               FR_INIT="tcp://127.0.0.1:%d" % port,
               TORCH_FR_BUFFER_SIZE=os.environ.get("TORCH_FR_BUFFER_SIZE", "2000"),
               PYTHONPATH=here, PYTHONUNBUFFERED="1")
    log = open(os.path.join(out, "rank_%d.log" % r), "w")
    procs.append(subprocess.Popen([sys.executable, "case_%s.py" % name], cwd=here, env=env,
                                  stdout=log, stderr=subprocess.STDOUT))


def exists(r, suffix):
    return os.path.exists(os.path.join(out, "rank_%d%s" % (r, suffix)))


deadline = time.time() + 120
while time.time() < deadline and not all(exists(r, ".ready") or procs[r].poll() is not None
                                         for r in range(world)):
    time.sleep(0.05)
time.sleep(1.5)
open(os.path.join(out, "trigger"), "w").close()
deadline = time.time() + 20
while time.time() < deadline and not all(exists(r, ".done") or procs[r].poll() is not None
                                         for r in range(world)):
    time.sleep(0.05)

summary = []
for r, p in enumerate(procs):
    code = p.poll()
    if code is None:
        p.send_signal(signal.SIGKILL)
        p.wait()
        how = "alive when dumped, then SIGKILLed"
    elif code < 0:
        how = "died of %s before the dump" % signal.Signals(-code).name
    else:
        how = "exited with %d before the dump" % code
    summary.append("rank %d: %s; dump: %s" % (r, how, "yes" if exists(r, ".json") else "no"))
for f in glob.glob(os.path.join(out, "*.ready")) + glob.glob(os.path.join(out, "*.done")) + \
        glob.glob(os.path.join(out, "*.tmp")) + \
        [os.path.join(out, "trigger")]:
    if os.path.exists(f):
        os.remove(f)
with open(os.path.join(out, "ranks.txt"), "w") as f:
    f.write("\n".join(summary) + "\n")
print("\n".join(summary))
