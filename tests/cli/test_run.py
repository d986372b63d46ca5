"""`vkgraphy run`: reference runs, saving/loading/comparing outputs, marking, errors, global options."""
import json
import os
import re

import numpy as np
import onnx
from onnx import helper, numpy_helper

from vkgraphy_cli import CliTestCase, SOURCE_DIR, edit_outputs, load_inputs, load_outputs, model

EXIT_FAILED, EXIT_USAGE, EXIT_INPUT = 1, 2, 3


def conv2d(x, w, pads, strides):
    """ONNX Conv (NCHW, one group, no dilation, no bias) as im2col and a tensor product."""
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    (kh, kw), (sh, sw) = w.shape[2:], strides
    oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    cols = np.stack([x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)], axis=2)
    return np.tensordot(cols, w.reshape(w.shape[0], w.shape[1], kh * kw), axes=([1, 2], [1, 2])).transpose(0, 3, 1, 2)


def max_pool2d(x, kernel, pads, strides):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf)
    (kh, kw), (sh, sw) = kernel, strides
    oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    return np.max([x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)], axis=0)


def run_with_numpy(path, feeds):
    """Runs a model of Conv, BatchNormalization, Relu, MaxPool and Sum nodes in float64 with numpy:
    a computation independent of vkgraphy's reference backend."""
    m = onnx.load(path)
    values = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
    values.update({name: x.astype(np.float64) for name, x in feeds.items()})
    for node in m.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        x = [values[name] for name in node.input]
        pads, strides = attrs.get("pads", [0, 0, 0, 0]), attrs.get("strides", [1, 1])
        if node.op_type == "Conv":
            assert set(attrs) <= {"pads", "strides", "kernel_shape"} and len(x) == 2, node
            y = conv2d(x[0], x[1], pads, strides)
        elif node.op_type == "BatchNormalization":
            scale, bias, mean, var = (v.reshape(1, -1, 1, 1) for v in x[1:])
            y = (x[0] - mean) / np.sqrt(var + attrs.get("epsilon", 1e-5)) * scale + bias
        elif node.op_type == "Relu":
            y = np.maximum(x[0], 0)
        elif node.op_type == "MaxPool":
            assert set(attrs) <= {"pads", "strides", "kernel_shape"}, node
            y = max_pool2d(x[0], attrs["kernel_shape"], pads, strides)
        elif node.op_type == "Sum":
            y = sum(x)
        else:
            raise NotImplementedError(node.op_type)
        values[node.output[0]] = y
    return {o.name: values[o.name] for o in m.graph.output}


class RunReference(CliTestCase):
    def test_residual_block_output_matches_an_independent_computation(self):
        path = model("residual_block.onnx")
        self.vkgraphy("run", path, "--ref", "--input-shapes", "gpu_0/data_0:[1,3,224,224]", "--save-inputs", "in.json",
                      "--save-outputs", "out.json")
        (iterations,) = load_outputs(self.path("out.json")).values()
        y = iterations[0]["gpu_0/res2_0_branch2c_bn_2"]
        self.assertEqual((y.dtype, y.shape), (np.float32, (1, 256, 56, 56)))
        self.assertTrue(np.isfinite(y).all())
        (expected,) = run_with_numpy(path, load_inputs(self.path("in.json"))[0]).values()
        # float32 against float64, through sums of up to 576 products: measured 7.6e-6 apart at most
        # (2026-11-23), with outputs up to 6.3 in magnitude.
        np.testing.assert_allclose(y, expected, rtol=0, atol=2e-5 * np.abs(expected).max())

    def test_save_then_compare_passes_and_tampering_fails(self):
        golden = self.path("golden.json")
        self.vkgraphy("run", model("conv.onnx"), "--ref", "--save-outputs", golden)
        runs = load_outputs(golden)
        (iterations,) = runs.values()
        self.assertEqual(len(iterations), 1)
        out = self.vkgraphy("run", model("conv.onnx"), "--ref", "--load-outputs", golden)
        self.assertIn("PASSED", out)
        # Change one value of the golden output: the comparison must fail with exit code 1.
        bad = self.path("bad.json")

        def tamper(_, values):
            values = values.copy()
            values.flat[0] += 1.0
            return values

        edit_outputs(golden, bad, tamper)
        out = self.vkgraphy("run", model("conv.onnx"), "--ref", "--load-outputs", bad, expect=EXIT_FAILED)
        self.assertIn("FAILED", out)
        # A loose enough tolerance passes again.
        self.vkgraphy("run", model("conv.onnx"), "--ref", "--load-outputs", bad, "--atol", "2")

    def test_polygraphy_written_golden_round_trips(self):
        data_dir = os.path.join(SOURCE_DIR, "tests", "data")
        golden = os.path.join(data_dir, "polygraphy_golden_identity.json")
        inputs = os.path.join(data_dir, "polygraphy_golden_identity_inputs.json")
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", inputs, "--load-outputs", golden,
                            "--save-outputs", self.path("again.json"))
        self.assertIn("PASSED", out)
        runs = load_outputs(self.path("again.json"))
        self.assertEqual(len(runs), 2)

    def test_mark_all_returns_every_tensor(self):
        out_path = self.path("all.json")
        self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "mark", "all", "--save-outputs", out_path)
        (iterations,) = load_outputs(out_path).values()
        self.assertEqual(set(iterations[0]), {"identity_out_0", "identity_out_2", "add_out_4", "identity_out_6",
                                              "identity_out_8"})

    def test_named_and_excluded_outputs(self):
        out_path = self.path("some.json")
        self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "add_out_4", "identity_out_0",
                      "--save-outputs", out_path)
        (iterations,) = load_outputs(out_path).values()
        self.assertEqual(set(iterations[0]), {"add_out_4", "identity_out_0"})
        self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "mark", "all",
                      "--onnx-exclude-outputs", "add_out_4", "--save-outputs", out_path)
        (iterations,) = load_outputs(out_path).values()
        self.assertNotIn("add_out_4", iterations[0])
        self.assertIn("identity_out_0", iterations[0])
        out = self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "nope", expect=EXIT_INPUT)
        self.assertIn("'nope'", out)

    def test_iterations_and_saved_inputs(self):
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--iterations", "3", "--save-inputs", self.path("in.json"),
                      "--save-outputs", self.path("out.json"))
        with open(self.path("in.json")) as f:
            self.assertEqual(len(json.load(f)), 3)
        (iterations,) = load_outputs(self.path("out.json")).values()
        self.assertEqual(len(iterations), 3)
        # Warm-up runs come before the timed iterations and are not among the saved results.
        out = self.vkgraphy("run", model("identity.onnx"), "--vk", "--warm-up", "2", "--iterations", "3",
                            "--save-outputs", self.path("warm.json"))
        self.assertRegex(out, r"\| 2 warm-up run\(s\) took [0-9.]+ ms")
        self.assertIn("Latency (device time, 3 iteration(s))", out)
        (iterations,) = load_outputs(self.path("warm.json")).values()
        self.assertEqual(len(iterations), 3)
        out = self.vkgraphy("run", model("identity.onnx"), "--vk", "--warm-up", "-1", expect=2)
        self.assertIn("--warm-up: Value -1 not in range 0 to 1000000", out)
        # --warm-up-ms: as many runs as the time takes (at least --warm-up's), none of them saved.
        out = self.vkgraphy("run", model("identity.onnx"), "--vk", "--warm-up", "2", "--warm-up-ms", "30",
                            "--iterations", "3", "--save-outputs", self.path("warm_ms.json"))
        m = re.search(r"\| (\d+) warm-up run\(s\) took ([0-9.]+) ms", out)
        self.assertIsNotNone(m, out)
        self.assertGreaterEqual(int(m.group(1)), 2)
        self.assertGreaterEqual(float(m.group(2)), 30.0)
        (iterations,) = load_outputs(self.path("warm_ms.json")).values()
        self.assertEqual(len(iterations), 3)
        out = self.vkgraphy("run", model("identity.onnx"), "--vk", "--warm-up-ms", "soon", expect=2)
        self.assertIn("--warm-up-ms", out)

    def test_dynamic_shapes_need_input_shapes(self):
        out = self.vkgraphy("run", model("dynamic_identity.onnx"), "--ref", "--input-shapes", "X:[1,2,5,5]",
                            "--save-outputs", self.path("o.json"))
        (iterations,) = load_outputs(self.path("o.json")).values()
        self.assertEqual(iterations[0]["Y"].shape, (1, 2, 5, 5))


class RunErrors(CliTestCase):
    BAD_MODELS = ["bad_graph_with_dup_value_info.onnx", "bad_graph_with_multi_level_errors.onnx",
                  "bad_graph_with_no_import_domains.onnx", "bad_graph_with_no_name.onnx",
                  "bad_graph_with_parallel_invalid_nodes.onnx", "empty.onnx", "custom_op_node.onnx",
                  "capability.onnx"]

    def test_conditionally_invalid_model_fails_on_its_bad_branch_only(self):
        # Polygraphy's fixture: If picks a constant that MatMul accepts in one branch only.
        path = model("bad_graph_conditionally_invalid.onnx")
        out = self.vkgraphy("run", path, "--ref", "--val-range", "cond:[0,0]", expect=EXIT_INPUT)
        errors = [l for l in out.splitlines() if l.startswith("[E]")]
        self.assertEqual(len(errors), 1, out)
        self.assertIn("MatMul 'MatMul': cannot multiply [2] by [1, 2]", errors[0])
        self.vkgraphy("run", path, "--ref", "--val-range", "cond:[1,1]")

    def test_malformed_models_give_one_clear_error(self):
        for name in self.BAD_MODELS:
            with self.subTest(model=name):
                out = self.vkgraphy("run", model(name), "--ref", expect=EXIT_INPUT)
                errors = [l for l in out.splitlines() if l.startswith("[E]")]
                self.assertEqual(len(errors), 1, out)

    def test_missing_truncated_and_foreign_files(self):
        self.vkgraphy("run", self.path("missing.onnx"), "--ref", expect=EXIT_INPUT)
        with open(model("residual_block.onnx"), "rb") as f:
            data = f.read()
        with open(self.path("truncated.onnx"), "wb") as f:
            f.write(data[: len(data) // 3])
        self.assertIn("not a valid ONNX model", self.vkgraphy("run", "truncated.onnx", "--ref", expect=EXIT_INPUT))
        with open(self.path("notes.onnx"), "w") as f:
            f.write("hello, this is not a model\n")
        self.vkgraphy("run", "notes.onnx", "--ref", expect=EXIT_INPUT)

    def test_bad_data_files(self):
        with open(self.path("broken.json"), "w") as f:
            f.write("{not json")
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-outputs", "broken.json", expect=EXIT_INPUT)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", "broken.json", expect=EXIT_INPUT)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", "nothing.json", expect=EXIT_INPUT)

    def test_usage_errors(self):
        self.vkgraphy("run", expect=EXIT_USAGE)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--no-such-flag", expect=EXIT_USAGE)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--input-shapes", "x[1,2]", expect=EXIT_INPUT)


class GlobalOptions(CliTestCase):
    def test_verbosity_levels(self):
        normal = self.vkgraphy("run", model("identity.onnx"), "--ref")
        verbose = self.vkgraphy("run", model("identity.onnx"), "--ref", "-v")
        quiet = self.vkgraphy("run", model("identity.onnx"), "--ref", "-qq")
        silent = self.vkgraphy("run", model("identity.onnx"), "--ref", "--silent")
        self.assertIn("[V]", verbose)
        self.assertNotIn("[V]", normal)
        self.assertNotIn("[I]", quiet)
        self.assertEqual(silent.strip(), "")
        self.assertIn("[V]", self.vkgraphy("run", model("identity.onnx"), "--ref", "--verbosity", "verbose"))

    def test_log_format_and_file(self):
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--log-format", "timestamp", "line-info",
                            "--log-file", self.path("log.txt"))
        self.assertRegex(out, r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] \[I\] \[[a-z_]+\.cpp:\d+\]")
        with open(self.path("log.txt")) as f:
            self.assertIn("PASSED", f.read())
        self.assertNotIn("\033[", out)  # no colours when not on a terminal
