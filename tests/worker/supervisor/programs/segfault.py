# SPDX-License-Identifier: GPL-3.0-or-later
# Dies by SIGSEGV inside ctypes; prints a monotonic timestamp (ns) right before the fault so the
# test can measure the time from the signal to the crash event.
import ctypes
import sys
import time

print("fault-at-ns", time.clock_gettime_ns(time.CLOCK_REALTIME), flush=True)
ctypes.string_at(0)
