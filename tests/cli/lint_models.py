"""Broken ONNX models for `check lint` (tests/cli/test_check_lint.py), each made for one fault
Polygraphy's lint tests do not cover: `lint_models.py DIR` writes them into DIR. Needs the test
venv's onnx (a newer checker than Debian's)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(name, nodes, inputs, outputs, initializers=(), value_info=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers), value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


MODELS = {
    # y does not reach the output; the Neg node computing from it does not either.
    "unused_input_and_node": model(
        "unused", [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                   helper.make_node("Neg", ["y"], ["dead"], name="dead_neg")],
        [f32("x", [2, 3]), f32("y", [2, 3])], [f32("r", [2, 3])]),
    # An int64 constant added to a float tensor: the types of Add's inputs disagree.
    "type_mismatch": model(
        "type_mismatch", [helper.make_node("Add", ["x", "c"], ["s"], name="add_mixed"),
                          helper.make_node("Relu", ["x"], ["r"], name="relu_ok")],
        [f32("x", [2, 3])], [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3]), f32("r", [2, 3])],
        initializers=[numpy_helper.from_array(np.ones((2, 3), np.int64), "c")]),
    # A Reshape whose target holds the wrong element count: only running it shows it (the shape
    # tensor is a graph input). Beside it, an independent branch that is fine.
    "runtime_reshape": model(
        "runtime_reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="bad_reshape"),
                            helper.make_node("Sigmoid", ["x"], ["z"], name="fine_sigmoid")],
        [f32("x", [2, 3]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [f32("y", None), f32("z", [2, 3])]),
    # Two chains of failures: the node after a failing node is not checked.
    "failure_downstream": model(
        "downstream", [helper.make_node("MatMul", ["a", "b"], ["m"], name="bad_matmul"),
                       helper.make_node("Relu", ["m"], ["r"], name="after_bad"),
                       helper.make_node("Abs", ["a"], ["q"], name="abs_ok")],
        [f32("a", [2, 3]), f32("b", [4, 5])], [f32("r", None), f32("q", [2, 3])]),
    # value_info records a shape shape inference contradicts (ONNX Runtime refuses the model whole; the
    # node alone runs): vkgraphy's lint warns, Polygraphy's says nothing.
    "stale_value_info": model(
        "stale", [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                  helper.make_node("Neg", ["r"], ["n"], name="neg")],
        [f32("x", [2, 3])], [f32("n", [2, 3])], value_info=[f32("r", [2, 4])]),
    # Two parts that share no tensor, and a Split output nothing reads: infos of vkgraphy's alone.
    "parts_and_unread_output": model(
        "parts", [helper.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1, num_outputs=2),
                  helper.make_node("Relu", ["s0"], ["r"], name="relu"),
                  helper.make_node("Neg", ["y"], ["n"], name="neg")],
        [f32("x", [2, 4]), f32("y", [2, 3])], [f32("r", [2, 2]), f32("n", [2, 3])], opset=18),
}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, m in MODELS.items():
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
    print(len(MODELS), "models")


if __name__ == "__main__":
    main()
