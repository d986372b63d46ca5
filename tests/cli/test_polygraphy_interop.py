"""vkgraphy and the real Polygraphy (tests/requirements.txt) side by side on the same files:
Polygraphy reads what vkgraphy writes (`inspect data`, `run --onnxrt --load-inputs
--load-outputs`), vkgraphy reads what Polygraphy writes, and both data loaders draw the same
inputs from the same seed and ranges."""
import os
import subprocess
import unittest

import numpy as np

from vkgraphy_cli import SOURCE_DIR, VENV, VENV_PYTHON, VK_MODELS, CliTestCase, load_inputs

POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")
MODEL = os.path.join(VK_MODELS, "cnn.onnx")  # input float32[1,3,32,32] -> probs
SHAPES = []
FIXTURES = os.path.join(SOURCE_DIR, "tests", "data")


class TestPolygraphyInterop(CliTestCase):
    def polygraphy(self, *args, expect=0):
        if not os.access(POLYGRAPHY, os.X_OK):
            raise AssertionError(f"{POLYGRAPHY} is missing: run ./setup.sh to create the test virtual environment")
        proc = subprocess.run([POLYGRAPHY, *args], cwd=self.tmp, capture_output=True, text=True, timeout=300)
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, expect, f"polygraphy {' '.join(args)}\n{out}")
        return out

    def test_polygraphy_reads_and_checks_what_vkgraphy_writes(self):
        self.vkgraphy("run", MODEL, "--vk", "--builder-optimization-level", "0", *SHAPES, "--iterations", "2",
                      "--save-inputs", "vk_in.json", "--save-outputs", "vk_out.json")
        out = self.polygraphy("inspect", "data", "vk_in.json")
        self.assertIn("input", out)
        out = self.polygraphy("inspect", "data", "vk_out.json")
        self.assertIn("probs", out)
        out = self.polygraphy("run", MODEL, "--onnxrt", "--load-inputs", "vk_in.json", "--load-outputs", "vk_out.json",
                              "--atol", "1e-4", "--rtol", "1e-3")
        self.assertIn("PASSED", out)

    def test_vkgraphy_reads_and_checks_what_polygraphy_writes(self):
        self.polygraphy("run", MODEL, "--onnxrt", *SHAPES, "--iterations", "2", "--save-inputs", "pg_in.json",
                        "--save-outputs", "pg_out.json")
        out = self.vkgraphy("run", MODEL, "--vk", "--ref", "--builder-optimization-level", "0", "--load-inputs",
                            "pg_in.json", "--load-outputs", "pg_out.json", "--atol", "1e-4", "--rtol", "1e-3")
        self.assertIn("PASSED | All outputs matched", out)
        out = self.vkgraphy("inspect", "data", self.path("pg_out.json"))
        self.assertIn("onnxrt-runner", out)

    def test_loop_model_matches_polygraphy_goldens_on_the_reference(self):
        # Polygraphy's own Loop fixture: a while loop whose trip count is INT64_MAX ("no limit").
        loop = os.path.join(os.path.dirname(MODEL), "..", "polygraphy", "loop.onnx")
        for value in (1, 4, 12):
            with self.subTest(input=value):
                self.polygraphy("run", loop, "--onnxrt", "--val-range", f"input_0:[{value},{value}]", "--save-inputs",
                                "pg_in.json", "--save-outputs", "pg_out.json")
                out = self.vkgraphy("run", loop, "--ref", "--load-inputs", "pg_in.json", "--load-outputs",
                                    "pg_out.json")
                self.assertIn("PASSED | All outputs matched", out)

    def test_both_data_loaders_draw_the_same_inputs(self):
        for extra in ([], ["--seed", "7", "--val-range", "input:[-2,3]"]):
            with self.subTest(options=" ".join(extra) or "defaults"):
                self.polygraphy("run", MODEL, "--onnxrt", *SHAPES, "--iterations", "2", *extra, "--save-inputs",
                                "pg_in.json")
                self.vkgraphy("run", MODEL, "--ref", *SHAPES, "--iterations", "2", *extra, "--save-inputs",
                              "vk_in.json")
                pg, vk = load_inputs(self.path("pg_in.json")), load_inputs(self.path("vk_in.json"))
                self.assertEqual(len(pg), len(vk))
                for a, b in zip(pg, vk):
                    self.assertEqual(a.keys(), b.keys())
                    for name in a:
                        np.testing.assert_array_equal(a[name], b[name])

    def test_fixtures_are_what_polygraphy_writes(self):
        # The Polygraphy-format files of tests/data (read by the unit tests, which cannot run Python)
        # are written by the real Polygraphy through make_polygraphy_golden.py: regenerated here,
        # each must equal the committed file byte for byte.
        proc = subprocess.run([VENV_PYTHON, os.path.join(FIXTURES, "make_polygraphy_golden.py"), self.tmp],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        written = sorted(name for name in os.listdir(self.tmp) if name.endswith(".json"))
        committed = sorted(name for name in os.listdir(FIXTURES) if name.startswith("polygraphy_"))
        self.assertEqual(written, committed)
        for name in written:
            with self.subTest(file=name), open(self.path(name), "rb") as ours, \
                    open(os.path.join(FIXTURES, name), "rb") as theirs:
                self.assertEqual(ours.read(), theirs.read(), f"{name} differs from what Polygraphy writes")


if __name__ == "__main__":
    unittest.main()
