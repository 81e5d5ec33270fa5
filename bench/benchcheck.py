# SPDX-License-Identifier: GPL-3.0-or-later
"""Catching a regression in benchmark results (docs/benchmarks.md, "Catching a regression").

held_misses(): which held keys (a goal, not "reported") of the benchmark groups a run was meant
to measure miss their goal or have no number; bench/run --check and --check-file print them.
compare(): which keys moved beyond their spread against a baseline results file; this file's
command line (scripts/bench-baseline.sh) prints the table. Both work on the JSON bench/run writes
and need nothing but the system's python3.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LATEST = ROOT / "bench/results/latest.json"
COMMITTED = "HEAD:bench/results/latest.json"

# The keys each benchmark group of bench/run.py (its `benches`) writes: with --only, the keys a
# run was meant to measure. Read off the bench functions and the C++ benchmarks' output;
# bench/run.py refuses to start when this and GOALS or `benches` disagree (grouping_errors()).
GROUP_KEYS = {
    "ddp": ("ddp_large_ratio_vs_python", "ddp_tiny_ratio_vs_python", "overlap_speedup"),
    "launch": ("launch_latency_ratio_vs_torchrun",),
    "telemetry": ("telemetry_overhead_pct", "telemetry_overhead_wall_pct"),
    # bench_ssh without --only runs its parts launch, fanout and latency.
    "ssh": ("ssh_launch_overhead_ratio", "ssh_fanout_ratio_32_vs_1", "ssh_fanout_latency_ratio"),
    "slurm": ("slurm_launch_overhead_ratio", "slurm_pending_ms"),
    "gui": ("plot_replot_ms_64x1m", "plot_replot_wall_ms_64x1m", "heatmap_refresh_ms_512x100k",
            "heatmap_refresh_wall_ms_512x100k", "heatmap_rebuild_ms_512x100k",
            "compare_replot_ms_8runs", "gui_stall_p99_ms", "gui_rss_mb_100m_lines"),
    "program": ("program_launch_ratio_vs_torchrun", "program_launch_cold_ratio_vs_torchrun",
                "program_step_rate_ratio_vs_torchrun", "program_step_rate_torchrun_vs_itself",
                "program_output_lines_per_s",
                "program_output_launcher_peak_rss_mb"),
    "crash": ("program_crash_report_ms",),
    "logs": ("log_collapse_lines_per_s",),
    "flightrecorder": ("hang_verdict_s", "desync_verdict_s", "flight_recorder_us_per_collective",
                       "flight_recorder_overhead_pct", "flight_recorder_overhead_wall_pct"),
    "scale": ("scale_512_launch_s", "scale_512_gui_stall_p99_ms", "scale_512_launcher_rss_mb",
              "scale_512_lines_missing", "scale_512_stop_s", "fds_per_rank", "threads_per_rank"),
    "scalewide": ("scale_ssh_16x32_launch_s", "scale_slurm_2x64_launch_s"),
    "framework": ("framework_wall_ratio_vs_torchrun",),
    "runs1000": ("runs1000_gui_start_s", "runs1000_cli_runs_s"),
    "straggler": ("straggler_cause_s", "sampling_overhead_pct", "straggler_false_positive_runs"),
    # Run only when --only names it (bench/run.py's OPT_IN).
    "soak": ("soak_rss_growth_pct", "soak_launcher_rss_growth_pct", "soak_lines_missing",
             "soak_stall_p99_start_ms", "soak_stall_p99_end_ms", "soak_bytes_per_line",
             "soak_bytes_per_line_vs_line", "soak_show_ms", "soak_logs_follow_ms"),
    "cicold": ("ci_cold_minutes", "ci_cold_exit"),
}

# A --quick run leaves these out on purpose: bench_gui --quick pushes 20M lines, too few for a key
# that names 100M, and reports them in _notes only. Missing from a quick run is not a miss.
FULL_RUN_ONLY = frozenset({"gui_rss_mb_100m_lines"})

# A number without a spread of its own (no `_runs`, or one value) may move this much either way
# before it counts as moved.
FALLBACK_BAND = 0.10

# A note quoted in a "not measured" line is cut here; _notes in the results file has it whole.
NOTE_CHARS = 300


def grouping_errors(goals, group_names, group_keys=GROUP_KEYS):
    """What makes group_keys disagree with GOALS and with bench/run.py's benchmark groups."""
    owners = {}
    for group, keys in group_keys.items():
        for key in keys:
            owners.setdefault(key, []).append(group)
    errors = [f"GOALS key {key} belongs to no group of GROUP_KEYS in bench/benchcheck.py"
              for key in goals if key not in owners]
    errors += [f"GOALS key {key} belongs to several groups: {', '.join(groups)}"
               for key, groups in owners.items() if len(groups) > 1]
    errors += [f"GROUP_KEYS names {key} (group {owners[key][0]}), which GOALS does not have"
               for key in owners if key not in goals]
    errors += [f"benchmark group {name} has no entry in GROUP_KEYS"
               for name in group_names if name not in group_keys]
    errors += [f"GROUP_KEYS has group {name}, which bench/run.py does not run"
               for name in group_keys if name not in group_names]
    return errors


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def numbers(values):
    return [v for v in values if is_number(v)] if isinstance(values, list) else []


def meets(op, goal, value):
    return {">=": value >= goal, ">": value > goal, "<=": value <= goal}[op]


def shown(value):
    """A value as people write it: 731.1, 0.452, 50, not 731.100000 or 50.0."""
    if value != 0 and abs(value) < 0.01:
        return f"{value:.3g}"
    return f"{value:.3f}".rstrip("0").rstrip(".")


def why_not_measured(group, note):
    if not note:
        return f"group {group} left no note in the results"
    note = " ".join(note.split())
    note = note[len("not measured: "):] if note.startswith("not measured: ") else note
    return note if len(note) <= NOTE_CHARS else note[:NOTE_CHARS] + "…"


def held_misses(results, notes, groups, goals, quick=False, group_keys=GROUP_KEYS):
    """(one line per held key of `groups` that misses its goal or has no number, how many held
    keys of them met their goal). results maps keys to numbers or None; notes maps groups to
    what they said (a results file's _notes)."""
    misses, at_goal = [], 0
    for group in groups:
        for key in group_keys[group]:
            op, goal = goals[key]
            if op == "reported" or (quick and key in FULL_RUN_ONLY):
                continue
            value = results.get(key)
            if not is_number(value):
                misses.append(f"{key} was not measured "
                              f"({why_not_measured(group, notes.get(group))})")
            elif meets(op, goal, value):
                at_goal += 1
            else:
                misses.append(f"{key} = {shown(value)} misses its goal {op} {shown(goal)}")
    return misses, at_goal


def report_check(misses, at_goal, out=sys.stderr):
    """Prints held_misses()'s answer; the exit status for it."""
    for miss in misses:
        print(f"bench: check: {miss}", file=out)
    if misses:
        return 1
    print(f"bench: check: {at_goal} held {'key at its' if at_goal == 1 else 'keys at their'} goal",
          file=out)
    return 0


def load(path):
    """A results file's JSON; exits 2 (nothing to judge, not a miss) naming the file when there is
    none to read."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as e:
        print(f"bench: cannot read the results {path}: {e.strerror}", file=sys.stderr)
    except ValueError as e:
        print(f"bench: the results {path} are not JSON: {e}", file=sys.stderr)
    sys.exit(2)


def is_quick(results):
    return bool(results.get("_machine", {}).get("quick"))


def check_file(path, groups, goals):
    """bench/run --check-file: the check of a run, on a results file written earlier."""
    payload = load(path)
    return report_check(*held_misses(payload, payload.get("_notes", {}), groups, goals,
                                     quick=is_quick(payload)))


def better_direction(op, goal):
    """+1 when a higher value is better, -1 when a lower one is, None when neither is: reported
    keys, and goals of > 0 or >= 0, which only say the number is a real one (GOALS' "no goal of
    their own")."""
    if op == "<=":
        return -1
    if op in (">=", ">") and goal != 0:
        return +1
    return None


def band(key, base, baseline, new):
    """(low, high, how): the range the new value may lie in without having moved."""
    base_runs = numbers(baseline.get(key + "_runs"))
    new_runs = numbers(new.get(key + "_runs"))
    if len(base_runs) >= 2 and new_runs:
        widen = max(new_runs) - min(new_runs)
        return min(base_runs + [base]) - widen, max(base_runs + [base]) + widen, "runs"
    if not base_runs:
        why = "no baseline _runs"
    elif len(base_runs) == 1:
        why = "one baseline run"
    else:
        why = "no new _runs"
    half = abs(base) * FALLBACK_BAND
    return base - half, base + half, f"±{FALLBACK_BAND * 100:.0f} % ({why})"


def compare(baseline, new, goals):
    """One row per key with a number in both results: key, baseline, new, change in % (None
    from 0), band (low, high, how), moved (None, "better", "worse" or "moved"), and held_worse:
    a key with a goal that moved the wrong way beyond its spread."""
    keys = [k for k in goals if k in new] + [k for k in new if k not in goals]
    rows = []
    for key in keys:
        base, value = baseline.get(key), new.get(key)
        if key.startswith("_") or not (is_number(base) and is_number(value)):
            continue
        low, high, how = band(key, base, baseline, new)
        op, goal = goals.get(key, ("reported", None))
        direction = better_direction(op, goal)
        moved = None
        if not low <= value <= high:
            up = value > high
            moved = "moved" if direction is None else "better" if up == (direction > 0) else "worse"
        rows.append({"key": key, "baseline": base, "new": value,
                     "change_pct": (value - base) / abs(base) * 100 if base else None,
                     "band": (low, high, how), "moved": moved,
                     "held_worse": moved == "worse"})
    return rows


def one_side_only(baseline, new):
    """Keys with a number in one of the two results only."""
    def measured(results):
        return {k for k, v in results.items() if not k.startswith("_") and is_number(v)}
    return sorted(measured(baseline) ^ measured(new))


def table(rows):
    lines = [f"{'key':36} {'baseline':>12} {'new':>12} {'change':>9}  "
             f"{'unmoved band':48} moved?"]
    for row in rows:
        change = "—" if row["change_pct"] is None else f"{row['change_pct']:+.1f} %"
        low, high, how = row["band"]
        lines.append(f"{row['key']:36} {row['baseline']:12.3f} {row['new']:12.3f} {change:>9}  "
                     f"{f'{low:.3f}–{high:.3f} {how}':48} {row['moved'] or 'no'}")
    return "\n".join(lines)


def describe(name, results):
    machine = results.get("_machine", {})
    quick = " --quick" if is_quick(results) else ""
    return f"{name} ({machine.get('date', 'undated')}{quick}, {machine.get('cpus', '?')} CPUs)"


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="scripts/bench-baseline.sh",
        description="Compares benchmark results with a baseline: a key moved when its new value "
                    "lies outside the baseline's <key>_runs range widened by the new run's own "
                    f"spread (±{FALLBACK_BAND * 100:.0f} % where a side has no spread). Exits 1 "
                    "when a key with a goal moved the wrong way, 0 otherwise, 2 when there is "
                    "nothing to compare.")
    ap.add_argument("--compare", metavar="FILE", type=Path,
                    help=f"the baseline results (default: {COMMITTED}, the last committed run)")
    ap.add_argument("new", metavar="NEW", nargs="?", type=Path, default=LATEST,
                    help="the results to judge (default: bench/results/latest.json)")
    args = ap.parse_args(argv)
    # The goals live beside the benchmarks that measure them; run.py imports nothing of torch.
    from run import GOALS

    if not args.new.exists():
        print(f"bench: baseline: no results at {args.new} to judge (bench/run writes them)",
              file=sys.stderr)
        return 2
    new = load(args.new)
    if args.compare:
        baseline, baseline_name = load(args.compare), str(args.compare)
    else:
        committed = subprocess.run(["git", "-C", str(ROOT), "show", COMMITTED],
                                   capture_output=True, text=True)
        if committed.returncode != 0:
            print(f"bench: baseline: no committed baseline: git show {COMMITTED} says: "
                  f"{committed.stderr.strip()} (bench/results/*.json is git-ignored: commit one "
                  "with git add -f, or pass --compare FILE)", file=sys.stderr)
            return 2
        if committed.stdout == args.new.read_text():
            print(f"bench: baseline: {args.new} is the committed one ({COMMITTED}) unchanged: "
                  "nothing to compare; run bench/run first, or pass --compare FILE",
                  file=sys.stderr)
            return 0
        baseline, baseline_name = json.loads(committed.stdout), COMMITTED

    print(f"baseline: {describe(baseline_name, baseline)}")
    print(f"new:      {describe(str(args.new), new)}")
    if is_quick(baseline) != is_quick(new):
        print("note: one of the two is a --quick run: fewer repetitions, so other spreads")
    rows = compare(baseline, new, GOALS)
    print(table(rows))
    if unmatched := one_side_only(baseline, new):
        print(f"not compared (a number on one side only): {', '.join(unmatched)}")
    worse = [row["key"] for row in rows if row["held_worse"]]
    if worse:
        print("bench: baseline: held keys moved worse beyond their spread: " + ", ".join(worse),
              file=sys.stderr)
        return 1
    print(f"bench: baseline: no held key moved worse beyond its spread ({len(rows)} keys "
          "compared)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
