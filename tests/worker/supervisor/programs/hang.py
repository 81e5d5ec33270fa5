# SPDX-License-Identifier: GPL-3.0-or-later
# Sleeps in a nested function on the main thread and in a second thread, prints "ready" once
# both are asleep, then ends normally after argv[1] seconds: a stack dump must not disturb it.
import sys
import threading
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0


def worker_sleeps():
    time.sleep(seconds)


def inner_sleep():
    time.sleep(seconds)


def outer():
    inner_sleep()


t = threading.Thread(target=worker_sleeps, name="second")
t.start()
print("ready", flush=True)
outer()
t.join()
print("done", flush=True)
