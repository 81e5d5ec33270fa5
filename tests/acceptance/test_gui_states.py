# SPDX-License-Identifier: GPL-3.0-or-later
"""GUI acceptance: real runs, read from the real rankdeck the way a screen reader reads it.

    python3 tests/acceptance/test_gui_states.py --build-dir build [CASE...]

Each case launches a run with the real `rankdeck-cli launch --profile local` in the background,
opens `rankdeck RUN_DIR` on it (or, for a rankdeck without that argument, clicks the run in the
run list), and checks what a person is told: the window title, the run list row's state, every
rank row's state in the rank table, the Overview's banner and the progress text. Everything
runs in a private X server, D-Bus and AT-SPI bus and private user folders (atspi_harness.py).

Prints PASS/FAIL/SKIP per case with what was read, and on a failure the accessibility tree
(RANKDECK_ATSPI_KEEP=1 keeps each case's folder: logs, run records). Exit status: 0 every case
passed (desync skipped without the torch venv), 1 a case failed, 77 this machine cannot run them
(no python3-pyatspi, Xvfb, D-Bus or AT-SPI), a skip for ctest. The state words are the app's
fixed vocabulary; the checks never accept an older wording.
"""
import argparse
import collections
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
import traceback
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
SYSTEM_PYTHON = "/usr/bin/python3"
SKIP = 77
# How long the GUI may take to show what the launcher has recorded: it follows the record's
# files, which it notices within a second; the rest is slack for a loaded 2-core machine.
SETTLE_S = 15


def _ensure_system_python():
    """pyatspi comes with Debian's python3; a pyenv or venv python3 first on PATH lacks it.
    Re-run under /usr/bin/python3 then, once. (Looked up, not imported: it is imported only
    once a session's buses exist.)"""
    if importlib.util.find_spec("pyatspi") is not None:
        return
    if (os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON)
            and os.access(SYSTEM_PYTHON, os.X_OK)
            and not os.environ.get("RANKDECK_ATSPI_REEXEC")):
        os.environ["RANKDECK_ATSPI_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)


_ensure_system_python()
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import atspi_harness as harness  # noqa: E402


# The root-cause banner's fixed accessible name and its tooltip: what it is, not what it says.
BANNER_CHROME = ("Root cause", "Click to open the failure report")


class CaseFailure(harness.Fatal):
    """An expectation not met (Fatal: raised while polling, it ends the wait)."""


class CaseSkip(Exception):
    """The case cannot run here (no torch venv)."""


def torch_python():
    for candidate in (os.environ.get("RANKDECK_TORCH_PYTHON"),
                      os.path.expanduser("~/.cache/rankdeck/torch-venv/bin/python")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def gui_takes_run_argument(bin_dir):
    """Whether `rankdeck RUN` is understood: its --help then lists a positional argument."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    try:
        r = subprocess.run([os.path.join(bin_dir, "rankdeck"), "--help"], env=env,
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Arguments:" in r.stdout


def wait_for_binaries(bin_dir, timeout=180, names=("rankdeck", "rankdeck-cli", "rankdeck-worker")):
    # Another build may be relinking them right now: a binary missing for a moment is no failure.
    harness.wait_until(lambda: all(os.access(os.path.join(bin_dir, n), os.X_OK) for n in names),
                       timeout, "the binaries %s in %s" % (", ".join(names), bin_dir))


class Ctx:
    """A session, the run a case launched, and the GUI watching it."""

    def __init__(self, session, run_argument):
        self.s = session
        self.run_argument = run_argument
        self.run = None
        self.app = None
        self.opened_by = None
        self._rank_table = None
        self._run_list = None
        self.last_view = None

    def launch(self, name, args):
        """The case's run, in the background; returns once its record folder exists."""
        self.run = harness.CliRun(self.s, name, args)

    def open_gui(self):
        if self.run_argument:
            self.app = harness.App(self.s, [self.run.dir])
            self.opened_by = "rankdeck RUN_DIR"
            return
        # A rankdeck without the argument: pick the run in the run list with a click.
        self.app = harness.App(self.s)
        cell = harness.wait_until(self._run_name_cell, 60,
                                  "run %s in the run list" % self.run.name)
        self.app.click(cell)
        self.opened_by = "a click on its row in the run list (rankdeck has no RUN argument yet)"

    def _run_name_cell(self):
        tree = self.run_list()
        if tree is None:
            return None
        t, column = tree.queryTable(), self.app.table_headers(tree).index("Name")
        for r in range(t.nRows):
            cell = t.getAccessibleAt(r, column)
            if cell is not None and cell.name == self.run.name:
                return cell
        return None

    def run_list(self):
        if self._run_list is None:
            self._run_list = self.app.find_table(["Name", "State"], "tree")
        return self._run_list

    def rank_table(self):
        # Found once (a walk of the whole tree): the Overview's table lives as long as the window.
        if self._rank_table is None:
            self._rank_table = self.app.find_table(["Rank", "State", "Step"], "table")
        return self._rank_table

    def banner(self):
        """What the Overview's banners say, as (text, notes). The root-cause banner is the label
        whose description (its tooltip) offers the failure report; its fixed accessible name
        and that tooltip are no content: a screen reader that gets only those tells nothing of
        the failure. A straggler, once named, is shown as a warning banner: the label that reads
        "Straggler: …". text is "" when no banner shows."""
        texts, notes = [], []
        node = (self.app.find_one("label", description=r"failure report")
                or self.app.find_one("label", name=r"^Root cause"))
        if node is None:
            notes.append("no root-cause banner label in the tree")
        elif harness.showing(node):
            words = [node.name, harness.text_of(node), node.description]
            content = [w for w in words if w and w not in BANNER_CHROME]
            if content:
                texts.append(" ".join(content))
            else:
                notes.append("the root-cause banner shows, but a screen reader gets only %r"
                             % [w for w in words if w])
        for node in self.app.find("label", name=r"^Straggler\b", only_showing=True):
            texts.append(node.name)
        return " | ".join(texts), notes

    def view(self, rank_columns=("Rank", "State", "Step")):
        """Everything the checks read, in one snapshot."""
        v = {"title": self.app.title()}
        tree = self.run_list()
        v["run_rows"] = self.app.table_rows(tree, ("Name", "State")) if tree else []
        mine = [r for r in v["run_rows"] if r.get("Name") == self.run.name]
        v["run_state"] = mine[0].get("State") if mine else None
        table = self.rank_table()
        v["rank_count"] = self.app.row_count(table) if table else None
        v["ranks"] = self.app.table_rows(table, rank_columns) if table else []
        v["banner"], v["banner_notes"] = self.banner()
        bars = self.app.progress_texts()
        v["progress"] = bars[0]["text"] if bars else None
        v["progress_value"] = bars[0]["value"] if bars else None
        v["labels"] = self.app.label_texts()
        self.last_view = v
        return v

    def expect(self, check, timeout, what, **view_args):
        """Polls the GUI until check(view) returns no complaints; returns that view. On time
        out: CaseFailure with the complaints, the last view and the tree."""
        complaints = ["nothing read yet"]

        def ok():
            nonlocal complaints
            if not self.app.alive():
                p = self.app.proc
                raise CaseFailure("rankdeck exited (%s):\n%s"
                                  % (p.returncode, harness.tail(p.log_path)))
            try:
                complaints = check(self.view(**view_args))
            except Exception:
                self._rank_table = self._run_list = None  # found again: the page was rebuilt
                raise
            return not complaints

        try:
            harness.wait_until(ok, timeout, what)
        except TimeoutError as e:
            raise CaseFailure("%s\n  unmet: %s\n%s" % (e, "\n         ".join(complaints),
                                                        describe(self.last_view)))
        return self.last_view


def describe(v, max_ranks=12):
    if not v:
        return "  (the GUI was never read)"
    lines = ["  title:    %r" % v["title"],
             "  run list: %s" % ", ".join("%s: %r" % (r.get("Name"), r.get("State"))
                                        for r in v["run_rows"]),
             "  progress: %r (value %s)" % (v["progress"], v["progress_value"]),
             "  banner:   %r%s" % (v["banner"], "".join("  (%s)" % n for n in v["banner_notes"])),
             "  ranks (%s rows):" % v["rank_count"]]
    for r in v["ranks"][:max_ranks]:
        lines.append("    rank %s: %s" % (r.get("Rank"), "  ".join(
            "%s=%r" % (k, val) for k, val in r.items() if k != "Rank")))
    more = len(v["ranks"]) - max_ranks
    lines += ["    … %d more" % more] if more > 0 else []
    lines.append("  labels:   %s" % "; ".join(repr(t[:120]) for t in v["labels"]))
    return "\n".join(lines)


# --- what the checks say ---------------------------------------------------------------------
def title_says(v, word):
    if not re.search(r"\b%s\b" % re.escape(word), v["title"] or ""):
        return ["title %r does not contain %r" % (v["title"], word)]
    return []


def run_row_says(v, word):
    if not (v["run_state"] or "").startswith(word):
        return ["run list row state is %r, not %r" % (v["run_state"], word)]
    return []


def rank_state(v, rank):
    return next((r.get("State") or "" for r in v["ranks"] if r.get("Rank") == str(rank)), None)


def ranks_all_start(v, word, count):
    out = []
    if len(v["ranks"]) != count:
        out.append("rank table has %d rows, not %d" % (len(v["ranks"]), count))
    bad = ["rank %s %r" % (r.get("Rank"), r.get("State")) for r in v["ranks"]
           if not (r.get("State") or "").startswith(word)]
    if bad:
        out.append("rank rows not starting with %r: %s" % (word, ", ".join(bad)))
    return out


def names_rank(text, rank):
    return bool(re.search(r"\brank %d\b" % rank, text or "", re.IGNORECASE))


def banner_names(v, rank):
    if not v["banner"]:
        return ["no banner text a screen reader can read%s"
                % "".join(": " + n for n in v["banner_notes"])]
    if not names_rank(v["banner"], rank):
        return ["banner %r does not name rank %d" % (v["banner"], rank)]
    return []


def summary(v, ranks=True):
    parts = ["title %r" % v["title"], "run list %r" % v["run_state"]]
    # "<run> — <state> — RankDeck": the same run told two ways is worth a note, not a failure.
    said = (v["title"] or "").split(" — ")
    if len(said) == 3 and v["run_state"] and not v["run_state"].startswith(said[1]):
        parts.append("NOTE: the title says %r, the run list %r" % (said[1], v["run_state"]))
    if v["progress"] is not None:
        parts.append("progress %r" % v["progress"])
    if v["banner"]:
        parts.append("banner %r" % v["banner"][:160])
    if ranks:
        parts.append("ranks " + ", ".join("%s %r" % (r.get("Rank"), r.get("State"))
                                          for r in v["ranks"][:8])
                     + (" …" if len(v["ranks"]) > 8 else ""))
    return "; ".join(parts)


# --- the cases -------------------------------------------------------------------------------
def case_healthy(c):
    """4 ranks of the built-in worker, 300 steps (20 ms each, so that the GUI follows it live
    for a few seconds): finished everywhere, 300 / 300."""
    c.launch("acc-healthy", ["--nproc-per-node", "4", "--", "--task", "linear", "--steps", "300",
                             "--step-delay-ms", "20"])
    c.open_gui()

    def check(v):
        out = title_says(v, "finished") + run_row_says(v, "finished")
        if "300 / 300" not in (v["progress"] or ""):
            out.append("progress text %r (value %s) does not contain '300 / 300'"
                       % (v["progress"], v["progress_value"]))
        return out + ranks_all_start(v, "finished", 4)

    code = c.run.ends(120)
    if code != 0:
        raise CaseFailure("the run itself did not finish (rankdeck-cli exit %d):\n%s"
                          % (code, harness.tail(c.run.proc.log_path)))
    return summary(c.expect(check, SETTLE_S, "the finished run, %d s after it ended" % SETTLE_S))


def case_crash(c):
    """Rank 1 segfaults at step 100 of 300: it is the root cause, the others its consequence."""
    c.launch("acc-crash", ["--nproc-per-node", "4", "--", "--task", "linear", "--steps", "300",
                           "--step-delay-ms", "20", "--fault", "segv@100", "--fault-rank", "1"])
    c.open_gui()

    def check(v):
        out = title_says(v, "failed") + run_row_says(v, "failed")
        if len(v["ranks"]) != 4:
            out.append("rank table has %d rows, not 4" % len(v["ranks"]))
        one = rank_state(v, 1)
        if not (one or "").startswith("failed (root cause)"):
            out.append("rank 1 reads %r, not 'failed (root cause)…'" % one)
        for r in (0, 2, 3):
            s = rank_state(v, r) or ""
            if not (s.startswith("stopped (consequence)") or s.startswith("finished")):
                out.append("rank %d reads %r, not 'stopped (consequence)' or 'finished'" % (r, s))
        return out + banner_names(v, 1)

    c.run.ends(120)
    return summary(c.expect(check, SETTLE_S, "the failed run, %d s after it ended" % SETTLE_S))


def case_desync(c):
    """Uneven data shards (tests/cli/programs/collectives.py uneven, 2 ranks): rank 0 enters
    barrier() while rank 1 waits in DDP's all_reduce. Once the flight recorders' verdict is in
    the record, the GUI must say desynced within the hang timeout + 3 s: every rank, the run,
    the title; no rank still "running"."""
    python = torch_python()
    if not python:
        raise CaseSkip("no torch Python (RANKDECK_TORCH_PYTHON or ~/.cache/rankdeck/torch-venv; "
                       "scripts/bootstrap.sh creates it)")
    hang_timeout = 20
    script = os.path.join(SOURCE_DIR, "tests", "cli", "programs", "collectives.py")
    c.launch("acc-desync", ["--nproc-per-node", "2", "--hang-timeout", str(hang_timeout),
                            "--exec", "--", python, script, "uneven"])
    c.open_gui()

    def verdict(state):
        fr = state.get("flight_recorder", {})
        if fr.get("verdict_shown") and fr.get("verdict", {}).get("kind") == "desync":
            return fr
        return None

    fr = c.run.record_says(verdict, 180, "a desync verdict in state.json")
    culprits = fr.get("verdict", {}).get("culprits")

    def check(v):
        out = title_says(v, "desynced") + run_row_says(v, "desynced")
        out += ranks_all_start(v, "desynced", 2)
        running = ["rank %s" % r.get("Rank") for r in v["ranks"]
                   if (r.get("State") or "").startswith("running")]
        if running:
            out.append("still 'running': %s" % ", ".join(running))
        return out

    v = c.expect(check, hang_timeout + 3, "desynced within %d s of the verdict"
                 % (hang_timeout + 3))
    return "verdict culprits %s; %s" % (culprits, summary(v))


def case_hang(c):
    """4 ranks of the built-in worker; rank 2 stops at step 20 and sleeps outside any
    collective (--fault hang@20) while the others wait for it: stuck, rank 2 the culprit."""
    c.launch("acc-hang", ["--nproc-per-node", "4", "--hang-timeout", "5", "--",
                          "--task", "linear", "--steps", "1000000", "--step-delay-ms", "20",
                          "--fault", "hang@20", "--fault-rank", "2"])
    c.open_gui()

    def check(v):
        out = title_says(v, "stuck") + run_row_says(v, "stuck") + ranks_all_start(v, "stuck", 4)
        two = rank_state(v, 2) or ""
        if not re.search(r"culprit|root cause", two):
            out.append("rank 2 (the sleeping one) reads %r: no 'culprit' or 'root cause'" % two)
        return out

    c.run.record_says(lambda st: st.get("hung"), 120, "the launcher flagging the run hung")
    return summary(c.expect(check, SETTLE_S, "the stuck run, %d s after the launcher flagged it"
                            % SETTLE_S))


def straggler_shown(v, rank):
    """What is wrong with how the window shows `rank` as the one straggler: its row, no other
    row, the title, the run list and the banner."""
    out = []
    state = rank_state(v, rank) or ""
    if not state.startswith("straggling"):
        out.append("rank %d reads %r, not 'straggling…'" % (rank, state))
    others = ["rank %s %r" % (r.get("Rank"), r.get("State")) for r in v["ranks"]
              if r.get("Rank") != str(rank) and (r.get("State") or "").startswith("straggling")]
    if others:
        out.append("other ranks read straggling: %s" % ", ".join(others))
    return (out + title_says(v, "straggling") + run_row_says(v, "straggling") +
            banner_names(v, rank))


def case_straggler(c):
    """Rank 3 is 30 ms slower each step (--step-delay-ms 30 --fault-rank 3, no fault): while
    the run goes on, its row, the title and the run list say straggling (the launcher judges
    every 2 s and keeps it in state.json), and the banner names it."""
    c.launch("acc-straggler", ["--nproc-per-node", "4", "--", "--task", "linear",
                               "--steps", "1500", "--step-delay-ms", "30", "--fault-rank", "3"])
    c.open_gui()

    return summary(c.expect(lambda v: straggler_shown(v, 3), 60, "rank 3 straggling"))


def case_why_slow(c):
    """Issue 43: rank 2's Dataset burns CPU in an unmodified DDP script (launch --exec): the
    sampled stacks must make its row, the title and the run list say straggling, and the banner
    a screen reader reads must name rank 2 and why (input-bound, at its Dataset)."""
    python = torch_python()
    if not python:
        raise CaseSkip("no torch Python (RANKDECK_TORCH_PYTHON or ~/.cache/rankdeck/torch-venv; "
                       "scripts/bootstrap.sh creates it)")
    script = os.path.join(SOURCE_DIR, "tests", "cli", "programs", "slow_rank.py")
    c.launch("acc-why-slow", ["--nproc-per-node", "4", "--exec", "--", python, script,
                              "--cause", "input", "--slow-rank", "2", "--seconds", "120"])
    c.open_gui()

    def check(v):
        out = straggler_shown(v, 2)
        if "input-bound" not in (v["banner"] or ""):
            out.append("banner %r does not say input-bound" % v["banner"])
        if "Samples.__getitem__" not in (v["banner"] or ""):
            out.append("banner %r does not name the Dataset" % v["banner"])
        return out

    return summary(c.expect(check, 90, "rank 2 straggling, input-bound"))


TINY_PROGRAM = """\
import os, time
rank = int(os.environ.get("RANK", "0"))
for step in range(6):
    print("step %d loss=%.4f" % (step, 1.0 / (step + 1 + rank)), flush=True)
    time.sleep(0.5)
"""


def case_ranks96(c):
    """96 ranks of a program that prints six loss= lines in 3 s and exits (no torch: 96
    processes on 2 cores): the rank table has 96 rows, the title says finished."""
    script = c.s.path("tiny.py")
    with open(script, "w") as f:
        f.write(TINY_PROGRAM)
    python = torch_python() or sys.executable
    c.launch("acc-ranks96", ["--nproc-per-node", "96", "--exec", "--", python, script])
    c.open_gui()

    def check(v):
        out = title_says(v, "finished") + run_row_says(v, "finished")
        if v["rank_count"] != 96:
            out.append("the rank table reports %s rows, not 96" % v["rank_count"])
        last = v["ranks"][-1].get("Rank") if v["ranks"] else None
        if last != "95":
            out.append("its last row is rank %r, not 95" % last)
        return out

    c.run.ends(180)
    v = c.expect(check, SETTLE_S, "96 finished ranks, %d s after the run ended" % SETTLE_S,
                 rank_columns=("Rank", "State"))
    states = collections.Counter(r.get("State") for r in v["ranks"])
    return "%s; %d rows: %s" % (summary(v, ranks=False), v["rank_count"],
                                ", ".join("%d %r" % (n, s) for s, n in sorted(states.items())))


CASES = [("healthy", case_healthy), ("crash", case_crash), ("desync", case_desync),
         ("hang", case_hang), ("straggler", case_straggler), ("why_slow", case_why_slow),
         ("ranks96", case_ranks96)]


def run_case(name, fn, build_dir, run_argument):
    started = time.monotonic()
    with harness.Session(build_dir, name) as session:
        c = Ctx(session, run_argument)
        try:
            return "PASS", fn(c), started
        except CaseSkip as e:
            return "SKIP", str(e), started
        except Exception as e:
            text = str(e) if isinstance(e, (CaseFailure, harness.HarnessError, TimeoutError)) \
                else traceback.format_exc()
            if c.app is not None:
                try:
                    text += "\n  opened by %s\n  accessibility tree:\n%s" % (
                        c.opened_by, indent(c.app.dump(), "    "))
                except Exception as dump_error:
                    text += "\n  (tree unreadable: %s)" % dump_error
                text += "\n  rankdeck's output (last lines):\n" + indent(
                    harness.tail(c.app.proc.log_path, 15), "    ")
            if c.run is not None:
                text += "\n  rankdeck-cli's output (last lines):\n" + indent(
                    harness.tail(c.run.proc.log_path, 15), "    ")
            return "FAIL", text, started
        finally:
            # Stopped as a user would (the launcher writes its record); the session ends the rest.
            if c.run is not None:
                try:
                    c.run.stop()
                except Exception as e:
                    print("[%s] stopping the run: %s" % (name, e), flush=True)


def indent(text, prefix):
    return "\n".join(prefix + line for line in text.splitlines())


CHILD_CODES = {"PASS": 0, "FAIL": 1, "SKIP": 3}
# One case's limit, its launcher's and GUI's waits included (desync: ~10 s passing, 4 min not).
CASE_LIMIT_S = 330


def run_child(name, build_dir, run_argument):
    """In the child process: one case, one line PASS/FAIL/SKIP with what was read."""
    verdict, text, started = run_case(name, dict(CASES)[name], build_dir, run_argument)
    print("%s %s (%.0f s): %s" % (verdict, name, time.monotonic() - started, text), flush=True)
    return CHILD_CODES[verdict]


def run_in_child(name, build_dir, run_argument, limit):
    """pyatspi binds to one AT-SPI bus per process, and each case has its own: each runs in a
    process of its own. Its session token is ours to know, so that whatever a child killed at
    its time limit left behind is ended too."""
    token = uuid.uuid4().hex
    env = dict(os.environ, **{harness.TOKEN_VARIABLE: token})
    argv = [sys.executable, os.path.abspath(__file__), "--build-dir", build_dir,
            "--child", name] + (["--run-argument"] if run_argument else [])
    child = subprocess.Popen(argv, env=env, start_new_session=True)
    try:
        code = child.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        # SIGTERM first: the child's finally blocks stop its run and close its session.
        harness.end_group(child, grace=20)
        print("FAIL %s: stopped after %d s (its share of the suite's time)" % (name, limit),
              flush=True)
        code = CHILD_CODES["FAIL"]
    finally:
        if child.poll() is None:
            harness.end_group(child, grace=20)
        harness.end_token_processes(token)
        harness.reap_orphans()
    for verdict, value in CHILD_CODES.items():
        if code == value:
            return verdict
    print("FAIL %s: the case's process ended with status %s" % (name, code), flush=True)
    return "FAIL"


def _exit_on_signal(signum, _frame):
    # SIGTERM (ctest, CI, a Ctrl-C'd make) becomes SystemExit: every finally block runs, every
    # process started is ended.
    sys.exit(128 + signum)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(SOURCE_DIR, "build"))
    parser.add_argument("--time-limit", type=int, default=540,
                        help="seconds for all cases together (default 540, under ctest's 600)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--run-argument", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help="cases to run (default all): %s" % ", ".join(n for n, _ in CASES))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _exit_on_signal)
    build_dir = os.path.abspath(args.build_dir)
    if args.child:
        return run_child(args.child, build_dir, args.run_argument)
    unknown = [n for n in args.cases if n not in dict(CASES)]
    if unknown:
        parser.error("unknown case(s) %s; known: %s" % (", ".join(unknown),
                                                        ", ".join(n for n, _ in CASES)))
    why = harness.missing_prerequisites()
    if why:
        print("SKIP gui_atspi: " + "; ".join(why), flush=True)
        return SKIP
    bin_dir = os.path.join(build_dir, "bin")
    try:
        wait_for_binaries(bin_dir)
    except TimeoutError as e:
        print("FAIL gui_atspi: %s (build the project first: scripts/bootstrap.sh)" % e, flush=True)
        return 1
    run_argument = gui_takes_run_argument(bin_dir)
    print("rankdeck %s a RUN argument; the run is opened %s" % (
        "takes" if run_argument else "does not take",
        "with it" if run_argument else "by a click in the run list"), flush=True)
    harness.become_subreaper()  # what a child leaves behind is reaped here (run_in_child)
    results = []
    total = time.monotonic()
    deadline = total + args.time_limit
    for name, _ in CASES:
        if args.cases and name not in args.cases:
            continue
        left = int(deadline - time.monotonic())
        if left < 30:
            print("FAIL %s: not run, the suite's %d s are spent" % (name, args.time_limit),
                  flush=True)
            results.append((name, "FAIL"))
            continue
        try:
            wait_for_binaries(bin_dir, timeout=min(180, left))
        except TimeoutError as e:
            print("FAIL %s: %s" % (name, e), flush=True)
            results.append((name, "FAIL"))
            continue
        left = int(deadline - time.monotonic())
        results.append((name, run_in_child(name, build_dir, run_argument,
                                           min(CASE_LIMIT_S, max(left, 1)))))
    print("\n%d passed, %d failed, %d skipped in %.0f s: %s" % (
        sum(v == "PASS" for _, v in results), sum(v == "FAIL" for _, v in results),
        sum(v == "SKIP" for _, v in results), time.monotonic() - total,
        ", ".join("%s %s" % (n, v) for n, v in results)), flush=True)
    return 1 if any(v == "FAIL" for _, v in results) else 0


if __name__ == "__main__":
    sys.exit(main())
