def a(): raise ValueError("bad value 1")
def b(): raise TypeError("wrong type")
def run():
    errs = []
    for f in (a, b):
        try: f()
        except Exception as e: errs.append(e)
    raise ExceptionGroup("two workers failed", errs)
run()
# SPDX-License-Identifier: GPL-3.0-or-later
