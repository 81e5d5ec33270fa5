# SPDX-License-Identifier: GPL-3.0-or-later
# Writes whatever argv[1] names into $TORCHELASTIC_ERROR_FILE (hostile, huge or invalid
# content) and exits 1: the supervisor must report the exit code and never crash.
import os
import sys

kind = sys.argv[1]
path = os.environ["TORCHELASTIC_ERROR_FILE"]
if kind == "invalid":
    data = '{"message": {"message": "ValueError: x", "extraInfo": {"py_callstack": "abc'
elif kind == "deep":
    data = "[" * 100000 + "]" * 100000
elif kind == "huge":
    data = '{"message": "' + "A" * (3 << 20) + '"}'
elif kind == "plain":
    data = '{"message": "RuntimeError: plain form \\u00e9\\ud83d\\ude00", "timestamp": 1700000000}'
elif kind == "binary":
    data = "\x00\xff\x1e{}"
else:
    data = ""
with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
    f.write(data)
sys.exit(1)
