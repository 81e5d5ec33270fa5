#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The startup hook's merge of two flight recorders (python/startup/sitecustomize.py) keeps
them apart: a process group with both backends is pg_id 0 in Gloo's recorder and in NCCL's, and
each numbers its own collectives, so Gloo's #k and NCCL's #k must never be compared. Checked on
a real Gloo dump (tests/core/diagnosis/data/fr/healthy) standing for both recorders, the NCCL
one with one collective more, as RankDeck's own dump parser reads the merge: no group holds
entries of both, and each group's sequence and status stay its own."""
import copy
import json
import os
import sys
import unittest

from hookloader import ROOT, load_hook


class RecordersApart(unittest.TestCase):
    def setUp(self):
        self.hook = load_hook()
        with open(os.path.join(ROOT, "tests/core/diagnosis/data/fr/healthy/rank_0.json")) as f:
            self.gloo = json.load(f)
        self.nccl = copy.deepcopy(self.gloo)
        extra = copy.deepcopy(self.nccl["entries"][-1])
        extra["collective_seq_id"] += 1
        extra["record_id"] += 1
        extra["profiling_name"] = "nccl:all_reduce"
        self.nccl["entries"].append(extra)

    def test_no_group_holds_both_recorders(self):
        merged = self.hook._rankdeck_fr_merge(self.gloo, self.nccl)
        self.assertEqual(len(merged["entries"]),
                         len(self.gloo["entries"]) + len(self.nccl["entries"]))
        by_group = {}
        for entry in merged["entries"]:
            by_group.setdefault(entry["process_group"][0], set()).add(entry["pg_id"])
        gloo_groups = {e["process_group"][0] for e in self.gloo["entries"]}
        for name in gloo_groups:
            self.assertIn(name, by_group)
            self.assertIn(name + ":nccl", by_group)
        # One pg_id per group, and no pg_id shared by two groups.
        ids = [next(iter(v)) for v in by_group.values()]
        self.assertTrue(all(len(v) == 1 for v in by_group.values()), by_group)
        self.assertEqual(len(ids), len(set(ids)))

    def test_sequences_and_status_stay_their_own(self):
        merged = self.hook._rankdeck_fr_merge(self.gloo, self.nccl)
        last = {}
        for entry in merged["entries"]:
            name = entry["process_group"][0]
            last[name] = max(last.get(name, 0), entry["collective_seq_id"])
        gloo_last = max(e["collective_seq_id"] for e in self.gloo["entries"])
        self.assertEqual(last["0"], gloo_last)
        self.assertEqual(last["0:nccl"], gloo_last + 1)
        self.assertEqual(len(merged["pg_status"]),
                         len(self.gloo["pg_status"]) + len(self.nccl["pg_status"]))
        for key in self.gloo["pg_status"]:
            self.assertEqual(merged["pg_status"][key], self.gloo["pg_status"][key])
            offset = str(int(key) + self.hook._RANKDECK_FR_SECOND_PG_OFFSET)
            self.assertEqual(merged["pg_status"][offset], self.nccl["pg_status"][key])

    def test_config_names_follow(self):
        merged = self.hook._rankdeck_fr_merge(self.gloo, self.nccl)
        for name, value in self.nccl.get("pg_config", {}).items():
            self.assertEqual(merged["pg_config"][name + ":nccl"]["name"],
                             str(value.get("name", name)) + ":nccl")

    def test_garbage_is_left_as_it_is(self):
        odd = {"entries": [7, {"process_group": "x", "pg_id": True}], "pg_status": {"a": 1},
               "pg_config": {"g": "not a dict"}}
        apart = self.hook._rankdeck_fr_apart(odd, ":nccl")
        self.assertEqual(apart["entries"][0], 7)
        self.assertIs(apart["entries"][1]["pg_id"], True)
        self.assertEqual(apart["pg_status"], {"a": 1})
        self.assertEqual(apart["pg_config"], {"g:nccl": "not a dict"})


if __name__ == "__main__":
    sys.exit(unittest.main())
