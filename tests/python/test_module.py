"""`import vkgraphy`: engines, the reference backend, the data loader, the comparator and
Polygraphy's files, checked against the command line and the real Polygraphy."""
import inspect
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np

from py_util import BIN, EXAMPLE, VK_MODELS, model, vkgraphy


class EngineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.engine = vkgraphy.build_engine(EXAMPLE, deterministic=True)
        cls.feed = vkgraphy.generate_inputs(EXAMPLE)[0]
        cls.reference = vkgraphy.ReferenceBackend(EXAMPLE).infer(cls.feed)

    def test_infer_matches_the_reference(self):
        out = self.engine.infer(self.feed)
        self.assertEqual(list(out), ["y"])
        self.assertEqual(out["y"].dtype, np.float32)
        self.assertEqual(out["y"].shape, (1, 10))
        np.testing.assert_allclose(out["y"], self.reference["y"], atol=1e-4, rtol=1e-4)
        self.assertTrue(vkgraphy.compare(out, self.reference, atol=1e-4, rtol=1e-4))
        self.assertGreater(self.engine.last_inference_time, 0)
        self.assertGreater(self.engine.last_device_time, 0)

    def test_outputs_are_new_arrays_that_own_their_memory(self):
        a = self.engine.infer(self.feed)["y"]
        b = self.engine.infer(self.feed)["y"]
        self.assertFalse(np.shares_memory(a, b))
        a[...] = 0  # writable, and the next call is not affected
        np.testing.assert_array_equal(self.engine.infer(self.feed)["y"], b)

    def test_non_contiguous_and_list_inputs(self):
        x = self.feed["x"]
        wide = np.zeros(x.shape[:-1] + (x.shape[-1] * 2,), np.float32)
        wide[..., ::2] = x
        strided = wide[..., ::2]
        self.assertFalse(strided.flags["C_CONTIGUOUS"])
        np.testing.assert_array_equal(self.engine.infer({"x": strided})["y"], self.engine.infer(self.feed)["y"])
        np.testing.assert_array_equal(self.engine.infer({"x": x.tolist()})["y"], self.engine.infer(self.feed)["y"])

    def test_metadata_and_layers(self):
        self.assertEqual(self.engine.input_metadata, {"x": (np.dtype("float32"), (1, 3, 32, 32))})
        self.assertEqual(self.engine.output_metadata, {"y": (np.dtype("float32"), (1, 10))})
        layers = self.engine.layers
        self.assertTrue(layers)
        for layer in layers:
            self.assertEqual(set(layer), {"name", "op", "tactic", "precision", "nodes"})
        self.assertIn("llvmpipe", self.engine.device)
        self.assertIn("llvmpipe", self.engine.built_for)
        self.assertEqual(self.engine.build_stats["layers"], sum(1 for l in layers if l["nodes"]))
        self.assertIn('"layers"', self.engine.tactic_replay)

    def test_save_load_and_bytes_give_the_same_outputs(self):
        expected = self.engine.infer(self.feed)["y"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "example.engine")
            self.engine.save(path)
            with vkgraphy.load_engine(path) as loaded:
                np.testing.assert_array_equal(loaded.infer(self.feed)["y"], expected)
                self.assertIsNone(loaded.build_stats)
            # The CLI runs the file the module wrote.
            proc = subprocess.run([BIN, "inspect", "model", path], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        loaded = vkgraphy.load_engine(self.engine.serialize())
        np.testing.assert_array_equal(loaded.infer(self.feed)["y"], expected)
        loaded.close()
        with self.assertRaisesRegex(vkgraphy.Error, "closed"):
            loaded.infer(self.feed)

    def test_model_bytes_and_path_like(self):
        import pathlib

        with open(EXAMPLE, "rb") as f:
            from_bytes = vkgraphy.build_engine(f.read(), load_tactics=None, optimization_level=0)
        from_path = vkgraphy.build_engine(pathlib.Path(EXAMPLE), optimization_level=0)
        self.assertEqual([l["tactic"] for l in from_bytes.layers], [l["tactic"] for l in from_path.layers])
        np.testing.assert_array_equal(from_bytes.infer(self.feed)["y"], from_path.infer(self.feed)["y"])


class BuilderOptionsTest(unittest.TestCase):
    """Keyword arguments are the command line's options, with its semantics and files."""

    def test_replay_round_trip_and_layer_precisions(self):
        with tempfile.TemporaryDirectory() as tmp:
            replay = os.path.join(tmp, "replay.json")
            cache = os.path.join(tmp, "cache.json")
            first = vkgraphy.build_engine(EXAMPLE, fp16=True, fp16_policy="all", layer_precisions={"conv1": "fp32"},
                                          save_tactics=replay, save_timing_cache=cache)
            precisions = {l["name"]: l["precision"] for l in first.layers if l["nodes"]}
            self.assertEqual(precisions["conv1+relu1"], "fp32")
            self.assertIn("fp16", precisions.values())
            again = vkgraphy.build_engine(EXAMPLE, fp16=True, load_tactics=replay)
            self.assertEqual([(l["name"], l["tactic"]) for l in again.layers],
                             [(l["name"], l["tactic"]) for l in first.layers])
            cached = vkgraphy.build_engine(EXAMPLE, fp16=True, fp16_policy="all", layer_precisions={"conv1": "fp32"},
                                           load_timing_cache=cache, error_on_timing_cache_miss=True)
            self.assertEqual(cached.build_stats["candidates_timed"], 0)
            # The same replay drives the command line to the same engine.
            proc = subprocess.run([BIN, "convert", EXAMPLE, "--fp16", "--load-tactics", replay, "-o",
                                   os.path.join(tmp, "cli.engine")], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            cli = vkgraphy.load_engine(os.path.join(tmp, "cli.engine"))
            self.assertEqual([l["tactic"] for l in cli.layers], [l["tactic"] for l in first.layers])

    def test_mark_outputs_and_input_shapes(self):
        engine = vkgraphy.build_engine(EXAMPLE, mark_outputs="all", optimization_level=0)
        self.assertIn("norm", engine.output_metadata)
        dynamic = model("dynamic_identity.onnx")
        if os.path.exists(dynamic):
            e = vkgraphy.build_engine(dynamic, input_shapes={"X": (1, 2, 4, 4)}, optimization_level=0)
            self.assertEqual(e.input_metadata["X"][1], (1, 2, 4, 4))
            # load_inputs fixes the shapes as --load-inputs does for `vkgraphy run --vk`, and must agree with input_shapes.
            with tempfile.TemporaryDirectory() as tmp:
                inputs = os.path.join(tmp, "inputs.json")
                vkgraphy.generate_inputs(dynamic, input_shapes={"X": (1, 2, 3, 3)}, save_inputs=inputs)
                e = vkgraphy.build_engine(dynamic, load_inputs=[inputs], optimization_level=0)
                self.assertEqual(e.input_metadata["X"][1], (1, 2, 3, 3))
                with self.assertRaisesRegex(vkgraphy.Error, "--load-inputs data has shape \\[1, 2, 3, 3\\]"):
                    vkgraphy.build_engine(dynamic, load_inputs=[inputs], input_shapes={"X": (1, 2, 4, 4)})

    def test_tactic_selection_and_restrictions(self):
        engine = vkgraphy.build_engine(EXAMPLE, tactics_deny=["conv.direct*"], tactic_selection="random:3")
        self.assertFalse(any(l["tactic"].startswith("conv.direct") for l in engine.layers))

    def test_errors_carry_the_command_lines_messages(self):
        with self.assertRaisesRegex(vkgraphy.Error, "does not exist"):
            vkgraphy.build_engine("/no/such/model.onnx")
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'fp17'"):
            vkgraphy.build_engine(EXAMPLE, fp17=True)
        with self.assertRaisesRegex(vkgraphy.Error, "--precision-constraints"):
            vkgraphy.build_engine(EXAMPLE, precision_constraints="maybe")
        with self.assertRaisesRegex(vkgraphy.Error, "--layer-precisions"):
            vkgraphy.build_engine(EXAMPLE, layer_precisions={"conv1": "fp8"})
        with self.assertRaisesRegex(TypeError, "switch"):
            vkgraphy.build_engine(EXAMPLE, fp16="yes")
        with self.assertRaisesRegex(vkgraphy.Error, "not a valid ONNX model"):
            vkgraphy.build_engine(b"not a model")
        with self.assertRaisesRegex(vkgraphy.Error, "no Vulkan device|matches|device"):
            vkgraphy.build_engine(EXAMPLE, device="no-such-gpu")
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.engine")
            with open(bad, "wb") as f:
                f.write(b"VKGRAPHY" + b"\0" * 10)
            with self.assertRaises(vkgraphy.Error):
                vkgraphy.load_engine(bad)
        engine = vkgraphy.build_engine(EXAMPLE, optimization_level=0)
        with self.assertRaisesRegex(vkgraphy.Error, "has shape \\[2, 2\\]"):
            engine.infer({"x": np.zeros((2, 2), np.float32)})
        with self.assertRaisesRegex(vkgraphy.Error, "is float64 but the engine expects float32"):
            engine.infer({"x": np.zeros((1, 3, 32, 32))})
        with self.assertRaisesRegex(vkgraphy.Error, "input 'x' of the engine was not provided"):
            engine.infer({})
        with self.assertRaisesRegex(vkgraphy.Error, "input 'x' is not an array"):
            engine.infer({"x": object()})
        with self.assertRaisesRegex(vkgraphy.Error, "numpy dtype complex64, which vkgraphy does not hold"):
            engine.infer({"x": np.zeros((1, 3, 32, 32), np.complex64)})


class DataTest(unittest.TestCase):
    def test_generated_inputs_are_polygraphys(self):
        from polygraphy.comparator import DataLoader

        ours = vkgraphy.generate_inputs(EXAMPLE, seed=7, iterations=2, val_range=(-2, 3))
        loader = DataLoader(seed=7, iterations=2, val_range=(-2, 3),
                            input_metadata=_metadata({"x": (np.float32, (1, 3, 32, 32))}))
        for mine, theirs in zip(ours, loader):
            np.testing.assert_array_equal(mine["x"], theirs["x"])
        per_input = vkgraphy.generate_inputs(EXAMPLE, val_range={"x": (5, 6)})
        self.assertTrue(((per_input[0]["x"] >= 5) & (per_input[0]["x"] < 6)).all())

    def test_files_round_trip_with_polygraphy(self):
        from polygraphy.comparator import RunResults
        from polygraphy.json import load_json

        feeds = vkgraphy.generate_inputs(EXAMPLE, iterations=2)
        outputs = vkgraphy.ReferenceBackend(EXAMPLE).infer(feeds[0])
        with tempfile.TemporaryDirectory() as tmp:
            inputs_path = os.path.join(tmp, "inputs.json")
            vkgraphy.save_inputs(inputs_path, feeds)
            theirs = load_json(inputs_path)
            np.testing.assert_array_equal(theirs[1]["x"], feeds[1]["x"])
            np.testing.assert_array_equal(vkgraphy.load_inputs(inputs_path)[0]["x"], feeds[0]["x"])
            outputs_path = os.path.join(tmp, "outputs.json")
            vkgraphy.save_outputs(outputs_path, {"ref": [outputs]})
            results = RunResults.load(outputs_path)
            self.assertEqual([name for name, _ in results], ["ref"])
            np.testing.assert_array_equal(results["ref"][0]["y"], outputs["y"])
            results.save(outputs_path)  # written by Polygraphy, read by vkgraphy
            [(runner, iterations)] = vkgraphy.load_outputs(outputs_path)
            self.assertEqual(runner, "ref")
            np.testing.assert_array_equal(iterations[0]["outputs"]["y"], outputs["y"])
            # The command line reads them too.
            proc = subprocess.run([BIN, "run", EXAMPLE, "--ref", "--load-inputs", inputs_path, "--load-outputs",
                                   outputs_path], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_compare_statistics_and_tolerances(self):
        a = {"y": np.array([1.0, 2.0, 3.0], np.float32)}
        b = {"y": np.array([1.0, 2.0, 3.5], np.float32)}
        failed = vkgraphy.compare(a, b)
        self.assertFalse(failed)
        [out] = failed.outputs
        self.assertEqual(out["mismatched_elements"], 1)
        self.assertAlmostEqual(out["max_absdiff"], 0.5)
        self.assertAlmostEqual(out["required_atol"], 0.5)
        self.assertTrue(vkgraphy.compare(a, b, atol=0.5))
        self.assertTrue(vkgraphy.compare(a, b, atol={"y": 0.5}))
        self.assertTrue(vkgraphy.compare(a, b, check_error_stat="median", atol=0.1))
        self.assertFalse(vkgraphy.compare(a, b, check_error_stat="max", atol=0.1))
        self.assertEqual(vkgraphy.compare(a, {"z": b["y"]}).skipped, ["y", "z"])
        with self.assertRaisesRegex(vkgraphy.Error, "check-error-stat"):
            vkgraphy.compare(a, b, check_error_stat="biggest")

    def test_reference_marks_every_tensor(self):
        ref = vkgraphy.ReferenceBackend(EXAMPLE)
        feed = vkgraphy.generate_inputs(EXAMPLE)[0]
        every = ref.infer(feed, outputs="all")
        self.assertIn("norm", every)
        np.testing.assert_array_equal(ref.infer(feed, outputs=["norm"])["norm"], every["norm"])
        self.assertEqual(ref.input_metadata["x"], (np.dtype("float32"), (1, 3, 32, 32)))


class DocumentationTest(unittest.TestCase):
    def test_every_call_is_documented_and_in_the_stubs(self):
        with open(os.path.join(os.path.dirname(vkgraphy.__file__), "__init__.pyi")) as f:
            stubs = f.read()
        for name in vkgraphy.__all__:
            obj = getattr(vkgraphy, name)
            if name.startswith("__"):
                continue
            self.assertTrue(inspect.getdoc(obj), f"vkgraphy.{name} has no docstring")
            self.assertRegex(stubs, rf"\b(def|class) {name}\b", f"vkgraphy.{name} is not in the type stubs")
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if not member.startswith("_"):
                        self.assertTrue(inspect.getdoc(value), f"vkgraphy.{name}.{member} has no docstring")
                        self.assertRegex(stubs, rf"def {member}\(|\b{member}:",
                                         f"vkgraphy.{name}.{member} is not in the type stubs")


def _metadata(entries):
    from polygraphy.common import TensorMetadata

    meta = TensorMetadata()
    for name, (dtype, shape) in entries.items():
        meta.add(name, dtype=dtype, shape=shape)
    return meta


if __name__ == "__main__":
    unittest.main()
