"""`run --vk`, `convert` and the builder options on lavapipe (validation layer on):
models in fp32 and fp16 against the reference backend, engine files, replay
files, the timing cache, marking outputs, fault injection, latency and profile."""
import json
import os
import unittest

from vkgraphy_cli import VK_MODELS, CliTestCase, model

# fp16 tolerances. fp16 keeps 11 significant bits: each stored value (inputs,
# weights, every layer's output) is off by up to 2^-11 (4.9e-4) relative.
# - fp16 storage, fp32 accumulation (the .f16acc32 tactics): a dot product of K
#   terms of order 1 drifts by about sqrt(K) * 2^-11 * |x w| as a random walk:
#   for conv.onnx (K = 256) about 0.008, worst elements near 3 sigma. Measured
#   worst: 0.023 (conv.onnx); 0.011 (residual_block); below 0.004 elsewhere.
#   Tolerance: 5e-2 absolute OR 2e-2 relative (Polygraphy's rule: outputs near
#   zero make a relative bound alone meaningless).
# - fp16 accumulation too (the .f16 tactics): every partial sum is rounded to
#   fp16, whose spacing near |S| = 16 is 2^-6, so the error walks by about
#   sqrt(K / 12) * 2^-6 = 0.072 for K = 256. Measured worst: 0.17 (conv.onnx),
#   0.074 (residual_block). Tolerance: 0.25 absolute (3.5 sigma) OR 2e-2 relative.
FP16_ACC32_TOL = ["--tactics-deny", "*.f16", "--atol", "5e-2", "--rtol", "2e-2"]
FP16_TOL = ["--atol", "0.25", "--rtol", "2e-2"]

MODELS = [
    (model("matmul_2layer.onnx"), []),
    (model("conv.onnx"), []),
    (model("attention.onnx"), ["--input-shapes", "q:[2,16,8]", "k:[2,8,16]", "v:[2,16,8]"]),
    (model("residual_block.onnx"), ["--input-shapes", "gpu_0/data_0:[1,3,224,224]"]),
    (os.path.join(VK_MODELS, "cnn.onnx"), []),
    (os.path.join(VK_MODELS, "transformer.onnx"), []),
]


def vk_model(name):
    return os.path.join(VK_MODELS, name)


class TestModels(CliTestCase):
    def test_fp32_matches_reference(self):
        for path, extra in MODELS:
            with self.subTest(model=os.path.basename(path)):
                out = self.vkgraphy("run", path, "--vk", "--ref", "--builder-optimization-level", "1", *extra)
                self.assertIn("PASSED | All outputs matched", out)

    def test_fp16_matches_reference_within_fp16_tolerance(self):
        for path, extra in MODELS:
            for tolerance in (FP16_ACC32_TOL, FP16_TOL):
                with self.subTest(model=os.path.basename(path), tolerance=tolerance):
                    out = self.vkgraphy("run", path, "--vk", "--ref", "--fp16", "--builder-optimization-level", "1",
                                        *tolerance, *extra)
                    self.assertIn("PASSED | All outputs matched", out)

    def test_fp16_overflow_is_caught_and_pinning_fixes_it(self):
        path = vk_model("fp16_overflow.onnx")
        out = self.vkgraphy("run", path, "--vk", "--ref", "--fp16", "--layer-precisions", "big:fp16", "small:fp16",
                            "out:fp16", "--precision-constraints", "obey", *FP16_TOL, expect=1)
        self.assertIn("FAILED", out)
        self.vkgraphy("run", path, "--vk", "--ref", "--fp16", "--layer-precisions", "big:fp32", "small:fp32",
                      "--precision-constraints", "obey", *FP16_TOL)


class TestEngineFiles(CliTestCase):
    def test_convert_then_run_engine_against_golden_outputs(self):
        path = vk_model("cnn.onnx")
        self.vkgraphy("run", path, "--ref", "--save-outputs", "golden.json")
        out = self.vkgraphy("convert", path, "-o", "cnn.engine", "--builder-optimization-level", "1")
        self.assertIn("Saved engine to cnn.engine", out)
        out = self.vkgraphy("run", "cnn.engine", "--vk", "--load-outputs", "golden.json")
        self.assertIn("PASSED | All outputs matched", out)
        out = self.vkgraphy("run", "cnn.engine", "--ref", expect=3)
        self.assertIn("needs an ONNX model", out)

    def test_truncated_engine_is_a_clear_error(self):
        self.vkgraphy("convert", model("matmul_2layer.onnx"), "-o", "m.engine", "--builder-optimization-level", "0")
        with open(self.path("m.engine"), "rb") as f:
            data = f.read()
        with open(self.path("cut.engine"), "wb") as f:
            f.write(data[: len(data) // 2])
        out = self.vkgraphy("run", "cut.engine", "--vk", expect=3)
        self.assertEqual(out.count("[E]"), 1, out)


class TestReplayAndCache(CliTestCase):
    def test_same_replay_gives_same_tactics_and_bit_identical_outputs(self):
        path = vk_model("transformer.onnx")
        self.vkgraphy("convert", path, "-o", "a.engine", "--save-tactics", "replay.json")
        for run in ("1", "2"):
            self.vkgraphy("run", path, "--vk", "--load-tactics", "replay.json", "--save-tactics", f"again{run}.json",
                          "--save-outputs", f"out{run}.json")
        first = self.read_json("replay.json")
        for run in ("1", "2"):
            again = self.read_json(f"again{run}.json")
            self.assertEqual([(l["name"], l["tactic"], l["precision"]) for l in first["layers"]],
                             [(l["name"], l["tactic"], l["precision"]) for l in again["layers"]])
        # Bit-identical: compare the two saved results with zero tolerance.
        out = self.vkgraphy("run", path, "--vk", "--load-tactics", "replay.json", "--load-outputs", "out1.json",
                            "--atol", "0", "--rtol", "0")
        self.assertIn("PASSED", out)
        def outputs(name):
            return [it["outputs"] for _, iterations in self.read_json(name)["lst"] for it in iterations]

        self.assertEqual(outputs("out1.json"), outputs("out2.json"))

    def test_replay_layers_record_every_candidate(self):
        self.vkgraphy("convert", model("matmul_2layer.onnx"), "-o", "m.engine", "--save-tactics", "r.json",
                      "--builder-optimization-level", "5")
        replay = self.read_json("r.json")
        for layer in replay["layers"]:
            self.assertGreater(len(layer["candidates"]), 2)
            self.assertIn(layer["tactic"], [c["tactic"] for c in layer["candidates"]])

    def test_bad_replays_are_clear_errors(self):
        path = model("matmul_2layer.onnx")
        self.vkgraphy("convert", path, "-o", "m.engine", "--save-tactics", "r.json", "--builder-optimization-level", "0")
        replay = self.read_json("r.json")
        replay["layers"][0]["tactic"] = "no.such.tactic.f32"
        self.write_json("bad.json", replay)
        out = self.vkgraphy("convert", path, "-o", "x.engine", "--load-tactics", "bad.json", expect=3)
        self.assertIn("no.such.tactic.f32", out)
        self.assertFalse(os.path.exists(self.path("x.engine")))
        # A replay that does not name a layer: a warning, and the layer is timed.
        replay = self.read_json("r.json")
        missing = replay["layers"].pop(0)["name"]
        self.write_json("partial.json", replay)
        out = self.vkgraphy("convert", path, "-o", "y.engine", "--load-tactics", "partial.json")
        self.assertIn(f"does not name layer '{missing}'", out)

    def test_warm_timing_cache_times_nothing(self):
        path = vk_model("cnn.onnx")
        out = self.vkgraphy("convert", path, "-o", "a.engine", "--save-timing-cache", "cache.json")
        self.assertNotIn(" 0 tactic(s) timed", out)
        out = self.vkgraphy("convert", path, "-o", "b.engine", "--load-timing-cache", "cache.json",
                            "--error-on-timing-cache-miss")
        self.assertIn(" 0 tactic(s) timed", out)
        # A corrupt cache is a warning and a miss, never an error.
        with open(self.path("bad.json"), "w") as f:
            f.write("{ not json")
        out = self.vkgraphy("convert", path, "-o", "c.engine", "--load-timing-cache", "bad.json")
        self.assertIn("[W]", out)
        self.vkgraphy("convert", path, "-o", "d.engine", "--load-timing-cache", "bad.json",
                      "--error-on-timing-cache-miss", expect=3)


class TestSelection(CliTestCase):
    def test_random_selection_is_reproducible(self):
        path = vk_model("cnn.onnx")
        for name in ("a", "b"):
            self.vkgraphy("convert", path, "-o", f"{name}.engine", "--tactic-selection", "random:7",
                          "--save-tactics", f"{name}.json")
        a, b = self.read_json("a.json"), self.read_json("b.json")
        self.assertEqual([l["tactic"] for l in a["layers"]], [l["tactic"] for l in b["layers"]])
        self.vkgraphy("run", path, "--vk", "--ref", "--load-tactics", "a.json")

    def test_allow_and_deny_globs(self):
        path = model("matmul_2layer.onnx")
        self.vkgraphy("convert", path, "-o", "a.engine", "--tactics-allow", "gemm.naive.*", "--save-tactics", "a.json")
        self.assertEqual({l["tactic"] for l in self.read_json("a.json")["layers"]}, {"gemm.naive.f32"})
        out = self.vkgraphy("convert", path, "-o", "b.engine", "--tactics-deny", "gemm.*", expect=3)
        self.assertIn("no tactic can serve", out)


class TestCompareAndMeasure(CliTestCase):
    def test_mark_all_compares_every_layer(self):
        out = self.vkgraphy("run", vk_model("cnn.onnx"), "--vk", "--ref", "--vk-outputs", "mark", "all",
                            "--onnx-outputs", "mark", "all", "--builder-optimization-level", "0")
        self.assertIn("PASSED | All outputs matched", out)
        self.assertIn("'stem.conv'", out)
        self.assertIn("'res.add'", out)

    def test_faulty_tactic_shows_the_first_diverging_layer(self):
        path = vk_model("cnn.onnx")
        self.vkgraphy("convert", path, "-o", "a.engine", "--save-tactics", "r.json", "--builder-optimization-level", "0")
        layers = self.read_json("r.json")["layers"]
        pool = next(l for l in layers if l["name"] == "pool")
        env = {"VKGRAPHY_FAULTY_TACTICS": pool["tactic"]}
        out = self.vkgraphy("run", path, "--vk", "--ref", "--load-tactics", "r.json", "--vk-outputs", "mark", "all",
                            "--onnx-outputs", "mark", "all", env=env, expect=1)
        self.assertIn("VKGRAPHY_FAULTY_TACTICS", out)
        self.assertIn("FAILED | Output: 'pool'", out)
        self.assertIn("PASSED | Output: 'pw.relu'", out)

    def test_iterations_report_latency_and_profile_per_layer(self):
        out = self.vkgraphy("run", vk_model("cnn.onnx"), "--vk", "--iterations", "4", "--profile",
                            "--builder-optimization-level", "0")
        self.assertIn("Latency (device time, 4 iteration(s)): mean", out)
        for word in ("median", "p90", "p99"):
            self.assertIn(word, out)
        self.assertIn("per-layer device time", out)
        self.assertIn("stem.conv", out)


if __name__ == "__main__":
    unittest.main()
