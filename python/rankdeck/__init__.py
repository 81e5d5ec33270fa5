# SPDX-License-Identifier: GPL-3.0-or-later
"""Curves with one line of code: ``rankdeck.log(step=None, **scalars)``.

Inside a RankDeck run (``rankdeck-cli launch --exec``) every call writes one wire-format
``step`` event on stdout, and each scalar becomes its own curve, per rank. Outside RankDeck it
does nothing and prints nothing, so a script keeps running unchanged under torchrun or alone.
Only the standard library is used.
"""

import json
import math
import os
import sys
import threading
import time
import zlib

__all__ = ["log", "active"]

_MARKER = b"\x1erdk1 "
# Fields the launcher shows as the rank's own (the worker's step event); the rest go in "scalars".
_TOP_LEVEL = ("loss", "lr", "samples_per_s", "step_ms", "comm_wait_ms", "gpu_mem")
_lock = threading.Lock()
_next_step = 0


def active():
    """True inside a RankDeck run (the launcher sets RANKDECK_RUN_ID)."""
    return bool(os.environ.get("RANKDECK_RUN_ID"))


def _number(value):
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def log(step=None, **scalars):
    """Record scalars (numbers) at ``step`` (default: one more than the last call)."""
    global _next_step
    if not active() or not scalars:
        return
    with _lock:
        if step is None:
            step = _next_step
        step = int(step)
        _next_step = step + 1
        event = {"t": "step", "ts": time.time_ns() // 1000, "rank": int(os.environ.get("RANK", "0")),
                 "step": step}
        extra = {}
        for name, value in scalars.items():
            try:
                number = _number(value)
            except (TypeError, ValueError):
                continue  # not a number: nothing to plot
            if name in _TOP_LEVEL:
                event[name] = number
            else:
                extra[str(name)] = number
        if extra:
            event["scalars"] = extra
        payload = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        line = _MARKER + b"%08x " % (zlib.crc32(payload) & 0xFFFFFFFF) + payload + b"\n"
        # Text the program printed before must come first; the event goes out in one write().
        try:
            sys.stdout.flush()
        except (AttributeError, OSError, ValueError):
            pass
        try:
            os.write(1, line)
        except OSError:
            pass
