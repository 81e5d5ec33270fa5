# SPDX-License-Identifier: GPL-3.0-or-later
#
# Reads a directory of TensorBoard event files with TensorBoard's own reader (not RankDeck's
# code) and prints {run: {tag: [[step, wall_time, value], ...]}} as JSON. Every scalar is kept
# (size_guidance 0: no reservoir sampling). Runs are sub-directories, as TensorBoard shows them.
import json
import math
import os
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main(root):
    out = {}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not os.path.isdir(path):
            continue
        acc = EventAccumulator(path, size_guidance={"scalars": 0})
        acc.Reload()
        tags = {}
        for tag in acc.Tags()["scalars"]:
            tags[tag] = [[e.step, e.wall_time, e.value if math.isfinite(e.value) else str(e.value)]
                         for e in acc.Scalars(tag)]
        out[name] = tags
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
