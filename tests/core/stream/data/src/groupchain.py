def run():
    try:
        raise ExceptionGroup("workers failed", [ValueError("w1"), KeyError("w2")])
    except ExceptionGroup as g:
        raise RuntimeError("training aborted") from g
run()
# SPDX-License-Identifier: GPL-3.0-or-later
