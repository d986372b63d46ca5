"""Writes the regression models of the differential fuzzer (tests/fuzz/, docs/testing.md
"Differential fuzzing"): small graphs, reduced by hand from failing fuzz graphs, that
tests/cli/test_fuzz.py runs as listed in cases.json.

    .venv/bin/python tests/models/fuzz/make_models.py [OUT_DIR]

Large weights are not stored: they are computed from Range and Sin nodes, which vkgraphy folds
into constants at import (and ONNX Runtime computes), so a model of a million weights stays a
few hundred bytes.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def sin_weight(nodes, inits, name, shape, scale, phase):
    """nodes computing `name` = sin(phase + 0.7071 k) * scale over k = 0..numel-1, reshaped to `shape`."""
    n = int(np.prod(shape))
    inits += [numpy_helper.from_array(np.array(phase, np.float32), f"{name}.start"),
              numpy_helper.from_array(np.array(phase + 0.7071 * (n - 0.5), np.float32), f"{name}.limit"),
              numpy_helper.from_array(np.array(0.7071, np.float32), f"{name}.delta"),
              numpy_helper.from_array(np.array(shape, np.int64), f"{name}.shape"),
              numpy_helper.from_array(np.array(scale, np.float32), f"{name}.scale")]
    nodes += [helper.make_node("Range", [f"{name}.start", f"{name}.limit", f"{name}.delta"], [f"{name}.k"],
                               name=f"{name}.range"),
              helper.make_node("Sin", [f"{name}.k"], [f"{name}.sin"], name=f"{name}.sin"),
              helper.make_node("Mul", [f"{name}.sin", f"{name}.scale"], [f"{name}.flat"], name=f"{name}.mul"),
              helper.make_node("Reshape", [f"{name}.flat", f"{name}.shape"], [name], name=f"{name}.reshape")]


def recurrent(op, hidden, seq, batch=1, inputs=4, direction="forward", bias=False, states=False):
    """One LSTM/GRU/RNN node, weights (and bias) from sin_weight; with states, initial_h (and
    initial_c for LSTM) are graph inputs."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    dirs = 2 if direction == "bidirectional" else 1
    nodes, inits = [], []
    sin_weight(nodes, inits, "W", [dirs, gates * hidden, inputs], 1 / np.sqrt(inputs), 0.1)
    sin_weight(nodes, inits, "R", [dirs, gates * hidden, hidden], 1 / np.sqrt(hidden), 0.3)
    node_inputs = ["x", "W", "R"]
    if bias:
        sin_weight(nodes, inits, "B", [dirs, 2 * gates * hidden], 0.3, 0.5)
    node_inputs.append("B" if bias else "")
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inputs])]
    if states:
        node_inputs += ["", "initial_h"] + (["initial_c"] if op == "LSTM" else [])
        graph_inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [dirs, batch, hidden])
                         for n in node_inputs[5:]]
    while node_inputs[-1] == "":
        node_inputs.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    nodes.append(helper.make_node(op, node_inputs, outs, name=op.lower(), hidden_size=hidden, direction=direction))
    shapes = {"Y": [seq, dirs, batch, hidden], "Y_h": [dirs, batch, hidden], "Y_c": [dirs, batch, hidden]}
    graph = helper.make_graph(nodes, f"{op.lower()}_h{hidden}_seq{seq}", graph_inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, shapes[o]) for o in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="vkgraphy-fuzz")
    model.ir_version = 8
    return model


MODELS = {
    # Fuzz seed 7 (--focus recurrent): LSTM H=512 went wrong from its second step on
    # recurrent.workgroup32.f32; reduced: the error starts where steps x 4H x (H + I) reaches about 2^21.
    "lstm_h128_seq32_workgroup32.onnx": lambda: recurrent("LSTM", 128, 32),
    "gru_h1024_seq2_workgroup32.onnx": lambda: recurrent("GRU", 1024, 2),
    # The form the bug was first reported in: H=512 with bias and initial states, both directions.
    "lstm_h512_seq4_bidirectional_states.onnx": lambda: recurrent("LSTM", 512, 4, batch=2, direction="bidirectional",
                                                                  bias=True, states=True),
}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, make in MODELS.items():
        model = make()
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out_dir, name))
        print(os.path.join(out_dir, name))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
