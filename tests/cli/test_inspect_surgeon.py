"""`vkgraphy inspect` and `vkgraphy surgeon`, driven as a user would.

Run by ctest with VKGRAPHY_BIN (the vkgraphy binary) and VKGRAPHY_SOURCE_DIR set.
Uses onnx and numpy from /usr/bin/python3 to build fixtures and read outputs, and
ONNX's checker from the tests' virtual environment (VKGRAPHY_VENV, default
.venv, made by ./setup.sh), whose onnx checks IR versions 9 and 10 too.
"""
import json
import os
import sys
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vkgraphy_cli import MODELS, CliTestCase, encode_array, onnx_checker_errors  # noqa: E402
from vkgraphy_cli import model as model_path  # noqa: E402

EXIT_INVALID_INPUT = 3


def check_onnx(path):
    """ONNX's checker (full_check=True, the virtual environment's onnx) on a written model; returns the model."""
    error = onnx_checker_errors([path])[path]
    if error:
        raise AssertionError(f"{os.path.basename(path)} fails ONNX's checker: {error}")
    return onnx.load(path)


def op_types(model):
    return [n.op_type for n in model.graph.node]


def dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value_info.type.tensor_type.shape.dim]


class ToolTestCase(CliTestCase):
    def assert_clear_error(self, *args):
        """Exit code 3 with one error line (no continuation lines, no internal error)."""
        out = self.vkgraphy(*args, expect=EXIT_INVALID_INPUT)
        lines = out.rstrip("\n").split("\n")
        errors = [line for line in lines if line.startswith("[E]")]
        self.assertEqual(len(errors), 1, f"{args}: expected one error line:\n{out}")
        after = lines[lines.index(errors[0]) + 1:]
        self.assertTrue(all(not line.startswith(" ") for line in after), f"{args}: multi-line error:\n{out}")
        self.assertNotIn("[!]", out)
        return errors[0]

    def save_model(self, model, name):
        path = self.path(name)
        onnx.save(model, path)
        return path


def make_chain_model(ir_version=8, opset=13):
    """x[1,2,4,4] -> Conv(W) -> Relu -> Add(bias) -> Mul(scale) -> y, with attributes and weights."""
    rng = np.random.RandomState(3)
    w = numpy_helper.from_array(rng.rand(2, 2, 3, 3).astype(np.float32), "W")
    bias = numpy_helper.from_array(np.full((1, 2, 1, 1), 0.5, np.float32), "bias")
    scale = numpy_helper.from_array(np.array(2.0, np.float32), "scale")
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["conv_out"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1],
                         auto_pad="NOTSET"),
        helper.make_node("Relu", ["conv_out"], ["relu_out"], name="relu"),
        helper.make_node("Add", ["relu_out", "bias"], ["add_out"], name="add"),
        helper.make_node("Mul", ["add_out", "scale"], ["y"], name="mul"),
    ]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])], [w, bias, scale])
    if ir_version < 4:  # initializers must be graph inputs too
        graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, t.dims) for t in (w, bias, scale))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="vkgraphy-test")
    model.ir_version = ir_version
    return model


def make_shape_model():
    """x[N,3] -> Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape(x) -> y: foldable once N is fixed."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch_1d"]),
        helper.make_node("Concat", ["batch_1d", "minus_one"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
    ]
    graph = helper.make_graph(nodes, "shapes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


class InspectModelTest(ToolTestCase):
    def test_summary(self):
        out = self.vkgraphy("inspect", "model", model_path("identity.onnx"))
        self.assertIn("==== ONNX Model ====", out)
        self.assertIn("Name: test_identity | ONNX Opset: 8", out)
        self.assertIn("IR Version: 3", out)
        self.assertIn("---- 1 Graph Input(s) ----\n    {x [dtype=float32, shape=(1, 1, 2, 2)]}", out)
        self.assertIn("{y [dtype=float32, shape=(1, 1, 2, 2)]}", out)
        self.assertIn("---- 1 Node(s) ----", out)
        self.assertIn("Op counts: Identity x1", out)
        self.assertNotIn("Node 0", out)

    def test_layers_attrs_weights(self):
        path = self.save_model(make_chain_model(), "chain.onnx")
        out = self.vkgraphy("inspect", "model", path, "--show", "layers", "attrs", "weights")
        self.assertIn("Producer: vkgraphy-test", out)
        self.assertIn("---- 3 Initializer(s), 156 B ----", out)
        self.assertIn("Op counts: Add x1, Conv x1, Mul x1, Relu x1", out)
        self.assertIn("Node 0    | conv [Op: Conv]", out)
        self.assertIn("{x [dtype=float32, shape=(1, 2, 4, 4)],\n"
                      "         Initializer | W [dtype=float32, shape=(2, 2, 3, 3)]}", out)
        self.assertIn(" -> {conv_out [dtype=float32, shape=(1, 2, 4, 4)]}", out)  # from shape inference
        self.assertIn("conv.pads = [1, 1, 1, 1]", out)
        self.assertIn("conv.auto_pad = NOTSET", out)
        self.assertIn("Initializer | bias [dtype=float32, shape=(1, 2, 1, 1)] | Stats: mean=0.5", out)
        self.assertIn("Initializer | scale [dtype=float32, shape=()] | Stats: mean=2,", out)

        layers_only = self.vkgraphy("inspect", "model", path, "--show", "layers")
        self.assertIn("[Op: Relu]", layers_only)
        self.assertNotIn("Attributes", layers_only)
        self.assertNotIn("Stats:", layers_only)

    def test_unknown_ops_and_subgraphs(self):
        out = self.vkgraphy("inspect", "model", model_path("custom_op_node.onnx"), "--show", "layers")
        self.assertIn("[Op: NegPos, domain: ai.onnx.contrib]", out)
        self.assertIn("[W]", out)
        out = self.vkgraphy("inspect", "model", model_path("capability.onnx"), "--show", "layers", "attrs")
        self.assertIn("[Op: FAKE!]", out)
        out = self.vkgraphy("inspect", "model", model_path("loop.onnx"), "--show", "layers", "attrs")
        self.assertIn("---- 4 Subgraph Input(s) ----", out)
        self.assertIn("(and 4 in subgraphs)", out)
        out = self.vkgraphy("inspect", "model", model_path("tensor_attr.onnx"), "--show", "layers", "attrs", "weights")
        self.assertIn("Tensor: [dtype=", out)

    def test_weightless_and_external_weights(self):
        out = self.vkgraphy("inspect", "model", model_path("weightless.conv.onnx"), "--show", "weights")
        self.assertIn("Values unavailable", out)
        out = self.vkgraphy("inspect", "model", model_path("ext_weights.onnx"), "--external-data-dir",
                            os.path.join(MODELS, "data"), "--show", "weights")
        self.assertIn("---- 3 Initializer(s)", out)
        self.assertNotIn("Values unavailable", out)
        self.vkgraphy("inspect", "model", model_path("ext_weights_same_dir/ext_weights.onnx"))
        self.assert_clear_error("inspect", "model", model_path("ext_weights.onnx"))

    def test_input_shapes(self):
        out = self.vkgraphy("inspect", "model", model_path("dynamic_identity.onnx"))
        self.assertIn("shape=(1, 2, height, width)", out)
        out = self.vkgraphy("inspect", "model", model_path("dynamic_identity.onnx"), "--input-shapes", "X:[1,2,5,7]")
        self.assertIn("{X [dtype=float32, shape=(1, 2, 5, 7)]}", out)
        self.assertIn("{Y [dtype=float32, shape=(1, 2, 5, 7)]}", out)
        self.assert_clear_error("inspect", "model", model_path("dynamic_identity.onnx"), "--input-shapes", "Z:[1]")

    def test_all_polygraphy_fixtures(self):
        """Every fixture is shown, or refused with a clear error; nothing crashes."""
        malformed = {"bad_graph_with_dup_value_info.onnx", "bad_graph_with_multi_level_errors.onnx", "bad_graph_with_no_import_domains.onnx",
                     "bad_graph_with_no_name.onnx", "bad_graph_with_parallel_invalid_nodes.onnx", "empty.onnx",
                     "inp_dim_val_not_set.onnx", "ext_weights.onnx"}
        for name in sorted(os.listdir(MODELS)):
            if not name.endswith(".onnx"):
                continue
            with self.subTest(model=name):
                args = ("inspect", "model", model_path(name), "--show", "layers", "attrs", "weights")
                if name in malformed:
                    self.assert_clear_error(*args)
                else:
                    self.assertIn("==== ONNX Model ====", self.vkgraphy(*args))


class InspectDataTest(ToolTestCase):
    def write_outputs(self):
        def iteration(seed):
            rng = np.random.RandomState(seed)
            return {"outputs": {"y": {"values": encode_array(rng.rand(1, 1, 2, 2).astype(np.float32)),
                                      "polygraphy_class": "LazyNumpyArray"},
                                "idx": {"values": encode_array(np.arange(6, dtype=np.int64).reshape(2, 3)),
                                        "polygraphy_class": "LazyNumpyArray"}},
                    "runtime": 0.001, "runner_name": "onnxrt-runner-N0-test", "polygraphy_class": "IterationResult"}

        results = {"lst": [["onnxrt-runner-N0-test", [iteration(0), iteration(1)]],
                           ["trt-runner-N1-test", [iteration(2)]]], "polygraphy_class": "RunResults"}
        path = self.path("outputs.json")
        with open(path, "w") as f:
            json.dump(results, f)
        return path

    def test_outputs(self):
        path = self.write_outputs()
        out = self.vkgraphy("inspect", "data", path)
        self.assertIn("==== Run Results (2 runners) ====", out)
        self.assertIn("---- onnxrt-runner-N0-test (2 iterations) ----", out)
        self.assertIn("---- trt-runner-N1-test (1 iterations) ----", out)
        y = np.random.RandomState(0).rand(1, 1, 2, 2).astype(np.float32)
        self.assertIn(f"y [dtype=float32, shape=(1, 1, 2, 2)] | Stats: mean={float(y.mean()):.5g}", out)
        self.assertIn(f"median={float(np.median(y)):.5g}", out)
        self.assertIn(f"min={float(y.min()):.5g} at (0, 0, 1, 1)", out)
        self.assertIn("idx [dtype=int64, shape=(2, 3)] | Stats: mean=2.5, std-dev=1.7078", out)
        self.assertIn("use --all", out)
        self.assertNotIn("[[0 1 2]", out)

        out = self.vkgraphy("inspect", "data", path, "--all", "--show-values")
        self.assertIn("-- Iteration 1 --", out)
        self.assertIn("[[0 1 2]\n         [3 4 5]]", out)
        self.assertNotIn("use --all", out)
        out = self.vkgraphy("inspect", "data", path, "--histogram")
        self.assertIn("Num Elems", out)

    def test_inputs(self):
        path = self.path("inputs.json")
        with open(path, "w") as f:
            json.dump([{"x": encode_array(np.ones((2, 3), np.float16)), "mask": encode_array(np.array([True, False]))},
                       {"x": encode_array(np.zeros((2, 3), np.float16)),
                        "mask": encode_array(np.array([False, False]))}], f)
        out = self.vkgraphy("inspect", "data", path, "--show-values")
        self.assertIn("==== Data (2 iterations) ====", out)
        self.assertIn("x [dtype=float16, shape=(2, 3)] | Stats: mean=1, std-dev=0", out)
        self.assertIn("mask [dtype=bool, shape=(2,)]", out)
        self.assertIn("[ True False]", out)
        out = self.vkgraphy("inspect", "data", path, "-a")
        self.assertIn("x [dtype=float16, shape=(2, 3)] | Stats: mean=0,", out)

    def test_bad_data_files(self):
        truncated = self.path("truncated.json")
        with open(self.write_outputs()) as f:
            text = f.read()
        with open(truncated, "w") as f:
            f.write(text[: len(text) // 2])
        text_file = self.path("notes.txt")
        with open(text_file, "w") as f:
            f.write("not data\n")
        empty = self.path("empty.json")
        open(empty, "w").close()
        wrong_shape = self.path("wrong.json")
        with open(wrong_shape, "w") as f:
            json.dump({"lst": 3}, f)
        for path in (truncated, text_file, empty, wrong_shape, model_path("identity.onnx"), self.path("missing.json")):
            with self.subTest(path=os.path.basename(path)):
                self.assert_clear_error("inspect", "data", path)


class SurgeonExtractTest(ToolTestCase):
    def test_extract_middle_of_polygraphy_model(self):
        out_path = self.path("sub.onnx")
        self.vkgraphy("surgeon", "extract", model_path("reducable.onnx"), "--inputs", "identity_out_0:auto:auto",
                      "identity_out_2:[1]:float32", "--outputs", "add_out_4:auto", "-o", out_path)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Add"])
        self.assertEqual([i.name for i in model.graph.input], ["identity_out_0", "identity_out_2"])
        self.assertEqual([o.name for o in model.graph.output], ["add_out_4"])
        self.assertEqual(dims(model.graph.input[0]), [1])

    def test_extract_built_model(self):
        path = self.save_model(make_chain_model(), "chain.onnx")
        out_path = self.path("sub.onnx")
        out = self.vkgraphy("surgeon", "extract", path, "--inputs", "relu_out:[1,2,4,4]:float32", "--outputs",
                            "add_out:float32", "-o", out_path)
        self.assertIn("Extracted 1 of 4 node(s)", out)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Add"])
        self.assertEqual([t.name for t in model.graph.initializer], ["bias"])  # W and scale are gone
        self.assertEqual(dims(model.graph.output[0]), [1, 2, 4, 4])

        # Defaults: the model's own inputs, or its own outputs.
        self.vkgraphy("surgeon", "extract", path, "--outputs", "relu_out:auto", "-o", out_path)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Conv", "Relu"])
        self.assertEqual([t.name for t in model.graph.initializer], ["W"])
        self.vkgraphy("surgeon", "extract", path, "--inputs", "add_out:auto:auto", "-o", out_path)
        self.assertEqual(op_types(check_onnx(out_path)), ["Mul"])

    def test_extract_ir3_model_keeps_initializers_as_inputs(self):
        path = self.save_model(make_chain_model(ir_version=3, opset=8), "chain_ir3.onnx")
        out_path = self.path("sub.onnx")
        self.vkgraphy("surgeon", "extract", path, "--inputs", "relu_out:auto:auto", "--outputs", "y:auto",
                      "-o", out_path)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Add", "Mul"])
        self.assertEqual(sorted(i.name for i in model.graph.input), ["bias", "relu_out", "scale"])

    def test_extract_errors(self):
        path = self.save_model(make_chain_model(), "chain.onnx")
        out_path = self.path("sub.onnx")
        err = self.assert_clear_error("surgeon", "extract", path, "--inputs", "nope:auto:auto", "-o", out_path)
        self.assertIn("'nope'", err)
        err = self.assert_clear_error("surgeon", "extract", model_path("reducable.onnx"), "--inputs", "X0:auto:auto",
                                      "--outputs", "identity_out_6:auto", "-o", out_path)
        self.assertIn("depends on graph input 'Y0'", err)
        err = self.assert_clear_error("surgeon", "extract", path, "--inputs", "relu_out:[1,2]:float99", "-o", out_path)
        self.assertIn("float99", err)
        self.assert_clear_error("surgeon", "extract", path, "--outputs", "relu_out:auto", "y:auto", "relu_out",
                                "-o", out_path)
        self.assertFalse(os.path.exists(out_path), "a failed extract must not write its output")
        # -o is required: a usage error.
        self.vkgraphy("surgeon", "extract", path, "--outputs", "relu_out", expect=2)


class SurgeonSanitizeTest(ToolTestCase):
    def test_fold_constants(self):
        out_path = self.path("folded.onnx")
        out = self.vkgraphy("surgeon", "sanitize", model_path("const_foldable.onnx"), "--fold-constants",
                            "-o", out_path)
        self.assertIn("Folded 2 node(s)", out)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Add"])
        folded = [numpy_helper.to_array(t) for t in model.graph.initializer]
        self.assertEqual(len(folded), 1)
        np.testing.assert_array_equal(folded[0], np.full((1, 3), 3, np.float32))

        out = self.vkgraphy("surgeon", "sanitize", model_path("const_foldable.onnx"), "--fold-constants",
                            "--num-passes", "0", "-o", out_path)
        self.assertIn("Folded 0 node(s)", out)
        self.assertEqual(len(check_onnx(out_path).graph.node), 3)

    def test_fold_size_threshold(self):
        out_path = self.path("bloat.onnx")
        self.vkgraphy("surgeon", "sanitize", model_path("constant_fold_bloater.onnx"), "--fold-constants",
                      "--fold-size-threshold", "1K", "-o", out_path)
        self.assertEqual(op_types(check_onnx(out_path)), ["Tile"])
        self.vkgraphy("surgeon", "sanitize", model_path("constant_fold_bloater.onnx"), "--fold-constants",
                      "-o", out_path)
        self.assertEqual(op_types(check_onnx(out_path)), [])
        self.assert_clear_error("surgeon", "sanitize", model_path("constant_fold_bloater.onnx"), "--fold-constants",
                                "--fold-size-threshold", "lots", "-o", out_path)

    def test_override_shapes_then_fold(self):
        path = self.save_model(make_shape_model(), "shapes.onnx")
        out_path = self.path("static.onnx")
        out = self.vkgraphy("surgeon", "sanitize", path, "--override-input-shapes", "x:[4,3]", "--fold-constants",
                            "-o", out_path)
        self.assertIn("Folded 4 node(s)", out)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Reshape"])
        self.assertEqual(dims(model.graph.input[0]), [4, 3])
        self.assertEqual(dims(model.graph.output[0]), [4, 3])
        # Without fixed shapes only nothing shape-dependent folds.
        self.vkgraphy("surgeon", "sanitize", path, "--fold-constants", "-o", out_path)
        self.assertEqual(len(check_onnx(out_path).graph.node), 5)

        self.vkgraphy("surgeon", "sanitize", model_path("dynamic_identity.onnx"), "--override-input-shapes",
                      "X:[1,2,5,7]", "-o", out_path)
        model = check_onnx(out_path)
        self.assertEqual(dims(model.graph.output[0]), [1, 2, 5, 7])

    def test_override_changes_fixed_dimensions_with_a_warning(self):
        # As Polygraphy does: the option sets the input shapes, fixed dimensions included; shape inference then runs
        # on the new shapes. `run --input-shapes` only fills in dynamic dimensions, and says so.
        out_path = self.path("conv32.onnx")
        out = self.vkgraphy("surgeon", "sanitize", model_path("conv.onnx"), "--override-input-shapes",
                            "a:[2,16,32,32]", "-o", out_path)
        self.assertIn("[W] Input 'a': fixed dimension 0 changes from 1 to 2\n", out)
        self.assertIn("[W] Input 'a': fixed dimension 2 changes from 8 to 32\n", out)
        model = check_onnx(out_path)
        self.assertEqual(dims(model.graph.input[0]), [2, 16, 32, 32])
        # The 4x4 convolution without padding: 8 -> 5 before, 32 -> 29 after shape inference on the new shapes.
        self.assertEqual(dims(model.graph.output[0])[:1] + dims(model.graph.output[0])[2:], [2, 29, 29])
        out = self.vkgraphy("run", model_path("conv.onnx"), "--ref", "--input-shapes", "a:[2,16,32,32]", expect=3)
        self.assertIn("input 'a' has a fixed dimension 0 of 1, the given shape says 2", out)

    def test_cleanup_and_toposort(self):
        out_path = self.path("clean.onnx")
        out = self.vkgraphy("surgeon", "sanitize", model_path("cleanable.onnx"), "--cleanup", "-o", out_path)
        self.assertIn("Removed 1 dead node(s)", out)
        model = check_onnx(out_path)
        self.assertEqual(op_types(model), ["Dropout", "Identity"])
        self.assertEqual(len(model.graph.input), 2)

        self.vkgraphy("surgeon", "sanitize", model_path("unsorted.onnx"), "--toposort", "-o", out_path)
        model = check_onnx(out_path)
        self.assertEqual([n.output[0] for n in model.graph.node], ["identity_out_0", "identity_out_2"])

    def test_models_with_stale_shapes(self):
        out_path = self.path("res.onnx")
        self.vkgraphy("surgeon", "sanitize", model_path("residual_block.onnx"), "--fold-constants", "--cleanup",
                      "-o", out_path)
        self.assertEqual(len(check_onnx(out_path).graph.node), 15)

    def test_output_is_whole_or_nothing(self):
        out_path = self.path("keep.onnx")
        with open(out_path, "wb") as f:
            f.write(b"previous contents")
        self.assert_clear_error("surgeon", "sanitize", model_path("empty.onnx"), "-o", out_path)
        with open(out_path, "rb") as f:
            self.assertEqual(f.read(), b"previous contents")
        # A folder that cannot exist (its parent is a file) is a clear error.
        self.assert_clear_error("surgeon", "sanitize", model_path("identity.onnx"), "-o",
                                self.path("keep.onnx/sub/out.onnx"))
        self.vkgraphy("surgeon", "sanitize", model_path("identity.onnx"), expect=2)  # -o is required
        self.assertEqual(sorted(os.listdir(self.tmp)), ["keep.onnx"])  # no temporary files left
        # Missing folders are created, as Polygraphy does.
        self.vkgraphy("surgeon", "sanitize", model_path("identity.onnx"), "-o", self.path("new/dir/out.onnx"))
        self.assertTrue(os.path.exists(self.path("new/dir/out.onnx")))


class MalformedModelTest(ToolTestCase):
    """Every malformed model gives exit code 3 and one clear error line, in every tool."""

    def malformed_paths(self):
        # Shared node names are not malformed (ONNX's checker allows them): test_shared_node_names.
        paths = [model_path(n) for n in sorted(os.listdir(MODELS))
                 if n.startswith("bad_graph_") and n not in ("bad_graph_conditionally_invalid.onnx",
                                                             "bad_graph_with_duplicate_node_names.onnx")]
        paths.append(model_path("empty.onnx"))
        with open(model_path("residual_block.onnx"), "rb") as f:
            data = f.read()
        truncated = self.path("truncated.onnx")
        with open(truncated, "wb") as f:
            f.write(data[: len(data) // 3])
        text = self.path("text.onnx")
        with open(text, "w") as f:
            f.write("this is not a model\n")
        paths += [truncated, text, self.path("missing.onnx"), self.tmp]  # a folder is not a model either
        return paths

    def test_malformed_models(self):
        out_path = self.path("out.onnx")
        for path in self.malformed_paths():
            for args in (("inspect", "model", path, "--show", "layers", "attrs", "weights"),
                         ("surgeon", "sanitize", path, "--fold-constants", "--cleanup", "-o", out_path),
                         ("surgeon", "extract", path, "-o", out_path)):
                with self.subTest(tool=" ".join(args[:2]), model=os.path.basename(path)):
                    self.assert_clear_error(*args)
                    self.assertFalse(os.path.exists(out_path))

    def test_shared_node_names(self):
        # The second node named 'identical' becomes 'identical_2', with one warning, in every tool;
        # a model surgeon writes keeps the unique names.
        path = model_path("bad_graph_with_duplicate_node_names.onnx")
        out = self.vkgraphy("inspect", "model", path, "--show", "layers")
        self.assertEqual(out.count("several nodes share a name: 'identical' (2 nodes)"), 1, out)
        self.assertIn("identical_2", out)
        out_path = self.path("out.onnx")
        self.vkgraphy("surgeon", "extract", path, "--outputs", "identity_out_1:auto", "-o", out_path)
        out = self.vkgraphy("inspect", "model", out_path, "--show", "layers")
        self.assertNotIn("several nodes share a name", out)
        self.assertIn("identical_2", out)

    def test_unknown_ops_are_refused_by_surgeon(self):
        out_path = self.path("out.onnx")
        for name in ("custom_op_node.onnx", "capability.onnx", "toy_subgraph.onnx"):
            with self.subTest(model=name):
                err = self.assert_clear_error("surgeon", "sanitize", model_path(name), "-o", out_path)
                self.assertIn("does not define", err)
                self.assert_clear_error("surgeon", "extract", model_path(name), "-o", out_path)

    def test_conditionally_invalid_model_is_only_invalid_at_run_time(self):
        # Its If picks a branch whose shape breaks the MatMul only for some inputs: the
        # graph itself is well-formed, so inspect and surgeon accept it.
        self.vkgraphy("inspect", "model", model_path("bad_graph_conditionally_invalid.onnx"), "--show", "layers")
        self.vkgraphy("surgeon", "sanitize", model_path("bad_graph_conditionally_invalid.onnx"),
                      "-o", self.path("out.onnx"))

    # The fixtures whose source ONNX's checker (1.19, full_check=True) refuses, and why. The rule
    # "the sanitized model passes when its source did" says nothing about them, so for them the test
    # checks that the output loads and keeps the graph's inputs and outputs, and, where sanitize does
    # repair the model, that it passes (SANITIZED_STILL_FAIL lists those it does not repair).
    SOURCE_FAILS_CHECKER = {
        # A graph output without a shape ("Field 'shape' of 'type' is required but missing": the checker
        # wants a shape, of unknown dimensions at least, on every input and output of the main graph).
        # Sanitize writes the inferred shape, so their outputs pass.
        **dict.fromkeys(["add_with_dup_inputs.onnx", "constant_fold_bloater.onnx", "conv.onnx",
                         "identity_identity.onnx", "identity_multi_ch.onnx", "matmul.bf16.onnx", "matmul.fp16.onnx",
                         "matmul.onnx", "multi_output.onnx", "needs_constraints.onnx", "no_op_reshape.onnx",
                         "nonzero.onnx", "qdq_conv.onnx", "sparse.conv.onnx", "sparse.matmul.onnx",
                         "transpose_matmul.onnx", "unbounded_dds.onnx", "unsorted.onnx"], "an output without a shape"),
        # Graph inputs without a shape (of unknown rank): no output shape can be inferred either.
        **dict.fromkeys(["attention.onnx", "attention_same_qkv.onnx", "multi_attention.onnx"],
                        "inputs and outputs without a shape"),
        # Reshape to a shape computed from the input's (Shape -> ReduceProd): the output's shape is not inferred.
        "reshape.onnx": "an output without a shape",
        # A declared output shape that contradicts shape inference (full_check's strict shape inference):
        # Expand's output declared [2, ?, 3, ?, 5] where 0 is inferred in dimension 1; Dropout's output
        # declared [2, 1] where [1, 1] is inferred (sanitize keeps both); Sum's output declared as a scalar
        # where rank 4 is inferred (sanitize replaces it).
        "empty_tensor_expand.onnx": "an output shape against inference",
        "renamable.onnx": "an output shape against inference",
        "residual_block.onnx": "an output shape against inference",
    }
    SANITIZED_STILL_FAIL = {"attention.onnx", "attention_same_qkv.onnx", "multi_attention.onnx", "reshape.onnx",
                            "empty_tensor_expand.onnx", "renamable.onnx"}

    def test_sanitize_all_fixtures(self):
        """Every well-formed fixture survives sanitize, and the result passes ONNX's checker when the source did."""
        skip = {"ext_weights.onnx", "custom_op_node.onnx", "capability.onnx", "toy_subgraph.onnx", "empty.onnx",
                "inp_dim_val_not_set.onnx"}
        names = [name for name in sorted(os.listdir(MODELS)) if name.endswith(".onnx") and name not in skip and
                 not name.startswith(("bad_graph_", "weightless."))]
        os.mkdir(self.path("out"))
        outputs = {name: self.path(os.path.join("out", name)) for name in names}
        for name in names:
            with self.subTest(model=name):
                self.vkgraphy("surgeon", "sanitize", model_path(name), "--cleanup", "--toposort", "-o", outputs[name])
        # One checker process for all the sources and outputs.
        errors = onnx_checker_errors([model_path(name) for name in names] + [p for p in outputs.values()
                                                                                 if os.path.exists(p)])
        failing_sources = {name for name in names if errors[model_path(name)]}
        self.assertEqual(failing_sources, set(self.SOURCE_FAILS_CHECKER),
                         "sources failing ONNX's checker: " + json.dumps(
                             {name: errors[model_path(name)] for name in failing_sources}, indent=1))
        for name in names:
            if not os.path.exists(outputs[name]):
                continue  # sanitize failed: reported above
            with self.subTest(model=name):
                source, output = onnx.load(model_path(name)), onnx.load(outputs[name])
                if name in self.SANITIZED_STILL_FAIL:
                    self.assertIsNotNone(errors[outputs[name]], f"{name}: sanitize repairs it now: update the list")
                else:
                    self.assertIsNone(errors[outputs[name]], name)
                for what in ("input", "output"):
                    self.assertEqual([(v.name, v.type.tensor_type.elem_type) for v in getattr(source.graph, what)],
                                     [(v.name, v.type.tensor_type.elem_type) for v in getattr(output.graph, what)],
                                     f"{name}: graph {what}s")


if __name__ == "__main__":
    unittest.main()
