# SPDX-License-Identifier: GPL-3.0-or-later
# What torchelastic's @record does on an uncaught exception, written by hand (no torch needed):
# the error file gets the exception that ended the program. Before that, the program printed a
# traceback of an exception it handled; the report must name the one in the error file.
import json
import os
import sys
import time
import traceback

try:
    {}["missing"]
except KeyError:
    traceback.print_exc()

error = 'Traceback (most recent call last):\n  File "train.py", line 7, in load\n    raise ValueError("shard 7 is corrupt")\nValueError: shard 7 is corrupt\n'
with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
    json.dump({"message": {"message": "ValueError: shard 7 is corrupt",
                           "extraInfo": {"py_callstack": error,
                                         "timestamp": str(int(time.time()))}}}, f)
sys.exit(1)
