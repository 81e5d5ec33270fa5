import sys
def load(batch):
    items = {"a": 1}
    return items[batch["key"]] + compute(batch)
def compute(batch):
    return int(batch["value"]) * 2
def train(step):
    batch = {"key": "a", "value": "bad batch"}
    return load(batch)
train(3)
# SPDX-License-Identifier: GPL-3.0-or-later
