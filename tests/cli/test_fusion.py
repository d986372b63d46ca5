"""Graph optimization on lavapipe (validation layer on): no-ops removed as aliases, bias and
BatchNormalization folded into Conv/ConvTranspose/Gemm/MatMul, activations fused into their
producers (the ONNX Gelu op needs opset 20, beyond Debian's onnx 1.12: its Erf pattern is tested), elementwise chains,
fused layers named after their nodes, Concat inputs written in place into its output,
every fused pattern against the reference backend, --no-fusion, marked tensors kept, and replay
files and --layer-precisions speaking in ONNX node names. Models are made here with onnx.helper."""
import json
import re
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from vkgraphy_cli import BIN, CliTestCase, model

rng = np.random.default_rng(3)


def const(name, shape, scale=0.5, offset=0.0):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale + offset).astype(np.float32), name)


def bn_params(prefix, channels):
    return [const(f"{prefix}.scale", [channels], 0.5, 1.0), const(f"{prefix}.bias", [channels]),
            const(f"{prefix}.mean", [channels]),
            numpy_helper.from_array(rng.uniform(0.5, 2.0, [channels]).astype(np.float32), f"{prefix}.var")]


def bn_node(name, x, y):
    return helper.make_node("BatchNormalization", [x, f"{name}.scale", f"{name}.bias", f"{name}.mean", f"{name}.var"],
                            [y], name=name, epsilon=1e-3)


def make_model(nodes, inits, x_shape, y_name, y_shape=None, path=None, opset=13):
    graph = helper.make_graph(nodes, "fusion", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, y_shape)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(onnx.shape_inference.infer_shapes(m), path)
    return path


class TestFusion(CliTestCase):
    def run_vk(self, path, *extra):
        out = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--builder-optimization-level", "0", "--atol", "1e-4",
                            "--rtol", "1e-4", *extra)
        self.assertIn("All outputs matched", out)
        return out

    def conv_bn_bias_relu(self):
        nodes = [helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                 bn_node("bn", "c", "n"),
                 helper.make_node("Add", ["n", "bias"], ["a"], name="bias"),
                 helper.make_node("Relu", ["a"], ["y"], name="relu")]
        inits = [const("conv.w", [6, 4, 3, 3]), const("conv.b", [6]), const("bias", [1, 6, 1, 1]), *bn_params("bn", 6)]
        return make_model(nodes, inits, [1, 4, 8, 8], "y", path=self.path("conv.onnx"))

    def test_conv_bn_and_bias_fold_into_one_layer_named_after_its_nodes(self):
        path = self.conv_bn_bias_relu()
        out = self.run_vk(path, "--save-tactics", "fused.json")
        self.assertIn("Fused 4 nodes into layer 'conv+bn+bias+relu' (Conv)", out)
        self.assertIn("1 layers (0 nodes folded, 0 no-ops removed, 3 fused", out)
        fused = json.load(open(self.path("fused.json")))["layers"]
        self.assertEqual([(l["name"], l.get("nodes")) for l in fused],
                         [("conv+bn+bias+relu", ["conv", "bn", "bias", "relu"])])
        out = self.run_vk(path, "--no-fusion")
        self.assertIn("4 layers (0 nodes folded, 0 no-ops removed, 0 fused", out)
        self.assertNotIn("Fused", out)
        # The engine and its inspection name the fused nodes.
        self.vkgraphy("convert", path, "-o", "m.engine", "--builder-optimization-level", "0")
        out = self.vkgraphy("inspect", "model", self.path("m.engine"), "--show", "layers")
        self.assertIn("conv+bn+bias+relu [Op: Conv]", out)
        self.assertIn("Fused nodes: conv, bn, bias, relu", out)
        out = self.vkgraphy("run", self.path("m.engine"), "--vk", "--profile", "--iterations", "2")
        self.assertIn("conv+bn+bias+relu", out)

    def test_conv_transpose_with_groups_and_gemm_fold_bn(self):
        nodes = [helper.make_node("ConvTranspose", ["x", "ct.w"], ["c"], name="ct", group=2, strides=[2, 2]),
                 bn_node("bn", "c", "y")]
        inits = [const("ct.w", [4, 3, 3, 3]), *bn_params("bn", 6)]
        out = self.run_vk(make_model(nodes, inits, [1, 4, 5, 5], "y", path=self.path("ct.onnx")))
        self.assertIn("Fused 2 nodes into layer 'ct+bn' (ConvTranspose)", out)
        for trans_b in (0, 1):
            with self.subTest(trans_b=trans_b):
                nodes = [helper.make_node("Gemm", ["x", "g.b", "g.c"], ["g"], name="gemm", transB=trans_b, alpha=0.5,
                                          beta=2.0),
                         bn_node("bn", "g", "y")]
                inits = [const("g.b", [7, 5] if trans_b else [5, 7]), const("g.c", [1, 7]), *bn_params("bn", 7)]
                out = self.run_vk(make_model(nodes, inits, [3, 5], "y", path=self.path(f"gemm{trans_b}.onnx")))
                self.assertIn("Fused 2 nodes into layer 'gemm+bn' (Gemm)", out)

    def test_every_activation_fuses_into_conv_and_matmul_and_matches_the_reference(self):
        def activation(kind, x, y):
            """Nodes and initializers applying `kind` to x, writing y."""
            if kind in ("Relu", "Sigmoid", "Tanh", "HardSwish"):
                return [helper.make_node(kind, [x], [y], name="act")], []
            if kind == "LeakyRelu":
                return [helper.make_node(kind, [x], [y], name="act", alpha=0.1)], []
            if kind == "HardSigmoid":
                return [helper.make_node(kind, [x], [y], name="act", alpha=0.3, beta=0.4)], []
            if kind == "Clip":
                return ([helper.make_node(kind, [x, "lo", "hi"], [y], name="act")],
                        [numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
                         numpy_helper.from_array(np.array(0.5, np.float32), "hi")])
            if kind in ("x*HardSigmoid", "x*Sigmoid"):
                gate = kind[2:]
                attrs = {"alpha": 0.25, "beta": 0.5} if gate == "HardSigmoid" else {}
                return [helper.make_node(gate, [x], ["gate"], name="gate", **attrs),
                        helper.make_node("Mul", [x, "gate"], [y], name="act")], []
            assert kind == "GELU"
            return ([helper.make_node("Div", [x, "sqrt2"], ["g.s"], name="g.s"),
                     helper.make_node("Erf", ["g.s"], ["g.erf"], name="g.erf"),
                     helper.make_node("Add", ["g.erf", "one"], ["g.p1"], name="g.p1"),
                     helper.make_node("Mul", [x, "g.p1"], ["g.m"], name="g.m"),
                     helper.make_node("Mul", ["half", "g.m"], [y], name="act")],
                    [numpy_helper.from_array(np.array(2 ** 0.5, np.float32), "sqrt2"),
                     numpy_helper.from_array(np.array(1.0, np.float32), "one"),
                     numpy_helper.from_array(np.array(0.5, np.float32), "half")])

        for kind in ("Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "GELU",
                     "x*HardSigmoid", "x*Sigmoid"):
            for head in ("Conv", "MatMul"):
                with self.subTest(kind=kind, head=head):
                    act_nodes, act_inits = activation(kind, "h", "y")
                    if head == "Conv":
                        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["h"], name="head", pads=[1, 1, 1, 1])]
                        inits, x_shape = [const("w", [5, 3, 3, 3]), const("b", [5])], [1, 3, 6, 6]
                    else:
                        nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="head"),
                                 helper.make_node("Add", ["mm", "b"], ["h"], name="bias")]
                        inits, x_shape = [const("w", [8, 12]), const("b", [12])], [2, 3, 8]
                    path = make_model(nodes + act_nodes, inits + act_inits, x_shape, "y",
                                      path=self.path(f"{head}_{kind}.onnx"), opset=14)
                    out = self.run_vk(path, "--val-range", "x:[-3,3]")
                    held = len(nodes) + len(act_nodes)
                    self.assertIn(f"Fused {held} nodes into layer 'head+", out)
                    self.assertIn("1 layers (", out)
        # fp16 tactics apply the activation too (GELU after a MatMul: fp16 storage and arithmetic).
        out = self.run_vk(self.path("MatMul_GELU.onnx"), "--val-range", "x:[-3,3]", "--fp16", "--tactics-deny",
                          "*.f32", "--atol", "2e-2", "--rtol", "2e-2")
        self.assertIn("Fused 7 nodes", out)

    def test_a_float_binary_op_absorbs_its_activation_and_an_integer_one_does_not(self):
        # A residual Add + Relu (and a Mul + x*Sigmoid) run as one dispatch.
        nodes = [helper.make_node("Add", ["x", "r"], ["s"], name="add"),
                 helper.make_node("Relu", ["s"], ["t"], name="relu"),
                 helper.make_node("Mul", ["t", "k"], ["u"], name="mul"),
                 helper.make_node("Sigmoid", ["u"], ["g"], name="gate"),
                 helper.make_node("Mul", ["u", "g"], ["y"], name="silu")]
        inits = [const("r", [2, 3, 8]), const("k", [8])]
        out = self.run_vk(make_model(nodes, inits, [2, 3, 8], "y", path=self.path("binary.onnx")), "--val-range",
                          "x:[-2,2]")
        self.assertIn("Fused 2 nodes into layer 'add+relu' (Add)", out)
        self.assertIn("Fused 3 nodes into layer 'mul+gate+silu' (Mul)", out)
        self.assertIn("2 layers (", out)
        # Integer data: the Relu stays a layer of its own.
        graph = helper.make_graph([helper.make_node("Add", ["x", "one"], ["s"], name="add"),
                                   helper.make_node("Relu", ["s"], ["y"], name="relu")], "int",
                                  [helper.make_tensor_value_info("x", TensorProto.INT32, [6])],
                                  [helper.make_tensor_value_info("y", TensorProto.INT32, [6])],
                                  [numpy_helper.from_array(np.array(-3, np.int32), "one")])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        m.ir_version = 8
        onnx.save(onnx.shape_inference.infer_shapes(m), self.path("int.onnx"))
        out = self.run_vk(self.path("int.onnx"))
        self.assertNotIn("Fused", out)

    def test_elementwise_chains_run_as_one_dispatch(self):
        # A squeeze-excitation gate (x * per-channel scale + residual, then Relu) and a chain whose
        # operand comes first (2 / (t - r), r a full-shape constant the Relu's epilogue cannot take):
        # two layers.
        nodes = [helper.make_node("Mul", ["x", "s"], ["m"], name="scale"),
                 helper.make_node("Add", ["x", "m"], ["a"], name="residual"),
                 helper.make_node("Relu", ["a"], ["t"], name="relu"),
                 helper.make_node("Sub", ["t", "one"], ["u"], name="sub"),
                 helper.make_node("Div", ["two", "u"], ["y"], name="div")]
        inits = [const("s", [1, 4, 1, 1]), const("one", [1, 4, 6, 6], 0.5, 1.5),
                 numpy_helper.from_array(np.array(2.0, np.float32), "two")]
        path = make_model(nodes, inits, [1, 4, 6, 6], "y", path=self.path("chain.onnx"))
        out = self.run_vk(path, "--val-range", "x:[-2,2]")
        self.assertIn("Fused 3 nodes into layer 'scale+residual+relu' (Mul)", out)
        self.assertIn("Fused 2 nodes into layer 'sub+div' (Sub)", out)
        self.assertIn("2 layers (", out)
        self.assertIn("5 layers (", self.run_vk(path, "--val-range", "x:[-2,2]", "--no-fusion"))
        # An operand computed after the first op is chained too (the layer runs where its last node
        # stood), a third op is, and one that broadcasts is not.
        nodes = [helper.make_node("Mul", ["x", "s"], ["m"], name="scale"),
                 helper.make_node("Exp", ["x"], ["e"], name="exp"),
                 helper.make_node("Add", ["m", "e"], ["a"], name="late"),
                 helper.make_node("Mul", ["a", "x"], ["b"], name="mul"),
                 helper.make_node("Add", ["b", "s"], ["y"], name="bias")]
        out = self.run_vk(make_model(nodes, [const("s", [1, 4, 1, 1])], [1, 4, 6, 6], "y", path=self.path("no.onnx")))
        self.assertIn("Fused 3 nodes into layer 'scale+late+mul' (Mul)", out)
        self.assertIn("3 layers (", out)
        # Chained operands that are the first op's own operands (A again, then B again: read once each),
        # along rows of 8 (eight wide) and of 75 elements (four wide, then one at a time).
        for shape in ([1, 4, 6, 6], [1, 3, 5, 5]):
            with self.subTest(shape=shape):
                nodes = [helper.make_node("Mul", ["x", "r"], ["m"], name="prod"),
                         helper.make_node("Sub", ["m", "x"], ["d"], name="minus_x"),
                         helper.make_node("Div", ["r", "d"], ["y"], name="r_over")]
                path = make_model(nodes, [const("r", shape, 0.5, 3.0)], shape, "y", path=self.path("again.onnx"))
                out = self.run_vk(path, "--val-range", "x:[0.5,1]")
                self.assertIn("Fused 3 nodes into layer 'prod+minus_x+r_over' (Mul)", out)
                self.assertIn("1 layers (", out)
        # An affine chain, then HardSwish written out (x * Clip(x + 3, 0, 6) / 6, as paddle2onnx exports it): one layer.
        nodes = [helper.make_node("Mul", ["x", "s"], ["m"], name="scale"),
                 helper.make_node("Add", ["m", "b"], ["a"], name="shift"),
                 helper.make_node("Add", ["a", "three"], ["p"], name="plus3"),
                 helper.make_node("Clip", ["p", "zero", "six"], ["c"], name="clip"),
                 helper.make_node("Mul", ["a", "c"], ["g"], name="gate"),
                 helper.make_node("Div", ["g", "six"], ["y"], name="div6")]
        scalars = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
                   (("three", 3.0), ("zero", 0.0), ("six", 6.0))]
        path = make_model(nodes, [const("s", [1]), const("b", [1, 4, 6, 6]), *scalars], [1, 4, 6, 6], "y",
                          path=self.path("hswish.onnx"))
        out = self.run_vk(path, "--val-range", "x:[-8,8]")
        self.assertIn("Fused 6 nodes into layer 'scale+shift+plus3+clip+gate+div6' (Mul)", out)
        self.assertIn("1 layers (", out)

    def test_nearest_upsamplings_are_read_by_the_binary_op_that_consumes_them(self):
        # An FPN's top-down path: Add(lateral, Resize(coarser)), and the mirror Sub(Resize(x), y) with a
        # chained Mul and an activation; factors 2 (two loads per four outputs), 4 (one), 3 (the general
        # path) and 1 along the rows, output rows of 16 (eight wide), 12 (four wide) and 6 (one element at
        # a time); in fp32 and fp16.
        def resize(name, x, y, scales, **attrs):
            return helper.make_node("Resize", [x, "", name + ".scales"], [y], name=name, mode="nearest", **attrs)

        def scales(name, values):
            return numpy_helper.from_array(np.array(values, np.float32), name + ".scales")

        cases = [([1, 4, 8, 8], [1, 1, 2, 2], {}), ([1, 3, 3, 4], [1, 1, 4, 4], {}), ([2, 2, 4, 4], [1, 1, 3, 3], {}),
                 ([1, 2, 3, 8], [1, 1, 2, 1], {}),
                 ([1, 4, 5, 3], [1, 1, 1, 2], {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"})]
        for shape, factors, attrs in cases:
            with self.subTest(shape=shape, factors=factors):
                out = [s * f for s, f in zip(shape, factors)]
                nodes = [resize("up", "x", "u", factors, **attrs),
                         helper.make_node("Add", ["lateral", "u"], ["a"], name="top_down"),
                         resize("up2", "x", "v", factors, **attrs),
                         helper.make_node("Sub", ["v", "a"], ["d"], name="diff"),
                         helper.make_node("Mul", ["d", "k"], ["m"], name="scale"),
                         helper.make_node("Relu", ["m"], ["y"], name="relu")]
                inits = [scales("up", factors), scales("up2", factors), const("lateral", out), const("k", out)]
                path = make_model(nodes, inits, shape, "y", path=self.path("fpn.onnx"))
                ran = self.run_vk(path)
                self.assertIn("Fused 2 nodes into layer 'up+top_down' (Add)", ran)
                self.assertIn("Fused 4 nodes into layer 'up2+diff+scale+relu' (Sub)", ran)
                self.assertIn("2 layers (", ran)
                self.assertIn("6 layers (", self.run_vk(path, "--no-fusion"))
                fp16 = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--fp16", "--atol", "2e-2", "--rtol", "2e-2",
                                     "--tactics-allow", "binary.*.f16")
                self.assertIn("2 layers (", fp16)
                self.assertRegex(fp16, r"Layer 'up\+top_down' \(Add\): binary\.(vec4|scalar)\.f16")
        # PP-OCRv4 det's neck: a gated lateral x * s + x, then + Resize(coarser), the coarser level
        # computed after the gate or before it: one layer that runs where its last node stood, reading
        # the Resize's input through the factors as its second chained operand; factors 2, 4, 3 and 1
        # along rows of 8, 16, 12 and 6 (eight wide, four wide, the general path, one at a time).
        for shape, fh, fw in (([1, 4, 8, 8], 2, 2), ([1, 3, 12, 16], 4, 4), ([2, 2, 12, 12], 3, 3),
                              ([1, 4, 5, 6], 1, 2), ([1, 2, 6, 8], 2, 1)):
            for coarse_first in (False, True):
                with self.subTest(shape=shape, factors=(fh, fw), coarse_first=coarse_first):
                    gate = [helper.make_node("Mul", ["x", "s"], ["m"], name="gate"),
                            helper.make_node("Add", ["x", "m"], ["a"], name="residual")]
                    coarse = [helper.make_node("MaxPool", ["x"], ["c"], name="coarse", kernel_shape=[fh, fw],
                                               strides=[fh, fw]),
                              resize("up", "c", "u", [1, 1, fh, fw])]
                    nodes = [*coarse, *gate] if coarse_first else [*gate, *coarse]
                    nodes.append(helper.make_node("Add", ["a", "u"], ["y"], name="top_down"))
                    inits = [scales("up", [1, 1, fh, fw]), const("s", [1, shape[1], 1, 1])]
                    path = make_model(nodes, inits, shape, "y", path=self.path("neck.onnx"))
                    ran = self.run_vk(path)
                    self.assertIn("Fused 4 nodes into layer 'gate+residual+up+top_down' (Mul)", ran)
                    self.assertIn("2 layers (", ran)
                    self.assertIn("5 layers (", self.run_vk(path, "--no-fusion"))
                    fp16 = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--fp16", "--atol", "2e-2", "--rtol",
                                         "2e-2", "--tactics-allow", "binary.*.f16", "pool.*.f16")
                    self.assertRegex(fp16, r"Layer 'gate\+residual\+up\+top_down' \(Mul\): binary\.(vec4|scalar)\.f16")
                    self.assertIn("All outputs matched", fp16)
        # Not fused: a Resize read twice, one whose output the user reads, a linear one, a downsampling,
        # one that resizes a channel axis, and one whose other operand broadcasts.
        nodes = [resize("twice", "x", "t", [1, 1, 2, 2]),
                 helper.make_node("Add", ["t", "lateral"], ["a"], name="a1"),
                 helper.make_node("Mul", ["t", "a"], ["b"], name="m1"),
                 resize("linear", "x", "l", [1, 1, 2, 2]),
                 helper.make_node("Add", ["b", "l"], ["c"], name="a2"),
                 resize("chan", "x", "h", [1, 2, 1, 1]),
                 helper.make_node("ReduceMean", ["h"], ["hm"], name="rm", axes=[1], keepdims=1),
                 resize("small", "hm", "hs", [1, 1, 2, 2]),
                 resize("bcast", "x", "g", [1, 1, 2, 2]),
                 helper.make_node("Add", ["g", "row"], ["gr"], name="a3"),
                 helper.make_node("Add", ["c", "hs"], ["ch"], name="a4"),
                 helper.make_node("Add", ["ch", "gr"], ["y"], name="a5")]
        nodes[3].attribute[0].s = b"linear"
        inits = [scales("twice", [1, 1, 2, 2]), scales("linear", [1, 1, 2, 2]), scales("chan", [1, 2, 1, 1]),
                 scales("small", [1, 1, 2, 2]), scales("bcast", [1, 1, 2, 2]), const("lateral", [1, 4, 8, 8]),
                 const("row", [1, 1, 1, 8])]
        ran = self.run_vk(make_model(nodes, inits, [1, 4, 4, 4], "y", path=self.path("not.onnx")))
        for layer in ("twice+", "linear+", "chan+", "small+", "bcast+"):
            self.assertNotIn(f"into layer '{layer}", ran)
        self.assertIn("9 layers (", ran)  # two chains: a1+m1+a2, a3+a5

    def test_squeeze_excitation_gates_run_as_one_layer(self):
        # GlobalAveragePool -> pointwise Conv (+ what it absorbs) -> pointwise Conv (+ what it absorbs):
        # one layer. Planes of 35 (scalar reads) and 64 (vec4), channels and hidden channels in vec4s
        # (12 and 4) or not (10 and 3), batch 2, a BatchNormalization folded into the first Conv with
        # a Clip after it, and a scale and shift after the gate's HardSigmoid (x * (1 + s), as
        # PP-OCRv4 det's neck writes it, with the shift after the activation).
        def gate(channels, hidden, hidden_act, tail):
            nodes = [helper.make_node("GlobalAveragePool", ["x"], ["g"], name="gap"),
                     helper.make_node("Conv", ["g", "w1", "b1"], ["f1"], name="reduce"), *hidden_act,
                     helper.make_node("Conv", ["h", "w2"], ["f2"], name="expand"), *tail,
                     helper.make_node("Mul", ["x", "s"], ["y"], name="scale")]
            return nodes, [const("w1", [hidden, channels, 1, 1]), const("b1", [hidden]),
                           const("w2", [channels, hidden, 1, 1]), *bn_params("bn", hidden),
                           numpy_helper.from_array(np.array(1.0, np.float32), "one")]

        relu_hsig = gate(12, 4, [helper.make_node("Relu", ["f1"], ["h"], name="relu")],
                         [helper.make_node("HardSigmoid", ["f2"], ["s"], name="hsig", alpha=0.2, beta=0.5)])
        path = make_model(*relu_hsig, [2, 12, 5, 7], "y", path=self.path("se.onnx"))
        out = self.run_vk(path)
        self.assertIn("Fused 5 nodes into layer 'gap+reduce+relu+expand+hsig' (GlobalAveragePool)", out)
        self.assertIn("Layer 'gap+reduce+relu+expand+hsig' (GlobalAveragePool): global_pool.gate.f32", out)
        self.assertIn("2 layers (", out)
        self.assertIn("6 layers (", self.run_vk(path, "--no-fusion"))
        # Each form in fp32 and fp16: one dispatch per image (gate), or the planes averaged first by
        # many invocations (gate_split) or a workgroup each (gate_wg, the GPU form), then the gate,
        # or the averages, then each pointwise Conv as a dispatch of its own (gate_fc).
        for form in ("gate", "gate_split", "gate_wg", "gate_fc"):
            self.assertIn(f"(GlobalAveragePool): global_pool.{form}.f32",
                          self.run_vk(path, "--tactics-allow", f"global_pool.{form}.f32", "binary.*"))
            fp16 = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--fp16", "--atol", "2e-2", "--rtol", "2e-2",
                                 "--tactics-allow", f"global_pool.{form}.f16acc32", "binary.*.f16")
            self.assertIn(f"(GlobalAveragePool): global_pool.{form}.f16acc32", fp16)
            self.assertIn("All outputs matched", fp16)
        bn_clip_shift = gate(10, 3, [bn_node("bn", "f1", "n"), helper.make_node("Clip", ["n", "", "one"], ["h"],
                                                                                   name="clip")],
                             [helper.make_node("HardSigmoid", ["f2"], ["hs"], name="hsig", alpha=0.2, beta=0.5),
                              helper.make_node("Add", ["hs", "one"], ["s"], name="plus1")])
        se2 = make_model(*bn_clip_shift, [1, 10, 8, 8], "y", path=self.path("se2.onnx"))
        out = self.run_vk(se2)
        self.assertIn("Fused 7 nodes into layer 'gap+reduce+bn+clip+expand+hsig+plus1' (GlobalAveragePool)", out)
        self.assertIn("2 layers (", out)
        for tactic in ("global_pool.gate_split.f32", "global_pool.gate_wg.f32", "global_pool.gate_fc.f32"):  # vec4s
            self.assertIn(f"(GlobalAveragePool): {tactic}", self.run_vk(se2, "--tactics-allow", tactic, "binary.*"))
        # Not a gate: the pooled tensor read twice or by the user, a 3x3 Conv, a single Conv.
        nodes, inits = relu_hsig
        twice = [*nodes, helper.make_node("Add", ["y", "g"], ["z"], name="reuse")]
        out = self.run_vk(make_model(twice, inits, [2, 12, 5, 7], "z", path=self.path("twice.onnx")))
        self.assertIn("Layer 'gap' (GlobalAveragePool): global_pool.row", out)
        out = self.run_vk(path, "--vk-outputs", "y", "g", "--onnx-outputs", "y", "g")
        self.assertIn("Layer 'gap' (GlobalAveragePool): global_pool.row", out)
        self.assertIn("PASSED | Output: 'g'", out)
        wide = [helper.make_node("Conv", ["g", "w3"], ["f1"], name="reduce", pads=[1, 1, 1, 1]), *nodes[2:]]
        out = self.run_vk(make_model([nodes[0], *wide], [const("w3", [4, 12, 3, 3]), *inits[2:]], [2, 12, 5, 7], "y",
                                     path=self.path("wide.onnx")))
        self.assertIn("Layer 'gap' (GlobalAveragePool): global_pool.row", out)
        single = [nodes[0], helper.make_node("Conv", ["g", "w2"], ["f2"], name="expand"), *nodes[4:]]
        out = self.run_vk(make_model(single, [const("w2", [12, 12, 1, 1])], [2, 12, 5, 7], "y",
                                     path=self.path("single.onnx")))
        self.assertIn("Layer 'gap' (GlobalAveragePool): global_pool.row", out)
        self.assertIn("Fused 2 nodes into layer 'expand+hsig' (Conv)", out)

    def test_written_out_layer_norms_run_as_layer_normalization(self):
        # LayerNormalization as exporters write it out (PP-OCRv4 rec, older opsets): ReduceMean, Sub,
        # Pow 2 (or Mul by itself), ReduceMean, Add eps, Sqrt, Div, then a scale and a shift.
        def norm(axes, square, affine, opset, x_shape):
            def mean(name, x, y):
                if opset >= 18:
                    return helper.make_node("ReduceMean", [x, "axes"], [y], name=name)
                return helper.make_node("ReduceMean", [x], [y], name=name, axes=axes)
            nodes = [mean("mean", "x", "m"), helper.make_node("Sub", ["x", "m"], ["d"], name="center"),
                     helper.make_node("Pow", ["d", "two"], ["sq"], name="square") if square == "pow" else
                     helper.make_node("Mul", ["d", "d"], ["sq"], name="square"),
                     mean("var", "sq", "v"), helper.make_node("Add", ["v", "eps"], ["ve"], name="add_eps"),
                     helper.make_node("Sqrt", ["ve"], ["s"], name="std"),
                     helper.make_node("Div", ["d", "s"], ["n" if affine else "y"], name="normalize")]
            normalized = x_shape[len(x_shape) - len(axes):]
            inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
                     numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
                     numpy_helper.from_array(np.array(axes, np.int64), "axes")]
            if affine:
                nodes += [helper.make_node("Mul", ["n", "gamma"], ["g"], name="scale"),
                          helper.make_node("Add", ["g", "beta"], ["y"], name="shift")]
                # gamma broadcast along the first normalized axis, beta over all of them
                inits += [const("gamma", [1] + normalized[1:], 0.5, 1.0), const("beta", normalized)]
            return make_model(nodes, inits, x_shape, "y", path=self.path(f"ln{opset}{square}.onnx"), opset=opset)

        path = norm([-1], "pow", True, 13, [2, 5, 12])
        out = self.run_vk(path)
        self.assertIn("Fused 9 nodes into layer 'mean+center+square+var+add_eps+std+normalize+scale+shift' "
                      "(LayerNormalization)", out)
        self.assertIn("1 layers (", out)
        fp16 = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--fp16", "--atol", "2e-2", "--rtol", "2e-2")
        self.assertIn("(LayerNormalization)", fp16)
        self.assertIn("All outputs matched", fp16)
        self.assertIn("9 layers (", self.run_vk(path, "--no-fusion"))
        # Two normalized axes (opset 18: axes as an input), x * x, no scale or shift.
        out = self.run_vk(norm([2, 3], "mul", False, 18, [2, 3, 4, 6]))
        self.assertIn("Fused 7 nodes into layer 'mean+center+square+var+add_eps+std+normalize' (LayerNormalization)",
                      out)
        # Not a layer norm: the variance read by the user, or axes that are not the last ones.
        out = self.run_vk(path, "--vk-outputs", "y", "v", "--onnx-outputs", "y", "v")
        self.assertNotIn("(LayerNormalization)", out)
        self.assertIn("PASSED | Output: 'v'", out)
        out = self.run_vk(norm([1], "pow", True, 13, [2, 5, 12]))
        self.assertNotIn("(LayerNormalization)", out)

    def test_two_upsampling_conv_transposes_run_as_one_layer(self):
        # A text detector's head: ConvTranspose (kernel == strides) + BatchNormalization + Relu, then
        # another ConvTranspose + Sigmoid: one layer, the larger tensor between them never written.
        # 2x2 then 2x2 (the second's pairs stored together) and 2x1 then 1x3 (single stores), two
        # output channels, batch 2, 8 channels between them (four at a time) and 6 (one at a time);
        # every precision against the reference.
        def head(k1, k2, c, c2, path, c1=8):
            nodes = [helper.make_node("ConvTranspose", ["x", "w1", "b1"], ["t"], name="up1", kernel_shape=k1,
                                      strides=k1),
                     bn_node("bn", "t", "n"), helper.make_node("Relu", ["n"], ["r"], name="relu"),
                     helper.make_node("ConvTranspose", ["r", "w2", "b2"], ["u"], name="up2", kernel_shape=k2,
                                      strides=k2),
                     helper.make_node("Sigmoid", ["u"], ["y"], name="sig")]
            inits = [const("w1", [c, c1, *k1]), const("b1", [c1]), *bn_params("bn", c1), const("w2", [c1, c2, *k2]),
                     const("b2", [c2])]
            return make_model(nodes, inits, [2, c, 3, 8], "y", path=self.path(path)), nodes, inits

        for k1, k2, c2, c1 in (([2, 2], [2, 2], 1, 6), ([2, 2], [2, 2], 1, 8), ([2, 1], [1, 3], 2, 8)):
            path, nodes, inits = head(k1, k2, 6, c2, f"head{k1[1]}{k2[1]}{c1}.onnx", c1)
            out = self.run_vk(path)
            self.assertIn("Fused 5 nodes into layer 'up1+bn+relu+up2+sig' (ConvTranspose)", out)
            self.assertIn("Layer 'up1+bn+relu+up2+sig' (ConvTranspose): conv.transpose_pair.f32", out)
            self.assertIn("1 layers (", out)
            for arith in ("f16", "f16acc32"):
                fp16 = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--fp16", "--atol", "2e-2", "--rtol", "2e-2",
                                     "--tactics-allow", f"conv.transpose_pair.{arith}")
                self.assertIn(f"(ConvTranspose): conv.transpose_pair.{arith}", fp16)
                self.assertIn("All outputs matched", fp16)
        # Not a pair: the tensor between them marked by the user, or a first ConvTranspose whose
        # kernel overlaps (3x3 stride 2).
        out = self.run_vk(path, "--vk-outputs", "y", "r", "--onnx-outputs", "y", "r")
        self.assertIn("Layer 'up1+bn+relu' (ConvTranspose): conv.transpose", out)
        self.assertIn("PASSED | Output: 'r'", out)
        overlap = [helper.make_node("ConvTranspose", ["x", "w3", "b1"], ["t"], name="up1", kernel_shape=[3, 3],
                                    strides=[2, 2]), *nodes[1:]]
        out = self.run_vk(make_model(overlap, [const("w3", [6, 8, 3, 3]), *inits[1:]], [2, 6, 3, 8], "y",
                                     path=self.path("overlap.onnx")))
        self.assertIn("Fused 3 nodes into layer 'up1+bn+relu' (ConvTranspose)", out)
        self.assertIn("Fused 2 nodes into layer 'up2+sig' (ConvTranspose)", out)

    def test_scales_and_shifts_fold_into_weights_and_after_the_activation(self):
        # PP-LCNet's block as paddle2onnx exports it: Conv, a learnable scale and shift (Mul, Add by
        # one-element constants), HardSwish written out, another scale and shift; then a per-channel
        # Mul and a Sub and Div by constants after a MatMul. Each runs as one layer.
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], group=4),
                 helper.make_node("Mul", ["s1", "c"], ["m1"], name="lab1.mul"),
                 helper.make_node("Add", ["m1", "t1"], ["a1"], name="lab1.add"),
                 helper.make_node("Add", ["a1", "three"], ["p"], name="plus3"),
                 helper.make_node("Clip", ["p", "zero", "six"], ["cl"], name="clip"),
                 helper.make_node("Mul", ["a1", "cl"], ["g"], name="gate"),
                 helper.make_node("Div", ["g", "six"], ["h"], name="div6"),
                 helper.make_node("Mul", ["s2", "h"], ["m2"], name="lab2.mul"),
                 helper.make_node("Add", ["m2", "t2"], ["y"], name="lab2.add")]
        scalars = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
                   (("three", 3.0), ("zero", 0.0), ("six", 6.0))]
        inits = [const("w", [4, 1, 3, 3]), const("b", [4]), const("s1", [1], 0.3, 1.0), const("t1", [1]),
                 const("s2", [1], 0.3, 1.0), const("t2", [1]), *scalars]
        path = make_model(nodes, inits, [1, 4, 12, 20], "y", path=self.path("lab.onnx"))
        out = self.run_vk(path, "--val-range", "x:[-4,4]")
        self.assertIn("Fused 9 nodes into layer 'conv+lab1.mul+lab1.add+plus3+clip+gate+div6+lab2.mul+lab2.add' (Conv)",
                      out)
        self.assertIn("1 layers (", out)
        # fp16 tactics apply the scale and shift too.
        out = self.run_vk(path, "--val-range", "x:[-4,4]", "--fp16", "--tactics-deny", "*.f32", "--atol", "2e-2",
                          "--rtol", "2e-2")
        self.assertIn("Fused 9 nodes", out)
        nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
                 helper.make_node("Mul", ["mm", "k"], ["sc"], name="scale"),
                 helper.make_node("Sub", ["sc", "d"], ["sh"], name="shift"),
                 helper.make_node("Div", ["sh", "q"], ["y"], name="div")]
        inits = [const("w", [8, 12]), const("k", [12]), const("d", [1, 12]), const("q", [1], 0.1, 2.0)]
        out = self.run_vk(make_model(nodes, inits, [2, 3, 8], "y", path=self.path("mm.onnx")))
        self.assertIn("Fused 4 nodes into layer 'mm+scale+shift+div' (MatMul)", out)
        # Not folded: a constant first operand of Sub (c - x folds, as a scale of -1) is fine, but
        # c / x is not affine.
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                 helper.make_node("Sub", ["k", "c"], ["r"], name="rsub"),
                 helper.make_node("Div", ["k", "r"], ["y"], name="rdiv")]
        out = self.run_vk(make_model(nodes, [const("w", [3, 2, 1, 1]), const("k", [1, 3, 1, 1], 0.1, 3.0)],
                                     [1, 2, 5, 5], "y", path=self.path("rdiv.onnx")), "--val-range", "x:[0,0.1]")
        self.assertIn("Fused 2 nodes into layer 'conv+rsub' (Conv)", out)
        self.assertIn("2 layers (", out)

    def test_a_marked_or_shared_tensor_is_not_fused_away(self):
        path = self.conv_bn_bias_relu()
        out = self.run_vk(path, "--vk-outputs", "y", "n", "--onnx-outputs", "y", "n")
        self.assertIn("Fused 2 nodes into layer 'conv+bn' (Conv)", out)  # 'n' is read: the Add stays
        self.assertIn("PASSED | Output: 'n'", out)
        # A conv output with two consumers keeps its own layer.
        nodes = [helper.make_node("Conv", ["x", "conv.w"], ["c"], name="conv"), bn_node("bn", "c", "n"),
                 helper.make_node("Add", ["n", "c"], ["y"], name="residual")]
        inits = [const("conv.w", [4, 4, 1, 1]), *bn_params("bn", 4)]
        out = self.run_vk(make_model(nodes, inits, [1, 4, 6, 6], "y", path=self.path("shared.onnx")))
        self.assertNotIn("Fused", out)

    def test_reformats_fuse_into_neighbouring_layers_and_input_uploads(self):
        # An fp32 island (neg) between fp16 layers: the fp16 Add writes 'a' in fp32 for it, the
        # fp16 Mul reads its fp32 'b', the model input is uploaded in fp16 and the fp16 Abs writes
        # the fp32 model output 'y' in fp32 (the host reads it unconverted): no reformat layer is
        # left, and the engine computes bit for bit what the one with its three reformats computes.
        nodes = [helper.make_node("Add", ["x", "w"], ["a"], name="add"),
                 helper.make_node("Neg", ["a"], ["b"], name="neg"),
                 helper.make_node("Mul", ["b", "w"], ["c"], name="mul"),
                 helper.make_node("Abs", ["c"], ["y"], name="abs")]
        path = make_model(nodes, [const("w", [2, 3, 8, 8])], [2, 3, 8, 8], "y", path=self.path("island.onnx"))
        # One tactic per op and precision: both builds compute alike (f16 and f16acc32 round differently).
        pins = ["--fp16", "--layer-precisions", "add:fp16", "neg:fp32", "mul:fp16", "abs:fp16",
                "--precision-constraints", "obey", "--tactics-allow", "binary.vec4.f16", "unary.vec4.f16", "*.f32"]
        out = self.vkgraphy("convert", path, *pins, "-o", "fused.engine")
        self.assertIn("1 input(s) converted on upload, 2 reformats fused into layers, 1 output(s) written in fp32, "
                      "0 reformats)", out)
        out = self.vkgraphy("convert", path, *pins, "--no-fusion", "-o", "unfused.engine")
        self.assertIn("3 reformats)", out)
        layers = self.vkgraphy("inspect", "model", "fused.engine", "--show", "layers")
        self.assertNotIn("Reformat", layers)
        self.assertIn("{x [dtype=float32, shape=(2, 3, 8, 8), storage=f16]}", layers)
        self.assertIn("-> {a [dtype=float32, shape=(2, 3, 8, 8), storage=f32]}", layers)
        self.assertIn("-> {y [dtype=float32, shape=(2, 3, 8, 8), storage=f32]}", layers)
        unfused = self.vkgraphy("inspect", "model", "unfused.engine", "--show", "layers")
        self.assertIn("-> {y [dtype=float32, shape=(2, 3, 8, 8), storage=f16]}", unfused)
        self.assertIn("40: 4}", layers)  # add writes binding 2 (its output) in fp32
        self.vkgraphy("run", "unfused.engine", "--vk", "--save-outputs", "unfused.json")
        out = self.vkgraphy("run", "fused.engine", "--vk", "--load-outputs", "unfused.json", "--atol", "0", "--rtol",
                            "0")
        self.assertIn("All outputs matched", out)
        out = self.run_vk(path, *pins, "--atol", "1e-2", "--rtol", "1e-2")
        self.assertIn("Fused reformat 'a reformat f16->f32' into layer 'add': it stores 'a' in fp32", out)
        self.assertIn("Fused reformat 'b reformat f32->f16' into layer 'mul': it reads 'b' in fp32", out)
        self.assertIn("Fused reformat 'x reformat f32->f16' into the upload of input 'x'", out)
        self.assertIn("Layer 'abs' writes output 'y' in fp32: the host reads it without converting it", out)
        # An fp16 convolution between fp32 layers reads and writes fp32: on the block GEMM and on the row tiles.
        nodes = [helper.make_node("Neg", ["x"], ["n"], name="neg"),
                 helper.make_node("Conv", ["n", "w", "b"], ["c"], name="conv"),
                 helper.make_node("Neg", ["c"], ["y"], name="neg2")]
        path = make_model(nodes, [const("w", [8, 4, 1, 1]), const("b", [8])], [1, 4, 6, 8], "y",
                          path=self.path("conv_island.onnx"))
        for tactic in ("conv.1x1_block16x16.f16acc32", "conv.direct_tile1x8.f16acc32"):
            pins = ["--fp16", "--layer-precisions", "neg:fp32", "conv:fp16", "neg2:fp32", "--precision-constraints",
                    "obey", "--tactics-allow", tactic, "unary.*"]
            out = self.run_vk(path, *pins, "--atol", "1e-2", "--rtol", "1e-2")
            self.assertIn("2 reformats fused into layers, 0 reformats)", out)
            self.vkgraphy("convert", path, *pins, "--no-fusion", "-o", "unfused.engine")
            self.vkgraphy("run", "unfused.engine", "--vk", "--save-outputs", "unfused.json")
            self.vkgraphy("convert", path, *pins, "-o", "fused.engine")
            out = self.vkgraphy("run", "fused.engine", "--vk", "--load-outputs", "unfused.json", "--atol", "0",
                                "--rtol", "0")
            self.assertIn("All outputs matched", out)

    def test_no_ops_become_aliases(self):
        nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                 helper.make_node("Identity", ["r"], ["i"], name="identity"),
                 helper.make_node("Dropout", ["i"], ["d"], name="dropout"),
                 helper.make_node("Flatten", ["d"], ["f"], name="flatten", axis=1),
                 helper.make_node("Relu", ["f"], ["y"], name="relu")]
        inits = [numpy_helper.from_array(np.array([2, 3, 4], np.int64), "shape")]
        path = make_model(nodes, inits, [4, 6], "y", path=self.path("noops.onnx"))
        out = self.run_vk(path)
        self.assertIn("1 layers (0 nodes folded, 4 no-ops removed", out)
        for name in ("reshape", "identity", "dropout", "flatten"):
            self.assertIn(f"Removed no-op node '{name}'", out)
        # --layer-precisions naming a removed node says so.
        out = self.run_vk(path, "--fp16", "--layer-precisions", "identity:fp32", "--atol", "1e-2")
        self.assertIn("pins node 'identity', which was removed as a no-op", out)
        # Dropout asked for its mask is no no-op.
        nodes = [helper.make_node("Dropout", ["x"], ["d", "mask"], name="dropout"),
                 helper.make_node("Relu", ["d"], ["y"], name="relu")]
        out = self.run_vk(make_model(nodes, [], [4, 6], "y", path=self.path("mask.onnx")))
        self.assertIn("0 no-ops removed", out)

    def test_multiplications_by_ones_are_no_ops(self):
        # Swish as PP-OCRv4 rec writes it, x * Sigmoid(x * 1): the Mul by ones goes, and the Conv absorbs
        # x * Sigmoid(x). So does a Div by a ones tensor that does not broadcast the output.
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                 helper.make_node("Mul", ["c", "one"], ["m"], name="times1"),
                 helper.make_node("Sigmoid", ["m"], ["s"], name="sig"),
                 helper.make_node("Mul", ["c", "s"], ["sw"], name="swish"),
                 helper.make_node("Div", ["sw", "ones"], ["d"], name="by1"),
                 helper.make_node("Neg", ["d"], ["y"], name="neg")]
        inits = [const("w", [6, 4, 1, 1]), numpy_helper.from_array(np.array([1.0], np.float32), "one"),
                 numpy_helper.from_array(np.ones([6, 1, 1], np.float32), "ones")]
        path = make_model(nodes, inits, [1, 4, 5, 8], "y", path=self.path("ones.onnx"))
        out = self.run_vk(path)
        self.assertIn("Removed no-op node 'times1'", out)
        self.assertIn("Removed no-op node 'by1'", out)
        self.assertIn("Fused 3 nodes into layer 'conv+sig+swish' (Conv)", out)
        self.assertIn("2 layers (0 nodes folded, 2 no-ops removed", out)
        # Kept: a Mul by 2, ones on the left of a Div (1 / x), ones that broadcast the output to a
        # larger shape, and the Mul by ones with --no-fusion.
        for other, shape in (("two", [1]), ("ones_left", None), ("wide", [2, 1, 1, 1, 1])):
            first = ["ones1", "c"] if other == "ones_left" else ["c", other]
            kept = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                    helper.make_node("Div" if other == "ones_left" else "Mul", first, ["m"], name="op"),
                    helper.make_node("Neg", ["m"], ["y"], name="neg")]
            value = np.full(shape or [1], 2.0 if other == "two" else 1.0, np.float32)
            consts = [const("w", [6, 4, 1, 1]), numpy_helper.from_array(value, "ones1" if other == "ones_left" else other)]
            out = self.run_vk(make_model(kept, consts, [1, 4, 5, 8], "y", path=self.path(f"kept_{other}.onnx")))
            self.assertIn("0 no-ops removed", out, other)
        self.assertIn("0 no-ops removed", self.run_vk(path, "--no-fusion"))

    def test_concats_are_written_in_place(self):
        # Three producers write their slices of the Concat's output; its layer goes.
        def concat_model(axis, name, extra_inputs=()):
            nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                     helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
                     helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                     helper.make_node("Concat", ["r", "s", "c", *extra_inputs], ["cat"], name="cat", axis=axis),
                     helper.make_node("Neg", ["cat"], ["y"], name="neg")]
            return make_model(nodes, [const("w", [4, 4, 1, 1])], [1, 4, 6, 8], "y", path=self.path(name))

        path = concat_model(1, "concat.onnx")
        out = self.run_vk(path)
        self.assertIn("Eliminated concat 'cat': its 3 inputs are written in place into 'cat'", out)
        self.assertIn("4 layers (0 nodes folded, 0 no-ops removed, 0 fused, 1 concats eliminated", out)
        self.vkgraphy("convert", path, "-o", "concat.engine")
        layers = self.vkgraphy("inspect", "model", "concat.engine", "--show", "layers")
        self.assertNotIn("[Op: Concat]", layers)
        for name, first in (("r", 0), ("s", 192), ("c", 384)):
            self.assertIn(f"-> {{{name} [dtype=float32, shape=(1, 4, 6, 8), storage=f32, in=cat[{first}:{first + 192}]]}}",
                          layers)
        # Each producer writes its own slice: a fault injected into one spoils the output.
        out = self.vkgraphy("run", path, "--vk", "--ref", "--builder-optimization-level", "0",
                            env={"VKGRAPHY_FAULTY_LAYERS": "sigmoid"}, expect=1)
        self.assertIn("FAILED | Output: 'y'", out)
        # Kept: with --no-fusion; an input the user reads; a model input among the inputs; an
        # axis with a larger dimension before it (its slices are not contiguous).
        for extra, model_path in ((("--no-fusion",), path), (("--vk-outputs", "y", "s", "--onnx-outputs", "y", "s"), path),
                                  ((), concat_model(1, "concat_input.onnx", ["x"])),
                                  ((), concat_model(2, "concat_axis2.onnx"))):
            out = self.run_vk(model_path, *extra)
            self.assertNotIn("Eliminated concat", out)
            self.assertNotIn("concats eliminated", out)

    def test_scores_scaled_after_their_matmul_are_one_layer(self):
        # No activation, no constant weights to fold into: the scale and shift are the epilogue's.
        nodes = [helper.make_node("Transpose", ["x"], ["kT"], name="kT", perm=[0, 1, 3, 2]),
                 helper.make_node("MatMul", ["x", "kT"], ["s"], name="scores"),
                 helper.make_node("Div", ["s", "root_d"], ["d"], name="scaled"),
                 helper.make_node("Add", ["d", "shift"], ["y"], name="shifted")]
        inits = [numpy_helper.from_array(np.array(4.0, np.float32), "root_d"),
                 numpy_helper.from_array(np.array([0.25], np.float32), "shift")]
        path = make_model(nodes, inits, [1, 2, 8, 16], "y", path=self.path("scores.onnx"))
        out = self.run_vk(path)
        self.assertIn("Fused 4 nodes into layer 'kT+scores+scaled+shifted' (MatMul)", out)  # K^T read in place
        self.assertIn("0 fused", self.run_vk(path, "--no-fusion"))

    def test_transposes_of_the_last_two_axes_are_read_by_the_matmul(self):
        # fold-transpose: A^T, B^T (2-D, and batched as attention's K^T), both; in fp32 and fp16. Left
        # alone: a Transpose read twice, one that moves other axes, and one feeding constant weights' MatMul.
        def tr(name, x, perm):
            return helper.make_node("Transpose", [x], [name], name=name, perm=perm)

        def two_inputs(nodes, x_shape, y_shape, out_shape, inits=()):
            graph = helper.make_graph(
                nodes, "fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                                helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                [helper.make_tensor_value_info("z", TensorProto.FLOAT, out_shape)], list(inits))
            m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 8
            path = self.path("fold.onnx")
            onnx.save(onnx.shape_inference.infer_shapes(m), path)
            return path

        folded = [
            ("A^T", [tr("xT", "x", [1, 0]), helper.make_node("MatMul", ["xT", "y"], ["z"], name="mm")],
             [12, 5], [12, 7], [5, 7], "xT+mm"),
            ("B^T", [tr("yT", "y", [1, 0]), helper.make_node("MatMul", ["x", "yT"], ["z"], name="mm")],
             [6, 12], [8, 12], [6, 8], "yT+mm"),
            ("K^T", [tr("kT", "y", [0, 1, 3, 2]), helper.make_node("MatMul", ["x", "kT"], ["z"], name="mm")],
             [2, 3, 5, 8], [2, 3, 9, 8], [2, 3, 5, 9], "kT+mm"),
            ("both", [tr("xT", "x", [0, 2, 1]), tr("yT", "y", [0, 2, 1]),
                      helper.make_node("MatMul", ["xT", "yT"], ["z"], name="mm")],
             [3, 16, 4], [3, 8, 16], [3, 4, 8], "xT+yT+mm")]
        for label, nodes, xs, ys, zs, layer in folded:
            with self.subTest(case=label):
                path = two_inputs(nodes, xs, ys, zs)
                out = self.run_vk(path)
                self.assertIn(f"into layer '{layer}' (MatMul)", out)
                self.assertIn("1 layers (", out)
                out = self.vkgraphy("run", path, "--vk", "--ref", "-v", "--fp16", "--atol", "2e-2", "--rtol", "2e-2")
                self.assertIn("All outputs matched", out)
                self.assertIn(f"into layer '{layer}' (MatMul)", out)
                out = self.run_vk(path, "--disable-rewrite", "fold-transpose")
                self.assertNotIn(f"'{layer}'", out)
        left = [
            ("read twice", [tr("yT", "y", [1, 0]), helper.make_node("MatMul", ["x", "yT"], ["m"], name="mm"),
                            helper.make_node("Add", ["m", "yT"], ["z"], name="add")], [8, 8], [8, 8], [8, 8]),
            ("other axes", [tr("yT", "y", [1, 0, 2]), helper.make_node("MatMul", ["x", "yT"], ["z"], name="mm")],
             [4, 5, 3], [3, 4, 6], [4, 5, 6]),
        ]
        for label, nodes, xs, ys, zs in left:
            with self.subTest(case=label):
                out = self.run_vk(two_inputs(nodes, xs, ys, zs))
                self.assertNotIn("yT+mm", out)
        nodes = [tr("wT", "w", [1, 0]), helper.make_node("MatMul", ["x", "wT"], ["z"], name="mm")]
        out = self.run_vk(make_model(nodes, [const("w", [5, 7])], [3, 7], "z", path=self.path("w.onnx")))
        self.assertNotIn("wT+mm", out)  # constant: folded at build time instead

    def test_copies_of_ranges_become_views(self):
        # An attention layer's query, key and value sliced from one tensor (whole rows: each slice is
        # a range of it), and a Transpose that moves only axes of extent 1: their outputs become views
        # of the sliced tensor, read in place; the layers go. The relu's output is read only through
        # the views, by layers after others that need memory: the plan keeps it until the last.
        def ints(name, values):
            return numpy_helper.from_array(np.array(values, np.int64), name)

        def sliced_model(name, x_shape, axis=0):
            nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                     *[helper.make_node("Slice", ["r", f"s{i}", f"e{i}", "axes"], [n], name=n)
                       for i, n in enumerate(("q", "k", "v"))],
                     helper.make_node("Transpose", ["v"], ["t"], name="t", perm=[1, 0, 2, 3, 4]),
                     helper.make_node("Neg", ["k"], ["nk"], name="neg"),
                     helper.make_node("Sigmoid", ["nk"], ["sk"], name="sigmoid"),
                     helper.make_node("Add", ["q", "sk"], ["a"], name="add"),
                     helper.make_node("Mul", ["a", "t"], ["y"], name="mul")]
            inits = [ints("axes", [axis]), *[ints(f"s{i}", [i]) for i in range(3)],
                     *[ints(f"e{i}", [i + 1]) for i in range(3)]]
            return make_model(nodes, inits, x_shape, "y", path=self.path(name))

        path = sliced_model("sliced.onnx", [3, 1, 4, 6, 8])
        out = self.run_vk(path)
        for name, first in (("q", 0), ("k", 768), ("v", 1536)):
            self.assertIn(f"Eliminated layer '{name}' (Slice): '{name}' is a view of 'r' from byte {first}", out)
        self.assertIn("Eliminated layer 't' (Transpose): 't' is a view of 'v' from byte 0", out)
        self.assertRegex(out, r"\| 4 layers \(.* 4 copies made views, ")
        self.vkgraphy("convert", path, "-o", "sliced.engine")
        layers = self.vkgraphy("inspect", "model", "sliced.engine", "--show", "layers")
        self.assertNotIn("[Op: Slice]", layers)
        self.assertNotIn("[Op: Transpose]", layers)
        self.assertIn("k [dtype=float32, shape=(1, 1, 4, 6, 8), storage=f32, in=r[192:384]]", layers)
        # Kept: with --no-fusion; a slice the user reads (the others still go); slices of 16 bytes
        # (not whole 32-byte runs); slices along an axis with a larger dimension before it.
        out = self.run_vk(path, "--no-fusion")
        self.assertNotIn("Eliminated layer", out)
        out = self.run_vk(path, "--vk-outputs", "y", "k", "--onnx-outputs", "y", "k")
        self.assertNotIn("Eliminated layer 'k'", out)
        self.assertIn("Eliminated layer 'q'", out)
        for model_path in (sliced_model("small.onnx", [3, 1, 1, 1, 4]), sliced_model("inner.onnx", [2, 3, 4, 6, 8], 1)):
            out = self.run_vk(model_path)
            self.assertNotIn("Eliminated layer '", out.replace("Eliminated layer 't'", ""))

    def test_replays_and_pins_speak_in_node_names(self):
        path = self.conv_bn_bias_relu()
        self.run_vk(path, "--save-tactics", "fused.json")
        self.run_vk(path, "--no-fusion", "--save-tactics", "unfused.json")
        # A replay of the fused build serves the unfused conv (by its node), and the other way round.
        out = self.run_vk(path, "--no-fusion", "--load-tactics", "fused.json")
        unnamed = re.search(r"The tactic replay does not name \d+ layer\(s\) of this build, chosen by timing \((.*)\)",
                            out)
        self.assertIsNotNone(unnamed, out)
        self.assertNotIn("conv", unnamed.group(1).split(", "))
        self.assertIn("bn", unnamed.group(1).split(", "))
        out = self.run_vk(path, "--load-tactics", "unfused.json")
        self.assertNotIn("The tactic replay does not name", out)
        conv_tactic = next(l["tactic"] for l in json.load(open(self.path("unfused.json")))["layers"]
                           if l["name"] == "conv")
        self.run_vk(path, "--load-tactics", "unfused.json", "--save-tactics", "again.json")
        again = {l["name"]: l["tactic"] for l in json.load(open(self.path("again.json")))["layers"]}
        self.assertEqual(again["conv+bn+bias+relu"], conv_tactic)
        # Pinning any node of a fused layer pins the layer; pins that disagree give fp32.
        for pins, expected in ((["relu:fp16"], "fp16"), (["bn:fp32"], "fp32"), (["bn:fp32", "relu:fp16"], "fp32")):
            self.run_vk(path, "--fp16", "--layer-precisions", *pins, "--precision-constraints", "obey",
                        "--save-tactics", "pinned.json", "--atol", "2e-2", "--rtol", "2e-2")
            precisions = {l["name"]: l["precision"] for l in json.load(open(self.path("pinned.json")))["layers"]}
            self.assertEqual(precisions, {"conv+bn+bias+relu": expected}, pins)

    def test_fault_injection_by_node_name_lands_on_the_fused_layer(self):
        path = self.conv_bn_bias_relu()
        out = self.vkgraphy("run", path, "--vk", "--ref", "--builder-optimization-level", "0",
                            env={"VKGRAPHY_FAULTY_LAYERS": "bn"}, expect=1)
        self.assertIn("VKGRAPHY_FAULTY_LAYERS: layer 'conv+bn+bias+relu'", out)
        self.assertIn("FAILED | Output: 'y'", out)
        out = self.vkgraphy("run", path, "--vk", "--ref", "--builder-optimization-level", "0",
                            env={"VKGRAPHY_FAULTY_LAYERS": "no-such-node"})
        self.assertNotIn("wrong results on purpose", out)

    def test_seed_example_verbatim_gives_only_good_builds(self):
        # The flaky-tactic example of the docs: an Identity between fp32 input and output moves data
        # and rounds nothing, so --fp16 never runs it as an fp16 copy between two reformats.
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--save-outputs", "golden.json")
        out = self.vkgraphy("debug", "build", model("identity.onnx"), "--fp16", "--save-tactics", "replay.json",
                            "--artifacts-dir", "replays", "--artifacts", "replay.json", "--until=10", "--check", BIN,
                            "run", "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json")
        self.assertIn("Passed: 10/10", out)
        self.assertEqual(len(os.listdir(self.path("replays/good"))), 10)
        self.assertFalse(os.path.exists(self.path("replays/bad")))
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", "replays", expect=None)
        self.assertIn("cannot decide: no bad replays", out)
