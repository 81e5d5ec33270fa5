# SPDX-License-Identifier: GPL-3.0-or-later
"""Fills a runs folder with N run records (issue 44, "A thousand runs"), made from real ones.

A few real runs are launched first (rankdeck-cli launch --exec, in the XDG tree the caller's
environment names): one that finishes, one whose rank crashes (a failure report) and one that
prints for a few seconds (logs of several MB). Each of the N records is a copy of one of them
with its own id, name and start time in run.json and state.json (and its ranks' times shifted
alike), so that `runs`, the run list and prune see N distinct runs of the past months. Every
LARGE_EVERY-th record is the chatty one. Files of 1 MiB and more are hard links to the
template's by default (--copy copies them too): what the listing costs is the records' number
of files and their small JSON files, and a thousand copies of the big logs would only fill the
disk.

  python3 bench/make_runs.py [--count N] [--copy]     (RANKDECK_BUILD_DIR, XDG_* from the env)
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LARGE_EVERY = 100
FAILED_EVERY = 7
LINK_FROM_BYTES = 1 << 20
NAMES = ("mlp-lr0.01", "mlp-lr0.1", "resnet18-bs256", "gpt-small-warmup", "linear-baseline",
         "vit-tiny-aug", "bert-base-ft", "ddp-sweep-a", "ddp-sweep-b", "llama-1b-ckpt")


def runs_dir(env):
    return Path(env["XDG_DATA_HOME"]) / "rankdeck" / "runs"


def launch(bin_dir, python, env, name, script, *args):
    """One real run; returns its record folder."""
    before = set(runs_dir(env).glob("*")) if runs_dir(env).exists() else set()
    cmd = [str(bin_dir / "rankdeck-cli"), "launch", "--profile", "local", "--nproc-per-node",
           "2", "--name", name, "--quiet", "--no-progress", "--exec", "--", python,
           str(ROOT / "bench/launch" / script), *args]
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=300)
    made = sorted(set(runs_dir(env).glob("*")) - before)
    if len(made) != 1 or not (made[0] / "state.json").exists():
        raise RuntimeError(f"launch of {script} left {len(made)} new records: {' '.join(cmd)}")
    return made[0]


def real_templates(bin_dir, python, env):
    """(finished, failed, chatty) real records, launched here."""
    return (launch(bin_dir, python, env, "template-finished", "ddp_linear.py", "20"),
            launch(bin_dir, python, env, "template-failed", "crash_now.py", "1"),
            launch(bin_dir, python, env, "template-chatty", "print_fast.py", "2"))


def shift_times(value, delta):
    """Every "*_us" time in a state.json (the run's and its ranks'), moved by delta µs."""
    if isinstance(value, dict):
        return {k: (v + delta if k.endswith("_us") and isinstance(v, int) and v > 0 and
                    k != "measured_us" and k != "offset_us" and k != "rtt_us"
                    else shift_times(v, delta)) for k, v in value.items()}
    if isinstance(value, list):
        return [shift_times(v, delta) for v in value]
    return value


def copy_record(template, target, run_id, name, created_us, link_big):
    def place(src, dst):
        if link_big and os.path.getsize(src) >= LINK_FROM_BYTES:
            os.link(src, dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(template, target, copy_function=place)
    run = json.loads((template / "run.json").read_text())
    delta = created_us - run["created_us"]
    run.update(id=run_id, name=name, created_us=created_us)
    run.setdefault("config", {})["name"] = name
    (target / "run.json").write_text(json.dumps(run, indent=4, sort_keys=True) + "\n")
    state = shift_times(json.loads((template / "state.json").read_text()), delta)
    state.update(id=run_id, name=name)
    (target / "state.json").write_text(json.dumps(state, indent=4, sort_keys=True) + "\n")



def make(count, env, bin_dir, python, link_big=True, seed=44):
    """Launches the templates, then writes `count` records beside them (the templates are then
    removed). Returns (runs folder, seconds it took, how many records are large)."""
    t0 = time.perf_counter()
    finished, failed, chatty = real_templates(bin_dir, python, env)
    rng = random.Random(seed)
    now_us = int(time.time() * 1e6)
    # Distinct start times over the last ~half year, one every few hours, newest last.
    starts = sorted(now_us - rng.randrange(3600, 180 * 86400) * 1_000_000 for _ in range(count))
    large = 0
    for i, created_us in enumerate(starts):
        if i % LARGE_EVERY == LARGE_EVERY - 1:
            template, large = chatty, large + 1
        else:
            template = failed if i % FAILED_EVERY == 3 else finished
        name = f"{NAMES[i % len(NAMES)]}-{i}"
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created_us / 1e6))
        run_id = f"{stamp}-{name}-{rng.randrange(1 << 16):04x}"
        copy_record(template, runs_dir(env) / run_id, run_id, name, created_us, link_big)
    for t in (finished, failed, chatty):
        shutil.rmtree(t)
    return runs_dir(env), time.perf_counter() - t0, large


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--copy", action="store_true", help="copy big files instead of linking them")
    ap.add_argument("--python", default=os.environ.get(
        "RANKDECK_TORCH_PYTHON", str(Path.home() / ".cache/rankdeck/torch-venv/bin/python")))
    args = ap.parse_args()
    if "XDG_DATA_HOME" not in os.environ:
        sys.exit("make_runs: set XDG_DATA_HOME (and XDG_CONFIG_HOME, XDG_CACHE_HOME) to a "
                 "throw-away tree: the records go to $XDG_DATA_HOME/rankdeck/runs")
    bin_dir = Path(os.environ.get("RANKDECK_BUILD_DIR", ROOT / "build")) / "bin"
    folder, seconds, large = make(args.count, dict(os.environ), bin_dir, args.python,
                                  link_big=not args.copy)
    print(f"{args.count} records ({large} large) in {folder} in {seconds:.1f} s")


if __name__ == "__main__":
    main()
