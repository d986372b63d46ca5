"""`vkgraphy inspect diff-tactics`, driven as a user would.

Run by ctest with VKGRAPHY_BIN (the vkgraphy binary) and VKGRAPHY_SOURCE_DIR set.
Tactic replays are written as JSON, following docs/tactic-files.md.
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vkgraphy_cli import CliTestCase  # noqa: E402

EXIT_USAGE = 2
EXIT_INVALID_INPUT = 3
EXIT_DEBUG_NOT_FOUND = 8

DEVICE = {"name": "llvmpipe (LLVM 15.0.6, 256 bits)", "vendor_id": 65541, "device_id": 0,
          "driver_version": "Mesa 22.3.6", "pipeline_cache_uuid": "6d657361322e332e3600000000000000",
          "vkgraphy_version": "0.1.0"}


def replay(conv="conv.gemm.f32", pool="pool.vec4.f32", pool_precision="fp32", device=None, conv_signature=None):
    """A replay of the model conv -> pool with the given choices."""
    return {
        "format": "vkgraphy-tactic-replay",
        "version": 1,
        "device": device or DEVICE,
        "layers": [
            {"name": "conv", "op": "Conv", "signature": conv_signature or "00112233aabbccdd", "tactic": conv,
             "precision": "fp32", "candidates": []},
            {"name": "pool", "op": "MaxPool", "signature": "ffeeddccbbaa9988", "tactic": pool,
             "precision": pool_precision, "candidates": []},
        ],
    }


class DiffTacticsTest(CliTestCase):
    def put(self, name, value):
        """Writes JSON (or text) at a relative path, creating folders."""
        os.makedirs(os.path.dirname(self.path(name)) or self.tmp, exist_ok=True)
        with open(self.path(name), "w") as f:
            f.write(value if isinstance(value, str) else json.dumps(value))
        return self.path(name)

    def make_artifacts(self, art="art"):
        """Like `debug build --save-tactics replay.json --artifacts replay.json` leaves them: 3 good, 2 bad."""
        for i, (conv, pool) in enumerate([("conv.gemm.f32", "pool.vec4.f32"), ("conv.direct.f32", "pool.vec4.f32"),
                                          ("conv.gemm.f32", "pool.vec4.f32")]):
            self.put(f"{art}/good/replay_iter{i}_20261121T10150{i}Z.json", replay(conv, pool))
        for i, conv in enumerate(["conv.gemm.f32", "conv.direct.f32"], start=3):
            self.put(f"{art}/bad/replay_iter{i}_20261121T10150{i}Z.json", replay(conv, "pool.direct.f32"))
        return self.path(art)

    def test_dir_with_good_and_bad(self):
        art = self.make_artifacts()
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", art)
        self.assertIn(f"[I] Loaded 3 good tactic replay(s) and 2 bad tactic replay(s) from {art}", out)
        self.assertIn("[I] Found potentially bad tactics:", out)
        self.assertIn("[I] Layer: pool\n", out)
        self.assertIn("        Tactics seen only in bad replays: pool.direct.f32 (fp32) in 2/2 bad replay(s)", out)
        self.assertNotIn("Layer: conv", out)  # both conv tactics also appear in good replays
        self.assertIn("[I] The failure follows tactic pool.direct.f32 (layer 'pool')", out)
        self.assertNotIn("[W]", out)

    def test_several_suspects(self):
        self.put("art/good/a.json", replay())
        self.put("art/bad/b.json", replay(pool="pool.direct.f32"))
        self.put("art/bad/c.json", replay(conv="conv.wino.f32", pool="pool.direct.f16", pool_precision="fp16"))
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", self.path("art"))
        self.assertIn("[I] Layer: conv\n        Tactics seen only in bad replays: conv.wino.f32 (fp32) in 1/2", out)
        self.assertIn("Tactics seen only in bad replays: pool.direct.f16 (fp16) in 1/2 bad replay(s), "
                      "pool.direct.f32 (fp32) in 1/2 bad replay(s)", out)
        self.assertNotIn("The failure follows", out)

    def test_good_and_bad_files_and_directories(self):
        art = self.make_artifacts()
        good_files = sorted(os.path.join(art, "good", f) for f in os.listdir(os.path.join(art, "good")))
        out = self.vkgraphy("inspect", "diff-tactics", "--good", *good_files, "--bad", os.path.join(art, "bad"))
        self.assertIn("Loaded 3 good tactic replay(s) from", out)
        self.assertIn("and 2 bad tactic replay(s) from", out)
        self.assertIn("The failure follows tactic pool.direct.f32 (layer 'pool')", out)

    def test_nested_folders_and_other_files_are_ignored(self):
        self.put("runs/ok/1/deep/r.json", replay())
        self.put("runs/ok/2/r.json", replay(conv="conv.direct.f32"))
        self.put("runs/ok/model.onnx", "\x08\x07\x12\x04onnx")
        self.put("runs/ok/outputs.json", {"format": "vkgraphy-run-results", "lst": []})
        self.put("runs/ok/list.json", [1, 2, 3])
        self.put("runs/ok/notes.txt", "not a replay")
        self.put("runs/fail/x/r.json", replay(pool="pool.direct.f32"))
        out = self.vkgraphy("inspect", "diff-tactics", "--good", self.path("runs/ok"), "--bad",
                            self.path("runs/fail"))
        self.assertIn("Loaded 2 good tactic replay(s)", out)
        self.assertIn("1 bad tactic replay(s)", out)
        self.assertNotIn("[W]", out)
        out = self.vkgraphy("-v", "inspect", "diff-tactics", "--good", self.path("runs/ok"), "--bad",
                            self.path("runs/fail"))
        self.assertIn("model.onnx': not a tactic replay", out)

    def test_broken_replay_in_a_folder_is_a_warning(self):
        art = self.make_artifacts()
        self.put("art/bad/broken.json", {"format": "vkgraphy-tactic-replay", "version": 2, "layers": []})
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", art)
        self.assertIn("[W] skipping '", out)
        self.assertIn("broken.json", out)
        self.assertIn("2 bad tactic replay(s)", out)

    def test_cannot_decide_without_good_replays(self):
        self.put("art/bad/r.json", replay(pool="pool.direct.f32"))
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", self.path("art"), expect=EXIT_DEBUG_NOT_FOUND)
        self.assertIn("cannot decide: no good replays were found in", out)
        self.assertIn("(missing)", out)

    def test_cannot_decide_without_bad_replays(self):
        self.put("art/good/r.json", replay())
        os.makedirs(self.path("art/bad"))
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", self.path("art"), expect=EXIT_DEBUG_NOT_FOUND)
        self.assertIn("cannot decide: no bad replays were found in", out)
        out = self.vkgraphy("inspect", "diff-tactics", "--good", self.path("art/good"), expect=EXIT_DEBUG_NOT_FOUND)
        self.assertIn("cannot decide: no bad replays were given", out)

    def test_cannot_decide_when_no_tactic_differs(self):
        self.put("art/good/a.json", replay("conv.gemm.f32", "pool.vec4.f32"))
        self.put("art/good/b.json", replay("conv.direct.f32", "pool.direct.f32"))
        self.put("art/bad/c.json", replay("conv.gemm.f32", "pool.direct.f32"))
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", self.path("art"), expect=EXIT_DEBUG_NOT_FOUND)
        self.assertIn("every tactic in the bad replays also appears in a good one", out)
        self.assertNotIn("Found potentially bad tactics", out)

    def test_a_layer_in_another_precision_is_the_same_layer(self):
        # A signature covers the precision: fp16 and fp32 choices of one layer differ in it, and that is no warning.
        self.put("art/good/a.json", replay())
        bad = replay(pool="pool.vec4.f16", pool_precision="fp16")
        bad["layers"][1]["signature"] = "0000000000000001"
        self.put("art/bad/b.json", bad)
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", self.path("art"))
        self.assertNotIn("different signatures", out)
        self.assertIn("The failure follows tactic pool.vec4.f16", out)

    def test_different_models_and_devices_warn(self):
        self.put("art/good/a.json", replay())
        other = dict(DEVICE, name="NVIDIA H100")
        bad = replay(pool="pool.direct.f32", device=other, conv_signature="1111111111111111")
        bad["layers"].append({"name": "relu", "op": "Relu", "signature": "0123456789abcdef",
                              "tactic": "eltwise.vec4.f32", "precision": "fp32", "candidates": []})
        self.put("art/bad/b.json", bad)
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", self.path("art"))
        self.assertIn("[W] layer 'conv' (fp32) has 2 different signatures", out)
        self.assertIn("different devices", out)
        self.assertIn("layer(s) 'relu' appear in bad replays but in no good replay", out)
        self.assertIn("The failure follows tactic pool.direct.f32", out)

    def test_bad_input(self):
        self.put("ok.json", replay())
        self.put("outputs.json", {"format": "vkgraphy-run-results", "lst": []})
        self.put("broken.json", {"format": "vkgraphy-tactic-replay", "version": 1, "device": DEVICE,
                                 "layers": [{"name": "conv"}]})
        out = self.vkgraphy("inspect", "diff-tactics", "--good", "ok.json", "--bad", "outputs.json",
                            expect=EXIT_INVALID_INPUT)
        self.assertIn("'outputs.json': not a tactic replay", out)
        out = self.vkgraphy("inspect", "diff-tactics", "--good", "ok.json", "--bad", "broken.json",
                            expect=EXIT_INVALID_INPUT)
        self.assertIn("broken.json", out)
        self.assertIn("layers[0]", out)
        out = self.vkgraphy("inspect", "diff-tactics", "--good", "ok.json", "--bad", "missing.json",
                            expect=EXIT_INVALID_INPUT)
        self.assertIn("'missing.json': no such file or directory", out)
        os.makedirs(self.path("empty"))
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", "empty", expect=EXIT_INVALID_INPUT)
        self.assertIn("neither a 'good' nor a 'bad' subfolder", out)
        self.vkgraphy("inspect", "diff-tactics", "--dir", "nope", expect=EXIT_INVALID_INPUT)

    def test_usage_errors(self):
        self.vkgraphy("inspect", "diff-tactics", expect=EXIT_USAGE)
        self.put("art/good/a.json", replay())
        self.vkgraphy("inspect", "diff-tactics", "--dir", "art", "--good", "art/good/a.json", expect=EXIT_USAGE)


if __name__ == "__main__":
    unittest.main()
