# SPDX-License-Identifier: GPL-3.0-or-later
"""RankDeck benchmark driver.

Every number is a ratio (or a percentage / milliseconds) against a reference measured in the
same run, the median of several repetitions, because these machines are noisy. A benchmark
that cannot run here reports null with the reason; nothing is filled in by hand.
"""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("RANKDECK_BUILD_DIR", ROOT / "build"))
BIN = BUILD / "bin"
VENV_BIN = Path(sys.executable).parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env():
    """Launcher runs write their records into a throw-away XDG tree."""
    tmp = Path(tempfile.mkdtemp(prefix="rankdeck-bench-"))
    env = dict(os.environ)
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), XDG_DATA_HOME=str(tmp / "data"),
               XDG_CACHE_HOME=str(tmp / "cache"), OMP_NUM_THREADS="1")
    return env, tmp


def time_until_every_rank_stepped(cmd, env, nranks, pattern, timeout=300):
    """Seconds from spawning cmd until each of nranks ranks has printed its first step."""
    rx = re.compile(pattern)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace")
    seen = {}
    try:
        for line in proc.stdout:
            m = rx.search(line)
            if m and int(m.group(1)) not in seen:
                seen[int(m.group(1))] = time.perf_counter() - t0
                if len(seen) == nranks:
                    break
            if time.perf_counter() - t0 > timeout:
                break
        latency = max(seen.values()) if len(seen) == nranks else None
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if latency is None:
        raise RuntimeError(f"not every rank stepped: {' '.join(map(str, cmd))}")
    return latency


def bench_launch_latency(reps):
    env, tmp = isolated_env()
    rd = [str(BIN / "rankdeck-cli"), "launch", "--profile", "local", "--nproc-per-node", "2",
          "--name", "bench-launch", "--", "--task", "linear", "--steps", "5"]
    ours, theirs = [], []
    for _ in range(reps):
        ours.append(time_until_every_rank_stepped(rd, env, 2, r"\[r(\d+)\].*Epoch \d+, Loss"))
        tr = [str(VENV_BIN / "torchrun"), "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
              "--master-port", str(free_port()), str(ROOT / "bench/launch/ddp_linear.py"), "5"]
        theirs.append(time_until_every_rank_stepped(tr, env, 2, r"Rank (\d+): Epoch"))
    shutil.rmtree(tmp, ignore_errors=True)
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"launch_latency_ratio_vs_torchrun": o / t}, \
        f"rankdeck-cli {o*1000:.0f} ms vs torchrun {t*1000:.0f} ms (median of {reps})"


def bench_program(reps, quick):
    """The user's own program (launch --exec) against torchrun running the same script."""
    env, tmp = isolated_env()
    py = str(VENV_BIN / "python")
    script = str(ROOT / "bench/launch/ddp_linear.py")
    rd = [str(BIN / "rankdeck-cli"), "launch", "--profile", "local", "--nproc-per-node", "2",
          "--name", "bench-program", "--no-progress", "--exec", "--", py, script, "5"]
    tr = lambda: [str(VENV_BIN / "torchrun"), "--nproc-per-node", "2", "--master-addr",
                  "127.0.0.1", "--master-port", str(free_port()), script, "5"]
    ours, theirs = [], []
    for _ in range(reps):
        ours.append(time_until_every_rank_stepped(rd, env, 2, r"\[r(\d+)\] Rank \d+: Epoch"))
        theirs.append(time_until_every_rank_stepped(tr(), env, 2, r"Rank (\d+): Epoch"))
    launch_ratio = statistics.median(ours) / statistics.median(theirs)

    # Steady steps/s, measured by the script itself on each rank (slowest rank counts).
    steps = "1500" if quick else "4000"
    rate = str(ROOT / "bench/launch/ddp_rate.py")
    rx = re.compile(r"Rank (\d+): steady rate ([0-9.]+) steps/s")

    def steady(cmd):
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", timeout=600).stdout
        found = [float(m.group(2)) for m in rx.finditer(out)]
        if len(found) != 2:
            raise RuntimeError(f"no steady rate from {' '.join(cmd[:3])}: {out[-400:]}")
        return min(found)

    ours_rate, theirs_rate = [], []
    for _ in range(reps):
        ours_rate.append(steady([str(BIN / "rankdeck-cli"), "launch", "--profile", "local",
                                 "--nproc-per-node", "2", "--name", "bench-rate", "--no-progress",
                                 "--exec", "--", py, rate, steps]))
        theirs_rate.append(steady([str(VENV_BIN / "torchrun"), "--nproc-per-node", "2",
                                   "--master-addr", "127.0.0.1", "--master-port",
                                   str(free_port()), rate, steps]))
    step_ratio = statistics.median(ours_rate) / statistics.median(theirs_rate)

    # One rank printing as fast as it can: every line must be in the record; the launcher's
    # peak RSS (VmHWM) says whether its memory stays bounded.
    seconds = "3" if quick else "10"
    cli = subprocess.Popen([str(BIN / "rankdeck-cli"), "launch", "--profile", "local",
                            "--nproc-per-node", "1", "--name", "bench-output", "--quiet",
                            "--no-progress", "--exec", "--", py,
                            str(ROOT / "bench/launch/print_fast.py"), seconds],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t0 = time.perf_counter()
    peak_kb = 0
    while cli.poll() is None:
        try:
            for line in Path(f"/proc/{cli.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kb = max(peak_kb, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.2)
    elapsed = time.perf_counter() - t0
    runs = sorted((tmp / "data/rankdeck/runs").glob("*-bench-output-*"))
    log = (runs[-1] / "rank-0.log").read_text(errors="replace").splitlines() if runs else []
    printed = next((int(m.group(1)) for m in map(re.compile(r"printed (\d+) lines").search, log)
                    if m), None)
    recorded = sum(1 for line in log if line.startswith("line "))
    if printed is None or recorded != printed:
        raise RuntimeError(f"output benchmark lost lines: printed {printed}, recorded {recorded}")
    shutil.rmtree(tmp, ignore_errors=True)
    lines_per_s = printed / float(seconds)
    return ({"program_launch_ratio_vs_torchrun": launch_ratio,
             "program_step_rate_ratio_vs_torchrun": step_ratio,
             "program_output_lines_per_s": lines_per_s,
             "program_output_launcher_peak_rss_mb": peak_kb / 1024},
            f"launch {statistics.median(ours)*1000:.0f} vs torchrun {statistics.median(theirs)*1000:.0f} ms; "
            f"steady {statistics.median(ours_rate):.1f} vs {statistics.median(theirs_rate):.1f} steps/s; "
            f"{printed} lines in {seconds} s all recorded (run took {elapsed:.1f} s), "
            f"launcher peak RSS {peak_kb/1024:.1f} MB (medians of {reps})")


def process_cpu_ns(pid):
    """CPU time of every thread of pid so far, in ns (/proc/<pid>/task/*/schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between listing and reading
    return total


def steady_cpu_per_step(first, last, telemetry, task_args):
    """CPU seconds per step between the log lines of steps `first` and `last`: start-up, the
    rendezvous and the model build (tens of ms of noise per process) stay outside the window.
    Events go into the pipe the log lines use, and that pipe is drained, as by the launcher."""
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT="0", OMP_NUM_THREADS="1")
    every = 500
    cmd = [str(BIN / "rankdeck-worker"), *task_args, "--steps", str(last + every), "--telemetry",
           telemetry, "--log-every", str(every)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    marks = {}
    for raw in proc.stdout:
        m = re.search(rb"^Rank 0: Epoch (\d+),", raw)
        if m and int(m.group(1)) in (first, last):
            marks[int(m.group(1))] = process_cpu_ns(proc.pid)
    proc.wait()
    if proc.returncode != 0 or len(marks) != 2:
        raise RuntimeError(f"worker exited {proc.returncode} (steps seen: {sorted(marks)}): {' '.join(cmd)}")
    return (marks[last] - marks[first]) / 1e9 / (last - first)


def bench_telemetry_overhead(reps, quick):
    # CPU per step in the steady state, telemetry on and off measured back to back in each
    # repetition (order alternating) and compared as a paired difference, so that drift in the
    # machine's speed cancels within the pair; the result is the median of the differences.
    first, last = (1000, 5000) if quick else (1000, 9000)
    task = ["--task", "mlp", "--mlp-width", "256", "--mlp-depth", "2", "--batch-size", "32"]
    per_step = {"on": [], "off": []}
    diffs = []
    for rep in range(max(reps, 5)):
        pair = {}
        for mode in (("on", "off") if rep % 2 == 0 else ("off", "on")):
            pair[mode] = steady_cpu_per_step(first, last, mode, task)
            per_step[mode].append(pair[mode])
        diffs.append((pair["on"] - pair["off"]) / pair["off"] * 100.0)
    on, off = statistics.median(per_step["on"]), statistics.median(per_step["off"])
    return {"telemetry_overhead_pct": statistics.median(diffs)}, \
        f"paired differences {', '.join(f'{d:+.2f}' for d in sorted(diffs))} %; " \
        f"step {on*1e3:.3f} ms CPU with telemetry, {off*1e3:.3f} ms without (medians, steps {first}-{last})"


def bench_ddp(reps, quick):
    """bench/ddp/run.sh: worker vs torchrun + Python DDP, median samples/s of each side."""
    env = dict(os.environ, REPEAT=str(reps))
    if quick:
        env.update(BIG_STEPS="15", TINY_STEPS="200")
    # One retry: on a busy machine a rank now and then loses its port to another process
    # between the free-port probe and the bind.
    for attempt in (1, 2):
        proc = subprocess.run(["bash", str(ROOT / "bench/ddp/run.sh"), str(BUILD), sys.executable],
                              capture_output=True, text=True, cwd=ROOT, env=env)
        if proc.returncode == 0:
            break
        print(f"bench: ddp attempt {attempt} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}",
              file=sys.stderr)
    else:
        raise RuntimeError(f"bench/ddp/run.sh failed twice: {proc.stderr.strip()[-400:]}")
    out = proc.stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"(mlp 25.3M params|linear 11 params|mlp overlap vs --no-overlap|mlp unbound|linear unbound)\S*.*?"
                     r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", line)
        if m:
            rows[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    big, tiny, ov = rows["mlp 25.3M params"], rows["linear 11 params"], rows["mlp overlap vs --no-overlap"]
    return ({"ddp_large_ratio_vs_python": big[0] / big[1],
             "ddp_tiny_ratio_vs_python": tiny[0] / tiny[1],
             "overlap_speedup": ov[0] / ov[1]},
            f"mlp {big[0]:.1f} vs {big[1]:.1f} samples/s; linear {tiny[0]:.0f} vs {tiny[1]:.0f}; "
            f"overlap {ov[0]:.1f} vs no-overlap {ov[1]:.1f}; worker with --cpu-affinity off: "
            f"mlp {rows['mlp unbound'][0]:.1f} (ratio {rows['mlp unbound'][2]:.2f}), "
            f"linear {rows['linear unbound'][0]:.0f} (ratio {rows['linear unbound'][2]:.2f}) (median of {reps})")


def bench_cpp(name, reps, quick, extra=()):
    exe = BUILD / "bench" / name
    if not exe.exists():
        raise RuntimeError(f"{exe} was not built")
    args = [str(exe), "--reps", str(reps)] + (["--quick"] if quick else []) + list(extra)
    out = subprocess.run(args, capture_output=True, text=True, check=True,
                         env=dict(os.environ, QT_QPA_PLATFORM="offscreen", RANKDECK_BIN_DIR=str(BIN)))
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data["results"], data.get("detail", "")

def bench_program_crash(reps, quick):
    """From a rank's fatal signal to the crash entry in the launcher's run model (its
    "rank R failed" note, which the run controller prints when it records the failure)."""
    env, tmp = isolated_env()
    cmd = [str(BIN / "rankdeck-cli"), "launch", "--profile", "local", "--nproc-per-node", "2",
           "--name", "bench-crash", "--no-progress", "--exec", "--", str(VENV_BIN / "python"),
           str(ROOT / "bench/launch/crash_now.py"), "1"]
    fault_rx = re.compile(r"fault at ([0-9.]+)")
    delays = []
    for _ in range(max(reps, 5)):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace")
        fault_at, noticed = None, None
        for line in proc.stdout:
            if fault_at is None and (m := fault_rx.search(line)):
                fault_at = float(m.group(1))
            elif fault_at is not None and "rank 1 failed" in line:
                noticed = time.time()
                break
        proc.wait(timeout=120)
        if fault_at is None or noticed is None:
            raise RuntimeError("no crash report from the launcher")
        delays.append((noticed - fault_at) * 1000)
    shutil.rmtree(tmp, ignore_errors=True)
    median = statistics.median(delays)
    return ({"program_crash_report_ms": median},
            f"fatal signal to the launcher's failure entry: median {median:.0f} ms "
            f"(min {min(delays):.0f}, max {max(delays):.0f}, {len(delays)} runs)")


GOALS = {
    "ddp_large_ratio_vs_python": (">=", 1.05),
    "ddp_tiny_ratio_vs_python": (">=", 3.0),
    "overlap_speedup": (">", 1.0),
    "launch_latency_ratio_vs_torchrun": ("<=", 0.5),
    "ssh_launch_overhead_ratio": ("<=", 1.5),
    "telemetry_overhead_pct": ("<=", 1.0),
    "gui_stall_p99_ms": ("<=", 50.0),
    "gui_rss_mb_100m_lines": ("<=", 400.0),
    "plot_replot_ms_64x1m": ("<=", 30.0),
    "heatmap_refresh_ms_512x100k": ("<=", 30.0),
    "compare_replot_ms_8runs": ("<=", 30.0),
    "ssh_fanout_ratio_32_vs_1": ("<=", 2.0),
    # No goal of their own: reported (Slurm's scheduling cost, the pending part shown apart).
    "slurm_launch_overhead_ratio": (">", 0.0),
    "slurm_pending_ms": (">=", 0.0),
    "program_launch_ratio_vs_torchrun": ("<=", 0.5),
    "program_step_rate_ratio_vs_torchrun": (">=", 0.99),
    # No goal of its own: reported, with every line checked against the program's count.
    "program_output_lines_per_s": (">", 0.0),
    "program_output_launcher_peak_rss_mb": ("<=", 400.0),
    "program_crash_report_ms": ("<=", 1000.0),
    # Reported: the merged log view's collapsing of identical lines, 1M lines from 64 ranks.
    "log_collapse_lines_per_s": (">", 0.0),
}


def meets(key, value):
    op, goal = GOALS[key]
    return {">=": value >= goal, ">": value > goal, "<=": value <= goal}[op]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (≤ 10 minutes)")
    ap.add_argument("--only", default="", help="comma-separated benchmark names")
    args = ap.parse_args()
    reps = 3 if args.quick else 5

    benches = {
        "ddp": lambda: bench_ddp(reps, args.quick),
        "launch": lambda: bench_launch_latency(reps),
        "telemetry": lambda: bench_telemetry_overhead(reps, args.quick),
        "ssh": lambda: bench_cpp("bench_ssh", reps, args.quick),
        "slurm": lambda: bench_cpp("bench_ssh", reps, args.quick, ["--only", "slurm"]),
        "gui": lambda: bench_cpp("bench_gui", reps, args.quick),
        "program": lambda: bench_program(reps, args.quick),
        "crash": lambda: bench_program_crash(reps, args.quick),
        "logs": lambda: bench_cpp("bench_logcollapse", reps, args.quick),
    }
    only = [b for b in args.only.split(",") if b]
    results, notes = {k: None for k in GOALS}, {}
    for name, fn in benches.items():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        try:
            values, detail = fn()
            results.update(values)
            notes[name] = detail
        except Exception as e:  # one broken benchmark must not hide the others' numbers
            notes[name] = f"not measured: {e}"
        print(f"bench: {name} done in {time.perf_counter() - t0:.0f} s: {notes[name]}", file=sys.stderr)

    print(f"{'metric':36} {'value':>12} {'goal':>10}  met")
    for key, value in results.items():
        op, goal = GOALS[key]
        shown = "—" if value is None else f"{value:.3f}"
        met = "n/a" if value is None else ("yes" if meets(key, value) else "NO")
        print(f"{key:36} {shown:>12} {op + str(goal):>10}  {met}")
    out = ROOT / "bench/results/latest.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(results)
    if only and out.exists():
        # A partial run (--only) keeps the numbers of the benchmarks it did not run, marked.
        try:
            earlier = json.loads(out.read_text())
        except ValueError:
            earlier = {}
        for key, value in results.items():
            if value is None and earlier.get(key) is not None:
                payload[key] = earlier[key]
        for name, note in earlier.get("_notes", {}).items():
            notes.setdefault(name, note if note.startswith("(earlier run)") else
                             f"(earlier run) {note}")
    payload["_notes"] = notes
    payload["_machine"] = {"cpus": os.cpu_count(), "quick": args.quick,
                           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
