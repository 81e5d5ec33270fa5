# SPDX-License-Identifier: GPL-3.0-or-later
# Waits to be stopped, then ends as argv[1] says: "default" (no handler: SIGTERM kills it),
# "exit3" (its handler exits with code 3), "keyerror" (its handler raises an uncaught KeyError,
# exit code 1 with a traceback, as a rank's own error overtaken by the stop) or "exit0" (it ends
# cleanly when asked). Prints "ready" once its handler is in place.
import signal
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "default"


def on_term(signum, frame):
    if mode == "exit3":
        sys.exit(3)
    if mode == "keyerror":
        raise KeyError("missing")
    sys.exit(0)


if mode != "default":
    signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
for _ in range(600):
    time.sleep(0.1)
print("never stopped", flush=True)
