#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 27, defect 11: how often torch aborts a rank of PyTorch's DDP tutorial script at exit
("terminate called without an active exception", SIGABRT in pt_gloo_runloop), under
rankdeck-cli and under torchrun, the same script on 2 local CPU ranks, the two launchers
alternating (which goes first alternates too, so that neither always runs after the other).

    bench/abort/count_exit_aborts.py --runs 200 --out results.jsonl [--build build]

Each run is a line of results.jsonl (launcher, exit code, seconds, whether the abort was seen,
the last lines when it was); a later call with the same --out goes on from there, so a long count
can be made in parts. The summary at the end counts every line of the file.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "ddp_tutorial.py")
ABORT = "terminate called without an active exception"


def counted(path):
    runs = []
    if os.path.exists(path):
        with open(path) as f:
            runs = [json.loads(line) for line in f if line.strip()]
    return runs


def command(launcher, args, python):
    program = [python, SCRIPT, "10", "5"]
    if launcher == "torchrun":
        # torchrun runs the script with its own interpreter (the venv's).
        return [os.path.join(os.path.dirname(python), "torchrun"), "--standalone",
                "--nproc-per-node", "2"] + program[1:]
    cli = os.path.join(args.bin, "rankdeck-cli")
    return [cli, "launch", "--profile", "local", "--nproc-per-node", "2", "--quiet",
            "--no-progress", "--name", "abortcount", "--exec", "--"] + program


def run_once(launcher, args, python, home):
    work = tempfile.mkdtemp(prefix="abort-", dir=home)
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(home, "data"),
               XDG_STATE_HOME=os.path.join(home, "state"))
    start = time.monotonic()
    try:
        p = subprocess.run(command(launcher, args, python), cwd=work, env=env, timeout=600,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        out, code = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, code = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or ""), "timeout"
    seconds = time.monotonic() - start
    # RankDeck keeps each rank's output in its record, not on the terminal: read it there.
    records = os.path.join(home, "data", "rankdeck", "runs")
    text = out
    if launcher == "rankdeck" and os.path.isdir(records):
        for run in os.listdir(records):
            for name in ("rank-0.log", "rank-1.log"):
                try:
                    with open(os.path.join(records, run, name), errors="replace") as f:
                        text += f.read()
                except OSError:
                    pass
    aborted = ABORT in text
    result = {"launcher": launcher, "exit": code, "seconds": round(seconds, 1),
              "aborted": aborted}
    if aborted or code != 0:
        lines = text.splitlines()
        result["errors"] = [line for line in lines if "Error" in line][:10]
        result["tail"] = lines[-25:]
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(records, ignore_errors=True)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200, help="runs of each launcher in all")
    parser.add_argument("--out", required=True)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    parser.add_argument("--python", default=os.environ.get(
        "RANKDECK_TORCH_PYTHON", os.path.expanduser("~/.cache/rankdeck/torch-venv/bin/python")))
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="abort-count-")
    # A copy of the binaries: a rebuild while the count runs (it takes hours) must not swap them.
    args.bin = os.path.join(home, "bin")
    shutil.copytree(os.path.join(args.build, "bin"), args.bin)
    runs = counted(args.out)
    done = {"rankdeck": 0, "torchrun": 0}
    for r in runs:
        done[r["launcher"]] += 1
    try:
        while min(done.values()) < args.runs:
            i = min(done.values())
            order = ["rankdeck", "torchrun"] if i % 2 == 0 else ["torchrun", "rankdeck"]
            for launcher in order:
                if done[launcher] >= args.runs:
                    continue
                r = run_once(launcher, args, args.python, home)
                with open(args.out, "a") as f:
                    f.write(json.dumps(r) + "\n")
                done[launcher] += 1
                runs.append(r)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    for launcher in ("rankdeck", "torchrun"):
        mine = [r for r in runs if r["launcher"] == launcher]
        aborted = sum(1 for r in mine if r["aborted"])
        failed = sum(1 for r in mine if r["exit"] != 0)
        seconds = sorted(r["seconds"] for r in mine)
        median = seconds[len(seconds) // 2] if seconds else 0
        print(f"{launcher}: {len(mine)} runs, {aborted} aborted at exit, {failed} non-zero exits, "
              f"median {median} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
