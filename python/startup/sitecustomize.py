# SPDX-License-Identifier: GPL-3.0-or-later
"""RankDeck's startup hook for a user's own Python program (not part of the pip package).

rankdeck-supervisor writes this file next to the ``rankdeck`` module in the node's run
directory and puts that directory first on PYTHONPATH, so Python's ``site`` imports it at
start-up. It registers a faulthandler dump of every thread's Python stack on a real-time
signal that nothing else claims, into a file the supervisor reads, and then writes a marker
(pid and signal): the supervisor only ever sends that signal to a process that registered
it, because for any other process (a native program) its default action is to terminate.
It also starts a daemon thread that dumps torch's flight recorder when the supervisor asks
(``dump-flight-recorder``): blocked reading a FIFO named after the process, it costs nothing
until a request comes, and it never imports torch (it dumps only if the program itself
initialised torch.distributed).
It lets a DataLoader worker's crash dump its Python stacks, which torch's own handlers in the
worker would otherwise replace (below).
Then it runs the ``sitecustomize`` that Python would have imported without us (the user's,
or Debian's /usr/lib/python3.X/sitecustomize.py), the way ``site`` would have.
Only the standard library is used; any failure leaves the program as it was.
"""

import os
import sys


def _rankdeck_register_stack_dump():
    signum = os.environ.get("RANKDECK_PYTHON_STACKS_SIGNAL")
    path = os.environ.get("RANKDECK_PYTHON_STACKS_FILE")
    ready = os.environ.get("RANKDECK_PYTHON_STACKS_READY")
    if not signum or not path or not ready:
        return None
    try:
        import faulthandler
        import signal

        signum = int(signum)
        previous = signal.getsignal(signum)
        # chain=True re-raises into the previous handler; with the default action that would
        # kill the process, so chain only to a handler someone installed (None: one from C).
        chain = previous not in (signal.SIG_DFL, signal.SIG_IGN)
        out = open(path, "a")
        faulthandler.register(signum, file=out, all_threads=True, chain=chain)
        with open(ready, "a") as marker:
            marker.write("%d %d\n" % (os.getpid(), signum))
        return out
    except Exception:
        return None


# ---- DataLoader workers' crash dumps -----------------------------------------------------------
# A DataLoader worker (a fork of the rank) replaces the SIGSEGV/SIGBUS/SIGFPE handlers it inherits
# (faulthandler's, PYTHONFAULTHANDLER=1) with torch's, which print only "ERROR: Unexpected
# segmentation fault encountered in worker." and die: the Dataset line that crashed was lost
# (issue 27). Around torch's _set_worker_signal_handlers() faulthandler is disabled and then
# enabled again, so that torch's handlers are what it chains to: the worker dumps its Python
# stacks to the stderr it shares with the rank, then torch's handler prints its line and the
# worker dies of the same signal as before.
# That stderr is shared: faulthandler writes its dump a few bytes at a time, and the rank's
# progress bar redraws ("\r" and no newline) in between, so lines of the two were spliced and
# the Dataset line could be lost (issue 42). So a worker dumps into a file of its own in the rank's run directory
# (worker-fault-<rank pid>-<worker pid>.txt), and the rank writes that file to its stderr in one
# write when it learns of the worker's end (torch's SIGCHLD handler, wrapped) and at its own exit;
# the supervisor hands on any file left by a rank that could do neither.
_RANKDECK_WORKER_SIGNALS = "torch.utils.data._utils.signal_handling"
_rankdeck_worker_fault_file = None  # the worker's dump file, open for faulthandler


def _rankdeck_worker_fault_dir():
    stacks = os.environ.get("RANKDECK_PYTHON_STACKS_FILE")
    directory = os.path.dirname(stacks) if stacks else ""
    return directory if directory and os.path.isdir(directory) else None


def _rankdeck_open_worker_fault_file():
    global _rankdeck_worker_fault_file
    directory = _rankdeck_worker_fault_dir()
    if directory is None:
        return None
    try:
        path = os.path.join(directory,
                            "worker-fault-%d-%d.txt" % (os.getppid(), os.getpid()))
        _rankdeck_worker_fault_file = open(path, "w")
        return _rankdeck_worker_fault_file
    except OSError:
        return None


def _rankdeck_ended(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _rankdeck_flush_worker_faults(all_of_them=False):
    """Writes each ended worker's dump to stderr whole, and removes its file."""
    directory = _rankdeck_worker_fault_dir()
    if directory is None:
        return
    prefix = "worker-fault-%d-" % os.getpid()
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(".txt")]
    except OSError:
        return
    for name in names:
        try:
            pid = int(name[len(prefix):-4])
            if not all_of_them and not _rankdeck_ended(pid):
                continue
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                data = f.read()
            os.remove(path)
            # On a line of its own: a progress bar's last redraw has no newline.
            data = b"\n" + data if data else data
            while data:
                data = data[os.write(2, data):]
        except (OSError, ValueError):
            continue


def _rankdeck_wrap_worker_handlers(module):
    original = getattr(module, "_set_worker_signal_handlers", None)
    if original is None or getattr(original, "_rankdeck_wrapped", False):
        return

    def _set_worker_signal_handlers(*args, **kwargs):
        import faulthandler

        enabled = faulthandler.is_enabled()
        if enabled:
            faulthandler.disable()
        try:
            return original(*args, **kwargs)
        finally:
            if enabled:
                out = _rankdeck_open_worker_fault_file()
                faulthandler.enable(file=out or sys.stderr, all_threads=True)

    _set_worker_signal_handlers._rankdeck_wrapped = True
    _set_worker_signal_handlers.__doc__ = original.__doc__
    module._set_worker_signal_handlers = _set_worker_signal_handlers

    set_sigchld = getattr(module, "_set_SIGCHLD_handler", None)
    if set_sigchld is None:
        return

    def _set_SIGCHLD_handler(*args, **kwargs):
        import signal

        result = set_sigchld(*args, **kwargs)
        torch_handler = signal.getsignal(signal.SIGCHLD)
        if callable(torch_handler) and not getattr(torch_handler, "_rankdeck_wrapped", False):

            def handler(signum, frame):
                # Before torch's handler raises "DataLoader worker (pid N) is killed by ...".
                _rankdeck_flush_worker_faults()
                return torch_handler(signum, frame)

            handler._rankdeck_wrapped = True
            try:
                signal.signal(signal.SIGCHLD, handler)
            except (ValueError, OSError):
                pass
        return result

    _set_SIGCHLD_handler.__doc__ = set_sigchld.__doc__
    module._set_SIGCHLD_handler = _set_SIGCHLD_handler


class _RankdeckWorkerSignalsFinder:
    """Wraps the module when it is imported (torch imports it with torch.utils.data)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != _RANKDECK_WORKER_SIGNALS:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module):
            execute(module)
            try:
                _rankdeck_wrap_worker_handlers(module)
            except Exception:
                pass

        loader.exec_module = exec_module
        return spec


def _rankdeck_watch_dataloader_workers():
    try:
        if _rankdeck_worker_fault_dir() is not None:
            import atexit

            atexit.register(_rankdeck_flush_worker_faults, True)
        module = sys.modules.get(_RANKDECK_WORKER_SIGNALS)
        if module is not None:  # imported already (a warm start's pre-imported torch)
            _rankdeck_wrap_worker_handlers(module)
        elif not any(isinstance(f, _RankdeckWorkerSignalsFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, _RankdeckWorkerSignalsFinder())
    except Exception:
        pass


# ---- flight recorder ------------------------------------------------------------------------
# Protocol with rankdeck-supervisor (worker/supervisor/flightrecorderdumper.h): the supervisor
# names a directory (RANKDECK_FLIGHT_RECORDER_DIR) and a ready marker
# (RANKDECK_FLIGHT_RECORDER_READY). This process creates <dir>/fr-<pid>.fifo, keeps it open for
# reading and writing (so that it never reads end-of-file and a request never finds it without
# a reader), starts the thread, and only then appends its pid to the marker. A request is a line
# with the collection id. The answer: <dir>/fr-<pid>.json (torch's JSON) and <dir>/fr-<pid>.pickle
# (torch's pickle), both renamed into place, then <dir>/fr-<pid>.answer, one line
# "<id> ok", "<id> uninitialised" or "<id> failed <text>", renamed into place last.


def _rankdeck_fr_group_config(dist):
    """pg_config as torch's analyser wants it, {name: {name, desc, ranks}}, from the program's
    own process groups: Gloo records its groups before Python names them, under ''."""
    config = {}
    c10d = getattr(dist, "distributed_c10d", None)
    world = getattr(c10d, "_world", None)
    if world is None:
        return config
    for pg, name in list(getattr(world, "pg_names", {}).items()):
        try:
            ranks = sorted(world.pg_group_ranks[pg].keys())
            desc = getattr(pg, "group_desc", "") or ""
            config[str(name)] = {"name": str(name), "desc": str(desc), "ranks": str(ranks)}
        except Exception:
            continue
    return config


def _rankdeck_fr_fill_config(dump, groups):
    """Fills pg_config from the program's groups and, for a group only the entries name, from
    the entries, with the ranks of the unnamed record torch kept."""
    config = dump.get("pg_config")
    if not isinstance(config, dict):
        config = {}
    unnamed = config.pop("", None)
    for name, value in groups.items():
        config.setdefault(name, value)
    for entry in dump.get("entries") or []:
        pg = entry.get("process_group") if isinstance(entry, dict) else None
        if not isinstance(pg, (list, tuple)) or len(pg) != 2 or str(pg[0]) in config:
            continue
        if unnamed is None:
            continue
        config[str(pg[0])] = {"name": str(pg[0]), "desc": str(pg[1]),
                              "ranks": str(unnamed.get("ranks", "[]"))}
    if not config and unnamed is not None:
        config[""] = unnamed
    dump["pg_config"] = config
    return dump


# A process group with both backends (init_process_group() on a GPU node: cpu:gloo,cuda:nccl)
# is pg_id 0 in both recorders, and each backend numbers its own collectives: Gloo's #k and
# NCCL's #k are different calls. The second recorder's groups are renamed before the two are
# written as one dump, so that their sequence numbers never meet.
_RANKDECK_FR_SECOND_PG_OFFSET = 1 << 20


def _rankdeck_fr_apart(dump, suffix):
    """The dump with every group renamed: name + suffix, pg_id + the offset."""
    offset = _RANKDECK_FR_SECOND_PG_OFFSET
    apart = dict(dump)
    entries = []
    for entry in dump.get("entries") or []:
        if isinstance(entry, dict):
            entry = dict(entry)
            pg = entry.get("process_group")
            if isinstance(pg, (list, tuple)) and len(pg) == 2:
                entry["process_group"] = [str(pg[0]) + suffix, pg[1]]
            if isinstance(entry.get("pg_id"), int) and not isinstance(entry.get("pg_id"), bool):
                entry["pg_id"] = entry["pg_id"] + offset
        entries.append(entry)
    apart["entries"] = entries
    config = {}
    for name, value in (dump.get("pg_config") or {}).items():
        if isinstance(value, dict):
            value = dict(value, name=str(value.get("name", name)) + suffix)
        config[str(name) + suffix] = value
    apart["pg_config"] = config
    status = {}
    for pg_id, value in (dump.get("pg_status") or {}).items():
        key = str(pg_id)
        status[str(int(key) + offset) if key.isdigit() else key] = value
    apart["pg_status"] = status
    return apart


def _rankdeck_fr_merge(first, second):
    """One dump from two recorders (Gloo's c10::Event one and NCCL's CUDA one), the second's
    groups kept apart (_rankdeck_fr_apart)."""
    second = _rankdeck_fr_apart(second, ":nccl")
    merged = dict(first)
    for key in ("pg_config", "pg_status"):
        both = dict(first.get(key) or {})
        both.update(second.get(key) or {})
        merged[key] = both
    entries = list(first.get("entries") or []) + list(second.get("entries") or [])
    entries.sort(key=lambda e: e.get("time_created_ns", 0) if isinstance(e, dict) else 0)
    merged["entries"] = entries
    for key, value in second.items():
        merged.setdefault(key, value)
    return merged


def _rankdeck_fr_uses_nccl(dist):
    try:
        world = dist.distributed_c10d._world
        return any("nccl" in str(backend).lower() for backend, _ in world.pg_map.values())
    except Exception:
        return False


def _rankdeck_fr_write(path, data):
    tmp = "%s.tmp" % path
    with open(tmp, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def _rankdeck_fr_answer(directory, pid, request):
    base = os.path.join(directory, "fr-%d" % pid)
    try:
        dist = sys.modules.get("torch.distributed")
        torch = sys.modules.get("torch")
        if (dist is None or torch is None or not dist.is_available()
                or not dist.is_initialized()):
            status = "uninitialised"
        else:
            import json
            import pickle

            c10d = torch._C._distributed_c10d
            groups = _rankdeck_fr_group_config(dist)
            # The JSON has no stack traces (torch leaves them out: too much data). The pickle
            # gets them only when torch._inductor is loaded already: torch's first dump with
            # stack traces imports it (with dynamo and triton) into the program, which took
            # 2.5-5 s here, past the supervisor's deadline; the stacks come from dump-stacks.
            stacks = "torch._inductor" in sys.modules
            text = json.loads(c10d._dump_fr_trace_json(True, False))
            data = pickle.loads(c10d._dump_fr_trace(True, stacks, False))
            if _rankdeck_fr_uses_nccl(dist) and hasattr(c10d, "_dump_nccl_trace_json"):
                text = _rankdeck_fr_merge(text, json.loads(c10d._dump_nccl_trace_json(True, False)))
                data = _rankdeck_fr_merge(data, pickle.loads(c10d._dump_nccl_trace(True, stacks, False)))
            text = _rankdeck_fr_fill_config(text, groups)
            data = _rankdeck_fr_fill_config(data, groups)
            _rankdeck_fr_write(base + ".json", json.dumps(text).encode())
            _rankdeck_fr_write(base + ".pickle", pickle.dumps(data, protocol=2))
            status = "ok"
    except Exception as e:  # the program goes on; the supervisor reports why
        status = "failed %s: %s" % (type(e).__name__, str(e).replace("\n", " ")[:300])
    _rankdeck_fr_write(base + ".answer", ("%d %s\n" % (request, status)).encode())


def _rankdeck_fr_serve(fd, directory, pid):
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except InterruptedError:
            continue
        except OSError:
            return
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            try:
                request = int(line.strip() or b"0")
            except ValueError:
                continue
            try:
                _rankdeck_fr_answer(directory, pid, request)
            except Exception:
                pass
        if len(pending) > 4096:
            pending = b""


def _rankdeck_start_flight_recorder():
    directory = os.environ.get("RANKDECK_FLIGHT_RECORDER_DIR")
    ready = os.environ.get("RANKDECK_FLIGHT_RECORDER_READY")
    if not directory or not ready:
        return None
    try:
        import threading

        pid = os.getpid()
        fifo = os.path.join(directory, "fr-%d.fifo" % pid)
        try:
            os.unlink(fifo)
        except FileNotFoundError:
            pass
        os.mkfifo(fifo, 0o600)
        fd = os.open(fifo, os.O_RDWR | os.O_CLOEXEC)
        # A forked child is another process: it must not keep this one's FIFO open. The holder
        # is emptied there, so that a grandchild does not close whatever reuses the number.
        holder = [fd]
        os.register_at_fork(after_in_child=lambda: _rankdeck_fr_close(holder))
        thread = threading.Thread(target=_rankdeck_fr_serve, args=(fd, directory, pid),
                                  name="rankdeck-flight-recorder", daemon=True)
        thread.start()
        # A program that starts many short Pythons must not leave a FIFO behind for each.
        import atexit

        atexit.register(_rankdeck_fr_remove, fifo, pid)
        with open(ready, "a") as marker:
            marker.write("%d\n" % pid)
        return thread
    except Exception:
        return None


def _rankdeck_fr_remove(fifo, pid):
    # atexit handlers are inherited by a fork: only the process that made the FIFO removes it.
    if os.getpid() == pid:
        try:
            os.unlink(fifo)
        except OSError:
            pass


def _rankdeck_fr_close(holder):
    fd, holder[0] = holder[0], None
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


# ---- stack sampling (why a job is slow) --------------------------------------------------------
# Protocol with rankdeck-supervisor (worker/supervisor/stacksampler.h): the supervisor hands
# down the write end of a non-blocking pipe (RANKDECK_SAMPLES_FD) and a rate
# (RANKDECK_SAMPLE_HZ). A daemon thread samples the main thread's Python stack at that rate and,
# once a second, writes one line per distinct stack:
#     <pid> TAB <count> TAB <category> TAB <user frame index> TAB <frame;frame;...> NEWLINE
# frames root first, each "function (file:line)"; the category is what the innermost frame that
# says anything is doing (data, forward, backward, optimizer, collective, other); the user frame
# is the innermost frame of the program's own code (-1: none). Then "<pid> TAB cpu TAB <ns>"
# with the thread's own CPU time, what sampling costs. Each line is one write() below PIPE_BUF,
# so the DataLoader workers (forks, which restart the thread) can share the pipe; a full pipe
# drops the line, never blocks the program. Sampling from a thread of the process, not from
# outside as py-spy does, needs no knowledge of the interpreter's private structures (they
# change with every Python version). But the thread needs the GIL to look, and a thread waiting
# for it forces the holder to let go only after the switch interval (5 ms): a program that lets
# go by itself more often (every torch call does) hands it over there, so every sample landed in
# a torch call and none in the pure-Python loop between them. A Dataset's loop taking 99 % of the
# time got 0 of 56 samples (a probe: 16 x 0.24 ms of Python, then a 10 us sleep). So the thread
# wakes 6 ms before a sample is due, sets the switch interval to 0.1 ms until then, and looks at
# the planned time: the holder is made to let go within 0.1 ms, wherever it is (the probe: 55 of
# 56). Looking as soon as it had lowered the interval would not do: that moment follows a
# release of the GIL, so samples leaned to the calls that release it (a rank spending 26 % of
# its time in backward read 65 %).
_RANKDECK_LIBRARY_MARKERS = ("/site-packages/", "/dist-packages/")
_RANKDECK_CATEGORIES = (
    ("/torch/utils/data/", "data"),
    ("/torch/distributed/", "collective"),
    ("/torch/autograd/", "backward"),
    ("/torch/optim/", "optimizer"),
    ("/torch/nn/modules/", "forward"),
    ("/torch/nn/functional", "forward"),
)


def _rankdeck_frame_info(code, cache, stdlib):
    info = cache.get(code)
    if info is not None:
        return info
    path = code.co_filename or "?"
    name = getattr(code, "co_qualname", None) or code.co_name
    category = None
    for marker, what in _RANKDECK_CATEGORIES:
        if marker in path:
            category = what
            break
    library = path.startswith("<") or any(m in path for m in _RANKDECK_LIBRARY_MARKERS) or (
        stdlib and path.startswith(stdlib))
    if category is None and not library:
        if code.co_name in ("__getitem__", "__getitems__", "__iter__", "__next__"):
            category = "data"
        elif name.endswith("backward") and ".backward" in name:
            category = "backward"
    short = path
    for m in _RANKDECK_LIBRARY_MARKERS:
        at = path.rfind(m)
        if at >= 0:
            short = path[at + len(m):]
            break
    else:
        if library or not path.startswith(os.getcwd() + os.sep):
            short = os.path.basename(path)
        else:
            short = os.path.relpath(path)
    text = (name + " (" + short + ":").replace(";", ":").replace("\t", " ").replace("\n", " ")
    info = (text, category, not library)
    cache[code] = info
    return info


def _rankdeck_samples_flush(fd, pid, counts, cache, stdlib):
    for key, count in counts.items():
        frames = []
        category = "other"
        decided = False
        user = -1
        n = len(key)
        for i in range(n):  # innermost first
            code, line = key[i]
            text, what, own = _rankdeck_frame_info(code, cache, stdlib)
            if not decided and what is not None:
                category, decided = what, True
            if user < 0 and own:
                user = n - 1 - i
            frames.append(text + str(line) + ")")
        frames.reverse()
        head = "%d\t%d\t%s\t" % (pid, count, category)
        body = ";".join(frames)
        # One write below PIPE_BUF: the outermost frames go first.
        while len(head) + len(body) + 8 > 3800 and len(frames) > 1:
            frames.pop(0)
            user -= 1
            body = ";".join(frames)
        line = (head + "%d\t" % max(user, -1) + body + "\n").encode("utf-8", "replace")[:4000]
        try:
            os.write(fd, line)
        except BlockingIOError:
            pass


def _rankdeck_sample(fd, hz):
    import random
    import threading
    import time

    jitter = random.Random()

    pid = os.getpid()
    main = threading.main_thread().ident
    stdlib = os.path.dirname(os.__file__) + os.sep
    cache = {}
    counts = {}
    period = 1.0 / hz
    next_flush = time.monotonic() + 1.0
    # A rank waiting in backward or a collective is sampled in the same place for seconds: the
    # same innermost frame (by id, at the same line, under the same caller) is the same stack,
    # and is not walked again. Ids, not the frames: holding a frame would keep its locals (a
    # batch, a tensor) alive. A freed frame's id reused at that very line misplaces one sample.
    last = None
    key = ()
    try:
        planned = time.monotonic() + period
        while True:
            # The GIL, to lower the interval, comes when the main thread lets it go, so that
            # moment leans towards its calls into torch; the sample is taken at the planned
            # time, which does not. Planned at random around the rate: never in step with the
            # program's own period.
            lead = planned - 0.006 - time.monotonic()
            if lead > 0:
                time.sleep(lead)
            interval = sys.getswitchinterval()
            sys.setswitchinterval(0.0001)
            try:
                wait = planned - time.monotonic()
                if wait > 0:
                    time.sleep(wait)  # the GIL comes back within 0.1 ms: see above
                frame = sys._current_frames().get(main)
            finally:
                sys.setswitchinterval(interval)
            planned = max(planned, time.monotonic()) + period * (0.5 + jitter.random())
            if frame is None:
                if not threading.main_thread().is_alive():
                    return
                continue
            back = frame.f_back
            where = (id(frame), frame.f_lineno, id(back), back.f_lineno if back else 0)
            if where != last:
                last = where
                key = []
                while frame is not None and len(key) < 96:
                    key.append((frame.f_code, frame.f_lineno or 0))
                    frame = frame.f_back
                key = tuple(key)
            frame = back = None
            counts[key] = counts.get(key, 0) + 1
            now = time.monotonic()
            if now >= next_flush:
                _rankdeck_samples_flush(fd, pid, counts, cache, stdlib)
                counts = {}
                try:
                    os.write(fd, ("%d\tcpu\t%d\n" % (pid, time.thread_time_ns())).encode())
                except BlockingIOError:
                    pass
                next_flush = now + 1.0
    except Exception:
        return  # the pipe is gone (the supervisor ended): sampling ends, the program goes on


def _rankdeck_start_sampler():
    try:
        fd = int(os.environ.get("RANKDECK_SAMPLES_FD", ""))
        hz = float(os.environ.get("RANKDECK_SAMPLE_HZ", "20"))
        if fd < 0 or not hz > 0:
            return None
        os.fstat(fd)
    except (ValueError, OSError):
        return None
    try:
        import threading

        def start():
            threading.Thread(target=_rankdeck_sample, args=(fd, min(hz, 200.0)),
                             name="rankdeck-sampler", daemon=True).start()

        start()
        # A fork (a DataLoader worker) has no thread but the one that forked: it samples itself.
        os.register_at_fork(after_in_child=start)
        return start
    except Exception:
        return None


def _rankdeck_run_next_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    later = []
    found_self = False
    for entry in sys.path:
        try:
            is_self = os.path.abspath(entry or os.getcwd()) == here
        except (OSError, TypeError, ValueError):
            is_self = False
        if is_self:
            found_self = True
            continue
        if found_self:
            later.append(entry)
    if not found_self:
        return
    # Python took the first sitecustomize on sys.path, which was this one: the one it would
    # have taken otherwise is the first after it.
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", later)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    # Errors propagate to site, which reports them as "Error in sitecustomize", as it would.
    spec.loader.exec_module(module)


# faulthandler keeps its own reference to the file; this one documents that it must stay open.
_rankdeck_stacks_file = _rankdeck_register_stack_dump()
_rankdeck_flight_recorder_thread = _rankdeck_start_flight_recorder()
_rankdeck_watch_dataloader_workers()
_rankdeck_sampler = _rankdeck_start_sampler()
_rankdeck_run_next_sitecustomize()
