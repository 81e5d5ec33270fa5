# SPDX-License-Identifier: GPL-3.0-or-later
# What torchelastic's @record does on an uncaught exception, without torch: write the error
# file ($TORCHELASTIC_ERROR_FILE) in its nested format, then let the exception end the program.
import json
import os
import time
import traceback


def load_shard(index):
    raise ValueError("shard %d is corrupt" % index)


try:
    load_shard(7)
except Exception as e:
    with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
        json.dump({"message": {"message": "%s: %s" % (type(e).__name__, e),
                               "extraInfo": {"py_callstack": traceback.format_exc(),
                                             "timestamp": str(int(time.time()))}}}, f)
    raise
