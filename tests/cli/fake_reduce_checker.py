#!/usr/bin/python3
"""A stand-in for a user's check in the `vkgraphy debug reduce` tests.

    fake_reduce_checker.py MODEL --fail-node NAME [NAME...]
                           [--default-return-code N] [--fail-return-code N]

Loads MODEL and runs ONNX's checker on it (as IR version 8 when newer, which
Debian's checker refuses): an invalid model prints "INVALID MODEL: <reason>"
and exits 99. If every --fail-node names a node of the model, prints
"REALLY BAD!" and "BAD NODE" and exits with --fail-return-code (default 1);
otherwise prints "Passed!" and exits with --default-return-code (default 0).
Writes no files.
"""
import argparse
import sys

import onnx


def main():
    parser = argparse.ArgumentParser(description="Fails when the model contains all the given nodes.")
    parser.add_argument("model")
    parser.add_argument("--fail-node", nargs="+", required=True, help="names of the nodes that make the model fail")
    parser.add_argument("--default-return-code", type=int, default=0)
    parser.add_argument("--fail-return-code", type=int, default=1)
    args = parser.parse_args()

    model = onnx.load(args.model)
    checked = onnx.ModelProto()
    checked.CopyFrom(model)
    checked.ir_version = min(checked.ir_version, 8)
    try:
        onnx.checker.check_model(checked)
    except Exception as e:  # the checker raises several exception types
        print("INVALID MODEL: {}".format(" ".join(str(e).split()) or type(e).__name__))
        return 99

    names = {node.name for node in model.graph.node}
    if all(name in names for name in args.fail_node):
        print("REALLY BAD!")
        print("BAD NODE")
        return args.fail_return_code
    print("Passed!")
    return args.default_return_code


if __name__ == "__main__":
    sys.exit(main())
