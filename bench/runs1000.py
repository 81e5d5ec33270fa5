# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/run --only runs1000 (issue 44, "A thousand runs"): the app and the CLI on a runs folder
of 1,000 records that bench/make_runs.py makes from real ones (10 of them with logs of ~20 MB).

  runs1000_cli_runs_s   wall time of `rankdeck-cli runs` (every run, its state and its size)
  runs1000_gui_start_s  spawn of bench_runlist (the real MainWindow, offscreen) until its run
                        list shows its first screen of runs (bench/benchrunlist.cpp)

Each is the median of reps runs after one unmeasured run of each (so that the records are in
the page cache, as they are on a machine that used them); `runs --names` (shell completion) and
the time until the GUI's list holds all 1,000 runs are in the note.
"""
import re
import shutil
import statistics
import subprocess
import time

import make_runs

COUNT = 1000


def timed(cmd, env):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, errors="replace", timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}")
    return time.perf_counter() - t0, out.stdout


def gui_start(exe, env):
    """(seconds from spawn to "shown", ms from main() to "all")."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(exe), "--expect", str(COUNT)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    shown, all_ms, last = None, None, ""
    for line in proc.stdout:
        last = line
        if line.startswith("shown ") and shown is None:
            shown = time.perf_counter() - t0
        elif m := re.match(r"all (\d+)", line):
            all_ms = int(m.group(1))
    proc.wait(timeout=120)
    if shown is None or all_ms is None:
        raise RuntimeError(f"bench_runlist: {last.strip()[-300:]}")
    return shown, all_ms


def bench(reps, bin_dir, build, python, isolated_env):
    env, tmp = isolated_env()
    env["QT_QPA_PLATFORM"] = "offscreen"
    try:
        folder, made_s, large = make_runs.make(COUNT, env, bin_dir, python)
        cli = [str(bin_dir / "rankdeck-cli"), "runs"]
        _, listing = timed(cli, env)
        listed = sum(1 for line in listing.splitlines() if re.match(r"\d{8}-\d{6}-", line))
        if listed != COUNT:
            raise RuntimeError(f"`runs` listed {listed} of {COUNT} runs")
        timed(cli + ["--names"], env)
        exe = build / "bench" / "bench_runlist"
        if not exe.exists():
            raise RuntimeError(f"{exe} was not built")
        gui_start(exe, env)
        cli_runs, names, gui, gui_all = [], [], [], []
        for _ in range(reps):
            cli_runs.append(timed(cli, env)[0])
            names.append(timed(cli + ["--names"], env)[0])
            shown, all_ms = gui_start(exe, env)
            gui.append(shown)
            gui_all.append(all_ms / 1000)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cli_s, gui_s = statistics.median(cli_runs), statistics.median(gui)
    return ({"runs1000_cli_runs_s": cli_s, "runs1000_cli_runs_s_runs": cli_runs,
             "runs1000_gui_start_s": gui_s, "runs1000_gui_start_s_runs": gui},
            f"{COUNT} records ({large} large, made in {made_s:.0f} s): `runs` {cli_s:.3f} s, "
            f"`runs --names` {statistics.median(names):.3f} s; the GUI shows its first screen of "
            f"runs {gui_s:.3f} s after its spawn and holds all {COUNT} "
            f"{statistics.median(gui_all):.3f} s after main() (medians of {reps})")
