"""`vkgraphy inspect tactics`: tactic research over replays and timing caches of several devices
(docs/cli-inspect-surgeon.md). A second device is made by copying a lavapipe replay under another
device identity with other times, so that the comparison has something to find."""
import copy
import csv
import json
import unittest

from vkgraphy_cli import VK_MODELS, CliTestCase

EXIT_INPUT = 3


class TestInspectTactics(CliTestCase):
    def build(self):
        self.vkgraphy("convert", f"{VK_MODELS}/cnn.onnx", "-o", "cnn.engine", "--builder-optimization-level", "2",
                      "--save-tactics", "replay.json", "--save-timing-cache", "cache.json")
        return self.read_json("replay.json")

    def other_device(self, replay):
        """The same layers on 'Other GPU', each candidate list timed in reverse order (so winners differ)."""
        other = copy.deepcopy(replay)
        other["device"]["name"] = "Other GPU"
        other["device"]["vendor_id"] = 4318
        for layer in other["layers"]:
            timed = [c for c in layer["candidates"] if "median_ns" in c]
            medians = sorted(c["median_ns"] for c in timed)
            for c, m in zip(sorted(timed, key=lambda c: c["median_ns"]), reversed(medians)):
                c["median_ns"] = m
                c["samples_ns"] = [m]
        return other

    def test_compares_devices_and_exports(self):
        replay = self.build()
        self.write_json("other.json", self.other_device(replay))
        out = self.vkgraphy("inspect", "tactics", "replay.json", "other.json", "cache.json", "--csv", "t.csv",
                            "--json", "t.json", "--candidates")
        self.assertRegex(out, r"Loaded \d+ measurement\(s\) of \d+ layer signature\(s\) on 2 device\(s\) from 3 file")
        contested = [l for l in replay["layers"] if sum("median_ns" in c for c in l["candidates"]) > 1
                     and len({c["median_ns"] for c in l["candidates"] if "median_ns" in c}) > 1]
        self.assertTrue(contested, "the build timed no layer with two candidates")
        self.assertIn("different winners: ", out)
        self.assertIn("(the winner on Other GPU) is ", out)
        self.assertRegex(out, r"Summary: \d+ layer signature\(s\) on 2 device\(s\); [1-9]\d* with different winners")

        with open(self.path("t.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        # Layers of one signature share their measurements: one row per (device, signature, tactic).
        pairs = {(l["signature"], c["tactic"]) for l in replay["layers"] for c in l["candidates"]}
        self.assertEqual({(r["signature"], r["tactic"]) for r in rows if r["device"] == "Other GPU"}, pairs)
        lavapipe = {(r["signature"], r["tactic"]): r for r in rows if r["device"] != "Other GPU"}
        self.assertLessEqual(pairs, set(lavapipe))  # the cache adds the reformats it timed
        # The replay and the cache of the same build describe the same timings: merged, both sources kept.
        timed = [lavapipe[p] for p in pairs if lavapipe[p]["median_ns"]]
        self.assertTrue(timed and all(r["sources"] == "replay.json;cache.json" for r in timed), timed[:2])
        with open(self.path("t.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["format"], "vkgraphy-tactic-research")
        self.assertEqual(len(doc["measurements"]), len(rows))
        differ = [s for s in doc["signatures"] if s["winners_differ"]]
        self.assertTrue(differ)
        for s in differ:
            winners = {d["device"]["name"]: d["winner"] for d in s["devices"]}
            self.assertEqual(len(set(winners.values())), 2, s)

    def test_op_filter_and_folders(self):
        self.build()
        out = self.vkgraphy("inspect", "tactics", ".", "--op", "Gemm")
        self.assertRegex(out, r"on 1 device\(s\) from 2 file\(s\)")
        self.assertIn("| Gemm", out)
        self.assertNotIn("| Conv", out)

    def test_files_of_another_kind_are_named(self):
        self.write_json("golden.json", {"lst": [], "polygraphy_class": "RunResults"})
        out = self.vkgraphy("inspect", "tactics", "golden.json", expect=EXIT_INPUT)
        self.assertIn("'golden.json': neither a tactic replay nor a timing cache", out)
        out = self.vkgraphy("inspect", "tactics", "missing.json", expect=EXIT_INPUT)
        self.assertIn("'missing.json': no such file or directory", out)


if __name__ == "__main__":
    unittest.main()
