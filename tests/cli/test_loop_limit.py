"""Long loops on lavapipe (docs/builder.md, "loop iteration limit"): llvmpipe ends a shader
invocation's loops after 65535 iterations in all, silently. Every tactic that could serve these
layers either computes them right or declines, naming the limit; none returns a wrong answer.
Found by hand and by the fuzzer: ddddocr's LSTM (hidden 512, 40 steps), a ReduceSum and a
Softmax over 300,000 elements, a MatMul with K = 140,000, convolutions of 73,728 and 80,000 taps, a 300 x 300 average pool, a
CumSum over 300,000 and a DFT of 70,001 points."""
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from vkgraphy_cli import CliTestCase


def save(path, nodes, x_shape, initializers=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def lstm(path, hidden, steps):
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((2, 4 * hidden, 16)) / 4).astype(np.float32)
    r = (rng.standard_normal((2, 4 * hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")]
    save(path, [helper.make_node("LSTM", ["x", "W", "R"], ["y"], hidden_size=hidden, direction="bidirectional")],
         [steps, 1, 16], inits)


def weighted(path, op, x_shape, w_shape, **attrs):
    w = np.random.default_rng(6).standard_normal(w_shape).astype(np.float32)
    fan_in = {"MatMul": w_shape[0], "ConvTranspose": w_shape[0]}.get(op, np.prod(w_shape) // w_shape[0])
    w /= np.sqrt(fan_in)
    save(path, [helper.make_node(op, ["x", "W"], ["y"], **attrs)], x_shape, [numpy_helper.from_array(w, "W")])


class TestLoopLimit(CliTestCase):
    CASES = {  # model: (maker, every tactic that may serve it)
        "rsum.onnx": (lambda p: save(p, [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], [1, 300000]),
                      ["reduce.row", "reduce.subgroup", "reduce.workgroup"]),
        "softmax.onnx": (lambda p: save(p, [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [2, 300000]),
                         ["softmax.row", "softmax.subgroup", "softmax.workgroup", "softmax.vec4_sg",
                          "softmax.vec4_wg"]),
        "gap.onnx": (lambda p: save(p, [helper.make_node("GlobalAveragePool", ["x"], ["y"])], [1, 2, 400, 400]),
                     ["global_pool.row", "global_pool.workgroup"]),
        "lstm.onnx": (lambda p: lstm(p, 256, 12), ["recurrent.workgroup32", "recurrent.workgroup128",
                                                    "recurrent.steps"]),
        "matmul.onnx": (lambda p: weighted(p, "MatMul", [1, 140000], (140000, 8)),
                        ["gemm.naive", "gemm.gemv1x4", "gemm.reg4x4", "gemm.sgreg16x4", "gemm.block4x8",
                         "gemm.tiled8x8", "gemm.smem32x32", "gemm.smem32x32_splitk"]),
        "conv.onnx": (lambda p: weighted(p, "Conv", [1, 8192, 3, 3], (4, 8192, 3, 3), pads=[1, 1, 1, 1]),
                      ["conv.direct", "conv.im2col_gemm.4x8", "conv.im2col_block8x8", "conv.winograd_f23",
                       "conv.implicit_gemm32x32", "conv.im2col_splitk32x32"]),
        "pointwise.onnx": (lambda p: weighted(p, "Conv", [1, 80000, 2, 2], (8, 80000, 1, 1)),
                           ["conv.1x1.4x8", "conv.1x1_block8x8", "conv.im2col_gemm.8x8"]),
        "transpose.onnx": (lambda p: weighted(p, "ConvTranspose", [1, 80000, 2, 2], (80000, 4, 2, 2), strides=[2, 2]),
                           ["conv.transpose_gather", "conv.transpose_block4x8", "conv.transpose_implicit_gemm32x32"]),
        "avgpool.onnx": (lambda p: save(p, [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[300, 300])],
                                        [1, 1, 300, 301]),
                         ["pool.direct", "pool.direct.w4", "pool.workgroup"]),
    }
    # Layers whose only tactic loops over the whole axis: on lavapipe a clear error, never a wrong answer.
    DECLINED = {
        "cumsum.onnx": (lambda p: save(p, [helper.make_node("CumSum", ["x", "axis"], ["y"])], [1, 300000],
                                       [numpy_helper.from_array(np.array(1, np.int64), "axis")]), "cumsum.scalar"),
        "dft.onnx": (lambda p: save(p, [helper.make_node("DFT", ["x"], ["y"], axis=1)], [1, 70001, 1]), "dft.direct"),
        "topk.onnx": (lambda p: save(p, [helper.make_node("TopK", ["x", "k"], ["y", "indices"], axis=1)], [1, 300000],
                                     [numpy_helper.from_array(np.array([5], np.int64), "k")]), "topk.select"),
    }

    def test_every_tactic_is_right_or_declines(self):
        for name, (make, tactics) in self.CASES.items():
            path = self.path(name)
            make(path)
            served = 0
            for tactic in tactics:
                with self.subTest(model=name, tactic=tactic):
                    out = self.vkgraphy("run", path, "--vk", "--ref", "--tactics-allow", tactic + ".f32",
                                        "--builder-optimization-level", "0", "--atol", "1e-3", "--rtol", "1e-3",
                                        "--val-range", "x:[0,1]", expect=None)
                    if "no tactic can serve" in out:
                        self.assertIn("loop iteration limit 65535", out)
                    else:
                        self.assertIn("PASSED | All outputs matched", out)
                        served += 1
            self.assertGreater(served, 0, name)

    def test_only_tactic_declines_with_a_clear_error(self):
        for name, (make, tactic) in self.DECLINED.items():
            with self.subTest(model=name):
                path = self.path(name)
                make(path)
                out = self.vkgraphy("run", path, "--vk", "--tactics-allow", tactic + ".f32", expect=3)
                self.assertIn("loop iteration limit 65535", out)
                self.assertNotIn("PASSED", out)

    def test_declines_name_the_limit(self):
        path = self.path("softmax.onnx")
        self.CASES["softmax.onnx"][0](path)
        out = self.vkgraphy("run", path, "--vk", "--tactics-allow", "softmax.row.f32", expect=3)
        self.assertIn("loop iteration limit 65535", out)


if __name__ == "__main__":
    unittest.main()
