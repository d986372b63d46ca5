#!/usr/bin/python3
"""Reads a Polygraphy outputs or inputs file with the json module and numpy alone (no Polygraphy)
and prints one line per array: <where> <dtype> <shape> <hex of the array's bytes>.

Used by tests/unit/test_data_run_results.cpp to check that files vkgraphy writes load with numpy.
Usage: read_with_numpy.py FILE
"""

import base64
import io
import json
import sys

import numpy as np


def load_array(dct):
    # Exactly what Polygraphy's ndarray decoder does.
    assert dct["polygraphy_class"] == "ndarray", dct.get("polygraphy_class")
    data = base64.b64decode(dct["array"].encode(), validate=True)
    return np.load(io.BytesIO(data), allow_pickle=False)


def show(where, array):
    shape = "(" + ",".join(str(d) for d in array.shape) + ")"
    print(where, array.dtype.name, shape, array.tobytes().hex() or "-")


def main(path):
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, list):
        for index, feed in enumerate(doc):
            for name, array in feed.items():
                show(f"inputs[{index}][{name}]", load_array(array))
        return
    assert doc["polygraphy_class"] == "RunResults"
    for runner, iterations in doc["lst"]:
        for index, result in enumerate(iterations):
            assert result["polygraphy_class"] == "IterationResult"
            assert result["runner_name"] == runner
            for name, lazy in result["outputs"].items():
                assert lazy["polygraphy_class"] in ("LazyArray", "LazyNumpyArray")
                show(f"{runner}[{index}][{name}]", load_array(lazy["values"]))


if __name__ == "__main__":
    main(sys.argv[1])
