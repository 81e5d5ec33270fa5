# SPDX-License-Identifier: GPL-3.0-or-later
# Writes the rank's whole environment as JSON to DIR/env-rank<RANK>.json, for a test that
# compares what torchrun and RankDeck give a program. Imports nothing heavy: the launchers'
# own start-up is what differs, not the program's.
#   python dump_environment.py DIR
import json
import os
import sys

path = os.path.join(sys.argv[1], "env-rank%s.json" % os.environ.get("RANK", "unset"))
with open(path + ".part", "w") as f:
    json.dump(dict(os.environ), f)
os.replace(path + ".part", path)
