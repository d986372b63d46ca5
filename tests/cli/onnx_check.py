"""Runs ONNX's checker, onnx.checker.check_model(path, full_check=True), on every model named on
the command line, and prints one JSON object per model and line:
    {"path": PATH, "error": null}  or  {"path": PATH, "error": "<exception type>: <message>"}
Exits 0 unless it could not run at all.

Run with the Python of the tests' virtual environment (.venv, made by ./setup.sh from
tests/requirements.txt), whose onnx checks IR versions 9 and 10 that Debian's onnx 1.12 refuses.
The tests call it through vkgraphy_cli.onnx_checker_errors().
"""
import json
import sys

import onnx


def main(paths):
    for path in paths:
        try:
            onnx.checker.check_model(path, full_check=True)
            error = None
        except Exception as e:  # ValidationError, InferenceError, and protobuf errors for unreadable files
            error = f"{type(e).__name__}: {' '.join(str(e).split())}"
        print(json.dumps({"path": path, "error": error}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
