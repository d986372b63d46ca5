#!/usr/bin/env python3
"""Writes the Polygraphy-format fixtures of this folder with the real Polygraphy.

Run it with the Python of the test environment that ./setup.sh makes (Polygraphy is pinned in
tests/requirements.txt):

    .venv/bin/python tests/data/make_polygraphy_golden.py [OUT_DIR]

It writes into OUT_DIR (default: the folder of this script). tests/cli/test_data_files.py runs it
into a temporary folder and checks that every file it writes equals the committed one byte for
byte, so the fixtures stay what the installed Polygraphy writes.

- Inputs come from Polygraphy's DataLoader (polygraphy.comparator.DataLoader) and are saved as
  `polygraphy run --save-inputs` saves them (polygraphy.json.save_json of the list of feeds).
- Outputs are RunResults of IterationResults saved as `polygraphy run --save-outputs` saves them.
- Two files come from Polygraphy versions PyPI no longer serves and are written by hand here:
  polygraphy_golden_identity_legacy.json is the identity golden with the array wrapper named
  "LazyNumpyArray", as Polygraphy before the rename to "LazyArray" wrote it (current versions
  still read that name, through the alias of their LazyArray decoder);
  polygraphy_legacy_markers.json has the "__polygraphy_encoded_<class>" markers and latin-1
  .npy payloads of Polygraphy before 0.30.
"""

import json
import math
import os
import sys

import numpy as np
from polygraphy.common import TensorMetadata
from polygraphy.comparator import DataLoader, IterationResult, RunResults
from polygraphy.json import save_json
from polygraphy.logger import G_LOGGER


def data_loader(specs, seed, iterations):
    """The feeds of Polygraphy's DataLoader; specs are (name, dtype, shape, val_range or None)."""
    metadata = TensorMetadata()
    val_range = {}
    for name, dtype, shape, value_range in specs:
        metadata.add(name, dtype, shape)
        if value_range is not None:
            val_range[name] = value_range
    loader = DataLoader(seed=seed, iterations=iterations, input_metadata=metadata, val_range=val_range)
    with np.errstate(over="ignore", invalid="ignore"):  # infinite ranges and fp16 overflow, as in `polygraphy run`
        return [feed for feed in loader]


def run_results(runs):
    """RunResults of [(runner_name, [(outputs, runtime), ...]), ...] as Polygraphy's runners record them."""
    results = RunResults()
    for runner, iterations in runs:
        results.append((runner, [IterationResult(outputs, runtime, runner) for outputs, runtime in iterations]))
    return results


def identity_files(out):
    """`polygraphy run identity.onnx --onnxrt --seed 1 --save-inputs ... --save-outputs ...`."""
    runner = "onnxrt-runner-N0-01/01/24-00:00:00"
    inputs = data_loader([("x", np.float32, (1, 1, 2, 2), None)], seed=1, iterations=1)
    save_json(inputs, os.path.join(out, "polygraphy_golden_identity_inputs.json"))
    golden = run_results([(runner, [({"y": inputs[0]["x"]}, 0.000123)])])
    golden.save(os.path.join(out, "polygraphy_golden_identity.json"))
    text = golden.to_json()
    legacy = text.replace('"polygraphy_class": "LazyArray"', '"polygraphy_class": "LazyNumpyArray"')
    assert legacy != text
    with open(os.path.join(out, "polygraphy_golden_identity_legacy.json"), "w") as f:
        f.write(legacy)


def multi_runner_file(out):
    """Two runners, two iterations, outputs of several dtypes and shapes (scalars, 1-tuples, empty)."""
    rng = np.random.RandomState(3)
    runs = []
    for runner, runtimes in [("onnxrt-runner-N0-01/01/24-00:00:00", [0.5, 0.25]),
                             ("trt-runner-N0-01/01/24-00:00:01", [1e-05, 2.0])]:
        iterations = []
        for runtime in runtimes:
            outputs = {
                "logits": rng.standard_normal((2, 3)).astype(np.float32),
                "scale": np.array(rng.standard_normal(), dtype=np.float16),
                "indices": rng.randint(-5, 5, size=(3,)).astype(np.int64),
                "mask": rng.randint(0, 2, size=(2, 2)).astype(bool),
                "empty": np.zeros((0, 3), dtype=np.uint8),
                "sum": np.array([rng.standard_normal()], dtype=np.float64),
                "i8": np.array([-128, 0, 127], dtype=np.int8),
                "u16": np.array([[0, 65535]], dtype=np.uint16),
                "i32": np.array([-2147483648, 7], dtype=np.int32),
                "u32": np.array([4294967295], dtype=np.uint32),
                "u64": np.array([18446744073709551615], dtype=np.uint64),
                "i16": np.array([-32768], dtype=np.int16),
            }
            iterations.append((outputs, runtime))
        runs.append((runner, iterations))
    run_results(runs).save(os.path.join(out, "polygraphy_golden_multi.json"))


def legacy_marker_file(out):
    """Before 0.30: legacy class markers and latin-1 .npy payloads, outputs as plain arrays."""
    import io

    marker = "polygraphy_serialized_json_type"
    buffer = io.BytesIO()
    np.save(buffer, np.arange(6, dtype=np.float32).reshape(2, 3), allow_pickle=False)
    doc = {
        "lst": [[
            "trt-runner-N0-01/01/21-00:00:00",
            [{
                "outputs": {"out": {"array": buffer.getvalue().decode("latin-1"),
                                    "__polygraphy_encoded_ndarray": marker}},
                "runtime": 0.5,
                "runner_name": "trt-runner-N0-01/01/21-00:00:00",
                "__polygraphy_encoded_IterationResult": marker,
            }],
        ]],
        "__polygraphy_encoded_RunResults": marker,
    }
    with open(os.path.join(out, "polygraphy_legacy_markers.json"), "w") as f:
        f.write(json.dumps(doc, indent=4))


# Keep in sync with kDataLoaderSpecs in tests/unit/test_data_loader.cpp.
DATA_LOADER_SPECS = [
    ("f32", np.float32, (2, 3, 4), None),
    ("f16", np.float16, (5, 7), (-100, 100)),
    ("f64", np.float64, (4,), (-1000.0, 1000.0)),
    ("i8", np.int8, (9,), (-3, 5)),
    ("u8", np.uint8, (17,), (0, 255)),
    ("i16", np.int16, (5,), (-1000, 1000)),
    ("u16", np.uint16, (6,), (0, 65535)),
    ("i32", np.int32, (3, 3), (-2147483648, 2147483647)),
    ("u32", np.uint32, (4,), (0, 10)),
    ("i64", np.int64, (2, 5), (-1000000000000, 1000000000000)),
    ("i64_default", np.int64, (7,), None),
    ("u64", np.uint64, (3,), (0, 2 ** 40)),
    ("b", np.bool_, (37,), None),
    ("scalar", np.float32, (), (2.5, 2.5)),
    ("f32_inf", np.float32, (6,), (-math.inf, math.inf)),
    ("truncated", np.int32, (8,), (-1.5, 2.7)),
    ("empty", np.float32, (0, 3), None),
    ("f16_wide", np.float16, (64,), (-70000.0, 70000.0)),
]


def data_loader_file(out):
    """What Polygraphy's DataLoader(seed=7, iterations=2) generates for DATA_LOADER_SPECS."""
    save_json(data_loader(DATA_LOADER_SPECS, seed=7, iterations=2),
              os.path.join(out, "polygraphy_dataloader_golden.json"))


if __name__ == "__main__":
    G_LOGGER.module_severity = G_LOGGER.WARNING
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    identity_files(out_dir)
    multi_runner_file(out_dir)
    legacy_marker_file(out_dir)
    data_loader_file(out_dir)
