# SPDX-License-Identifier: GPL-3.0-or-later
"""RankDeck's startup hook for a user's own Python program (not part of the pip package).

rankdeck-supervisor writes this file next to the ``rankdeck`` module in the node's run
directory and puts that directory first on PYTHONPATH, so Python's ``site`` imports it at
start-up. It registers a faulthandler dump of every thread's Python stack on a real-time
signal that nothing else claims, into a file the supervisor reads, and then writes a marker
(pid and signal): the supervisor only ever sends that signal to a process that registered
it, because for any other process (a native program) its default action is to terminate.
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
_rankdeck_run_next_sitecustomize()
