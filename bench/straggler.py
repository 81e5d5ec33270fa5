# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/run --only straggler (issue 43, "why is the job slow"): 4 local ranks of an unmodified
DDP script (tests/cli/programs/slow_rank.py) under `rankdeck-cli launch --exec`.

  straggler_cause_s               from the moment rank 2's Dataset starts burning CPU (the script
                                  writes the wall time, 20 s into a healthy run) until
                                  `show --why-slow` names rank 2, input-bound, at
                                  Samples.__getitem__ (polled every 0.5 s); median of the runs
  sampling_overhead_pct           what sampling costs a rank: the sampling thread's CPU time as a
                                  share of the rank process's CPU time (both from the kernel's
                                  accounting, which resolves far below 1 %), the median over the
                                  ranks of a healthy run, as `show --why-slow` prints it
  straggler_false_positive_runs   healthy 4-rank runs (10 of 60 s; --quick: 3 of 30 s) in which
                                  any `show --why-slow` (every 2 s) named a straggler
"""
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def launch(cli, python, script, env, name, script_args):
    cmd = [str(cli), "launch", "--profile", "local", "--nproc-per-node", "4", "--name", name,
           "--no-progress", "--quiet", "--exec", "--", python, str(script)] + script_args
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def why_slow(cli, env, name):
    out = subprocess.run([str(cli), "show", name, "--why-slow"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="replace", timeout=60)
    return out.stdout


def stop(cli, env, name, proc):
    subprocess.run([str(cli), "stop", name], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cause_run(cli, python, script, env, name, mark):
    proc = launch(cli, python, script, env, name,
                  ["--cause", "input", "--slow-rank", "2", "--slow-after", "20", "--seconds",
                   "200", "--mark", str(mark)])
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.5)
            text = why_slow(cli, env, name)
            if ("rank 2 (" in text and "is the straggler, input-bound" in text and
                    "Samples.__getitem__" in text and mark.exists()):
                return time.time() - float(mark.read_text())
        raise RuntimeError(f"{name}: rank 2 was not named within 240 s:\n{text[-1500:]}")
    finally:
        stop(cli, env, name, proc)


def healthy_run(cli, python, script, env, name, seconds):
    """(named a straggler?, the sampling shares of its ranks in %)"""
    proc = launch(cli, python, script, env, name, ["--cause", "none", "--seconds", str(seconds)])
    named, shares, text = False, [], ""
    try:
        while proc.poll() is None:
            time.sleep(2)
            text = why_slow(cli, env, name)
            named = named or "is the straggler" in text
            got = [float(v) for v in re.findall(r"sampling ([0-9.]+) % of its CPU", text)]
            if len(got) == 4:
                shares = got
    finally:
        stop(cli, env, name, proc)
    return named, shares


def bench(reps, quick, root, bin_dir, python, isolated_env):
    cli = bin_dir / "rankdeck-cli"
    script = root / "tests" / "cli" / "programs" / "slow_rank.py"
    env, tmp = isolated_env()
    try:
        causes = []
        for i in range(1 if quick else reps):
            causes.append(cause_run(cli, python, script, env, f"cause{i}", Path(tmp) / f"mark{i}"))
        healthy = 3 if quick else 10
        seconds = 30 if quick else 60
        named, shares = 0, []
        for i in range(healthy):
            n, s = healthy_run(cli, python, script, env, f"healthy{i}", seconds)
            named += int(n)
            shares += s
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not shares:
        raise RuntimeError("no `sampling … % of its CPU` in show --why-slow of a healthy run")
    cause_s = statistics.median(causes)
    overhead = statistics.median(shares)
    return ({"straggler_cause_s": cause_s, "straggler_cause_s_runs": causes,
             "sampling_overhead_pct": overhead, "sampling_overhead_pct_runs": shares,
             "straggler_false_positive_runs": float(named)},
            f"rank 2 named input-bound at Samples.__getitem__ {cause_s:.1f} s after its slowdown "
            f"(median of {len(causes)}: {', '.join(f'{c:.1f}' for c in causes)}); sampling "
            f"costs {overhead:.2f} % of a rank's CPU (median of {len(shares)} rank-runs, max "
            f"{max(shares):.2f}); {named} of {healthy} healthy runs of {seconds} s named a "
            f"straggler")
