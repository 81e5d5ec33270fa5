# SPDX-License-Identifier: GPL-3.0-or-later
"""RankDeck's warm start for Python programs (``rankdeck-cli launch --exec --warm``).

A per-node, per-user server that has imported the preload modules (default ``torch``,
``torch.distributed``, ``torch.nn.parallel`` and ``torch._dynamo``, which DDP imports on first
use) before a launch, so that a rank starts without paying for the import: rankdeck-supervisor
sends it a request (argv, environment, working directory, and its stdin,
stdout and stderr as file descriptors over SCM_RIGHTS) on a Unix socket, and a forked copy of
the server runs the script as ``__main__`` exactly as ``python script.py`` would.

Processes (all forked from the one that imported the preload modules):
  - the master: imports, listens, keeps one spare per expected rank slot, ends itself after an
    idle timeout or when its interpreter file changes;
  - a spare: waits in accept(); once it takes a request it becomes that rank's *waiter*: a
    child subreaper in the supervisor's cgroup that forks the rank process, forwards the
    supervisor's signals to the rank's whole subtree, sweeps that subtree (SIGTERM, then SIGKILL
    after the grace period) once the rank ended or the supervisor is gone (socket closed), and
    reports the rank's wait status;
  - the rank process: the waiter's child, which applies the request (file descriptors, signal
    dispositions, environment, working directory, sys.argv, sys.path, sys.std*) and runs the
    script.

Wire format on the socket, one JSON object per line. Supervisor -> waiter: the request (with
three file descriptors), then ``{"go": true}`` once it traces the rank, ``{"signal": N}`` any
time. Waiter -> supervisor: ``{"pid": N}`` (the rank process, stopped before the script until
"go"), ``{"exit": STATUS}`` (a raw wait status, after the subtree is empty) or ``{"error": TEXT}``
instead of a pid. Only the standard library is used.
"""

import json
import os
import select
import signal
import socket
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PTRACER = 0x59616D61


def _prctl(option, value):
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except Exception:
        return False


def _children_map():
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    return children


def _descendants(root, children=None):
    # /proc is read one process at a time while pids are freed and reused, so the map may hold
    # a cycle: each pid is visited once, and the walk ends.
    if children is None:
        children = _children_map()
    out, todo, seen = [], [root], {root}
    while todo:
        for pid in children.get(todo.pop(), ()):
            if pid in seen:
                continue
            seen.add(pid)
            out.append(pid)
            todo.append(pid)
    return out


def _signal_descendants(sig):
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _send(conn, obj):
    try:
        conn.sendall(json.dumps(obj).encode() + b"\n")
        return True
    except OSError:
        return False


class _BecomeRank(BaseException):
    """Raised in the forked rank process: unwinds the server's frames up to the top level."""

    def __init__(self, request, fds, conn, pipes):
        super().__init__()
        self.request, self.fds, self.conn, self.pipes = request, fds, conn, pipes


class _Rank:
    """The rank process: becomes ``python SCRIPT ARGS`` (or ``python -m MODULE ARGS``)."""

    def __init__(self, become):
        self.request = become.request
        tracer = int(self.request.get("tracer", 0))
        # Yama's ptrace_scope=1 lets only an ancestor trace; the supervisor is none.
        if tracer > 0:
            _prctl(PR_SET_PTRACER, tracer)
        for i, fd in enumerate(become.fds[:3]):
            os.dup2(fd, i)
        for fd in become.fds:
            if fd > 2:
                os.close(fd)
        become.conn.close()
        ready_w, go_r = become.pipes
        os.write(ready_w, b"r")
        os.close(ready_w)
        # The supervisor attaches (ptrace) before any line of the script runs.
        while True:
            try:
                got = os.read(go_r, 1)
                break
            except InterruptedError:
                continue
        os.close(go_r)
        if not got:
            os._exit(1)

    def _apply(self):
        req = self.request
        signal.set_wakeup_fd(-1)
        # The dispositions a fresh interpreter starts with.
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
                    signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        if req.get("dont_write_bytecode"):
            sys.dont_write_bytecode = True
        self._streams()
        # Python's own crash dump goes to the rank's stderr, as PYTHONFAULTHANDLER does at start.
        import faulthandler

        if os.environ.get("PYTHONFAULTHANDLER"):
            faulthandler.enable(file=sys.stderr, all_threads=True)
        else:
            faulthandler.disable()
        # RankDeck's startup hook (sitecustomize) registers the dump-stacks signal per process.
        hook = sys.modules.get("sitecustomize")
        if hook is not None and hasattr(hook, "_rankdeck_register_stack_dump"):
            hook._rankdeck_stacks_file = hook._rankdeck_register_stack_dump()
        # ... and its flight-recorder thread, which a fork does not carry over.
        if hook is not None and hasattr(hook, "_rankdeck_start_flight_recorder"):
            hook._rankdeck_flight_recorder_thread = hook._rankdeck_start_flight_recorder()
        # ... and the crash dumps of DataLoader workers (torch may be imported already).
        if hook is not None and hasattr(hook, "_rankdeck_watch_dataloader_workers"):
            hook._rankdeck_watch_dataloader_workers()

    def _streams(self):
        import io

        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        encoding = os.environ.get("PYTHONIOENCODING", "").split(":")[0] or sys.stdout.encoding
        out_errors = sys.stdout.errors

        def text(fd, mode, errors, line_buffering):
            raw = io.FileIO(fd, mode, closefd=False)
            if mode == "rb":
                buffered = io.BufferedReader(raw)
            elif unbuffered:
                buffered = raw
            else:
                buffered = io.BufferedWriter(raw)
            return io.TextIOWrapper(buffered, encoding=encoding, errors=errors,
                                    line_buffering=line_buffering,
                                    write_through=unbuffered and mode != "rb")

        sys.stdin = sys.__stdin__ = text(0, "rb", out_errors, False)
        sys.stdout = sys.__stdout__ = text(1, "wb", out_errors, os.isatty(1))
        sys.stderr = sys.__stderr__ = text(2, "wb", "backslashreplace", True)

    def run(self):
        """The exit status (or ``"SIGINT"``) of the script, as ``python`` would end."""
        self._apply()
        req = self.request
        args = list(req["args"])
        base = list(_BASE_PATH)
        user = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        try:
            if req["mode"] == "module":
                import runpy

                sys.argv = [req["target"]] + args
                sys.path[:] = [os.getcwd()] + user + base
                runpy._run_module_as_main(req["target"], alter_argv=True)
            else:
                return self._script(req["target"], args, user + base)
        except SystemExit as e:
            return _exit_status(e)
        except BaseException as e:  # noqa: B036 - exactly what the interpreter catches
            return self._uncaught(e)
        return 0

    def _script(self, target, args, rest):
        path = os.path.abspath(target)
        try:
            with open(path, "rb") as f:
                source = f.read()
        except OSError as e:
            sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n"
                             % (sys.executable, path, e.errno, e.strerror))
            return 2
        sys.argv = [target] + args
        sys.path[:] = [os.path.dirname(os.path.realpath(path))] + rest
        import importlib.machinery
        import types

        main = types.ModuleType("__main__")
        main.__file__ = path
        main.__cached__ = None
        import builtins

        main.__builtins__ = builtins
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
        sys.modules["__main__"] = main
        try:
            code = compile(source, path, "exec", dont_inherit=True)
            exec(code, main.__dict__)
        except SystemExit as e:
            return _exit_status(e)
        except BaseException as e:  # noqa: B036
            return self._uncaught(e)
        return 0

    def _uncaught(self, exc):
        tb = exc.__traceback__
        # The traceback starts where `python script.py` would: our own frames are not the user's.
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        # The default hook prints the exception's own traceback, not the one it is given.
        exc.__traceback__ = tb
        sys.excepthook(type(exc), exc, tb)
        return "SIGINT" if isinstance(exc, KeyboardInterrupt) else 1


def _exit_status(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


class _Waiter:
    """A spare that took a request: the rank process's parent, a child subreaper."""

    def __init__(self, conn, taken_w):
        self.conn = conn
        self.taken_w = taken_w
        self.buffer = b""

    def serve(self):
        conn = self.conn
        try:
            data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
        except OSError:
            os._exit(0)
        self.buffer = data
        while b"\n" not in self.buffer:
            more = conn.recv(1 << 20)
            if not more:
                os._exit(0)
            self.buffer += more
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            request = json.loads(line)
            if len(fds) != 3:
                raise ValueError("expected 3 file descriptors, got %d" % len(fds))
        except ValueError as e:
            _send(conn, {"error": "bad request: %s" % e})
            os._exit(0)
        # The master forks a spare in our place, one per rank slot the launch expects.
        try:
            slots = max(1, int(request.get("slots", 1)))
        except (TypeError, ValueError):
            slots = 1
        os.write(self.taken_w, b"%d %d\n" % (os.getpid(), slots))
        os.close(self.taken_w)
        os.setsid()
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self._join_cgroup(int(request.get("tracer", 0)))
        grace = max(0, int(request.get("grace_ms", 5000))) / 1000.0
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
        go_r, go_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            for fd in (wake_r, wake_w, ready_r, go_w):
                os.close(fd)
            raise _BecomeRank(request, fds, conn, (ready_w, go_r))
        for fd in fds:
            os.close(fd)
        os.close(ready_w)
        os.close(go_r)
        ready = os.read(ready_r, 1)
        os.close(ready_r)
        if ready:
            _send(conn, {"pid": pid})
        status = None
        kill_at = None
        supervisor_gone = False
        while True:
            # Reap the rank and every orphan of its subtree (we are their subreaper).
            while True:
                try:
                    p, st = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    p = 0
                if p == 0:
                    break
                if p == pid:
                    status = st
            if status is not None or supervisor_gone:
                left = _descendants(os.getpid())
                if not left:
                    break
                if kill_at is None:
                    _signal_descendants(signal.SIGTERM)
                    kill_at = time.monotonic() + grace
                elif time.monotonic() >= kill_at:
                    _signal_descendants(signal.SIGKILL)
            timeout = 0.05 if kill_at is not None else None
            readable, _, _ = select.select([conn, wake_r] if not supervisor_gone else [wake_r],
                                           [], [], timeout)
            if wake_r in readable:
                try:
                    os.read(wake_r, 512)
                except BlockingIOError:
                    pass
            if conn in readable and not supervisor_gone:
                if not self._command(go_w):
                    supervisor_gone = True
                    go_w = self._close(go_w)
        if status is None:
            status = signal.SIGKILL  # the rank was swept after the supervisor went away
        _send(conn, {"exit": status})
        os._exit(0)

    @staticmethod
    def _close(fd):
        if fd is not None:
            os.close(fd)
        return None

    def _command(self, go_w):
        try:
            more = self.conn.recv(65536)
        except OSError:
            more = b""
        if not more:
            return False
        self.buffer += more
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            try:
                cmd = json.loads(line)
            except ValueError:
                continue
            if cmd.get("go") and go_w is not None:
                os.write(go_w, b"g")
            if "signal" in cmd:
                _signal_descendants(int(cmd["signal"]))
        return True

    @staticmethod
    def _join_cgroup(pid):
        # The rank counts (memory, OOM kills: OomCounter) where the supervisor does: its cgroup
        # v2, or on a hybrid host its v1 memory cgroup. Best effort: without the right to move
        # there the rank stays in the server's cgroup.
        if pid <= 0:
            return
        try:
            with open("/proc/%d/cgroup" % pid) as f:
                lines = f.read().splitlines()
        except OSError:
            return
        for line in lines:
            parts = line.split(":", 2)
            if len(parts) != 3:
                continue
            if parts[0] == "0" and parts[1] == "":
                roots = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
            elif "memory" in parts[1].split(","):
                roots = ("/sys/fs/cgroup/memory",)
            else:
                continue
            for root in roots:
                try:
                    with open(root + parts[2].rstrip("/") + "/cgroup.procs", "w") as f:
                        f.write(str(os.getpid()))
                    break
                except OSError:
                    continue


class _Master:
    def __init__(self, args):
        self.socket_path = args["socket"]
        self.idle = args["idle_sec"]
        self.slots = max(1, args["slots"])
        self.preload = args["preload"]
        # Held for the master's lifetime: a supervisor that can take it knows none runs.
        self.lock_fd = args["lock_fd"]
        self.spares = {}  # pid -> True while it waits in accept()
        self.busy = set()  # waiters of ranks that still run: the server is not idle then
        self.ended = set()  # reaped before their "taken" note was read
        self.last_use = time.monotonic()
        self.exe = os.path.realpath(sys.executable)
        self.exe_mtime = self._mtime()
        self.pid = os.getpid()

    def _mtime(self):
        try:
            return os.stat(self.exe).st_mtime_ns
        except OSError:
            return None

    def serve(self):
        import importlib

        for name in self.preload:
            importlib.import_module(name)
        # Listen under a temporary name, then rename: a client connects to a ready server only.
        tmp = "%s.%d" % (self.socket_path, os.getpid())
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(tmp)
        listener.listen(64)
        listener.setblocking(False)
        os.rename(tmp, self.socket_path)
        self.last_use = time.monotonic()  # idle from now, not from before the imports
        ino = os.stat(self.socket_path).st_ino
        with open(self.socket_path[:-5] + ".pid", "w") as f:
            f.write("%d\n" % os.getpid())
        # SIGTERM (kill PID of the .pid file) ends it like the idle timeout: socket removed.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        self.taken_r, self.taken_w = os.pipe2(os.O_CLOEXEC)
        self.alive_r, self.alive_w = os.pipe2(os.O_CLOEXEC)
        try:
            self._loop(listener)
        finally:
            try:
                if os.getpid() == self.pid and os.stat(self.socket_path).st_ino == ino:
                    os.unlink(self.socket_path)
                    os.unlink(self.socket_path[:-5] + ".pid")
            except OSError:
                pass

    def _loop(self, listener):
        while True:
            self._reap()
            while len(self.spares) < self.slots:
                self._fork_spare(listener)
            idle = not self.busy and time.monotonic() - self.last_use > self.idle
            if idle or self._mtime() != self.exe_mtime:
                return
            readable, _, _ = select.select([self.taken_r], [], [], 1.0)
            if readable:
                for line in os.read(self.taken_r, 4096).split(b"\n"):
                    if line:
                        pid, slots = (int(x) for x in line.split())
                        self.spares.pop(pid, None)
                        if pid in self.ended:
                            self.ended.discard(pid)
                        else:
                            self.busy.add(pid)
                        self.slots = max(self.slots, slots)
                        self.last_use = time.monotonic()

    def _reap(self):
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.busy:
                self.busy.discard(pid)
            elif self.spares.pop(pid, None):
                self.ended.add(pid)
            self.last_use = time.monotonic()

    def _fork_spare(self, listener):
        pid = os.fork()
        if pid:
            self.spares[pid] = True
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(self.taken_r)
        os.close(self.alive_w)
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
        while True:
            readable, _, _ = select.select([listener, self.alive_r], [], [])
            if self.alive_r in readable:
                os._exit(0)  # the master ended: so do the idle spares
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                continue
            break
        conn.setblocking(True)
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        uid = int.from_bytes(creds[4:8], sys.byteorder)
        listener.close()
        os.close(self.alive_r)
        if uid != os.getuid():
            os._exit(0)
        _Waiter(conn, self.taken_w).serve()


def _parse(argv):
    args = {"socket": None, "idle_sec": 600.0, "slots": 1, "lock_fd": -1,
            "preload": ["torch", "torch.distributed", "torch.nn.parallel", "torch._dynamo"]}
    i = 0
    while i < len(argv):
        key, value = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if value is None:
            raise SystemExit("rankdeck._warmstart: %s needs a value" % key)
        if key == "--socket":
            args["socket"] = value
        elif key == "--idle-sec":
            args["idle_sec"] = float(value)
        elif key == "--slots":
            args["slots"] = int(value)
        elif key == "--lock-fd":
            args["lock_fd"] = int(value)
        elif key == "--preload":
            args["preload"] = [m for m in value.split(",") if m]
        else:
            raise SystemExit("rankdeck._warmstart: unknown option %s" % key)
        i += 2
    if not args["socket"] or not args["socket"].endswith(".sock"):
        raise SystemExit("rankdeck._warmstart: --socket PATH.sock is required")
    return args


# sys.path without what PYTHONPATH and the start put first: each rank puts its own there.
_BASE_PATH = []


def main(argv):
    args = _parse(argv)
    server_path = {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    server_path |= {os.path.abspath(p) for p in server_path}
    _BASE_PATH[:] = [p for p in sys.path[1:] if p not in server_path]
    become = None
    try:
        _Master(args).serve()
    except _BecomeRank as e:
        become = e
    if become is None:
        return 0
    # Out of the except block: the script's exceptions must not chain to _BecomeRank.
    rank = _Rank(become)
    del become
    return rank.run()


if __name__ == "__main__":
    _status = main(sys.argv[1:])
    if _status == "SIGINT":
        # An uncaught KeyboardInterrupt ends the interpreter by SIGINT (Python 3.8+).
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(_status)
