"""fp16 that CI really exercises (docs/builder.md, Precision): on lavapipe, whose fp16 arithmetic is
slower than its fp32, `--fp16` makes every layer that can be fp16 fp16 (--fp16-policy auto), so the
fp16 failures a GPU build has show on lavapipe too; and a GPU build's precisions, from its replay,
rebuild on lavapipe (--load-layer-precisions) with the GPU's fp16 layers and arithmetic.

example_gpu_fp16_replay.json is a replay in the form a GPU build writes for example.onnx (every
layer fp16 but the final Gemm; convolutions and pooling with fp32 accumulation, the L2 norm's sum
of squares in fp16 arithmetic, where it overflows)."""
import json
import os
import unittest

from vkgraphy_cli import VK_MODELS, CliTestCase

EXAMPLE = os.path.join(VK_MODELS, "example.onnx")
GPU_REPLAY = os.path.join(VK_MODELS, "example_gpu_fp16_replay.json")
CHECK = ["--atol", "0.1", "--rtol", "1e-2"]


class TestFp16Policy(CliTestCase):
    def tactics(self, replay):
        return {layer["name"]: layer["tactic"] for layer in self.read_json(replay)["layers"]}

    def test_device_says_fp16_is_slower(self):
        out = self.vkgraphy("inspect", "device")
        self.assertIn("fp16 slower than fp32: yes", out)
        self.assertIn("loop iteration limit: 65535", out)

    def test_auto_makes_every_layer_fp16_on_lavapipe_and_finds_the_overflow(self):
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--ref", "--fp16", *CHECK, "--save-tactics", "auto.json",
                            "--builder-optimization-level", "1", expect=1)
        self.assertIn("every layer that can be fp16 is fp16 (--fp16-policy auto)", out)
        self.assertIn("FAILED | Mismatched outputs: ['y']", out)
        tactics = self.tactics("auto.json")
        self.assertEqual(set(tactics), {"conv1+relu1", "conv2+relu2", "energy", "norm", "normalize", "gap", "fc"})
        # fp16 arithmetic wherever a tactic has it: the numerics of an fp16 GPU build.
        for layer, tactic in tactics.items():
            self.assertTrue(tactic.endswith(".f16"), f"{layer}: {tactic}")
        # The same with the policy named.
        self.vkgraphy("run", EXAMPLE, "--vk", "--fp16", "--fp16-policy", "all", "--save-tactics", "all.json",
                      "--builder-optimization-level", "0")
        for tactic in self.tactics("all.json").values():
            self.assertTrue(tactic.endswith(".f16"), tactic)

    def test_pins_win_over_the_policy(self):
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--ref", "--fp16", "--layer-precisions", "energy:fp32",
                            "norm:fp32", *CHECK, "--save-tactics", "pinned.json", "--builder-optimization-level", "0")
        self.assertIn("PASSED | All outputs matched", out)
        tactics = self.tactics("pinned.json")
        self.assertTrue(tactics["energy"].endswith(".f32") and tactics["norm"].endswith(".f32"), tactics)
        self.assertTrue(tactics["conv1+relu1"].endswith(".f16"), tactics)

    def test_fastest_times_precisions(self):
        # Which precision wins is timing; every layer gets a tactic either way.
        self.vkgraphy("run", EXAMPLE, "--vk", "--fp16", "--fp16-policy", "fastest", "--save-tactics", "fast.json",
                      "--builder-optimization-level", "1")
        self.assertEqual(len(self.tactics("fast.json")), 7)
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--fp16", "--fp16-policy", "sometimes", expect=None)
        self.assertIn("--fp16-policy", out)
        self.assertNotIn("PASSED", out)

    def test_gpu_precisions_replayed_on_lavapipe_reproduce_its_failure(self):
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--ref", "--load-layer-precisions", GPU_REPLAY, *CHECK,
                            "--save-tactics", "here.json", "--builder-optimization-level", "1", expect=1)
        self.assertIn("Loaded 9 layer precision(s)", out)
        self.assertIn("FAILED | Mismatched outputs: ['y']", out)
        tactics = self.tactics("here.json")
        # The GPU's precision per layer, and its arithmetic: fp32 accumulation where it had it.
        self.assertTrue(tactics["fc"].endswith(".f32"), tactics)
        for layer in ("conv1+relu1", "conv2+relu2", "gap"):
            self.assertTrue(tactics[layer].endswith(".f16acc32"), tactics)
        for layer in ("energy", "norm", "normalize"):
            self.assertTrue(tactics[layer].endswith(".f16"), tactics)
        # With the two layers debug precision names in fp32, the GPU's set passes.
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--ref", "--load-layer-precisions", GPU_REPLAY,
                            "--layer-precisions", "energy:fp32", "norm:fp32", *CHECK,
                            "--builder-optimization-level", "0")
        self.assertIn("PASSED | All outputs matched", out)

    def test_an_engine_gives_its_precisions_too(self):
        self.vkgraphy("convert", EXAMPLE, "--fp16", "-o", "fp16.engine", "--builder-optimization-level", "0")
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--ref", "--load-layer-precisions", "fp16.engine", *CHECK,
                            "--builder-optimization-level", "0", expect=1)
        self.assertIn("FAILED | Mismatched outputs: ['y']", out)

    def test_debug_precision_finds_the_layers_on_lavapipe(self):
        self.vkgraphy("run", EXAMPLE, "--ref", "--save-outputs", "golden.json")
        out = self.vkgraphy("debug", "precision", EXAMPLE, "--fp16", "--builder-optimization-level", "0", "--check",
                            os.environ.get("VKGRAPHY_BIN", "vkgraphy"), "run", "vkgraphy_debug.engine", "--vk",
                            "--load-outputs", "golden.json", *CHECK)
        self.assertIn("To pass the check, run these 2 layer(s) in fp32: energy, norm", out)

    def test_not_a_precision_source(self):
        self.write_json("other.json", {"format": "vkgraphy-timing-cache", "version": 1})
        out = self.vkgraphy("run", EXAMPLE, "--vk", "--load-layer-precisions", "other.json", expect=None)
        self.assertIn("other.json", out)
        self.assertNotIn("PASSED", out)


if __name__ == "__main__":
    unittest.main()
