# SPDX-License-Identifier: GPL-3.0-or-later
"""Drive the real rankdeck GUI and read it the way a screen reader does: through AT-SPI.

tests/gui pokes at widgets from inside the process; this reads what a person (or Orca) is told:
the accessible names of the window, labels, table cells and progress bar. That catches text only
a delegate paints, a label a model never updates, an accessible name that hides a label's words.

A Session owns a private X server (Xvfb), D-Bus session bus and AT-SPI bus, and a private
XDG_RUNTIME_DIR, HOME and XDG_{CONFIG,DATA,CACHE}_HOME in a temporary folder: the user's
profiles, runs and desktop are never touched. Every process it starts carries a token in its
environment; close() ends them all (process groups, then what the token finds), whatever
happened. pyatspi is imported once the session's buses exist (it finds the AT-SPI bus through
the session bus it sees then), and binds to that bus for the process's life: one Session per
process (test_gui_states.py runs each case in a child process).

Needs Debian's python3-pyatspi (system python3, not the torch venv), at-spi2-core, xvfb and
dbus-x11 (dbus-daemon, dbus-send); xdotool only for clicking.
"""
import glob
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

AT_SPI_BUS_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
TOKEN_VARIABLE = "RANKDECK_ATSPI_SESSION"
POLL_S = 0.2
DUMP_LINES = 300


class Fatal(Exception):
    """Raised inside a polled predicate: ends wait_until() at once instead of counting as
    "not yet" (the app or the launcher died; waiting on would only hide why)."""


class HarnessError(Fatal):
    """Something the harness needs did not come up, or a process it watches died."""


def missing_prerequisites():
    """What this machine lacks to run the tests, as readable reasons ([] when nothing)."""
    why = []
    # Tried in a child process: this one may read a tree later, and imports pyatspi only once
    # its session's buses exist.
    r = subprocess.run([sys.executable, "-c", "import gi, pyatspi"], capture_output=True,
                       text=True)
    if r.returncode != 0:  # ImportError, or gi's ValueError for a missing typelib
        why.append("python3-pyatspi is not importable by %s (%s)"
                   % (sys.executable, (r.stderr.strip().splitlines() or ["?"])[-1]))
    for tool, package in (("Xvfb", "xvfb"), ("dbus-daemon", "dbus-daemon"),
                          ("dbus-send", "dbus-bin")):
        if not shutil.which(tool):
            why.append("%s is missing (Debian package %s)" % (tool, package))
    if not os.access(AT_SPI_BUS_LAUNCHER, os.X_OK):
        why.append("%s is missing (Debian package at-spi2-core)" % AT_SPI_BUS_LAUNCHER)
    return why


def wait_until(predicate, timeout, what="condition", interval=POLL_S):
    """Polls predicate() every ~200 ms until it returns something truthy, and returns that.
    A read that fails meanwhile (a node the app just destroyed) counts as "not yet". Raises
    TimeoutError naming `what` and the last exception, if any."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
            last_error = None
        except Fatal:
            raise
        except Exception as e:  # GLib.GError on defunct nodes, D-Bus timeouts
            last_error = e
        if time.monotonic() >= deadline:
            extra = " (last error: %r)" % last_error if last_error else ""
            raise TimeoutError("%s not reached within %.0f s%s" % (what, timeout, extra))
        time.sleep(interval)


class Session:
    """Xvfb + session bus + AT-SPI bus + private user folders; a context manager."""

    def __init__(self, build_dir, label="gui", log=None, keep=False):
        self.build_dir = os.path.abspath(build_dir)
        self.bin_dir = os.path.join(self.build_dir, "bin")
        self.label = label
        self.log = log or (lambda text: print(text, flush=True))
        self.keep = keep or os.environ.get("RANKDECK_ATSPI_KEEP") == "1"
        # A parent that runs each session in a child process passes the token, so that it can
        # still end what a killed child left behind (end_token_processes()).
        self.token = os.environ.get(TOKEN_VARIABLE) or uuid.uuid4().hex
        self.procs = []  # (name, Popen), in start order
        self.root = self.env = self.display = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    @property
    def runs_dir(self):
        return self.path("data", "rankdeck", "runs")

    def start(self):
        become_subreaper()
        self.root = tempfile.mkdtemp(prefix="rankdeck-atspi-%s-" % self.label)
        env = dict(os.environ)
        # Nothing of the desktop or user this runs under leaks in: no display, bus, agent,
        # Wayland, or a11y bus of theirs; Qt must use xcb (AT-SPI is its Linux bridge).
        for var in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS",
                    "SSH_AUTH_SOCK", "QT_QPA_PLATFORM", "QT_ACCESSIBILITY", "SESSION_MANAGER",
                    "XAUTHORITY", "NO_AT_BRIDGE"):
            env.pop(var, None)
        for var, sub in (("HOME", "home"), ("XDG_CONFIG_HOME", "config"),
                         ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
                         ("XDG_RUNTIME_DIR", "runtime"), ("TMPDIR", "tmp")):
            os.makedirs(self.path(sub), mode=0o700, exist_ok=True)
            env[var] = self.path(sub)
        env[TOKEN_VARIABLE] = self.token
        self.env = env

        # Xvfb picks a free display itself and writes its number to -displayfd: no race with
        # another test's server over a guessed number.
        read_end, write_end = os.pipe()
        self._spawn("Xvfb", ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1600x1000x24",
                             "-nolisten", "tcp", "-noreset"], pass_fds=(write_end,))
        os.close(write_end)
        number = self._read_line(read_end, 20, "Xvfb's display number")
        os.close(read_end)
        self.display = ":" + number
        env["DISPLAY"] = self.display

        # The session bus, in the foreground (not --fork), so that it stays our child and its
        # process group is ours to end.
        bus = self._spawn("dbus-daemon", ["dbus-daemon", "--session", "--nofork",
                                          "--print-address=1"], stdout=subprocess.PIPE)
        env["DBUS_SESSION_BUS_ADDRESS"] = self._read_line(bus.stdout.fileno(), 20,
                                                          "the session bus address")
        self._spawn("at-spi-bus-launcher", [AT_SPI_BUS_LAUNCHER, "--launch-immediately"])
        # Our own process reads the tree, so it must see the same buses before pyatspi loads.
        for var in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"):
            os.environ[var] = env[var]
        os.environ.pop("AT_SPI_BUS_ADDRESS", None)
        wait_until(self._a11y_bus_up, 20, "the AT-SPI bus (org.a11y.Bus on the session bus)")
        self.log("[%s] display %s, session bus up, AT-SPI bus up, folders in %s"
                 % (self.label, self.display, self.root))

    def _a11y_bus_up(self):
        r = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.a11y.Bus",
                            "/org/a11y/bus", "org.a11y.Bus.GetAddress"], env=self.env,
                           capture_output=True, text=True, timeout=10)
        return r.returncode == 0 and "unix:" in r.stdout

    def _read_line(self, fd, timeout, what):
        deadline = time.monotonic() + timeout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise HarnessError("no %s within %d s" % (what, timeout))
            chunk = os.read(fd, 4096)
            if not chunk:
                raise HarnessError("no %s: the process ended (see %s)" % (what, self.root))
            data += chunk
        return data.split(b"\n", 1)[0].decode().strip()

    def _spawn(self, name, argv, env=None, stdout=None, pass_fds=()):
        log_path = self.path("%s-%d.log" % (re.sub(r"[^\w.-]", "_", name), len(self.procs)))
        log = open(log_path, "wb")
        # A process group of its own: killpg() then ends it with everything it forked.
        p = subprocess.Popen(argv, env=env or self.env, stdin=subprocess.DEVNULL,
                             stdout=stdout if stdout is not None else log, stderr=log,
                             pass_fds=pass_fds, start_new_session=True)
        log.close()
        p.log_path = log_path
        self.procs.append((name, p))
        return p

    def spawn(self, name, argv, extra_env=None):
        """Starts argv in the session's environment (its own process group, output in a log
        file of the session's folder: p.log_path)."""
        return self._spawn(name, argv, env=dict(self.env, **(extra_env or {})))

    def run(self, argv, timeout=60):
        """Runs argv to its end in the session's environment; returns CompletedProcess."""
        return subprocess.run(argv, env=self.env, capture_output=True, text=True,
                              timeout=timeout, start_new_session=True)

    def close(self):
        for _, p in reversed(self.procs):
            end_group(p)
        # What left its process group (a daemonized helper, a rank in a session of its own)
        # still carries our token: end those too, by pid, and nothing else.
        end_token_processes(self.token)
        reap_orphans()
        self.procs = []
        if self.root and os.path.isdir(self.root):
            if self.keep:
                self.log("[%s] kept %s" % (self.label, self.root))
            else:
                shutil.rmtree(self.root, ignore_errors=True)


def end_group(p, grace=5.0):
    """SIGTERM to p's process group, SIGKILL after `grace` seconds. Only while p lives (its
    group id is then surely ours); what outlives it is found by the session token."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if p.poll() is not None:
            break
        try:
            os.killpg(p.pid, sig)  # p leads its own group (start_new_session)
        except ProcessLookupError:
            break
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    if p.stdout:
        p.stdout.close()


def become_subreaper():
    """Orphans of what we start (the AT-SPI bus's daemon and registry once the launcher is
    gone, a run's ranks once its launcher is gone) become our children instead of init's,
    which in a container may never reap them: they are reaped in close(), no zombies left."""
    try:
        import ctypes
        PR_SET_CHILD_SUBREAPER = 36
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def reap_orphans(timeout=3.0):
    """Reaps ended children (only after every Popen was waited for: this takes any child),
    waiting up to `timeout` for those just killed to end."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.05)


def _ancestors():
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def end_token_processes(token):
    """SIGKILL to every process whose environment carries this session token: what we started,
    never us or what started us (a parent, a `timeout` wrapper may carry it too)."""
    needle = ("%s=%s" % (TOKEN_VARIABLE, token)).encode()
    spare = _ancestors()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in spare:
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                if needle in f.read().split(b"\0"):
                    os.kill(int(entry), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


# --- a run launched with rankdeck-cli -----------------------------------------------------------
class CliRun:
    """`rankdeck-cli launch --profile local --name NAME ARGS` in the background, in the
    session's environment (so the GUI of the same session sees the run in its run list); its
    output in CliRun.proc.log_path. stop() stops the run as a user would; the session ends what
    is left."""

    def __init__(self, session, name, args, timeout=90):
        self.session = session
        self.name = name
        self.cli = os.path.join(session.bin_dir, "rankdeck-cli")
        self.proc = session.spawn("rankdeck-cli", [self.cli, "launch", "--profile", "local",
                                                   "--name", name, "--no-progress", "--quiet"]
                                  + list(args))
        self.dir = wait_until(self._folder, timeout, "the record folder of run %s" % name)
        self.id = os.path.basename(self.dir)

    def _folder(self):
        hits = glob.glob(os.path.join(self.session.runs_dir, "*-%s-*" % self.name))
        if not hits and self.proc.poll() is not None:
            raise HarnessError("rankdeck-cli ended (%s) before its run had a folder:\n%s"
                               % (self.proc.returncode, tail(self.proc.log_path)))
        return hits[0] if len(hits) == 1 else None

    def state(self):
        """The record's state.json ({} while it is missing or half-written)."""
        try:
            with open(os.path.join(self.dir, "state.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def ends(self, timeout):
        """Waits for the launcher to end (the run is over); returns its exit status."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HarnessError("run %s did not end within %d s; the launcher said:\n%s"
                               % (self.name, timeout, tail(self.proc.log_path)))

    def record_says(self, predicate, timeout, what):
        """Waits until predicate(state.json) is truthy, and returns that."""
        try:
            return wait_until(lambda: predicate(self.state()), timeout, what)
        except TimeoutError as e:
            raise HarnessError("%s; the launcher said:\n%s" % (e, tail(self.proc.log_path)))

    def stop(self):
        if self.proc.poll() is None:
            self.session.run([self.cli, "stop", self.id], timeout=90)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass


# --- the accessibility tree --------------------------------------------------------------------
def _pyatspi():
    import pyatspi  # only once a session's buses exist (module docstring)
    return pyatspi


# Containers whose children are cells or items: read them through the Table interface instead of
# walking hundreds of cells (96 ranks × 10 columns) on every poll.
_CELL_CONTAINERS = ("table", "tree", "tree table")


def role(node):
    return node.getRoleName()


def showing(node):
    return node.getState().contains(_pyatspi().STATE_SHOWING)


def enabled(node):
    return node.getState().contains(_pyatspi().STATE_ENABLED)


def text_of(node):
    """The node's Text interface content ("" without one): a label's words when an accessible
    name stands in for them in .name."""
    try:
        return node.queryText().getText(0, -1)
    except NotImplementedError:
        return ""


def children(node):
    return [c for c in (node.getChildAtIndex(i) for i in range(node.childCount)) if c is not None]


class App:
    """The running rankdeck, found on the session's AT-SPI desktop."""

    def __init__(self, session, args=(), extra_env=None, timeout=60):
        self.session = session
        env = {"QT_QPA_PLATFORM": "xcb", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
               "QT_ACCESSIBILITY": "1"}
        env.update(extra_env or {})
        self.proc = session.spawn("rankdeck", [os.path.join(session.bin_dir, "rankdeck")]
                                  + list(args), env)
        pyatspi = _pyatspi()
        from gi.repository import Atspi
        self.desktop = pyatspi.Registry.getDesktop(0)
        # No client-side cache: the tests read names that change many times a second, and an
        # event the bridge does not send must not leave a stale name behind.
        self.desktop.setCacheMask(Atspi.Cache.NONE)
        self.app = None
        self.frame = wait_until(self._find_frame, timeout, "rankdeck's window on the AT-SPI bus")

    def _find_frame(self):
        if self.proc.poll() is not None:
            raise HarnessError("rankdeck exited with %s before its window showed; its output:\n%s"
                               % (self.proc.returncode, tail(self.proc.log_path)))
        for a in children(self.desktop):
            if a.name == "rankdeck":
                for c in children(a):
                    if role(c) == "frame":
                        self.app = a
                        return c
        return None

    def alive(self):
        return self.proc.poll() is None

    def title(self):
        """The window title, as the "frame" node's name."""
        return self.frame.name

    def find(self, role_name=None, name=None, root=None, only_showing=False, limit=0,
             description=None, into_tables=False):
        """Nodes under root (the window) whose role is role_name and whose name (and
        description) match the regexes, in tree order."""
        name_re = re.compile(name) if isinstance(name, str) else name
        desc_re = re.compile(description) if isinstance(description, str) else description
        found = []

        def visit(node):
            r = role(node)
            if only_showing and not showing(node):
                return False
            if ((role_name is None or r == role_name)
                    and (name_re is None or name_re.search(node.name or ""))
                    and (desc_re is None or desc_re.search(node.description or ""))):
                found.append(node)
                if limit and len(found) >= limit:
                    return True
            if r in _CELL_CONTAINERS and not into_tables:
                return False
            for c in children(node):
                if visit(c):
                    return True
            return False

        visit(root or self.frame)
        return found

    def find_one(self, role_name=None, name=None, **kw):
        return (self.find(role_name, name, limit=1, **kw) or [None])[0]

    @staticmethod
    def table_headers(table):
        """The column headers' names. Read from the table's first children (Qt puts the
        headers first): asking the Table interface for the header of an empty table makes Qt
        warn of an invalid index on every poll."""
        names = []
        for i in range(table.childCount):
            c = table.getChildAtIndex(i)
            r = role(c) if c is not None else ""
            if r == "table column header":
                names.append(c.name)
            elif r != "panel":
                break
        if names:
            return names
        try:
            t = table.queryTable()
        except NotImplementedError:
            return []
        return [(t.getColumnHeader(c).name if t.getColumnHeader(c) else t.getColumnDescription(c))
                for c in range(t.nColumns)]

    def find_table(self, headers, role_name=None):
        """The first table (or tree) whose column headers include all of `headers`."""
        for r in ([role_name] if role_name else list(_CELL_CONTAINERS)):
            for t in self.find(r):
                if all(h in self.table_headers(t) for h in headers):
                    return t
        return None

    @staticmethod
    def row_count(table):
        return table.queryTable().nRows

    def table_rows(self, table, columns=None):
        """The rows as dicts header → cell text. With the Table interface, cell (row, column)
        is read directly (only `columns`, when given, so a 96-rank table stays cheap); without
        it, the "table cell" children are grouped into rows by their y on the screen."""
        headers = self.table_headers(table)
        wanted = [i for i, h in enumerate(headers) if columns is None or h in columns]
        try:
            t = table.queryTable()
        except NotImplementedError:
            t = None
        rows = []
        if t is not None:
            for r in range(t.nRows):
                row = {}
                for c in wanted:
                    cell = t.getAccessibleAt(r, c)
                    row[headers[c]] = cell.name if cell is not None else None
                rows.append(row)
            return rows
        pyatspi = _pyatspi()
        by_y = {}
        for cell in children(table):
            if role(cell) != "table cell":
                continue
            e = cell.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            by_y.setdefault(e.y, []).append((e.x, cell.name))
        for y in sorted(by_y):
            texts = [text for _, text in sorted(by_y[y])]
            rows.append({headers[c]: texts[c] for c in wanted if c < len(texts)})
        return rows

    # --- what a person reads -------------------------------------------------------------
    def label_texts(self, only_showing=True):
        return [n.name for n in self.find("label", only_showing=only_showing) if n.name]

    def progress_texts(self):
        """Every showing progress bar as its name, description or text, whichever it gives;
        with the value it reports, so a bar that says nothing in words is still described."""
        out = []
        for bar in self.find("progress bar", only_showing=True):
            words = [bar.name or "", bar.description or "", text_of(bar)]
            try:
                v = bar.queryValue()
                value = "%g of %g..%g" % (v.currentValue, v.minimumValue, v.maximumValue)
            except NotImplementedError:
                value = ""
            out.append({"text": " | ".join(w for w in words if w), "value": value})
        return out

    def click(self, node):
        """A left click in the middle of node, as a person would (xdotool on the session's X
        server)."""
        if not shutil.which("xdotool"):
            raise HarnessError("xdotool is missing (Debian package xdotool): cannot click")
        e = node.queryComponent().getExtents(_pyatspi().DESKTOP_COORDS)
        x, y = e.x + max(1, e.width // 2), e.y + max(1, e.height // 2)
        r = self.session.run(["xdotool", "mousemove", "--sync", str(x), str(y), "click", "1"],
                             timeout=20)
        if r.returncode != 0:
            raise HarnessError("xdotool click at %d,%d failed: %s" % (x, y, r.stderr.strip()))

    def dump(self, max_lines=DUMP_LINES, max_cells=24):
        """The window's tree as indented "role 'name'" lines, hidden nodes marked, capped (a
        table shows its first cells only) so that a CI log stays readable."""
        lines = []

        def visit(node, depth):
            if len(lines) >= max_lines:
                return
            try:
                flags = [] if showing(node) else ["hidden"]
                if not enabled(node):
                    flags.append("disabled")
                name = (node.name or "").replace("\n", "\\n")
                if len(name) > 160:
                    name = name[:160] + "…"
                desc = node.description or ""
                lines.append("%s%s %r%s%s" % ("  " * depth, role(node), name,
                                               " [%s]" % ", ".join(flags) if flags else "",
                                               " (description %r)" % desc[:80] if desc else ""))
                count, container = node.childCount, role(node) in _CELL_CONTAINERS
            except Exception as e:
                lines.append("%s<unreadable: %s>" % ("  " * depth, e))
                return
            cells = 0
            for i in range(count):  # one child at a time: a 96-rank table has ~1000
                c = node.getChildAtIndex(i)
                if c is None:
                    continue
                if container and role(c) == "table cell":
                    cells += 1
                    if cells > max_cells:
                        lines.append("%s… %d more children" % ("  " * (depth + 1), count - i))
                        break
                visit(c, depth + 1)

        try:
            visit(self.frame, 0)
        except Exception as e:
            lines.append("<tree unreadable: %s>" % e)
        if len(lines) >= max_lines:
            lines = lines[:max_lines] + ["… (cut at %d lines)" % max_lines]
        return "\n".join(lines)


def tail(path, lines=40):
    """The last lines of a log file, for a failure message."""
    try:
        with open(path, "rb") as f:
            return "\n".join(f.read()[-20000:].decode(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return "<%s unreadable: %s>" % (path, e)
