#!/usr/bin/python3
"""Writes a bidirectional LSTM with initial states as ONNX: by default the shape of ddddocr's CRNN
(hidden 512, input 512, 40 steps, batch 1; random weights), to time the recurrent tactics.

    /usr/bin/python3 bench/models/make_lstm.py OUT.onnx [--hidden 512] [--input 512] [--steps 40]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--input", type=int, default=512)
    ap.add_argument("--steps", type=int, default=40)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    h, i = a.hidden, a.input
    inits = [numpy_helper.from_array((rng.standard_normal((2, 4 * h, i)) / np.sqrt(i)).astype(np.float32), "W"),
             numpy_helper.from_array((rng.standard_normal((2, 4 * h, h)) / np.sqrt(h)).astype(np.float32), "R"),
             numpy_helper.from_array((rng.standard_normal((2, 8 * h)) * 0.1).astype(np.float32), "B")]
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f, [a.steps, 1, i]),
              helper.make_tensor_value_info("h0", f, [2, 1, h]), helper.make_tensor_value_info("c0", f, [2, 1, h])]
    node = helper.make_node("LSTM", ["x", "W", "R", "B", "", "h0", "c0"], ["y", "y_h"], name="lstm", hidden_size=h,
                            direction="bidirectional")
    graph = helper.make_graph([node], "lstm", inputs, [helper.make_tensor_value_info("y", f, None),
                                                       helper.make_tensor_value_info("y_h", f, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
