#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The startup hook's stack sampler (python/startup/sitecustomize.py, issue 43) sees where the
main thread spends its time even when that is pure Python between calls that let the GIL go.

A sampling thread needs the GIL to look at the main thread, and a waiting thread makes the holder
let go only after the switch interval (5 ms); a program that lets go by itself more often (every
torch call does) used to hand the GIL over there, so every sample landed in those calls: a
Dataset's loop that took 99 % of the time got none. Here the main thread runs ~3 ms of pure
Python, then a sleep, over and over; the share of samples in the Python must be the share of
the time it took."""
import os
import threading
import time
import unittest

from hookloader import load_hook


def hot(n):
    spin = 0
    for k in range(n):
        spin += (k * 7919) % 13
    return spin


def lets_go(seconds):
    time.sleep(seconds)


class SamplerSeesPurePython(unittest.TestCase):
    def test_python_between_short_releases(self):
        # A batch of Python between torch calls: the Python is nearly all the time.
        self.check(0.00001)

    def test_python_and_long_waits(self):
        # Python, then 2 ms without the GIL (a backward waiting for the all-reduce): about 60/40.
        # Looking as soon as the sampler had the GIL leaned to the waits.
        self.check(0.002)

    def check(self, release_seconds):
        hook = load_hook()
        # Iterations for ~3 ms of Python: below the switch interval, as a batch of small
        # samples between two torch calls is.
        start = time.perf_counter()
        hot(20000)
        per_iteration = (time.perf_counter() - start) / 20000
        n = max(1000, int(0.003 / per_iteration))
        read, write = os.pipe()
        os.set_blocking(write, False)
        threading.Thread(target=hook._rankdeck_sample, args=(write, 20.0), daemon=True).start()
        # What the main thread's time really went to (under load, a 10 us sleep can take
        # milliseconds: the thread then waits for a CPU), against what the samples say.
        in_hot = in_lets_go = 0.0
        end = time.monotonic() + 4.0
        while time.monotonic() < end:
            a = time.perf_counter()
            hot(n)
            b = time.perf_counter()
            lets_go(release_seconds)
            in_hot += b - a
            in_lets_go += time.perf_counter() - b
        time.sleep(1.2)  # the sampler writes its counts once a second
        os.set_blocking(read, False)
        data = b""
        while True:
            try:
                chunk = os.read(read, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
        counts = {}
        for line in data.decode("utf-8", "replace").splitlines():
            fields = line.split("\t")
            if len(fields) != 5 or fields[1] == "cpu":
                continue
            innermost = fields[4].split(";")[-1]
            function = innermost.split(" (")[0]
            counts[function] = counts.get(function, 0) + int(fields[1])
        sampled = counts.get("hot", 0) + counts.get("lets_go", 0)
        self.assertGreaterEqual(sampled, 20, counts)  # 20 Hz for 4 s, however loaded
        share = counts.get("hot", 0) / sampled
        truth = in_hot / (in_hot + in_lets_go)
        # The sampler that waited for the GIL put 0 % of its samples in the Python whatever
        # the truth (~99 % on a quiet machine with short releases).
        self.assertLess(abs(share - truth), 0.25, (truth, counts))


if __name__ == "__main__":
    unittest.main()
