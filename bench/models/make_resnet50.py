#!/usr/bin/python3
"""Writes a ResNet-50 (v1.5 layout, random weights, BatchNorm kept as separate nodes) as ONNX.

    /usr/bin/python3 bench/models/make_resnet50.py OUT.onnx [--batch N] [--size 224]

Used by the benchmarks to time the reference backend on a real-sized CNN; the
weights are random, so only speed and shapes mean anything.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed=0):
        self.nodes, self.inits, self.rng, self.n = [], [], np.random.default_rng(seed), 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}_{self.n}"

    def weight(self, prefix, shape, scale):
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv_bn(self, x, cin, cout, k, stride, relu=True):
        w = self.weight("w", (cout, cin, k, k), (2.0 / (cin * k * k)) ** 0.5)
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w], [y], name=y, kernel_shape=[k, k], strides=[stride, stride],
                                           pads=[k // 2] * 4))
        scale = self.weight("bn_scale", (cout,), 0.1)
        self.inits[-1].CopyFrom(numpy_helper.from_array(np.ones(cout, np.float32), scale))
        bias = self.weight("bn_bias", (cout,), 0.01)
        mean = self.weight("bn_mean", (cout,), 0.01)
        var = self.weight("bn_var", (cout,), 0.0)
        self.inits[-1].CopyFrom(numpy_helper.from_array(np.ones(cout, np.float32), var))
        z = self.name("bn")
        self.nodes.append(helper.make_node("BatchNormalization", [y, scale, bias, mean, var], [z], name=z))
        if not relu:
            return z
        r = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [z], [r], name=r))
        return r

    def bottleneck(self, x, cin, width, stride):
        cout = width * 4
        y = self.conv_bn(x, cin, width, 1, 1)
        y = self.conv_bn(y, width, width, 3, stride)
        y = self.conv_bn(y, width, cout, 1, 1, relu=False)
        shortcut = x if (stride == 1 and cin == cout) else self.conv_bn(x, cin, cout, 1, stride, relu=False)
        s = self.name("add")
        self.nodes.append(helper.make_node("Add", [y, shortcut], [s], name=s))
        r = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [s], [r], name=r))
        return r, cout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--size", type=int, default=224)
    args = parser.parse_args()
    b = Builder()
    x = b.conv_bn("input", 3, 64, 7, 2)
    p = b.name("maxpool")
    b.nodes.append(helper.make_node("MaxPool", [x], [p], name=p, kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    x, c = p, 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(blocks):
            x, c = b.bottleneck(x, c, width, stride if i == 0 else 1)
    g = b.name("gap")
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], [g], name=g))
    f = b.name("flatten")
    b.nodes.append(helper.make_node("Flatten", [g], [f], name=f))
    w = b.weight("fc_w", (c, 1000), (1.0 / c) ** 0.5)
    bias = b.weight("fc_b", (1000,), 0.01)
    b.nodes.append(helper.make_node("Gemm", [f, w, bias], ["logits"], name="fc"))
    graph = helper.make_graph(
        b.nodes, "resnet50",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [args.batch, 3, args.size, args.size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [args.batch, 1000])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
