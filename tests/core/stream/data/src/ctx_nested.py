class BatchError(Exception):
    pass
def f():
    raise BatchError("bad batch 12\nshape (3, 4)")
f()
# SPDX-License-Identifier: GPL-3.0-or-later
