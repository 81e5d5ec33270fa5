# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/benchcheck.py: bench/run --check, --check-file and scripts/bench-baseline.sh judge
results as docs/benchmarks.md ("Catching a regression") says. Small results built here; no
benchmark runs, no torch."""
import io
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import benchcheck  # noqa: E402
import run  # noqa: E402

GOALS = run.GOALS


def value_at_goal(key):
    op, goal = GOALS[key]
    return goal + 1 if op == ">" else goal if op in (">=", "<=") else 123.0


def results_at_goal(*groups):
    """Every key of GOALS, those of `groups` with a number that meets its goal, the rest None."""
    results = {key: None for key in GOALS}
    for group in groups:
        for key in benchcheck.GROUP_KEYS[group]:
            results[key] = value_at_goal(key)
    return results


class HeldMisses(unittest.TestCase):
    def test_every_goals_key_belongs_to_exactly_one_group(self):
        self.assertEqual(benchcheck.grouping_errors(GOALS, list(benchcheck.GROUP_KEYS)), [])
        grouped = [key for keys in benchcheck.GROUP_KEYS.values() for key in keys]
        self.assertCountEqual(grouped, list(GOALS))

    def test_grouping_errors_name_an_ungrouped_and_a_doubly_grouped_key(self):
        goals = dict(GOALS, new_key_ms=("<=", 1.0))
        groups = dict(benchcheck.GROUP_KEYS, launch=("launch_latency_ratio_vs_torchrun",
                                                     "overlap_speedup"))
        errors = benchcheck.grouping_errors(goals, list(groups), groups)
        self.assertTrue(any("new_key_ms belongs to no group" in e for e in errors), errors)
        self.assertTrue(any("overlap_speedup belongs to several groups: ddp, launch" in e
                            for e in errors), errors)

    def test_all_held_keys_at_goal_pass(self):
        groups = list(benchcheck.GROUP_KEYS)
        misses, at_goal = benchcheck.held_misses(results_at_goal(*groups), {}, groups, GOALS)
        self.assertEqual(misses, [])
        held = [k for k, (op, _) in GOALS.items() if op != "reported"]
        self.assertEqual(at_goal, len(held))
        out = io.StringIO()
        self.assertEqual(benchcheck.report_check(misses, at_goal, out), 0)
        self.assertEqual(out.getvalue(), f"bench: check: {len(held)} held keys at their goal\n")

    def test_a_held_key_that_misses_is_named(self):
        results = results_at_goal("gui")
        results["gui_stall_p99_ms"] = 731.1
        misses, _ = benchcheck.held_misses(results, {}, ["gui"], GOALS)
        self.assertEqual(misses, ["gui_stall_p99_ms = 731.1 misses its goal <= 50"])
        out = io.StringIO()
        self.assertEqual(benchcheck.report_check(misses, 0, out), 1)
        self.assertEqual(out.getvalue(),
                         "bench: check: gui_stall_p99_ms = 731.1 misses its goal <= 50\n")

    def test_a_reported_key_never_fails(self):
        results = results_at_goal("telemetry", "gui")
        results["telemetry_overhead_wall_pct"] = 1e9
        results["heatmap_rebuild_ms_512x100k"] = None
        misses, _ = benchcheck.held_misses(results, {}, ["telemetry", "gui"], GOALS)
        self.assertEqual(misses, [])

    def test_keys_of_groups_outside_only_are_ignored(self):
        results = results_at_goal("launch")
        results["ddp_tiny_ratio_vs_python"] = 0.1  # misses, but ddp did not run
        misses, at_goal = benchcheck.held_misses(results, {}, ["launch"], GOALS)
        self.assertEqual((misses, at_goal), ([], 1))

    def test_a_key_not_measured_is_named_with_its_groups_note(self):
        results = results_at_goal("ddp")
        results["ddp_tiny_ratio_vs_python"] = None
        notes = {"ddp": "not measured: bench/ddp/run.sh failed twice: port\n  in use"}
        misses, _ = benchcheck.held_misses(results, notes, ["ddp"], GOALS)
        self.assertEqual(misses, ["ddp_tiny_ratio_vs_python was not measured "
                                  "(bench/ddp/run.sh failed twice: port in use)"])

    def test_a_full_run_key_is_not_missed_by_a_quick_run(self):
        results = results_at_goal("gui")
        results["gui_rss_mb_100m_lines"] = None
        self.assertEqual(benchcheck.held_misses(results, {}, ["gui"], GOALS, quick=True)[0], [])
        misses, _ = benchcheck.held_misses(results, {}, ["gui"], GOALS, quick=False)
        self.assertEqual(len(misses), 1)
        self.assertTrue(misses[0].startswith("gui_rss_mb_100m_lines was not measured"), misses)


class Compare(unittest.TestCase):
    BASELINE = {"ddp_large_ratio_vs_python": 1.20,
                "ddp_large_ratio_vs_python_runs": [1.15, 1.20, 1.25],
                "gui_stall_p99_ms": 10.0, "gui_stall_p99_ms_runs": [10.0],
                "telemetry_overhead_wall_pct": 1.0, "telemetry_overhead_wall_pct_runs": [0.5, 1.5],
                "slurm_pending_ms": 600.0, "slurm_pending_ms_runs": [590.0, 610.0]}

    def row(self, new, key):
        rows = {r["key"]: r for r in benchcheck.compare(self.BASELINE, new, GOALS)}
        return rows[key]

    def test_a_key_moved_worse_beyond_its_spread_is_flagged(self):
        # Baseline runs 1.15–1.25, widened by the new runs' spread 0.02: 1.13–1.27.
        row = self.row({"ddp_large_ratio_vs_python": 1.05,
                        "ddp_large_ratio_vs_python_runs": [1.04, 1.05, 1.06]},
                       "ddp_large_ratio_vs_python")
        self.assertEqual((row["moved"], row["held_worse"]), ("worse", True))
        self.assertAlmostEqual(row["change_pct"], -12.5)

    def test_a_key_moved_within_its_spread_is_not(self):
        # 1.12 lies below the baseline's runs but within them widened by the new spread (0.1).
        row = self.row({"ddp_large_ratio_vs_python": 1.12,
                        "ddp_large_ratio_vs_python_runs": [1.08, 1.12, 1.18]},
                       "ddp_large_ratio_vs_python")
        self.assertEqual((row["moved"], row["held_worse"]), (None, False))

    def test_a_key_moved_the_good_way_is_better_not_worse(self):
        row = self.row({"ddp_large_ratio_vs_python": 1.5,
                        "ddp_large_ratio_vs_python_runs": [1.5, 1.5]}, "ddp_large_ratio_vs_python")
        self.assertEqual((row["moved"], row["held_worse"]), ("better", False))

    def test_a_key_without_a_spread_gets_ten_percent(self):
        within = self.row({"gui_stall_p99_ms": 10.9, "gui_stall_p99_ms_runs": [10.9]},
                          "gui_stall_p99_ms")
        self.assertIsNone(within["moved"])
        self.assertIn("one baseline run", within["band"][2])
        beyond = self.row({"gui_stall_p99_ms": 11.2}, "gui_stall_p99_ms")
        self.assertEqual(beyond["moved"], "worse")

    def test_reported_keys_and_zero_floors_only_move(self):
        row = self.row({"telemetry_overhead_wall_pct": 9.0}, "telemetry_overhead_wall_pct")
        self.assertEqual((row["moved"], row["held_worse"]), ("moved", False))
        # slurm_pending_ms >= 0 says the number is real; less pending is not a regression.
        row = self.row({"slurm_pending_ms": 100.0, "slurm_pending_ms_runs": [100.0, 101.0]},
                       "slurm_pending_ms")
        self.assertEqual((row["moved"], row["held_worse"]), ("moved", False))

    def test_keys_with_a_number_on_one_side_only_are_not_compared(self):
        new = {"ddp_large_ratio_vs_python": None, "overlap_speedup": 1.1}
        self.assertEqual(benchcheck.compare(self.BASELINE, new, GOALS), [])
        self.assertEqual(benchcheck.one_side_only(self.BASELINE, new),
                         ["ddp_large_ratio_vs_python", "gui_stall_p99_ms", "overlap_speedup",
                          "slurm_pending_ms", "telemetry_overhead_wall_pct"])


class CommandLines(unittest.TestCase):
    """bench/run.py --check-file and scripts/bench-baseline.sh's Python side, as CI runs them."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, payload):
        path = Path(self.dir.name) / name
        path.write_text(json.dumps(payload))
        return str(path)

    def python(self, *args):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)

    def test_check_file_exits_1_naming_the_miss_and_0_with_only(self):
        results = results_at_goal(*benchcheck.GROUP_KEYS)
        results["gui_stall_p99_ms"] = 731.1
        results["_notes"], results["_machine"] = {}, {"quick": False}
        path = self.write("latest.json", results)
        whole = self.python(str(ROOT / "bench/run.py"), "--check-file", path)
        self.assertEqual(whole.returncode, 1, whole.stderr)
        self.assertEqual(whole.stderr,
                         "bench: check: gui_stall_p99_ms = 731.1 misses its goal <= 50\n")
        only = self.python(str(ROOT / "bench/run.py"), "--check-file", path, "--only", "ddp,scale")
        self.assertEqual(only.returncode, 0, only.stderr)
        self.assertEqual(only.stderr, "bench: check: 8 held keys at their goal\n")

    def test_baseline_exits_1_when_a_held_key_moved_worse(self):
        base = self.write("base.json", Compare.BASELINE)
        new = self.write("new.json", dict(Compare.BASELINE, gui_stall_p99_ms=40.0))
        worse = self.python(str(ROOT / "bench/benchcheck.py"), "--compare", base, new)
        self.assertEqual(worse.returncode, 1, worse.stderr)
        self.assertIn("gui_stall_p99_ms", worse.stderr)
        self.assertRegex(worse.stdout, r"gui_stall_p99_ms +10\.000 +40\.000 +\+300\.0 %.* worse")
        same = self.python(str(ROOT / "bench/benchcheck.py"), "--compare", base, base)
        self.assertEqual(same.returncode, 0, same.stderr)


if __name__ == "__main__":
    unittest.main()
