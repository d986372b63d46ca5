"""`run --vk`, `convert` and the builder options on lavapipe (validation layer on):
models in fp32 and fp16 against the reference backend, engine files, replay
files, the timing cache, marking outputs, fault injection, latency and profile."""
import os
import re
import tempfile
import unittest

import numpy as np

from vkgraphy_cli import VK_MODELS, CliTestCase, edit_outputs, load_outputs, model

# fp16 tolerances, per model and output: absolute (`--atol NAME:V --rtol 0`), set from the
# output's scale. fp16 keeps 11 significant bits, so every stored value (inputs, weights, each
# layer's output) is off by up to 2^-11 relative, and the error of an output grows with its
# magnitude and with the length of the sums behind it; a tolerance from one model's scale
# means nothing for another's (conv.onnx reaches 45, attention.onnx stays under 0.082).
#
# Two modes, one engine each, built at --builder-optimization-level 0: no timing, the first
# allowed tactic of each layer in heuristic order, which with --fp16 is an fp16 one wherever the
# mode allows one, so the build is the same every time (at level 1 lavapipe's timing picks, and
# often picks the same .f16acc32 tactics in both modes):
# - acc32: fp16 storage, fp32 accumulation (`--tactics-deny '*.f16'`: the .f16acc32 tactics;
#          layers that accumulate nothing, such as max pooling or copies, then run in fp32)
# - f16:   fp16 accumulation allowed (every layer runs its .f16 tactic)
#
# Measured on lavapipe (2026-11-23) with inputs of the default seed, against the reference:
#   vkgraphy run MODEL --ref [--input-shapes ...] --save-outputs golden.json
#   vkgraphy convert MODEL --fp16 [MODE] BUILD -o m.engine && vkgraphy run m.engine --vk --save-outputs vk.json
#   worst = max |vk - golden| over 45 builds per mode, BUILD one of: --builder-optimization-level 0,
#   1 (twice), 1 with --tactics-deny '*.f32', 5; --tactic-selection random:1 ... random:40
#   (mixes of .f32, .f16acc32 and .f16 tactics); for conv, matmul_2layer and attention also
#   every tactic alone (--tactics-allow NAME). The level 0 engines of the test are among them.
# Tolerance: about 3-7x the worst error (a round number), and at most 2% of the output's range
# (the test checks this), so that one element off by 5% of the range fails (the test checks
# that too, against a golden file with its largest-magnitude element moved by 5% of the range).
#
# model              output                      range   max|x|  worst acc32 worst f16  atol acc32 atol f16 (% of range)
# matmul_2layer      6                           0.570   0.301   1.33e-4     3.45e-4    1e-3      2e-3  (0.35%)
# conv               conv_out_0                  89.3    45.3    0.0227      0.170      0.1       0.75  (0.84%)
# attention          attention_1_mm2_out         0.0743  0.0820  6.94e-5     1.05e-4    3e-4      5e-4  (0.67%)
# residual_block     gpu_0/res2_0_branch2c_bn_2  10.85   6.26    0.0118      0.0674     0.05      0.2   (1.8%)
# cnn                probs                       0.401   0.401   4.01e-4     8.27e-4    2e-3      4e-3  (1.0%)
# transformer        y                           5.09    2.80    3.51e-3     7.80e-3    0.02      0.04  (0.79%)
# fp16_overflow (1)  y                           21.15   12.99   8.12e-3     1.88e-2    0.05      0.1   (0.47%)
# (1) with big and small pinned to fp32 (--layer-precisions big:fp32 small:fp32
#     --precision-constraints obey); with them in fp16 the output overflows to inf/NaN.
#     test_debug_workflows.py's precision workflow checks with the f16 tolerance.
#
# Why these sizes: with fp32 accumulation the error is the fp16 rounding of inputs, weights and
# each layer's output carried through the network (conv.onnx: a dot product of K = 256 terms
# drifts by about sqrt(K) * 2^-11 * |x w|, 0.008, worst near 3 sigma). With fp16 accumulation
# every partial sum is rounded too: the spacing of fp16 near |S| = 16 is 2^-6, so conv.onnx's
# error walks by about sqrt(K / 12) * 2^-6 = 0.07 (measured 0.17, with every f16 tactic alike).
FP16_MODES = {"acc32": ["--tactics-deny", "*.f16"], "f16": []}
FP16_TOLERANCES = {  # model file: {output: (atol acc32, atol f16)}
    "matmul_2layer.onnx": {"6": (1e-3, 2e-3)},
    "conv.onnx": {"conv_out_0": (0.1, 0.75)},
    "attention.onnx": {"attention_1_mm2_out": (3e-4, 5e-4)},
    "residual_block.onnx": {"gpu_0/res2_0_branch2c_bn_2": (0.05, 0.2)},
    "cnn.onnx": {"probs": (2e-3, 4e-3)},
    "transformer.onnx": {"y": (0.02, 0.04)},
    "fp16_overflow.onnx": {"y": (0.05, 0.1)},
}
PERTURBATION = 0.05  # of an output's range: what the fp16 test must catch


def fp16_atol(model_name, output, mode):
    return FP16_TOLERANCES[model_name][output][list(FP16_MODES).index(mode)]


def fp16_tolerance(model_name, mode="f16"):
    """The comparison options for the fp16 outputs of `model_name` in `mode` (see the table above)."""
    outputs = FP16_TOLERANCES[model_name]
    return ["--atol", *(f"{out}:{fp16_atol(model_name, out, mode)}" for out in outputs), "--rtol", "0"]


def perturb_largest(array, fraction=PERTURBATION):
    """`array` with its largest-magnitude element moved away from zero by `fraction` of the range."""
    array = array.copy()
    i = int(np.argmax(np.abs(array)))
    delta = fraction * float(array.max() - array.min())
    array.flat[i] += np.copysign(delta, array.flat[i])
    return array


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


def assert_switch_keeps_outputs(test, switch):
    """The same engine (cnn, transformer) run with a device switch computes bit for bit the outputs it
    computes without it."""
    for name in ("cnn.onnx", "transformer.onnx"):
        engine = test.path(name + ".engine")
        test.vkgraphy("convert", vk_model(name), "-o", engine, "--builder-optimization-level", "0")
        test.vkgraphy("run", engine, "--vk", "--save-outputs", test.path("plain.json"))
        out = test.vkgraphy("run", engine, "--vk", switch, "--load-outputs", test.path("plain.json"), "--atol", "0",
                            "--rtol", "0")
        test.assertIn("All outputs matched", out)


class TestModels(CliTestCase):
    def test_fp32_matches_reference(self):
        for path, extra in MODELS:
            with self.subTest(model=os.path.basename(path)):
                out = self.vkgraphy("run", path, "--vk", "--ref", "--builder-optimization-level", "1", *extra)
                self.assertIn("PASSED | All outputs matched", out)

    def test_fp16_within_per_model_tolerance_and_a_5_percent_error_fails(self):
        for path, extra in MODELS:
            name = os.path.basename(path)
            self.vkgraphy("run", path, "--ref", *extra, "--save-outputs", "golden.json")
            (golden,) = load_outputs(self.path("golden.json")).values()
            golden = golden[0]
            self.assertEqual(set(golden), set(FP16_TOLERANCES[name]), f"{name}: the tolerance table lists its outputs")
            # Per output, a golden file with that output's largest-magnitude element moved by 5% of its range.
            perturbed = {output: f"perturbed{i}.json" for i, output in enumerate(golden)}
            for output, file in perturbed.items():
                edit_outputs(self.path("golden.json"), self.path(file),
                             lambda name_, values, o=output: perturb_largest(values) if name_ == o else values)
            for mode, mode_flags in FP16_MODES.items():
                with self.subTest(model=name, mode=mode):
                    self.vkgraphy("convert", path, *extra, "--fp16", "--builder-optimization-level", "0", *mode_flags,
                                  "-o", "m.engine")
                    tolerance = fp16_tolerance(name, mode)
                    out = self.vkgraphy("run", "m.engine", "--vk", "--load-outputs", "golden.json", *tolerance)
                    self.assertIn("PASSED | All outputs matched", out)
                    for output, file in perturbed.items():
                        values = golden[output]
                        self.assertLessEqual(fp16_atol(name, output, mode), 0.02 * float(values.max() - values.min()),
                                             f"{output}: a tolerance above 2% of the output's range")
                        # The same engine against the perturbed file: the one element off by 5% fails.
                        out = self.vkgraphy("run", "m.engine", "--vk", "--load-outputs", file, *tolerance, expect=1)
                        self.assertIn(f"FAILED | Output: '{output}'", out)
                        self.assertIn(f"Mismatched elements: 1 of {values.size} ", out)

    def test_fp16_overflow_is_caught_and_pinning_fixes_it(self):
        path = vk_model("fp16_overflow.onnx")
        tolerance = fp16_tolerance("fp16_overflow.onnx")
        out = self.vkgraphy("run", path, "--vk", "--ref", "--fp16", "--layer-precisions", "big:fp16", "small:fp16",
                            "out:fp16", "--precision-constraints", "obey", *tolerance, expect=1)
        self.assertIn("FAILED", out)
        self.vkgraphy("run", path, "--vk", "--ref", "--fp16", "--layer-precisions", "big:fp32", "small:fp32",
                      "--precision-constraints", "obey", *tolerance)


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
        self.assertIn(f"The tactic replay does not name 1 layer(s) of this build, chosen by timing ({missing})\n", out)

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


BUILT = (r"Built engine in \S+ s \| (\d+) layers \(.* (\d+) reformats\) \| (\d+) tactic\(s\) timed in (\d+) layer\(s\), "
         r"(\d+) layer\(s\) with an identical layer's timings, (\d+) layer\(s\) from the timing cache")


class TestBuildCounts(CliTestCase):
    def built(self, out):
        """(engine layers, reformats, tactics timed, layers timed, layers reused, layers from the cache)."""
        m = re.search(BUILT, out)
        self.assertIsNotNone(m, out)
        return tuple(int(g) for g in m.groups())

    def test_each_layer_is_counted_once(self):
        # The transformer's Q, K and V projections are identical layers: one is timed, two reuse its timings.
        path = vk_model("transformer.onnx")
        out = self.vkgraphy("convert", path, "-o", "a.engine", "--save-timing-cache", "cache.json")
        layers, reformats, tactics, timed, reused, cached = self.built(out)
        self.assertGreaterEqual(reused, 2)
        self.assertEqual(cached, 0)
        self.assertLessEqual(timed + reused, layers - reformats)
        self.assertGreater(tactics, timed)
        self.assertIn(f"Saved engine to a.engine ({layers} layers,", out)
        inspected = self.vkgraphy("inspect", "model", self.path("a.engine"), "--show", "layers")
        self.assertEqual(len(re.findall(r"^    Layer \d+ ", inspected, re.M)), layers)
        # Warm: nothing timed; every layer that was timed or reused now comes from the cache or a layer like it.
        out = self.vkgraphy("convert", path, "-o", "b.engine", "--load-timing-cache", "cache.json")
        layers2, _, tactics2, timed2, reused2, cached2 = self.built(out)
        self.assertEqual((layers2, tactics2, timed2), (layers, 0, 0))
        self.assertEqual(cached2 + reused2, timed + reused)


class TestInputShapes(CliTestCase):
    def test_dynamic_dimensions_are_built_as_one(self):
        import onnx
        m = onnx.load(vk_model("example.onnx"))
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
        m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
        onnx.save(m, self.path("dynamic.onnx"))
        out = self.vkgraphy("convert", self.path("dynamic.onnx"), "-o", "d.engine")
        self.assertIn("[W] Input tensor: x [N,3,32,32] has dynamic dimensions | The engine is built for shape "
                      "[1,3,32,32].\n    If this is incorrect, please provide its shape with --input-shapes", out)
        self.assertIn("x [dtype=float32, shape=(1, 3, 32, 32)",
                      self.vkgraphy("inspect", "model", self.path("d.engine")))
        # run --vk --ref: the one warning, and both backends run the same shape.
        out = self.vkgraphy("run", self.path("dynamic.onnx"), "--vk", "--ref")
        self.assertEqual(out.count("has dynamic dimensions"), 1, out)
        self.assertNotIn("Will generate data of shape", out)
        self.assertIn("PASSED | All outputs matched", out)
        # --input-shapes chooses: no warning.
        out = self.vkgraphy("convert", self.path("dynamic.onnx"), "-o", "e.engine", "--input-shapes", "x:[2,3,32,32]")
        self.assertNotIn("[W]", out)
        self.assertIn("x [dtype=float32, shape=(2, 3, 32, 32)",
                      self.vkgraphy("inspect", "model", self.path("e.engine")))


class TestSelection(CliTestCase):
    def test_layer_precision_patterns(self):
        path = vk_model("example.onnx")

        def precisions(*pins):
            self.vkgraphy("convert", path, "-o", "p.engine", "--layer-precisions", *pins, "--precision-constraints",
                          "obey", "--builder-optimization-level", "0", "--save-tactics", "p.json")
            return {l["name"]: l["precision"] for l in self.read_json("p.json")["layers"]}

        every = precisions("*:fp16")
        self.assertEqual(set(every.values()), {"fp16"}, every)
        # A pin by name wins over a pattern.
        pinned = precisions("energy:fp32", "*:fp16")
        self.assertEqual(pinned["energy"], "fp32")
        self.assertEqual({p for n, p in pinned.items() if n != "energy"}, {"fp16"})
        # Patterns match node names, as names do (a fused layer takes its nodes' pins).
        self.assertEqual(precisions("conv?:fp16"), precisions("conv1:fp16", "conv2:fp16"))
        out = self.vkgraphy("convert", path, "-o", "q.engine", "--layer-precisions", "attn*:fp16")
        self.assertIn("[W] --layer-precisions pattern 'attn*' matches no layer, so it has no effect\n", out)
        out = self.vkgraphy("convert", path, "-o", "q.engine", "--layer-precisions", "attn:fp16", expect=3)
        self.assertIn("--layer-precisions names layer 'attn', which the model does not have", out)

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
        self.assertIn("Host overhead (host wall time minus device time", out)


class TestMemoryPath(CliTestCase):
    """Lavapipe's memory is host-visible: in place by default (a GPU's path follows its heaps); --vk-force-staging (or
    VKGRAPHY_VK_FORCE_STAGING=1, which ctest's cli_force_staging sets for the model tests)
    takes the discrete-GPU path: nothing mapped, every transfer through staging buffers."""

    def test_inspect_device_names_the_path_and_the_switch_forces_staging(self):
        forced = os.environ.get("VKGRAPHY_VK_FORCE_STAGING") not in (None, "", "0")
        out = self.vkgraphy("inspect", "device")
        if forced:
            self.assertIn("memory path: staging (forced", out)
        elif "type: cpu" in out:
            self.assertIn("memory path: unified", out)  # lavapipe
        else:  # a GPU: whichever its heaps allow, never forced
            self.assertRegex(out, r"memory path: (unified|resizable-bar|staging) \((?!forced)")
        self.assertIn("memory path: staging (forced by --vk-force-staging", self.vkgraphy("inspect", "device", "--vk-force-staging"))
        self.assertIn("memory path: staging (forced", self.vkgraphy("inspect", "device", env={"VKGRAPHY_VK_FORCE_STAGING": "1"}))

    def test_staged_run_matches_the_reference(self):
        out = self.vkgraphy("run", vk_model("cnn.onnx"), "--vk", "--ref", "--vk-force-staging", "-v", "--iterations", "2",
                            "--builder-optimization-level", "0")
        self.assertIn("memory path: staging", out)
        self.assertRegex(out, r"uploaded \d+ bytes of weights through staging")
        self.assertIn("All outputs matched", out)


class TestDeviceFeatures(CliTestCase):
    """Subgroup size control and cooperative matrices are named device properties, each with a switch:
    lavapipe has the first (8 to 8) and not the second; an engine whose pipelines pin a subgroup size
    says so clearly on a device that cannot give it."""

    def test_inspect_device_lists_them_and_the_switches_turn_them_off(self):
        out = self.vkgraphy("inspect", "device")
        self.assertIn("subgroup size control: yes (8 to 8, full subgroups)", out)
        self.assertIn("cooperative matrix: no", out)
        out = self.vkgraphy("inspect", "device", "--vk-disable-subgroup-size-control", "--vk-disable-cooperative-matrix",
                            "--vk-disable-cooperative-matrix-khr")
        self.assertIn("subgroup size control: no", out)
        self.assertIn("cooperative matrix: no", out)
        self.assertNotIn("VK_KHR_cooperative_matrix", out)  # lavapipe reports none

    def assert_feature_tactic(self, shown, switch, tactic, reason):
        # lavapipe has the feature (`inspect device` shows `shown` + "yes"): `tactic` serves matmul_2layer and matches
        # the reference; switched off, it declines with `reason`.
        self.assertIn(shown + "yes", self.vkgraphy("inspect", "device"))
        self.assertIn(shown + "no", self.vkgraphy("inspect", "device", switch))
        path = model("matmul_2layer.onnx")
        out = self.vkgraphy("run", path, "--vk", "--ref", "--tactics-allow", tactic + "*", "--save-tactics", "t.json")
        self.assertIn("All outputs matched", out)
        self.assertEqual({l["tactic"] for l in self.read_json("t.json")["layers"]}, {tactic + ".f32"})
        out = self.vkgraphy("convert", path, "-o", "x.engine", "--tactics-allow", tactic + "*", switch, expect=3)
        self.assertIn(tactic + ".f32: " + reason, out)

    def test_wide_loads_need_64_bit_integers(self):
        self.assert_feature_tactic("64-bit integers: ", "--vk-disable-int64", "gemm.block16x16_wide_a",
                                   "needs 64-bit integers in shaders (device feature int64)")

    def test_shared_a_rows_need_subgroup_shuffles(self):
        self.assert_feature_tactic("subgroup shuffles: ", "--vk-disable-subgroup-shuffle", "gemm.block24x16_shuffle_a",
                                   "needs subgroup shuffles (device feature subgroup-shuffle)")

    def test_host_specialization_gives_the_same_outputs(self):
        # lavapipe gets every shader with its constants folded in on the host; the same engine with the
        # driver specializing (the switch) computes bit for bit the same outputs.
        self.assertIn("SPIR-V specialized on the host: yes", self.vkgraphy("inspect", "device"))
        self.assertIn("SPIR-V specialized on the host: no",
                      self.vkgraphy("inspect", "device", "--vk-disable-host-specialization"))
        assert_switch_keeps_outputs(self, "--vk-disable-host-specialization")

    def test_timings_with_a_feature_switched_off_are_another_devices(self):
        # Without texel buffers the same tactics run their storage-buffer builds: the timing cache
        # and the replay record the switch, and a build without it does not reuse those timings.
        path = model("matmul_2layer.onnx")
        self.vkgraphy("convert", path, "-o", "x.engine", "--vk-disable-texel-buffers", "--save-timing-cache",
                      "cache.json", "--save-tactics", "replay.json")
        self.assertEqual({e["device"].get("switched_off") for e in self.read_json("cache.json")["entries"]},
                         {"texel-buffers"})
        self.assertEqual(self.read_json("replay.json")["device"]["switched_off"], "texel-buffers")
        again = self.vkgraphy("convert", path, "-o", "x.engine", "--vk-disable-texel-buffers",
                              "--load-timing-cache", "cache.json")
        self.assertIn(" 0 tactic(s) timed", again)
        out = self.vkgraphy("convert", path, "-o", "x.engine", "--load-timing-cache", "cache.json")
        self.assertIn(" 0 layer(s) from the timing cache", out)

    def test_subgroup_tactics_pin_the_size_and_an_engine_needs_it(self):
        engine = self.path("soft.engine")
        build = ["convert", vk_model("branchy.onnx"), "-o", engine, "--tactics-deny", "softmax.row*",
                 "softmax.workgroup*", "softmax.vec4*", "--builder-optimization-level", "0"]
        self.vkgraphy(*build)
        self.assertIn(b'"subgroup_size":8', open(engine, "rb").read())
        self.vkgraphy("run", engine, "--vk")
        out = self.vkgraphy("run", engine, "--vk", "--vk-disable-subgroup-size-control", expect=3)
        self.assertIn("requires subgroups of 8 invocations", out)
        # Built without the property, the same layers take the driver's subgroup size.
        self.vkgraphy(*build, "--vk-disable-subgroup-size-control")
        self.assertNotIn(b'"subgroup_size"', open(engine, "rb").read())
        self.vkgraphy("run", engine, "--vk", "--vk-disable-subgroup-size-control")

if __name__ == "__main__":
    unittest.main()


class TestBarriers(CliTestCase):
    """The executor places a barrier only before a dispatch that depends on memory an earlier one since the last
    barrier wrote or read (runtime/vulkan/hazards.h), so that independent layers may overlap on a GPU. The validation
    layer's synchronization validation (VKGRAPHY_VK_SYNC_VALIDATION) reports any hazard a missing barrier leaves:
    every run here has it on, and any message fails the run."""

    SYNC = {"VKGRAPHY_VK_VALIDATION": "1", "VKGRAPHY_VK_SYNC_VALIDATION": "1"}

    def counts(self, out):
        m = re.search(r"(\d+) dispatches recorded with (\d+) barriers", out)
        self.assertIsNotNone(m, out)
        return int(m.group(1)), int(m.group(2))

    def test_independent_layers_share_barriers_and_the_results_hold(self):
        cases = [(vk_model("branchy.onnx"), []),
                 (model("residual_block.onnx"), ["--input-shapes", "gpu_0/data_0:[1,3,224,224]"]),
                 (vk_model("transformer.onnx"), [])]
        for path, extra in cases:
            with self.subTest(model=os.path.basename(path)):
                out = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--builder-optimization-level", "1", *extra,
                                    env=self.SYNC)
                self.assertIn("PASSED | All outputs matched", out)
                dispatches, barriers = self.counts(out)
                if "transformer" in path:  # one chain of layers: every dispatch waits for the one before
                    self.assertLessEqual(barriers, dispatches, out)
                else:  # branches: the shortcut of the residual block, branchy's three heads
                    self.assertLess(barriers, dispatches, out)

    def test_profile_orders_every_layer_and_counts_the_dispatches(self):
        out = self.vkgraphy("run", vk_model("branchy.onnx"), "--vk", "--profile", "-v", env=self.SYNC)
        dispatches, barriers = self.counts(out)
        self.assertIn("(one after each layer: --profile)", out)
        self.assertIn(f"| {dispatches} dispatches, ", out)
        self.assertRegex(out, r"\d+\.\d us of device time per dispatch")
        self.assertRegex(out, r"#\s+layer\s+op\s+tactic\s+prec\s+disp\s+time \(ms\)")


class TestCompileWorkers(CliTestCase):
    """lavapipe compiles one pipeline at a time in a process, at its first dispatch: the builder's
    worker processes (--compile-workers, runtime/vulkan/compile_workers.h) compile a layer's
    candidates side by side into Mesa's on-disk cache, which the build's own first dispatches read.
    Texel views of one class let one compile serve every binding. Neither changes an engine or its
    outputs. Each build here starts from an empty Mesa cache, so that the workers have work."""

    def fresh_cache(self):
        return {"MESA_SHADER_CACHE_DIR": tempfile.mkdtemp(dir=self.tmp)}

    def test_inspect_device_names_both_properties_and_the_switch(self):
        out = self.vkgraphy("inspect", "device")
        self.assertIn("compiles one pipeline at a time per process: yes", out)
        self.assertIn("texel views of one class (one compile of a pipeline for every buffer): yes", out)
        out = self.vkgraphy("inspect", "device", "--vk-disable-canonical-texel-views")
        self.assertIn("texel views of one class (one compile of a pipeline for every buffer): no", out)
        out = self.vkgraphy("inspect", "device", env={"MESA_SHADER_CACHE_DISABLE": "true"})
        self.assertIn("compiles one pipeline at a time per process: no", out)

    def test_workers_build_the_same_engine_with_the_same_outputs(self):
        # Timed with a worker; then built again without, on the choices the first made.
        path = vk_model("cnn.onnx")
        out = self.vkgraphy("convert", path, "-o", "w1.engine", "--compile-workers", "1", "--save-tactics", "w1.json",
                            env=self.fresh_cache())
        self.assertRegex(out, r"\d+ pipelines \(\d+ compiled by 1 worker process\(es\), \d+ here\)")
        out = self.vkgraphy("convert", path, "-o", "w0.engine", "--compile-workers", "0", "--load-tactics", "w1.json",
                            "--save-tactics", "w0.json", env=self.fresh_cache())
        self.assertNotIn("worker process", out)
        tactics = [[l["tactic"] for l in self.read_json(f"w{w}.json")["layers"]] for w in ("1", "0")]
        self.assertEqual(tactics[0], tactics[1])
        self.vkgraphy("run", "w0.engine", "--vk", "--save-outputs", self.path("w0.out.json"))
        # The engine's own pipelines compiled ahead by a worker too, in a process of its own.
        out = self.vkgraphy("run", "w1.engine", "--vk", "--load-outputs", self.path("w0.out.json"), "--atol", "0",
                            "--rtol", "0", "-v", env=dict(self.fresh_cache(), VKGRAPHY_COMPILE_WORKERS="1"))
        self.assertIn("All outputs matched", out)
        self.assertRegex(out, r"engine pipelines compiled ahead: \d+ by 1 worker process\(es\), \d+ here")

    def test_canonical_texel_views_give_the_same_outputs(self):
        assert_switch_keeps_outputs(self, "--vk-disable-canonical-texel-views")

    def test_bad_counts_are_clear_errors(self):
        out = self.vkgraphy("convert", vk_model("cnn.onnx"), "-o", "x.engine", "--compile-workers", "9", expect=None)
        self.assertIn("--compile-workers", out)
        self.assertNotIn("Built engine", out)
        out = self.vkgraphy("convert", vk_model("cnn.onnx"), "-o", "x.engine", expect=None,
                            env={"VKGRAPHY_COMPILE_WORKERS": "lots"})
        self.assertIn("VKGRAPHY_COMPILE_WORKERS='lots': expected a count of worker processes", out)
        self.assertFalse(os.path.exists(self.path("x.engine")))
