"""Models of opsets 18-23 (the forms today's exporters write) through `run --ref` and `run --vk`,
in fp32 and fp16, and `--load-inputs` fixing the shapes of a model with dynamic dimensions.
The models are made here with onnx.helper and checked with the virtual environment's onnx
(1.18), whose checker knows these opsets."""
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

from vkgraphy_cli import CliTestCase, onnx_checker_errors


def tensor(name, values, dtype=TensorProto.FLOAT):
    values = np.asarray(values)
    return helper.make_tensor(name, dtype, list(values.shape), values.flatten().tolist())


def opset21_model():
    """Every op version of opsets 18-21 whose form ONNX 1.12 does not know, on x: [N, 8, 6, 6]."""
    rng = np.random.default_rng(3)
    nodes = [
        helper.make_node("GroupNormalization", ["x", "gn_scale", "gn_bias"], ["gn"], name="gn", num_groups=2),
        helper.make_node("Gelu", ["gn"], ["gelu"], name="gelu", approximate="tanh"),
        helper.make_node("Mish", ["gelu"], ["mish"], name="mish"),
        helper.make_node("Split", ["mish"], ["s0", "s1", "s2"], name="split", axis=1, num_outputs=3),  # 3, 3, 2
        helper.make_node("ReduceMean", ["s0", "axes23"], ["mean"], name="mean", keepdims=1),
        helper.make_node("Pad", ["s2", "pads", "", "axes23"], ["pad"], name="pad", mode="reflect"),
        helper.make_node("Resize", ["s1", "", "scales"], ["resize"], name="resize", mode="linear", axes=[2, 3]),
        helper.make_node("ReduceMax", ["resize", "axes1"], ["max"], name="max", keepdims=0),
        helper.make_node("AveragePool", ["pad"], ["pool"], name="pool", kernel_shape=[3, 3], dilations=[2, 2]),
        helper.make_node("Cast", ["pool"], ["pool32"], name="cast", to=TensorProto.FLOAT, saturate=1),
    ]
    inits = [
        tensor("gn_scale", rng.uniform(0.5, 1.5, 8)),
        tensor("gn_bias", rng.uniform(-0.5, 0.5, 8)),
        tensor("axes23", [2, 3], TensorProto.INT64),
        tensor("axes1", [1], TensorProto.INT64),
        tensor("pads", [1, 2, 1, 2], TensorProto.INT64),
        tensor("scales", [2.0, 1.5]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 6, 6])
    # The shapes vkgraphy's rules must infer (Split's uneven parts: 3, 3 and 2 channels).
    outputs = [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["N", 3, 1, 1]),
               helper.make_tensor_value_info("max", TensorProto.FLOAT, ["N", 12, 9]),
               helper.make_tensor_value_info("pool32", TensorProto.FLOAT, ["N", 2, 4, 6])]
    graph = helper.make_graph(nodes, "opset21", [x], outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


def opset23_model():
    """RMSNormalization (opset 23) over the last axis of x: [2, 5, 16]."""
    scale = tensor("scale", np.linspace(0.5, 1.5, 16))
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="rms", epsilon=1e-5)
    graph = helper.make_graph([node], "opset23", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 16])], [scale])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 11
    return m


class TestNewOpsets(CliTestCase):
    def setUp(self):
        super().setUp()
        self.m21 = self.path("opset21.onnx")
        self.m23 = self.path("opset23.onnx")
        onnx.save(opset21_model(), self.m21)
        onnx.save(opset23_model(), self.m23)

    def test_models_are_valid_onnx(self):
        self.assertEqual(onnx_checker_errors([self.m21, self.m23]), {self.m21: None, self.m23: None})

    def test_import_says_which_shape_rules_it_used(self):
        out = self.vkgraphy("run", self.m21, "--ref", "--input-shapes", "x:[2,8,6,6]")
        for version in ("GroupNormalization-21", "Gelu-20", "Mish-18", "Split-18", "ReduceMean-18", "Pad-18",
                        "Resize-18", "ReduceMax-18", "AveragePool-19", "Cast-19"):
            self.assertIn(version, out)
        self.assertIn("ONNX's for the other nodes", out)

    def test_fp32_and_fp16_engines_match_the_reference(self):
        self.vkgraphy("run", self.m21, "--ref", "--input-shapes", "x:[2,8,6,6]", "--save-inputs", self.path("in.json"))
        for extra in ([], ["--fp16", "--atol", "0.02", "--rtol", "0"]):
            with self.subTest(precision="fp16" if extra else "fp32"):
                out = self.vkgraphy("run", self.m21, "--vk", "--ref", "--load-inputs", self.path("in.json"), *extra)
                self.assertIn("PASSED | All outputs matched", out)
        for extra in ([], ["--fp16", "--atol", "0.02", "--rtol", "0"]):
            out = self.vkgraphy("run", self.m23, "--vk", "--ref", *extra)
            self.assertIn("PASSED | All outputs matched", out)

    def test_load_inputs_fixes_the_builder_shapes(self):
        self.vkgraphy("run", self.m21, "--ref", "--input-shapes", "x:[3,8,6,6]", "--save-inputs", self.path("in.json"))
        out = self.vkgraphy("run", self.m21, "--vk", "--ref", "--load-inputs", self.path("in.json"), "-v")
        self.assertIn("PASSED | All outputs matched", out)
        self.assertNotIn("needs static shapes", out)
        # --input-shapes that agree (or leave the dimension open) are fine; one that disagrees names the input.
        self.vkgraphy("run", self.m21, "--vk", "--load-inputs", self.path("in.json"), "--input-shapes", "x:[-1,8,6,6]")
        out = self.vkgraphy("run", self.m21, "--vk", "--load-inputs", self.path("in.json"), "--input-shapes",
                            "x:[2,8,6,6]", expect=3)
        self.assertIn("input 'x': --input-shapes gives [2, 8, 6, 6] but the --load-inputs data has shape [3, 8, 6, 6]",
                      out)


if __name__ == "__main__":
    unittest.main()
