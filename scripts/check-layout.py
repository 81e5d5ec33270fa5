#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks the architecture rules that the #include lines show (docs/architecture.md, "Which folder of core/ may include which").

  scripts/check-layout.py            check; exit 1 naming every broken rule
  scripts/check-layout.py --graph    print core/'s folder include graph (and check)
  scripts/check-layout.py --root DIR check the tree at DIR instead of this checkout

Rules:
  1. core/'s folders form a DAG. A folder is a node by itself: core/transport/ssh is one node
     and core/transport another, so transport/ssh may include transport but then transport may
     not include transport/ssh (not even from a .cpp). An edge A -> B means some file of A
     (.h or .cpp) includes a file of B. Folders that reach each other are named, with their
     shortest cycle and the includes that make it.
  2. Inside each folder of core/, files form a DAG too (a file is its .h and .cpp together),
     but for the cycles KNOWN_FILE_CYCLES lists, each with why it is still there: a new one
     fails, and one that is gone is reported so that its line can go too.
  3. worker/ includes no Qt header (it runs on the nodes, where no Qt is installed) and
     nothing of core/ but core/wire/.
  4. core/ includes no QtWidgets header: core/ serves the CLI, which has no widgets.
  5. A first-party .h/.cpp (core gui cli worker bench tests) over 600 lines says why in its
     header comment (the // lines it starts with), on a line that starts with
     "// Longer than the house's ~600 lines:" and goes on with the reason.
  6. diagnosis/ and record/ include nothing of run/ or transport/ (nor transport/'s kinds):
     diagnosis/ explains from recorded data alone, so that a test, `show` or a second GUI can
     build a verdict from files without a RunController; record/ is the run's files, read back
     by processes that never launched the run (FORBIDDEN_FOLDERS).
  7. No first-party file includes the same header twice (clang-tidy's
     readability-duplicate-include cannot tell, as scripts/static-analysis.py runs it on batches).
  8. core/run/ holds at most RUN_HEADER_LIMIT headers (issue 39): what explains goes to
     diagnosis/, what is the record to record/; the lifecycle alone stays there.

Only quoted includes are followed (they are the project's own); the tree's files are read from
disk, so it needs no build. Python 3 from the system, nothing else.
"""
import argparse
import glob
import os
import re
import sys

RUN_HEADER_LIMIT = 20
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
SOURCES = (".h", ".cpp")
LONG_LIMIT = 600
LONG_MARKER = "// Longer than the house's ~600 lines:"

# File cycles inside a folder that were there when the check came (issue 28) and that no pure
# move breaks; they are not folder cycles. Each is the set of files (without .h/.cpp) that reach
# each other: a file that joins one makes it another set, and the check fails.
KNOWN_FILE_CYCLES = {
    # FailureReport's grouping (failuregrouping.cpp defines FailureReport::groups() and uses
    # parseFrame()) and Python parts (pythonfailure.cpp uses signalNameForNumber()) live in files
    # of their own, and failurereport.cpp prints with formatRankRanges(), mergePython() and
    # pythonFailureText(): one unit in three files; moving RankFailure out alone does not end it.
    frozenset({"diagnosis/failurereport", "diagnosis/failuregrouping", "diagnosis/pythonfailure"}),
    # CollectiveGroupAnalysis is CollectiveVerdict's working part: compute() builds one, and its
    # examine() gives a group's CollectiveVerdict; PointToPointAnalysis is the part for send and
    # recv, which reads the same analysis and gives a CollectiveVerdict too.
    frozenset({"diagnosis/collectivegroupanalysis", "diagnosis/collectiveverdict",
               "diagnosis/pointtopointanalysis"}),
    # CsvExport::write() takes a MetricsStore, and MetricsStore reads its CSV back with
    # CsvExport::read().
    frozenset({"store/csvexport", "store/metricsstore"}),
    # parsePythonTraceback() runs PythonTracebackReader, which yields PythonException values.
    frozenset({"stream/pythontraceback", "stream/pythontracebackreader"}),
}
# Folders of core/ that must not include others (or their subfolders), each with why; the same
# edges make the folder graph, so this only names a rule the DAG alone would allow.
FORBIDDEN_FOLDERS = {
    "diagnosis": ({"run", "transport"}, "diagnosis/ explains from recorded data alone, without "
                  "a RunController or a transport"),
    "record": ({"run", "transport"}, "record/ is the run's files, read back by processes that "
               "never launched the run"),
}
QT_HEADER = re.compile(r"^Q[A-Za-z]+(/|$)")  # <QString>, <QtCore/qglobal.h>, <QWidget>
# QtWidgets' class headers as Qt installs them; without an installed Qt, the module prefix and
# the widget classes this project uses stand for them.
QT_WIDGETS_DIRS = glob.glob("/usr/include/*/qt6/QtWidgets") + glob.glob("/usr/include/qt6/QtWidgets")
QT_WIDGETS_NAMES = {n for d in QT_WIDGETS_DIRS for n in os.listdir(d) if not n.endswith(".h")} or {
    "QApplication", "QWidget", "QMainWindow", "QDialog", "QMessageBox", "QStyledItemDelegate"}


def is_qt_widgets(name):
    return name.startswith("QtWidgets/") or name == "QtWidgets" or name in QT_WIDGETS_NAMES


def sources(root, top):
    for folder, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCES):
                yield os.path.join(folder, name)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1), m.group(2)


def resolve(root, path, name):
    """The file a quoted include names, relative to core/, or None when it is not in core/."""
    core = os.path.join(root, "core")
    for base in (os.path.dirname(path), core):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            rel = os.path.relpath(candidate, core)
            return None if rel.startswith("..") else rel
    return None


def components(graph):
    """The strongly connected components of graph (node -> set of nodes) with more than one
    node: each is a set of nodes that all reach each other, i.e. that lie on a cycle."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(n):
        index[n] = low[n] = len(index)
        stack.append(n)
        on_stack.add(n)
        for m in sorted(graph.get(n, ())):
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on_stack:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            component = set()
            while True:
                m = stack.pop()
                on_stack.discard(m)
                component.add(m)
                if m == n:
                    break
            if len(component) > 1:
                found.append(component)

    for n in sorted(graph):
        if n not in index:
            visit(n)
    return found


def shortest_cycle(graph, component):
    """The shortest cycle inside component, as [a, b, ..., a]: the one to cut first."""
    best = None
    for start in sorted(component):
        previous = {start: None}
        queue = [start]
        while queue:
            n = queue.pop(0)
            for m in sorted(graph.get(n, ())):
                if m == start:
                    path = [n]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    cycle = [start] + path[::-1][1:] + [start]
                    if best is None or len(cycle) < len(best):
                        best = cycle
                    queue = []
                    break
                if m in component and m not in previous:
                    previous[m] = n
                    queue.append(m)
    return best


def describe(cycle, why):
    lines = ["  " + " -> ".join(cycle)]
    for a, b in zip(cycle, cycle[1:]):
        for where in why[(a, b)][:3]:
            lines.append("      %s" % where)
        if len(why[(a, b)]) > 3:
            lines.append("      … and %d more %s -> %s" % (len(why[(a, b)]) - 3, a, b))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--graph", action="store_true", help="print core/'s folder graph")
    args = parser.parse_args()
    root = args.root
    problems = []

    folders = {}    # folder -> set of folders it includes
    folder_why = {}  # (a, b) -> ["core/x/y.cpp:12 includes \"b/z.h\""]
    files = {}      # folder -> {unit -> set of units}; unit: a file without .h/.cpp
    file_why = {}
    for path in sources(root, "core"):
        rel = os.path.relpath(path, os.path.join(root, "core"))
        folder = os.path.dirname(rel)
        unit = os.path.splitext(rel)[0]
        folders.setdefault(folder, set())
        files.setdefault(folder, {}).setdefault(unit, set())
        for number, kind, name in includes(path):
            where = "core/%s:%d includes %s%s%s" % (rel, number, "<" if kind == "<" else '"', name,
                                                     ">" if kind == "<" else '"')
            if kind == "<" and is_qt_widgets(name):
                problems.append("core/ includes a QtWidgets header (core/ serves the CLI, "
                                "which has no widgets):\n  " + where)
            if kind != '"':
                continue
            target = resolve(root, path, name)
            if target is None:
                continue
            target_folder = os.path.dirname(target)
            target_unit = os.path.splitext(target)[0]
            if target_folder != folder:
                folders[folder].add(target_folder)
                folder_why.setdefault((folder, target_folder), []).append(where)
            elif target_unit != unit:
                files[folder][unit].add(target_unit)
                file_why.setdefault((unit, target_unit), []).append(where)

    for folder, (forbidden, why) in sorted(FORBIDDEN_FOLDERS.items()):
        for target in sorted(folders.get(folder, ())):
            if target.split(os.sep)[0] in forbidden:
                problems.append("core/%s includes core/%s (%s):\n  %s" % (
                    folder, target, why, "\n  ".join(folder_why[(folder, target)][:3])))

    for component in components(folders):
        problems.append("core/'s folders %s include each other (move the value type that one "
                        "needs into a header of its own, lower in the pipeline); the shortest "
                        "cycle:\n%s" % (", ".join(sorted(component)),
                                         describe(shortest_cycle(folders, component), folder_why)))
    known_seen = set()
    for folder in sorted(files):
        for component in components(files[folder]):
            key = frozenset(component)
            if key in KNOWN_FILE_CYCLES:
                known_seen.add(key)
                continue
            problems.append("files of core/%s include each other: %s; the shortest cycle:\n%s"
                            % (folder or ".", ", ".join(sorted(component)),
                               describe(shortest_cycle(files[folder], component), file_why)))
    for key in sorted(KNOWN_FILE_CYCLES - known_seen, key=sorted):
        print("check-layout: note: the known file cycle of %s is gone or changed; update "
              "KNOWN_FILE_CYCLES" % ", ".join(sorted(key)))

    for path in sources(root, "worker"):
        for number, kind, name in includes(path):
            if kind == "<" and QT_HEADER.match(name):
                problems.append("worker/ includes a Qt header (the worker and the supervisor run "
                                "on nodes without Qt):\n  %s:%d includes <%s>"
                                % (os.path.relpath(path, root), number, name))
            if kind == '"' and not os.path.isfile(os.path.join(os.path.dirname(path), name)) \
                    and not os.path.isfile(os.path.join(root, "worker", name)):
                target = resolve(root, path, name)
                if target is not None and not target.startswith("wire" + os.sep):
                    problems.append("worker/ includes core/ beyond core/wire/ (only the wire "
                                    "format is shared with the worker):\n  %s:%d includes \"%s\""
                                    % (os.path.relpath(path, root), number, name))

    for top in ("core", "gui", "cli", "worker", "bench", "tests"):
        for path in sources(root, top):
            seen = {}
            for number, kind, name in includes(path):
                if (kind, name) in seen:
                    problems.append("%s:%d includes %s again (first on line %d)"
                                    % (os.path.relpath(path, root), number, name, seen[(kind, name)]))
                seen.setdefault((kind, name), number)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
            if len(lines) <= LONG_LIMIT:
                continue
            header = []
            for line in lines:
                if not line.startswith("//") and line.strip():
                    break
                header.append(line)
            if not any(line.startswith(LONG_MARKER) for line in header):
                problems.append("%s has %d lines (over %d) and its header comment does not say "
                                "why (a line \"%s <why>\")" % (os.path.relpath(path, root), len(lines),
                                                   LONG_LIMIT, LONG_MARKER))

    run_headers = sorted(glob.glob(os.path.join(root, "core", "run", "*.h")))
    if len(run_headers) > RUN_HEADER_LIMIT:
        problems.append("core/run/ holds %d headers (at most %d): it keeps a run's lifecycle; an "
                        "explanation belongs in core/diagnosis/, the run's files in core/record/"
                        % (len(run_headers), RUN_HEADER_LIMIT))

    if args.graph:
        print("core/'s folder include graph (A -> what A includes):")
        for folder in sorted(folders):
            print("  %-18s -> %s" % (folder or ".", ", ".join(sorted(folders[folder])) or "-"))
    if problems:
        for p in problems:
            print("check-layout: " + p, file=sys.stderr)
        print("check-layout: %d problem(s); docs/architecture.md (\"Which folder of core/ may "
              "include which\") says what may include what" % len(problems), file=sys.stderr)
        return 1
    print("check-layout: core/'s %d folders form a DAG, diagnosis/ and record/ reach neither run/ "
          "nor transport/, worker/ has no Qt and only core/wire/, "
          "core/ no widgets, long files say why, no include twice, core/run/ has %d of at most %d "
          "headers" % (len(folders), len(run_headers), RUN_HEADER_LIMIT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
