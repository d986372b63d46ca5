"""Polygraphy-compatible data files through `vkgraphy run`: golden files written by the real
Polygraphy (tests/data/make_polygraphy_golden.py, checked by test_polygraphy_interop), generated inputs equal to Polygraphy's DataLoader,
and clear errors for files that cannot be used."""
import json
import os

import numpy as np

from vkgraphy_cli import CliTestCase, SOURCE_DIR, decode_array, load_inputs, model

EXIT_FAILED, EXIT_USAGE, EXIT_INPUT = 1, 2, 3
DATA = os.path.join(SOURCE_DIR, "tests", "data")


def fixture(name):
    return os.path.join(DATA, name)


class DataFiles(CliTestCase):
    def test_matches_polygraphy_golden_outputs(self):
        # Seed 1 gives Polygraphy's inputs, so the identity output equals the golden one exactly.
        for golden in ("polygraphy_golden_identity.json", "polygraphy_golden_identity_legacy.json"):
            out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-outputs", fixture(golden),
                                "--atol", "0", "--rtol", "0")
            self.assertIn("PASSED | Output: 'y'", out)

    def test_saved_inputs_are_byte_identical_to_polygraphy(self):
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--save-inputs", self.path("in.json"))
        with open(self.path("in.json"), "rb") as ours, open(fixture("polygraphy_golden_identity_inputs.json"), "rb") as theirs:
            self.assertEqual(ours.read(), theirs.read())

    def test_generated_bools_follow_numpy_random_state(self):
        self.vkgraphy("run", model("and.onnx"), "--ref", "--seed", "5", "--iterations", "2", "--save-inputs",
                      self.path("in.json"))
        feeds = load_inputs(self.path("in.json"))
        self.assertEqual(len(feeds), 2)
        for index, feed in enumerate(feeds):
            rng = np.random.RandomState(5 + index)  # Polygraphy's DataLoader, input by input
            for name in ("x", "y"):
                expected = rng.randint(low=False, high=True + 1, size=(3, 4), dtype=bool)
                np.testing.assert_array_equal(feed[name], expected)

    def test_loaded_inputs_feed_the_model(self):
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs",
                      fixture("polygraphy_golden_identity_inputs.json"), "--save-outputs", self.path("out.json"))
        with open(self.path("out.json")) as f:
            doc = json.load(f)
        y = decode_array(doc["lst"][0][1][0]["outputs"]["y"]["values"])
        np.testing.assert_array_equal(y, load_inputs(fixture("polygraphy_golden_identity_inputs.json"))[0]["x"])

    def test_dynamic_dimensions_take_input_shapes(self):
        self.vkgraphy("run", model("dynamic_identity.onnx"), "--ref", "--input-shapes", "X:[1,2,3,5]",
                      "--save-inputs", self.path("in.json"))
        self.assertEqual(load_inputs(self.path("in.json"))[0]["X"].shape, (1, 2, 3, 5))

    def test_tolerances_and_error_statistics(self):
        args = ["run", model("identity.onnx"), "--ref", "--val-range", "[2,3]", "--load-outputs",
                fixture("polygraphy_golden_identity.json")]
        out = self.vkgraphy(*args, expect=EXIT_FAILED)
        self.assertIn("FAILED | Output: 'y' | Difference exceeds tolerance (rel=1e-05, abs=1e-05)", out)
        self.assertIn("Minimum Required Tolerance: elemwise error | [abs=2]", out)
        out = self.vkgraphy(*args, "--atol", "y:2.5")
        self.assertIn("PASSED | Output: 'y' | Difference is within tolerance (rel=1e-05, abs=2.5)", out)
        out = self.vkgraphy(*args, "--atol", "1", "--check-error-stat", "median", expect=EXIT_FAILED)
        self.assertIn("Checking median error", out)

    def test_wrong_files_are_clear_errors(self):
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs",
                            fixture("polygraphy_golden_identity.json"), expect=EXIT_INPUT)
        self.assertIn("holds outputs (RunResults), not inputs", out)
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-outputs",
                            fixture("polygraphy_golden_identity_inputs.json"), expect=EXIT_INPUT)
        self.assertIn("inputs file", out)
        with open(self.path("broken.json"), "w") as f:
            f.write('[{"x": {"array": "not base64!", "polygraphy_class": "ndarray"}}]')
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", self.path("broken.json"),
                            expect=EXIT_INPUT)
        self.assertIn("broken.json': [0]['x']: invalid base64", out)
        self.vkgraphy("run", model("and.onnx"), "--ref", "--save-inputs", self.path("bools.json"))
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", self.path("bools.json"),
                            expect=EXIT_INPUT)
        self.assertIn("iteration 0: input 'x' is bool[3, 4] but the model expects float32", out)

    def test_bad_option_values_are_usage_errors(self):
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--val-range", "x:[1", expect=EXIT_USAGE)
        self.assertIn("'[1' is not a range", out)
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--atol", "y:abc", expect=EXIT_USAGE)
        self.assertIn("'abc' is not a number", out)
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--check-error-stat", "avg", expect=EXIT_USAGE)
        self.assertIn("names no error statistic", out)
