# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a launch's time goes: rankdeck-cli launch --exec of bench/launch/ddp_timeline.py on 2
local ranks, cold and (with --warm) warm, against torchrun. Each rank prints its timeline; this
prints, per phase, the median over the repetitions of the slowest rank's time since the launcher
was spawned (ms).

    python bench/launch/breakdown.py [--reps 5] [--warm] [--torchrun]
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BIN = Path(os.environ.get("RANKDECK_BUILD_DIR", ROOT / "build")) / "bin"
PY = str(Path(sys.executable).parent / "python")
SCRIPT = str(ROOT / "bench/launch/ddp_timeline.py")
# torchrun's ranks share one pipe without a prefix: a line may run into the next one.
RX = re.compile(r"timeline rank=(\d+) parent=(\d+\.\d{3}) process=(\d+\.\d{3}) main=(\d+\.\d{6}) "
                r"torch=(\d+\.\d{6}) pg=(\d+\.\d{6}) step=(\d+\.\d{6})")
PHASES = ("parent", "process", "main", "torch", "pg", "step")
LABELS = {"parent": "the rank's parent started (supervisor; torchrun's agent; warm: the spare, "
                     "forked before the launch)",
          "process": "rank process started (exec, or fork from the warm server)",
          "main": "first line of the script ran (interpreter up)",
          "torch": "import torch done",
          "pg": "init_process_group done",
          "step": "first step done"}


def once(cmd, env):
    t0 = time.time()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=300).stdout
    ranks = {}
    for m in RX.finditer(out):
        ranks[int(m.group(1))] = [float(x) for x in m.groups()[1:]]
    if len(ranks) != 2:
        raise RuntimeError("no timeline from every rank:\n" + out[-2000:])
    return {p: max(r[i] for r in ranks.values()) - t0 for i, p in enumerate(PHASES)}, out


def report(name, runs):
    print(f"{name} (median of {len(runs)}, ms since the launcher was spawned):")
    for p in PHASES:
        print(f"  {statistics.median(r[p] for r in runs) * 1000:7.0f}  {LABELS[p]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("--torchrun", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rankdeck-breakdown-"))
    (tmp / "runtime").mkdir(mode=0o700)
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp / "config"), XDG_DATA_HOME=str(tmp / "data"),
               XDG_CACHE_HOME=str(tmp / "cache"), XDG_RUNTIME_DIR=str(tmp / "runtime"),
               OMP_NUM_THREADS="1")
    rd = [str(BIN / "rankdeck-cli"), "launch", "--profile", "local", "--nproc-per-node", "2",
          "--name", "breakdown", "--no-progress", "--exec"]
    try:
        report("rankdeck-cli --exec, cold",
               [once(rd + ["--", PY, SCRIPT], env)[0] for _ in range(args.reps)])
        if args.warm:
            out = once(rd + ["--warm", "--", PY, SCRIPT], env)[1]
            if "starting the warm Python server" not in out:
                raise RuntimeError("the first --warm launch did not start the server:\n" + out)
            deadline = time.time() + 60
            while not glob.glob(str(tmp / "runtime/rankdeck-warm/*.sock")):
                if time.time() > deadline:
                    raise RuntimeError("the warm server did not come up")
                time.sleep(0.1)
            report("rankdeck-cli --exec --warm",
                   [once(rd + ["--warm", "--", PY, SCRIPT], env)[0] for _ in range(args.reps)])
        if args.torchrun:
            tr = [str(Path(PY).parent / "torchrun"), "--nproc-per-node", "2", "--master-addr",
                  "127.0.0.1", "--master-port", "29533", SCRIPT]
            report("torchrun", [once(tr, env)[0] for _ in range(args.reps)])
    finally:
        for pidfile in glob.glob(str(tmp / "runtime/rankdeck-warm/*.pid")):
            try:
                os.kill(int(Path(pidfile).read_text()), 15)
            except (OSError, ValueError):
                pass
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
