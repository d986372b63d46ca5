"""Shared helpers for the command-line scenario tests (run by ctest, see tests/CMakeLists.txt)."""
import base64
import io
import json
import os
import subprocess
import tempfile
import unittest
import zipfile

import numpy as np

BIN = os.environ.get("VKGRAPHY_BIN", "build/vkgraphy")
SOURCE_DIR = os.environ.get("VKGRAPHY_SOURCE_DIR", ".")
MODELS = os.path.join(SOURCE_DIR, "tests", "models", "polygraphy")
VK_MODELS = os.path.join(SOURCE_DIR, "tests", "models", "vk")

# Vulkan runs use lavapipe (unless the environment names a driver) with the
# Khronos validation layer on: any validation message fails the command.
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if "VK_DRIVER_FILES" not in os.environ and "VK_ICD_FILENAMES" not in os.environ and os.path.exists(LAVAPIPE_ICD):
    os.environ["VK_DRIVER_FILES"] = LAVAPIPE_ICD
os.environ.setdefault("VKGRAPHY_VK_VALIDATION", "1")

# The tests' Python virtual environment (./setup.sh makes it from tests/requirements.txt), for
# Python packages newer than Debian's: its onnx checks models of IR version 9 and above.
VENV = os.path.abspath(os.environ.get("VKGRAPHY_VENV") or os.path.join(SOURCE_DIR, ".venv"))
VENV_PYTHON = os.path.join(VENV, "bin", "python")
ONNX_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_check.py")


# Wheels carrying real models, which ./setup.sh downloads (tests/model_wheels.txt).
MODEL_WHEELS = os.path.join(VENV, "model-wheels")


def wheel_member(wheel_prefix, member):
    """The bytes of `member` of the model wheel `<wheel_prefix>-*.whl`; a missing wheel fails the test."""
    wheels = sorted(f for f in os.listdir(MODEL_WHEELS) if f.startswith(wheel_prefix + "-")) \
        if os.path.isdir(MODEL_WHEELS) else []
    if not wheels:
        raise AssertionError(f"no {wheel_prefix} wheel in {MODEL_WHEELS}: run ./setup.sh "
                             "(it downloads tests/model_wheels.txt)")
    with zipfile.ZipFile(os.path.join(MODEL_WHEELS, wheels[0])) as z:
        return z.read(member)


def model(name):
    return os.path.join(MODELS, name)


def onnx_checker_errors(paths):
    """ONNX's checker (the virtual environment's onnx, full_check=True) on each model, in one process:
    {path: None where it passed, else "<exception type>: <message>"}. A missing virtual environment
    fails the test (AssertionError), it does not skip it."""
    if not os.access(VENV_PYTHON, os.X_OK):
        raise AssertionError(f"{VENV_PYTHON} is missing: run ./setup.sh to create the test virtual environment "
                             f"(or point VKGRAPHY_VENV at one)")
    proc = subprocess.run([VENV_PYTHON, ONNX_CHECK, *paths], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"onnx_check.py failed (exit code {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    results = {r["path"]: r["error"] for r in map(json.loads, proc.stdout.splitlines())}
    if set(results) != set(paths):
        raise AssertionError(f"onnx_check.py did not answer for every model:\n{proc.stdout}{proc.stderr}")
    return results


# Polygraphy's data files (docs/data-formats.md), read and written with json and numpy alone.
# An array is {"array": base64 of its .npy bytes, "polygraphy_class": "ndarray"}; an outputs file
# (RunResults) is {"lst": [[runner, [{"outputs": {name: LazyArray}, ...}, ...]], ...]}, where a
# LazyArray is {"values": array, "polygraphy_class": "LazyArray" or "LazyNumpyArray"}.
def decode_array(obj):
    """A numpy array from its JSON object (an ndarray, or a LazyArray holding one)."""
    if obj.get("polygraphy_class") != "ndarray":
        obj = obj["values"]
    return np.load(io.BytesIO(base64.b64decode(obj["array"].encode(), validate=True)), allow_pickle=False)


def encode_array(array):
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode(), "polygraphy_class": "ndarray"}


def load_outputs(path):
    """An outputs file (RunResults) as {runner: [{output name: array} per iteration]}."""
    with open(path) as f:
        data = json.load(f)
    assert data["polygraphy_class"] == "RunResults", path
    return {runner: [{name: decode_array(obj) for name, obj in it["outputs"].items()} for it in iterations]
            for runner, iterations in data["lst"]}


def load_inputs(path):
    """An inputs file as [{input name: array} per iteration]."""
    with open(path) as f:
        return [{name: decode_array(obj) for name, obj in feed.items()} for feed in json.load(f)]


def edit_outputs(src, dst, edit):
    """Copies the outputs file `src` to `dst` with every output array replaced by edit(name, array);
    everything else in the file stays as it was."""
    with open(src) as f:
        data = json.load(f)
    for _, iterations in data["lst"]:
        for it in iterations:
            for name, obj in it["outputs"].items():
                target = obj if obj.get("polygraphy_class") == "ndarray" else obj["values"]
                target.update(encode_array(edit(name, decode_array(target))))
    with open(dst, "w") as f:
        json.dump(data, f)


class CliTestCase(unittest.TestCase):
    """Runs the vkgraphy binary in a fresh temporary folder per test."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="vkgraphy_cli_")
        self.tmp = self._tmp.name
        # --deterministic keeps measurements in a default timing cache: one per test, never the user's.
        os.environ["VKGRAPHY_CACHE_DIR"] = os.path.join(self.tmp, ".vkgraphy-cache")
        # And the temporary files of the processes a test starts (Polygraphy's shape inference
        # leaves its tmp_polygraphy_*.onnx behind): in the test's folder, removed with it.
        os.environ["TMPDIR"] = self.tmp

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def read_json(self, name):
        with open(self.path(name)) as f:
            return json.load(f)

    def write_json(self, name, value):
        with open(self.path(name), "w") as f:
            json.dump(value, f)

    def vkgraphy(self, *args, expect=0, timeout=300, env=None):
        full_env = dict(os.environ, **(env or {}))
        proc = subprocess.run([BIN, *map(str, args)], cwd=self.tmp, capture_output=True, text=True, timeout=timeout,
                              env=full_env)
        out = proc.stdout + proc.stderr
        self.assertGreaterEqual(proc.returncode, 0, f"vkgraphy crashed (signal {-proc.returncode}):\n{out}")
        if expect is not None:
            self.assertEqual(proc.returncode, expect, f"vkgraphy {' '.join(map(str, args))}\n{out}")
        return out
