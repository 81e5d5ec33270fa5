#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs clang-tidy (the repo's .clang-tidy) and clazy (level 1) over first-party sources.

  scripts/static-analysis.py [-B BUILD] [--tool tidy|clazy|all] [-j N] [--no-cache] [--all] [PATH...]

PATH narrows the run to sources under those folders or files; without one, what CI checks
(GATED below: core cli gui plot bench); --all: every first-party translation unit of the build,
tests/ and worker/ too. Needs a configured and
built tree (compile_commands.json for the flags, ninja's dependency log for the cache key).
Any finding in a first-party file is an error: the exit status is 1 and each finding is printed
with its file, line and check.

Results are cached per translation unit in ~/.cache/rankdeck/static-analysis (RANKDECK_CACHE
moves it): the key is the tool and its version, its configuration, the compile command, and
the content of the source and of every first-party header it includes (a system header by its
path, size and time). So a run repeats the analysis only where something it reads changed,
and gives the same answer as a full run; a clean clone on a machine that ran it before pays
only for what changed. docs/reliability.md (Static analysis) says what a full run costs.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRST_PARTY = ("core", "cli", "gui", "plot", "bench", "worker", "tests")
# What CI checks (no PATH given; scripts/test.sh runs it in CI, RANKDECK_STATIC_ANALYSIS=0 not):
# the product's Qt code. tests/ and worker/ are analysed with
# --all or by PATH; their findings are not fixed yet, and worker/'s libtorch units are most of a
# full run's cost (docs/reliability.md, Static analysis).
GATED = ("core", "cli", "gui", "plot", "bench")
# clazy's level 1 without the checks that do not fit Qt 6, and why:
#   qstring-ref  suggests QString::midRef() and QStringRef, which Qt 6 no longer has.
CLAZY_CHECKS = "level1,no-qstring-ref"
# Only our own files; Qt's, libtorch's and the libraries' headers are not ours to fix.
HEADER_FILTER = "^" + re.escape(ROOT) + "/(" + "|".join(FIRST_PARTY) + ")/"
# A result holds for this script as it is (its checks, flags and batching).
with open(os.path.abspath(__file__), "rb") as _script:
    SCRIPT_ID = hashlib.sha256(_script.read()).hexdigest()
# The compile commands are g++'s: options clang does not know are not findings.
CLANG_EXTRA = ["-Wno-unknown-warning-option", "-Wno-unused-command-line-argument"]


def tool_path(names):
    for name in names:
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            candidate = os.path.join(folder, name)
            if os.access(candidate, os.X_OK):
                return candidate
    return None


def tool_version(path):
    out = subprocess.run([path, "--version"], capture_output=True, text=True)
    return (out.stdout + out.stderr).strip()


def first_party(path):
    rel = os.path.relpath(path, ROOT)
    return not rel.startswith("..") and rel.split(os.sep, 1)[0] in FIRST_PARTY


def load_units(build):
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    units = {}
    for e in entries:
        path = os.path.normpath(os.path.join(e["directory"], e["file"]))
        # moc and rcc output in the build tree is generated, not ours
        if not first_party(path) or path.startswith(os.path.abspath(build) + os.sep):
            continue
        args = e.get("arguments") or shlex.split(e["command"])
        output = os.path.relpath(os.path.join(e["directory"], e.get("output", "")), build)
        # one unit per source; a source built twice (a test's own copy) is analysed once
        units.setdefault(path, {"args": args, "dir": e["directory"], "output": output})
    return units


def load_deps(build):
    """Object path (relative to the build) -> the files ninja saw it read."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True)
    deps, current = {}, None
    for line in out.stdout.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            current = line.split(":", 1)[0]
            deps[current] = []
        elif current is not None:
            deps[current].append(line.strip())
    return deps


class Hasher:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.memo = {}

    def file(self, path):
        path = os.path.normpath(os.path.join(self.build, path))
        if path not in self.memo:
            try:
                if first_party(path):
                    with open(path, "rb") as f:
                        self.memo[path] = hashlib.sha256(f.read()).hexdigest()
                else:
                    st = os.stat(path)
                    self.memo[path] = "%d:%d" % (st.st_size, st.st_mtime_ns)
            except OSError:
                self.memo[path] = "missing"
        return path + "=" + self.memo[path]


def unit_key(tool_id, source, unit, deps, hasher):
    # Keyed without the clone's own path: CI analyses a fresh clone, whose results are the ones
    # an earlier clone on the same machine found for the same content.
    def here(text):
        return text.replace(hasher.build, "@BUILD").replace(ROOT, "@ROOT")
    h = hashlib.sha256(tool_id.encode())
    h.update(here("\0".join(a for a in unit["args"] if a != unit["output"])).encode())
    h.update(here(hasher.file(source)).encode())
    for dep in deps.get(unit["output"], []):
        h.update(here(hasher.file(dep)).encode())
    # a unit ninja has no record of (not built yet) is keyed on its source alone: never cached
    return h.hexdigest() if unit["output"] in deps else None


def clean_args(args, source, output):
    """The compile command as the tools want it after `--`: no compiler, source, output, -c or
    -Werror (a warning clang has and g++ has not is not a finding of ours), and the autogen
    include folder apart, because units of one batch each bring their own."""
    kept, autogen, skip = [], [], False
    for arg in args[1:]:
        if skip:
            skip = False
        elif arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif arg in ("-c", source, "-Werror", "-MD", "-MMD") or arg == output:
            pass
        elif arg.startswith("-I") and arg.endswith("_autogen/include"):
            autogen.append(arg)
        else:
            kept.append(arg)
    return kept, autogen


def make_batches(units, size):
    """Units that share flags and a top-level folder (core, gui, ...) are analysed as one
    translation unit that includes them all: Qt's (and libtorch's) headers are parsed, and every
    check's matchers run over them, once for the batch instead of once a file, which is most of
    the cost (docs/reliability.md, Static analysis). Sorted paths keep batches stable as files
    come and go."""
    groups = {}
    for source, unit in sorted(units.items()):
        flags, autogen = clean_args(unit["args"], source, unit["output"])
        top = os.path.relpath(source, ROOT).split(os.sep, 1)[0]
        groups.setdefault((top, tuple(flags)), []).append((source, autogen))
    batches = []
    for (_top, flags), members in sorted(groups.items()):
        # equal shares, so that the last batch of a group is not a straggler of two files
        count = -(-len(members) // size)
        share = -(-len(members) // count)
        for i in range(0, len(members), share):
            chunk = members[i:i + share]
            autogen = sorted({a for _s, extra in chunk for a in extra})
            batches.append({"sources": [s for s, _a in chunk], "flags": list(flags) + autogen})
    return batches


# A Qt test ends in QTEST_*MAIN, which defines main(): in a batch each becomes a no-op.
TEST_PREAMBLE = """#include <QtTest/qtest.h>
#undef QTEST_MAIN
#undef QTEST_GUILESS_MAIN
#undef QTEST_APPLESS_MAIN
#define QTEST_MAIN(T) static_assert(sizeof(T) > 0);
#define QTEST_GUILESS_MAIN(T) static_assert(sizeof(T) > 0);
#define QTEST_APPLESS_MAIN(T) static_assert(sizeof(T) > 0);
"""


def write_batch(batch, folder):
    """The batch as one file: each source's text after a #line naming it. Checks and clang's
    analyzer look at the main file's code (not at an #include'd file's); quoted includes are
    found with -iquote. Returns the file and where each source starts in it, because clang-tidy
    names a finding by the batch's own line, not by the #line."""
    text = "// Generated by scripts/static-analysis.py: one batch of first-party sources.\n"
    if len(batch["sources"]) > 1 and "-DQT_TESTLIB_LIB" in batch["flags"]:
        text += TEST_PREAMBLE
    starts = []
    for source in batch["sources"]:
        with open(source, encoding="utf-8") as f:
            text += '#line 1 "%s"\n' % source
            starts.append((text.count("\n") + 1, source))
            text += f.read() + "\n"
    path = os.path.join(folder, hashlib.sha256(text.encode()).hexdigest()[:16] + ".cpp")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path, starts


def batch_place(starts, line):
    """The source and its line for a line of the batch."""
    first, source = starts[0]
    for start, name in starts:
        if start <= line:
            first, source = start, name
    return source, line - first + 1


def batch_flags(batch):
    folders = sorted({os.path.dirname(s) for s in batch["sources"]})
    return batch["flags"] + ["-iquote" + f for f in folders]


def tidy_command(tidy, path, flags, analyzer):
    # the batch lies outside the tree, where clang-tidy would not find the tree's .clang-tidy
    # readability-duplicate-include would see every source's includes as one file's;
    # scripts/check-layout.py finds a duplicate include instead.
    cmd = [tidy, "--quiet", "--config-file=" + os.path.join(ROOT, ".clang-tidy"),
           "--checks=-readability-duplicate-include", "--header-filter", HEADER_FILTER]
    # clang's analyzer (the clang-analyzer-* checks) in its shallow mode: it inlines less and
    # explores fewer paths, 1.2 s of CPU a source here against 4.5 s in the default deep mode,
    # which was half of a cold run (docs/reliability.md, Static analysis). --analyzer deep
    # runs the default.
    if analyzer == "shallow":
        cmd += ["--extra-arg=-Xclang", "--extra-arg=-analyzer-config",
                "--extra-arg=-Xclang", "--extra-arg=mode=shallow"]
    return cmd + [path, "--"] + flags + CLANG_EXTRA


def clazy_command(clazy, path, flags):
    cmd = [clazy, "--checks=" + CLAZY_CHECKS, "--header-filter=" + HEADER_FILTER]
    return cmd + [path, "--"] + flags + CLANG_EXTRA


FINDING = re.compile(r"^(/[^:]+):(\d+):(\d+): (warning|error): (.*)$")


def findings(output, batch_path, starts):
    """The diagnostics that name a first-party file, and whether the batch failed to compile
    (two of its sources define the same file-local name, say)."""
    found, broken = [], False
    for line in output.splitlines():
        m = FINDING.match(line)
        if not m:
            continue
        path, number = m.group(1), int(m.group(2))
        if path == batch_path:
            path, number = batch_place(starts, number)
        if m.group(4) == "error" and (m.group(5).endswith("[clang-diagnostic-error]")
                                      or not m.group(5).endswith("]")):
            broken = True
        elif first_party(path):
            found.append("%s:%d:%s: %s" % (os.path.relpath(path, ROOT), number, m.group(3),
                                           m.group(5)))
    return found, broken


def compile_errors(clang, batch, folder):
    """The sources of a batch that clang cannot compile as part of it (it says where with the
    #line names), or None when the batch compiles. Only the front end runs: a few seconds."""
    path, starts = write_batch(batch, folder)
    out = subprocess.run([clang, "-fsyntax-only", path] + batch_flags(batch) + CLANG_EXTRA,
                         capture_output=True, text=True, cwd=ROOT)
    os.unlink(path)
    if out.returncode == 0:
        return None
    at_fault = set()
    for line in out.stderr.splitlines():
        m = FINDING.match(line)
        if m and m.group(4) == "error":
            where = m.group(1)
            if where == path:
                where = batch_place(starts, int(m.group(2)))[0]
            if where in batch["sources"]:
                at_fault.add(where)
    return at_fault


def compiling_batches(clang, batch, folder):
    """The batch as batches that each compile as one translation unit. Two sources of a batch
    may define the same file-local name (an anonymous namespace's helper, a static): clang
    names the later one, which moves to a batch of its own, instead of halving the batch and
    parsing Qt's headers again for each half. A single source is its own batch whatever it
    does (the tools then report why it does not compile)."""
    if len(batch["sources"]) == 1:
        return [batch]
    kept, moved = list(batch["sources"]), []
    while len(kept) > 1:
        at_fault = compile_errors(clang, dict(batch, sources=kept), folder)
        if at_fault is None:
            break
        if not at_fault or len(at_fault) == len(kept):
            # nothing to blame (an error in a header): halves, as a last resort
            half = len(kept) // 2
            moved = kept[half:] + moved
            kept = kept[:half]
            continue
        moved += [s for s in kept if s in at_fault]
        kept = [s for s in kept if s not in at_fault]
    result = [dict(batch, sources=kept)]
    if moved:
        result += compiling_batches(clang, dict(batch, sources=sorted(moved)), folder)
    return result


def analyse(command_for, batch, folder):
    """Runs the tool on a batch; a batch that does not compile as one (compiling_batches did
    not see why) is split in halves, and a single source that does not compile is a failure of
    its own."""
    start = time.monotonic()
    path, starts = write_batch(batch, folder)
    out = subprocess.run(command_for(path, batch_flags(batch)), capture_output=True, text=True, cwd=ROOT)
    os.unlink(path)
    text = out.stdout + out.stderr
    found, broken = findings(text, path, starts)
    seconds = time.monotonic() - start
    if not broken and (out.returncode == 0 or found):
        return found, seconds, 1
    if len(batch["sources"]) == 1:
        return ["%s: does not compile for the analysis:\n%s" % (
            os.path.relpath(batch["sources"][0], ROOT), text.strip()[-3000:])], seconds, 1
    half = len(batch["sources"]) // 2
    total, runs = [], 1
    for part in (batch["sources"][:half], batch["sources"][half:]):
        sub = dict(batch, sources=part)
        f, s, r = analyse(command_for, sub, folder)
        total += f
        seconds += s
        runs += r
    return total, seconds, runs


def children_cpu():
    """CPU seconds the tools used: wall time says little on a machine shared with other work."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-B", "--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--tool", choices=("tidy", "clazy", "all"), default="all")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--batch", type=int, default=40, help="sources per batch at most (1: one at a time)")
    p.add_argument("--analyzer", choices=("shallow", "deep"), default="shallow",
                   help="clang's analyzer mode in clang-tidy (deep: clang's default, ~4x the CPU)")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--all", action="store_true", help="every first-party source, tests/ and worker/ too")
    p.add_argument("paths", nargs="*", help="folders or files to narrow the run to")
    a = p.parse_args()

    build = os.path.abspath(a.build)
    if not os.path.exists(os.path.join(build, "compile_commands.json")):
        sys.exit("static-analysis: %s has no compile_commands.json; configure and build first "
                 "(scripts/bootstrap.sh)" % build)
    units = load_units(build)
    if a.paths or not a.all:
        wanted = [os.path.abspath(x) for x in (a.paths or [os.path.join(ROOT, g) for g in GATED])]
        units = {s: u for s, u in units.items()
                 if any(s == w or s.startswith(w + os.sep) for w in wanted)}
    deps = load_deps(build)
    hasher = Hasher(build)
    cache_dir = os.path.join(os.environ.get("RANKDECK_CACHE", os.path.expanduser("~/.cache/rankdeck")),
                             "static-analysis")
    work_dir = os.path.join(cache_dir, "batches")
    os.makedirs(work_dir, exist_ok=True)
    batches = make_batches(units, max(1, a.batch))

    tools = []
    if a.tool in ("tidy", "all"):
        tidy = tool_path(["clang-tidy", "clang-tidy-14"])
        if not tidy:
            sys.exit("static-analysis: clang-tidy not found (scripts/bootstrap.sh installs it)")
        with open(os.path.join(ROOT, ".clang-tidy"), encoding="utf-8") as f:
            tools.append(("clang-tidy", tool_version(tidy) + f.read() + a.analyzer,
                          lambda path, flags: tidy_command(tidy, path, flags, a.analyzer)))
    if a.tool in ("clazy", "all"):
        clazy = tool_path(["clazy-standalone"])
        if not clazy:
            sys.exit("static-analysis: clazy-standalone not found (Debian's clazy package; "
                     "scripts/bootstrap.sh installs it)")
        tools.append(("clazy", tool_version(clazy) + CLAZY_CHECKS,
                      lambda path, flags: clazy_command(clazy, path, flags)))

    # How each batch to analyse splits into batches that compile, worked out once for both tools.
    clang = tool_path(["clang++-14", "clang++"])
    layouts = {}

    def layout(batch):
        if not clang:
            return [batch]
        key = tuple(batch["sources"])
        if key not in layouts:
            layouts[key] = compiling_batches(clang, batch, work_dir)
        return layouts[key]

    def analyse_batch(command_for, batch):
        total, seconds, runs = [], 0.0, 0
        for part in layout(batch):
            f, s, r = analyse(command_for, part, work_dir)
            total += f
            seconds += s
            runs += r
        return total, seconds, runs

    failed = False
    for name, tool_id, command_for in tools:
        start = time.monotonic()
        todo, seen, cached, analysed = [], set(), 0, 0

        def report(lines):
            for line in lines:
                if line not in seen:
                    seen.add(line)
                    print(line, flush=True)

        for batch in batches:
            keys = [unit_key(tool_id + SCRIPT_ID, s, units[s], deps, hasher) for s in batch["sources"]]
            key = None
            if not a.no_cache and all(keys):
                flags = [f.replace(build, "@BUILD").replace(ROOT, "@ROOT") for f in batch["flags"]]
                key = hashlib.sha256("\0".join(keys + flags).encode()).hexdigest()
            if key and os.path.exists(os.path.join(cache_dir, key)):
                with open(os.path.join(cache_dir, key), encoding="utf-8") as f:
                    report(json.load(f)["findings"])
                cached += len(batch["sources"])
                continue
            todo.append((batch, key))
        cpu_before, runs = children_cpu(), 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            # Each batch's result is kept as soon as it is known, so a run that is stopped (or
            # that times out in CI) leaves what it finished for the next run.
            futures = {pool.submit(analyse_batch, command_for, batch): (batch, key)
                       for batch, key in todo}
            for future in concurrent.futures.as_completed(futures):
                batch, key = futures[future]
                found, seconds, n = future.result()
                runs += n
                analysed += len(batch["sources"])
                report(found)
                if key:
                    with open(os.path.join(cache_dir, key), "w", encoding="utf-8") as f:
                        json.dump({"sources": batch["sources"], "findings": found,
                                   "seconds": seconds}, f)
        print("static-analysis: %s: %d sources (%d analysed in %d runs, %d from the cache), "
              "%d findings, %.0f s (%.0f s of CPU)" % (
                  name, len(units), analysed, runs, cached, len(seen), time.monotonic() - start,
                  children_cpu() - cpu_before), flush=True)
        failed = failed or bool(seen)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
