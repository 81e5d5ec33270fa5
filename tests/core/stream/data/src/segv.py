import ctypes, threading, time, faulthandler
def idle():
    while True:
        time.sleep(0.1)
t = threading.Thread(target=idle, daemon=True); t.start()
time.sleep(0.2)
def crash(n):
    return ctypes.string_at(0)
def step(i):
    return crash(i)
step(7)
# SPDX-License-Identifier: GPL-3.0-or-later
