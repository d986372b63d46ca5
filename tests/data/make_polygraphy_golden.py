#!/usr/bin/python3
"""Writes the Polygraphy-format fixtures of this folder, byte for byte as Polygraphy writes them.

Polygraphy itself is not needed: this reproduces, with numpy only, the parts of it that decide
the bytes of its files (see docs/data-formats.md):

- polygraphy/json/serde.py: files are json.dumps(obj, cls=Encoder, indent=4); the Encoder turns
  each registered object into the dict its encode function returns, with
  "polygraphy_class": <type name> appended as the last key. A numpy array becomes
  {"array": base64(np.save(array, allow_pickle=False))}.
- polygraphy/comparator/struct.py: RunResults -> {"lst": [[runner_name, [IterationResult, ...]], ...]},
  IterationResult -> {"outputs": {name: LazyArray}, "runtime": seconds, "runner_name": name},
  LazyArray -> {"values": ndarray}. Polygraphy 0.49+ names that class "LazyArray"; 0.30-0.48
  named it "LazyNumpyArray" (0.49+ still reads that name, and vkgraphy writes it).
- polygraphy/comparator/data_loader.py: DataLoader draws inputs from np.random.RandomState(seed + iteration),
  in model input order: floats as random_sample(shape) * (max - min) + min cast to the dtype,
  integers and bools as randint(int(min), int(max) + 1, shape, dtype).
- Polygraphy before 0.30 wrote "__polygraphy_encoded_<class>": "polygraphy_serialized_json_type"
  markers and stored .npy bytes as latin-1 text instead of base64.

Run it from anywhere with /usr/bin/python3 (numpy required); it rewrites the files next to it.
"""

import base64
import io
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class LazyArray:
    def __init__(self, values, class_name):
        self.values = values
        self.class_name = class_name


class IterationResult:
    def __init__(self, outputs, runtime, runner_name, lazy_class):
        self.outputs = {name: LazyArray(arr, lazy_class) for name, arr in outputs.items()}
        self.runtime = runtime
        self.runner_name = runner_name


class RunResults:
    def __init__(self, lst):
        self.lst = lst


def npy_bytes(array):
    outfile = io.BytesIO()
    np.save(outfile, array, allow_pickle=False)
    outfile.seek(0)
    return outfile.read()


class Encoder(json.JSONEncoder):
    """Polygraphy's Encoder: the registered encode function's dict, then the class marker."""

    def default(self, o):
        if isinstance(o, np.ndarray):
            return {"array": base64.b64encode(npy_bytes(o)).decode(), "polygraphy_class": "ndarray"}
        if isinstance(o, LazyArray):
            return {"values": o.values, "polygraphy_class": o.class_name}
        if isinstance(o, IterationResult):
            return {
                "outputs": o.outputs,
                "runtime": o.runtime,
                "runner_name": o.runner_name,
                "polygraphy_class": "IterationResult",
            }
        if isinstance(o, RunResults):
            return {"lst": o.lst, "polygraphy_class": "RunResults"}
        return super().default(o)


def to_json(obj):
    return json.dumps(obj, cls=Encoder, indent=4)


def save(name, text):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(text)


def data_loader(specs, seed, iterations):
    """Polygraphy's DataLoader.__getitem__ for each iteration; specs are (name, dtype, shape, val_range)."""
    feeds = []
    for index in range(iterations):
        rng = np.random.RandomState(seed + index)
        feed = {}
        for name, dtype, shape, val_range in specs:
            lo, hi = val_range if val_range is not None else (0.0, 1.0)
            if np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_):
                cast = int if np.issubdtype(dtype, np.integer) else bool
                buffer = rng.randint(low=cast(lo), high=cast(hi) + 1, size=shape, dtype=dtype)
            else:
                lo, hi = float(lo), float(hi)
                scale, shift = hi - lo, lo
                if math.isinf(lo):
                    scale, shift = lo, 0
                if math.isinf(hi):
                    scale = hi
                with np.errstate(over="ignore", invalid="ignore"):  # infinite ranges and f16 overflow
                    buffer = (rng.random_sample(size=shape) * scale + shift).astype(dtype)
            feed[name] = np.array(buffer)
        feeds.append(feed)
    return feeds


def identity_files():
    """`polygraphy run identity.onnx --onnxrt --save-inputs ... --save-outputs ...` (seed 1)."""
    runner = "onnxrt-runner-N0-01/01/24-00:00:00"
    inputs = data_loader([("x", np.float32, (1, 1, 2, 2), None)], seed=1, iterations=1)
    save("polygraphy_golden_identity_inputs.json", to_json(inputs))
    for lazy_class, file_name in [
        ("LazyArray", "polygraphy_golden_identity.json"),
        ("LazyNumpyArray", "polygraphy_golden_identity_legacy.json"),
    ]:
        result = IterationResult({"y": inputs[0]["x"]}, 0.000123, runner, lazy_class)
        save(file_name, to_json(RunResults([(runner, [result])])))


def multi_runner_file():
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
            iterations.append(IterationResult(outputs, runtime, runner, "LazyArray"))
        runs.append((runner, iterations))
    save("polygraphy_golden_multi.json", to_json(RunResults(runs)))


def legacy_marker_file():
    """Pre-0.30 style: legacy class markers and latin-1 .npy payloads, outputs as plain arrays."""
    marker = "polygraphy_serialized_json_type"
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    doc = {
        "lst": [[
            "trt-runner-N0-01/01/21-00:00:00",
            [{
                "outputs": {"out": {"array": npy_bytes(array).decode("latin-1"), "__polygraphy_encoded_ndarray": marker}},
                "runtime": 0.5,
                "runner_name": "trt-runner-N0-01/01/21-00:00:00",
                "__polygraphy_encoded_IterationResult": marker,
            }],
        ]],
        "__polygraphy_encoded_RunResults": marker,
    }
    save("polygraphy_legacy_markers.json", json.dumps(doc, indent=4))


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


def data_loader_file():
    """What Polygraphy's DataLoader(seed=7, iterations=2) generates for DATA_LOADER_SPECS."""
    save("polygraphy_dataloader_golden.json", to_json(data_loader(DATA_LOADER_SPECS, seed=7, iterations=2)))


if __name__ == "__main__":
    identity_files()
    multi_runner_file()
    legacy_marker_file()
    data_loader_file()
