"""vkgraphy inside the real Polygraphy: VkgraphyRunner in Comparator.run, and `polygraphy run
--vkgraphy` through the extension the package installs (the `polygraphy.run.plugins` entry point)."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from py_util import BIN, EXAMPLE, VK_MODELS, model, vkgraphy

from polygraphy.backend.onnx import ModifyOutputs, OnnxFromPath
from polygraphy.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from polygraphy.comparator import Comparator, DataLoader, RunResults, SimpleCompareFunc
from vkgraphy.runner import BuildEngine, LoadEngine, SaveEngine, VkgraphyRunner

POLYGRAPHY = os.path.join(os.path.dirname(sys.executable), "polygraphy")


def polygraphy(*args):
    return subprocess.run([POLYGRAPHY, *args], capture_output=True, text=True, timeout=600)


class ComparatorTest(unittest.TestCase):
    def test_comparator_against_onnxruntime_on_the_bundled_models(self):
        bundled = [(os.path.join(VK_MODELS, f), None) for f in sorted(os.listdir(VK_MODELS)) if f.endswith(".onnx")]
        self.assertGreaterEqual(len(bundled), 7)
        for path, shapes in bundled + [(model("conv.onnx"), None), (model("dynamic_identity.onnx"), {"X": (1, 2, 3, 3)})]:
            with self.subTest(model=os.path.basename(path)):
                options = {"input_shapes": shapes} if shapes else {}
                runners = [VkgraphyRunner(BuildEngine(path, **options)), OnnxrtRunner(SessionFromOnnx(path))]
                loader = DataLoader(iterations=2, input_metadata=_metadata(shapes)) if shapes else None
                results = Comparator.run(runners, data_loader=loader)
                self.assertTrue(bool(Comparator.compare_accuracy(results, compare_func=SimpleCompareFunc(atol=1e-4, rtol=1e-3))))
                runner = results[0][0]
                self.assertTrue(runner.startswith("vkgraphy-runner"))

    def test_a_perturbed_golden_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            golden = os.path.join(tmp, "golden.json")
            results = Comparator.run([OnnxrtRunner(SessionFromOnnx(EXAMPLE))])
            results[0][1][0]["y"] = results[0][1][0]["y"] + np.float32(0.01)
            results.save(golden)
            ours = Comparator.run([VkgraphyRunner(BuildEngine(EXAMPLE))])
            loaded = RunResults.load(golden)
            ours.extend(loaded)
            self.assertFalse(bool(Comparator.compare_accuracy(ours, compare_func=SimpleCompareFunc(atol=1e-3))))
            self.assertTrue(bool(Comparator.compare_accuracy(ours, compare_func=SimpleCompareFunc(atol=0.02))))

    def test_runner_interface(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "example.engine")
            with VkgraphyRunner(SaveEngine(BuildEngine(EXAMPLE, optimization_level=0), path)) as runner:
                meta = runner.get_input_metadata(use_numpy_dtypes=False)
                self.assertEqual(list(meta.keys()), ["x"])
                self.assertEqual(tuple(meta["x"].shape), (1, 3, 32, 32))
                feed = {"x": np.ones((1, 3, 32, 32), np.float32)}
                first = runner.infer(feed)["y"]
                self.assertGreater(runner.last_inference_time(), 0)
            with VkgraphyRunner(LoadEngine(path)) as runner:
                np.testing.assert_array_equal(runner.infer(feed)["y"], first)
            # An engine handed over stays open after the runner is done with it.
            engine = vkgraphy.load_engine(path)
            with VkgraphyRunner(engine) as runner:
                runner.infer(feed)
            engine.infer(feed)


class PolygraphyRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from importlib import metadata

        plugins = [e.name for e in metadata.entry_points().select(group="polygraphy.run.plugins")]
        if "vkgraphy" not in plugins:
            raise AssertionError("the vkgraphy package is not installed in this environment (./setup.sh installs it "
                                 "into .venv; elsewhere: pip install build/python)")

    def test_run_passes_against_onnxruntime(self):
        proc = polygraphy("run", EXAMPLE, "--vkgraphy", "--onnxrt")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("vkgraphy-runner", proc.stdout + proc.stderr)
        self.assertIn("PASSED", proc.stdout + proc.stderr)

    def test_fp16_overflow_fails_as_vkgraphy_run_does(self):
        proc = polygraphy("run", EXAMPLE, "--vkgraphy", "--onnxrt", "--vkgraphy-fp16", "--atol", "1e-3", "--rtol", "1e-3")
        self.assertNotEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("FAILED", proc.stdout + proc.stderr)
        cli = subprocess.run([BIN, "run", EXAMPLE, "--vk", "--fp16", "--ref", "--atol", "1e-3", "--rtol", "1e-3"],
                             capture_output=True, text=True)
        self.assertEqual(cli.returncode, 1, cli.stdout + cli.stderr)
        # Pinning the overflowing layers to fp32 passes in both.
        pinned = polygraphy("run", EXAMPLE, "--vkgraphy", "--onnxrt", "--vkgraphy-fp16", "--atol", "1e-2", "--rtol",
                            "1e-2", "--vkgraphy-layer-precisions", "energy:fp32", "norm:fp32", "normalize:fp32")
        cli = subprocess.run([BIN, "run", EXAMPLE, "--vk", "--fp16", "--ref", "--atol", "1e-2", "--rtol", "1e-2",
                              "--layer-precisions", "energy:fp32", "norm:fp32", "normalize:fp32"],
                             capture_output=True, text=True)
        self.assertEqual(pinned.returncode, cli.returncode, pinned.stdout + pinned.stderr + cli.stdout + cli.stderr)

    def test_polygraphy_flags_work_with_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            inputs, outputs, script = (os.path.join(tmp, n) for n in ("inputs.json", "outputs.json", "run.py"))
            proc = polygraphy("run", EXAMPLE, "--vkgraphy", "--iterations", "2", "--save-inputs", inputs,
                              "--save-outputs", outputs, "--onnx-outputs", "mark", "all")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            [(runner, iterations)] = vkgraphy.load_outputs(outputs)
            self.assertEqual(len(iterations), 2)
            self.assertIn("norm", iterations[0]["outputs"])
            # Reloaded inputs give the same outputs; the command line agrees with them.
            proc = polygraphy("run", EXAMPLE, "--vkgraphy", "--load-inputs", inputs, "--load-outputs", outputs,
                              "--onnx-outputs", "mark", "all", "--atol", "1e-5", "--rtol", "1e-5")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            cli = subprocess.run([BIN, "run", EXAMPLE, "--ref", "--load-inputs", inputs, "--load-outputs", outputs,
                                  "--onnx-outputs", "mark", "all", "--atol", "1e-4", "--rtol", "1e-4"],
                                 capture_output=True, text=True)
            self.assertEqual(cli.returncode, 0, cli.stdout + cli.stderr)
            proc = polygraphy("run", model("dynamic_identity.onnx"), "--vkgraphy", "--onnxrt", "--input-shapes",
                              "X:[1,2,5,5]", "--vkgraphy-builder-optimization-level", "0")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertIn("(1, 2, 5, 5)", proc.stdout + proc.stderr)
            proc = polygraphy("run", EXAMPLE, "--vkgraphy", "--onnxrt", "--vkgraphy-fp16", "--gen-script", script)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(script) as f:
                text = f.read()
            self.assertIn("BuildEngine(", text)
            self.assertIn("fp16=True", text)
            ran = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=600)
            self.assertNotEqual(ran.returncode, 0)  # the fp16 overflow
            self.assertIn("FAILED", ran.stdout + ran.stderr)

    def test_bad_vkgraphy_options_are_clear_errors(self):
        proc = polygraphy("run", EXAMPLE, "--vkgraphy", "--vkgraphy-precision-constraints", "maybe")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--precision-constraints", proc.stdout + proc.stderr)
        help_text = polygraphy("run", "--help").stdout
        for flag in ("--vkgraphy ", "--vkgraphy-fp16", "--vkgraphy-device", "--vkgraphy-layer-precisions",
                     "--vkgraphy-save-engine"):
            self.assertIn(flag, help_text)


def _metadata(shapes):
    from polygraphy.common import TensorMetadata

    meta = TensorMetadata()
    for name, shape in shapes.items():
        meta.add(name, dtype=np.float32, shape=shape)
    return meta


if __name__ == "__main__":
    unittest.main()
