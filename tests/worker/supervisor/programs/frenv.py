# SPDX-License-Identifier: GPL-3.0-or-later
# Prints, as one JSON line after "frenv ", the flight-recorder environment the program got and
# whether RankDeck's hook thread runs in it, then sleeps until stopped. No torch needed.
import json
import os
import threading
import time

names = ["TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE", "TORCH_NCCL_DEBUG_INFO_PIPE_FILE",
         "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
         "RANKDECK_FLIGHT_RECORDER_DIR"]
state = {name: os.environ.get(name) for name in names}
state["thread"] = any(t.name == "rankdeck-flight-recorder" for t in threading.enumerate())
print("frenv " + json.dumps(state), flush=True)
time.sleep(600)
