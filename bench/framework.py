# SPDX-License-Identifier: GPL-3.0-or-later
"""framework_wall_ratio_vs_torchrun (issue 27): a Lightning script's whole wall time under
`rankdeck-cli launch --exec` ÷ under torchrun, 2 local ranks, medians.

The script is the one tst_frameworks runs (tests/cli/programs/frameworks/lightning_module.py:
Trainer(strategy="ddp") on CPU, a TQDMProgressBar, a TensorBoardLogger, a callback that prints
every batch's loss; 2 epochs of 8 steps a rank). Wall time is from spawning the launcher until
it exits, so it holds both launchers' own start-up, the ranks' imports, the training and the
end. Neither launcher is given OMP_NUM_THREADS: each sets it to 1 for its 2 ranks itself, as a
user meets it. The two alternate, each in a fresh working directory; a run counts only when both
ranks printed their last line ("rank R done").
"""
import shutil
import statistics
import subprocess
import time
from pathlib import Path


def _one(cmd, env, work, timeout=600):
    work.mkdir(parents=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
    wall = time.perf_counter() - t0
    for rank in (0, 1):
        printed = work / f"printed-rank{rank}.txt"
        if not printed.exists() or f"rank {rank} done" not in printed.read_text():
            raise RuntimeError(f"rank {rank} did not finish under {cmd[0]} (exit "
                               f"{proc.returncode}): {proc.stdout[-600:]}")
    return wall, proc.returncode


def bench(reps, root, bin_dir, venv_bin, isolated_env, free_port):
    env, tmp = isolated_env()
    env.pop("OMP_NUM_THREADS", None)
    py = str(venv_bin / "python")
    script = str(root / "tests/cli/programs/frameworks/lightning_module.py")
    ours, theirs, codes = [], [], []
    for rep in range(reps):
        rd = [str(bin_dir / "rankdeck-cli"), "launch", "--profile", "local", "--nproc-per-node",
              "2", "--name", "bench-framework", "--quiet", "--no-progress", "--exec", "--", py,
              script]
        tr = [str(venv_bin / "torchrun"), "--nproc-per-node", "2", "--master-addr",
              "127.0.0.1", "--master-port", str(free_port()), script]
        # Alternating which goes first, so that neither always meets a warmer page cache.
        order = [("ours", rd), ("theirs", tr)] if rep % 2 == 0 else [("theirs", tr), ("ours", rd)]
        for who, cmd in order:
            wall, code = _one(cmd, env, Path(tmp) / f"work-{rep}-{who}")
            (ours if who == "ours" else theirs).append(wall)
            if code != 0:
                codes.append(f"{who} rep {rep}: exit {code}")
    shutil.rmtree(tmp, ignore_errors=True)
    o, t = statistics.median(ours), statistics.median(theirs)
    detail = (f"Lightning DDP script, 2 local ranks: rankdeck-cli --exec {o:.2f} s vs torchrun "
              f"{t:.2f} s (medians of {reps}; rankdeck {', '.join(f'{x:.2f}' for x in ours)}; "
              f"torchrun {', '.join(f'{x:.2f}' for x in theirs)})")
    if codes:
        detail += "; finished training but exited non-zero: " + ", ".join(codes)
    return ({"framework_wall_ratio_vs_torchrun": o / t,
             "framework_wall_ratio_vs_torchrun_runs": [a / b for a, b in zip(ours, theirs)]},
            detail)
