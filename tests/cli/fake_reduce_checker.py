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

Where the environment names a checker server (checker_server.py, which the tests start
once per module), the same check is made there: importing onnx takes about 0.5 s, most of
a check's time, and the reduce tests make hundreds of checks.
"""
import argparse
import json
import os
import sys

SERVER_ENV = "VKGRAPHY_FAKE_CHECKER_SERVER"


def parse(argv):
    parser = argparse.ArgumentParser(description="Fails when the model contains all the given nodes.")
    parser.add_argument("model")
    parser.add_argument("--fail-node", nargs="+", required=True, help="names of the nodes that make the model fail")
    parser.add_argument("--default-return-code", type=int, default=0)
    parser.add_argument("--fail-return-code", type=int, default=1)
    return parser.parse_args(argv)


def check(args):
    """The check: (exit code, what it prints)."""
    import onnx  # here, so that a run through the server does not import it

    model = onnx.load(args.model)
    checked = onnx.ModelProto()
    checked.CopyFrom(model)
    checked.ir_version = min(checked.ir_version, 8)
    try:
        onnx.checker.check_model(checked)
    except Exception as e:  # the checker raises several exception types
        return 99, "INVALID MODEL: {}\n".format(" ".join(str(e).split()) or type(e).__name__)

    names = {node.name for node in model.graph.node}
    if all(name in names for name in args.fail_node):
        return args.fail_return_code, "REALLY BAD!\nBAD NODE\n"
    return args.default_return_code, "Passed!\n"


def check_on_server(socket_path, args):
    """The check made by the server at socket_path, or None when it cannot be reached."""
    import socket

    request = dict(vars(args), model=os.path.abspath(args.model))
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(socket_path)
            conn.sendall((json.dumps(request) + "\n").encode())
            reply = json.loads(conn.makefile().readline())
    except (OSError, ValueError):
        return None
    return reply["code"], reply["output"]


def main():
    args = parse(sys.argv[1:])
    result = check_on_server(os.environ[SERVER_ENV], args) if os.environ.get(SERVER_ENV) else None
    code, output = result or check(args)
    sys.stdout.write(output)
    return code


if __name__ == "__main__":
    sys.exit(main())
