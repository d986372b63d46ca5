#!/usr/bin/python3
"""Makes the small CNN and transformer-encoder models of the Vulkan model tests
(tests/cli/test_vk_models.py) with onnx.helper. Run with Debian's python3
(it has onnx and numpy):  /usr/bin/python3 tests/models/vk/make_models.py

  cnn.onnx           Conv/BatchNorm/Relu stem, a depthwise-separable block, a
                     residual 3x3 block, MaxPool, GlobalAveragePool, Flatten, Gemm, Softmax.
  transformer.onnx   One pre-norm transformer-encoder layer: LayerNormalization,
                     Q/K/V MatMuls, multi-head attention (Reshape/Transpose/
                     MatMul/Softmax), residuals, a GELU (Erf) feed-forward block.
  fp16_overflow.onnx A MatMul whose outputs exceed the fp16 range (about 1e5)
                     followed by a scale back down: correct in fp32, inf in fp16.
  branchy.onnx       Four branches from one input (MatMul+Relu, Softmax, Sigmoid,
                     Tanh) joined by Add and Mul, two outputs: the model the
                     `debug reduce` workflow reduces to its Softmax.
  fp16_two_sites.onnx Two overflow sites like fp16_overflow's (big1/small1 and
                     big2/small2) with six fp16-safe layers between them
                     (MatMul, Softmax, MatMul, LayerNormalization, Softmax,
                     Sigmoid) and a MatMul after: the model `debug precision`
                     must answer with exactly the four overflowing nodes.
  example.onnx       The README's model.onnx: an image model (input x [1,3,32,32],
                     output y [1,10]): two Conv+Relu, an L2
                     normalization whose sum of squares (about 1e5) overflows
                     fp16 (ReduceSumSquare, Sqrt, Div), GlobalAveragePool,
                     Flatten, Gemm. The README's examples run on it in order
                     (tests/cli/test_readme.py).
  near_tie.onnx      Eight independent elementwise/MatMul branches whose tactics
                     run within a few percent of each other (for the replay bench).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(0)


def const(name, shape, scale=0.2):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def save(model, name):
    model = onnx.shape_inference.infer_shapes(model)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def cnn():
    inits, nodes = [], []

    def conv(name, x, cin, cout, k, stride=1, group=1, pad=None):
        pad = k // 2 if pad is None else pad
        inits.extend([const(name + ".w", [cout, cin // group, k, k], (2.0 / (cin // group * k * k)) ** 0.5),
                      const(name + ".b", [cout], 0.05)])
        nodes.append(helper.make_node("Conv", [x, name + ".w", name + ".b"], [name], name=name, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[pad] * 4, group=group))
        return name

    def bn(name, x, c):
        inits.extend([numpy_helper.from_array((1 + 0.1 * rng.standard_normal(c)).astype(np.float32), name + ".scale"),
                      const(name + ".bias", [c], 0.1), const(name + ".mean", [c], 0.1),
                      numpy_helper.from_array((0.5 + rng.random(c)).astype(np.float32), name + ".var")])
        nodes.append(helper.make_node("BatchNormalization", [x, name + ".scale", name + ".bias", name + ".mean",
                                                             name + ".var"], [name], name=name, epsilon=1e-5))
        return name

    def relu(name, x):
        nodes.append(helper.make_node("Relu", [x], [name], name=name))
        return name

    x = relu("stem.relu", bn("stem.bn", conv("stem.conv", "input", 3, 16, 3, stride=2), 16))
    x = relu("dw.relu", conv("dw.conv", x, 16, 16, 3, group=16))
    x = relu("pw.relu", conv("pw.conv", x, 16, 32, 1, pad=0))
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]))
    y = relu("res.relu1", conv("res.conv1", "pool", 32, 32, 3))
    y = conv("res.conv2", y, 32, 32, 3)
    nodes.append(helper.make_node("Add", ["pool", y], ["res.add"], name="res.add"))
    x = relu("res.relu2", "res.add")
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat", axis=1))
    inits.extend([const("fc.w", [10, 32], 0.3), const("fc.b", [10], 0.1)])
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1))
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "cnn.onnx")


def transformer(seq=16, dim=32, heads=4, ff=64):
    inits, nodes = [], []
    hd = dim // heads

    def layernorm(name, x):
        inits.extend([numpy_helper.from_array((1 + 0.1 * rng.standard_normal(dim)).astype(np.float32), name + ".g"),
                      const(name + ".b", [dim], 0.1)])
        nodes.append(helper.make_node("LayerNormalization", [x, name + ".g", name + ".b"], [name], name=name, axis=-1,
                                      epsilon=1e-5))
        return name

    def linear(name, x, n_in, n_out):
        inits.extend([const(name + ".w", [n_in, n_out], n_in ** -0.5), const(name + ".b", [n_out], 0.05)])
        nodes.append(helper.make_node("MatMul", [x, name + ".w"], [name + ".mm"], name=name + ".mm"))
        nodes.append(helper.make_node("Add", [name + ".mm", name + ".b"], [name], name=name + ".add"))
        return name

    def split_heads(name, x):
        nodes.append(helper.make_node("Reshape", [x, "heads_shape"], [name + ".r"], name=name + ".r"))
        nodes.append(helper.make_node("Transpose", [name + ".r"], [name], name=name + ".t", perm=[0, 2, 1, 3]))
        return name

    inits.append(numpy_helper.from_array(np.array([1, seq, heads, hd], np.int64), "heads_shape"))
    inits.append(numpy_helper.from_array(np.array([1, seq, dim], np.int64), "merge_shape"))
    inits.append(numpy_helper.from_array(np.array(hd ** -0.5, np.float32), "attn_scale"))
    h = layernorm("ln1", "x")
    q = split_heads("q", linear("q_proj", h, dim, dim))
    k = split_heads("k", linear("k_proj", h, dim, dim))
    v = split_heads("v", linear("v_proj", h, dim, dim))
    nodes.append(helper.make_node("Transpose", [k], ["kT"], name="kT", perm=[0, 1, 3, 2]))
    nodes.append(helper.make_node("MatMul", [q, "kT"], ["scores"], name="scores"))
    nodes.append(helper.make_node("Mul", ["scores", "attn_scale"], ["scaled"], name="scaled"))
    nodes.append(helper.make_node("Softmax", ["scaled"], ["attn"], name="attn", axis=-1))
    nodes.append(helper.make_node("MatMul", ["attn", v], ["ctx"], name="ctx"))
    nodes.append(helper.make_node("Transpose", ["ctx"], ["ctx.t"], name="ctx.t", perm=[0, 2, 1, 3]))
    nodes.append(helper.make_node("Reshape", ["ctx.t", "merge_shape"], ["ctx.m"], name="ctx.m"))
    o = linear("o_proj", "ctx.m", dim, dim)
    nodes.append(helper.make_node("Add", ["x", o], ["res1"], name="res1"))
    h2 = layernorm("ln2", "res1")
    f = linear("ff1", h2, dim, ff)
    # GELU(x) = 0.5 x (1 + erf(x / sqrt 2))
    inits.extend([numpy_helper.from_array(np.array(2 ** -0.5, np.float32), "inv_sqrt2"),
                  numpy_helper.from_array(np.array(1.0, np.float32), "one"),
                  numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    nodes.append(helper.make_node("Mul", [f, "inv_sqrt2"], ["gelu.s"], name="gelu.s"))
    nodes.append(helper.make_node("Erf", ["gelu.s"], ["gelu.erf"], name="gelu.erf"))
    nodes.append(helper.make_node("Add", ["gelu.erf", "one"], ["gelu.p1"], name="gelu.p1"))
    nodes.append(helper.make_node("Mul", [f, "gelu.p1"], ["gelu.m"], name="gelu.m"))
    nodes.append(helper.make_node("Mul", ["gelu.m", "half"], ["gelu"], name="gelu"))
    f2 = linear("ff2", "gelu", ff, dim)
    nodes.append(helper.make_node("Add", ["res1", f2], ["y"], name="res2"))
    graph = helper.make_graph(nodes, "transformer_encoder",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, dim])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, dim])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "transformer.onnx")


def fp16_overflow():
    # x in [0, 1) (the data loader's default range) times w (all 4000) over 64 terms:
    # about 1.3e5 on average: beyond fp16's 65504 in "big"; "small" is back near 13. "down" is a
    # full [4, 8] tensor: a scalar or per-column one would fold into big's weights (graph
    # optimization) and take the overflow with it.
    inits = [numpy_helper.from_array(np.full([64, 8], 4000.0, np.float32), "w"),
             numpy_helper.from_array(np.full([4, 8], 1e-4, np.float32), "down"),
             const("w2", [8, 8], 0.3)]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["big"], name="big"),
             helper.make_node("Mul", ["big", "down"], ["small"], name="small"),
             helper.make_node("MatMul", ["small", "w2"], ["y"], name="out")]
    graph = helper.make_graph(nodes, "fp16_overflow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "fp16_overflow.onnx")


def fp16_two_sites():
    r = np.random.default_rng(2)

    def w(name, shape, scale):
        return numpy_helper.from_array((r.standard_normal(shape) * scale).astype(np.float32), name)

    # big1: x in [0, 1) times 4000 over 64 terms (about 1.3e5); big2: sigmoid outputs (about 0.5) the same way.
    # "down" is a full tensor so that it does not fold into the weights (see fp16_overflow).
    inits = [numpy_helper.from_array(np.full([64, 8], 4000.0, np.float32), "w_big"),
             numpy_helper.from_array(np.full([4, 8], 1e-4, np.float32), "down"),
             w("w_a", [8, 64], 0.3), w("w_b", [64, 64], 0.3), w("w_out", [8, 8], 0.3),
             numpy_helper.from_array(np.ones([64], np.float32), "ln_scale"),
             numpy_helper.from_array(np.zeros([64], np.float32), "ln_bias")]
    nodes = [helper.make_node("MatMul", ["x", "w_big"], ["big1"], name="big1"),
             helper.make_node("Mul", ["big1", "down"], ["small1"], name="small1"),
             helper.make_node("MatMul", ["small1", "w_a"], ["mm_a"], name="mm_a"),
             helper.make_node("Softmax", ["mm_a"], ["soft_a"], name="soft_a", axis=1),
             helper.make_node("MatMul", ["soft_a", "w_b"], ["mm_b"], name="mm_b"),
             helper.make_node("LayerNormalization", ["mm_b", "ln_scale", "ln_bias"], ["ln_b"], name="ln_b", axis=-1),
             helper.make_node("Softmax", ["ln_b"], ["soft_b"], name="soft_b", axis=1),
             helper.make_node("Sigmoid", ["soft_b"], ["sig_c"], name="sig_c"),
             helper.make_node("MatMul", ["sig_c", "w_big"], ["big2"], name="big2"),
             helper.make_node("Mul", ["big2", "down"], ["small2"], name="small2"),
             helper.make_node("MatMul", ["small2", "w_out"], ["y"], name="out")]
    graph = helper.make_graph(nodes, "fp16_two_sites", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "fp16_two_sites.onnx")


def near_tie(branches=8):
    inits, nodes, outs = [], [], []
    for b in range(branches):
        inits.append(const(f"w{b}", [64, 64], 0.1))
        nodes.append(helper.make_node("MatMul", ["x", f"w{b}"], [f"mm{b}"], name=f"mm{b}"))
        nodes.append(helper.make_node("Relu", [f"mm{b}"], [f"y{b}"], name=f"relu{b}"))
        outs.append(helper.make_tensor_value_info(f"y{b}", TensorProto.FLOAT, [64, 64]))
    graph = helper.make_graph(nodes, "near_tie", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
                              outs, inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "near_tie.onnx")


def branchy():
    r = np.random.default_rng(1)
    inits = [numpy_helper.from_array((r.standard_normal([32, 32]) * 0.2).astype(np.float32), "w")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
             helper.make_node("Relu", ["mm"], ["mm_relu"], name="mm_relu"),
             helper.make_node("Softmax", ["x"], ["soft"], name="soft", axis=1),
             helper.make_node("Sigmoid", ["x"], ["gate"], name="gate"),
             helper.make_node("Add", ["mm_relu", "soft"], ["mix"], name="mix"),
             helper.make_node("Mul", ["mix", "gate"], ["y1"], name="y1"),
             helper.make_node("Tanh", ["gate"], ["y2"], name="side")]
    graph = helper.make_graph(nodes, "branchy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                              [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [4, 32]),
                               helper.make_tensor_value_info("y2", TensorProto.FLOAT, [4, 32])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "branchy.onnx")


def example():
    r = np.random.default_rng(3)

    def w(name, shape, scale):
        return numpy_helper.from_array((r.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [w("conv1.w", [16, 3, 3, 3], 1.0), w("conv1.b", [16], 0.1),
             w("conv2.w", [16, 16, 3, 3], 0.5), w("conv2.b", [16], 0.1),
             w("fc.w", [10, 16], 2.0), w("fc.b", [10], 0.1)]
    nodes = [helper.make_node("Conv", ["x", "conv1.w", "conv1.b"], ["conv1"], name="conv1", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
             helper.make_node("Conv", ["relu1", "conv2.w", "conv2.b"], ["conv2"], name="conv2", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["conv2"], ["feat"], name="relu2"),
             helper.make_node("ReduceSumSquare", ["feat"], ["energy"], name="energy", axes=[1, 2, 3], keepdims=1),
             helper.make_node("Sqrt", ["energy"], ["norm"], name="norm"),
             helper.make_node("Div", ["feat", "norm"], ["normalized"], name="normalize"),
             helper.make_node("GlobalAveragePool", ["normalized"], ["gap"], name="gap"),
             helper.make_node("Flatten", ["gap"], ["flat"], name="flat", axis=1),
             helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["y"], name="fc", transB=1, alpha=100.0)]
    graph = helper.make_graph(nodes, "example",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "example.onnx")


if __name__ == "__main__":
    cnn()
    transformer()
    fp16_overflow()
    near_tie()
    fp16_two_sites()
    branchy()
    example()
