"""Shared set-up of the Python module tests (ctest runs them with the test venv's Python, see
tests/CMakeLists.txt): lavapipe with the Khronos validation layer on (any message fails the call
that caused it), and `vkgraphy` imported from the build tree."""
import atexit
import os
import sys
import tempfile

SOURCE_DIR = os.environ.get("VKGRAPHY_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_PYTHON = os.environ.get("VKGRAPHY_PYTHON_DIR", os.path.join(SOURCE_DIR, "build", "python"))
VK_MODELS = os.path.join(SOURCE_DIR, "tests", "models", "vk")
MODELS = os.path.join(SOURCE_DIR, "tests", "models", "polygraphy")
EXAMPLE = os.path.join(VK_MODELS, "example.onnx")
BIN = os.environ.get("VKGRAPHY_BIN", os.path.join(SOURCE_DIR, "build", "vkgraphy"))

LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if "VK_DRIVER_FILES" not in os.environ and "VK_ICD_FILENAMES" not in os.environ and os.path.exists(LAVAPIPE_ICD):
    os.environ["VK_DRIVER_FILES"] = LAVAPIPE_ICD
os.environ.setdefault("VKGRAPHY_VK_VALIDATION", "1")
# Temporary files, this process's and its children's, in one folder removed at exit: Polygraphy's
# shape inference leaves its tmp_polygraphy_*.onnx behind.
_TMP = tempfile.TemporaryDirectory(prefix="vkgraphy_py_")
atexit.register(_TMP.cleanup)
tempfile.tempdir = os.environ["TMPDIR"] = _TMP.name
if BUILD_PYTHON not in sys.path:
    sys.path.insert(0, BUILD_PYTHON)
os.environ["PYTHONPATH"] = BUILD_PYTHON + os.pathsep + os.environ.get("PYTHONPATH", "")

import vkgraphy  # noqa: E402  (after the path and the environment are set)

# Polygraphy's own logging, quiet unless a test fails.
try:
    from polygraphy.logger import G_LOGGER

    G_LOGGER.module_severity = G_LOGGER.WARNING
except ImportError:
    pass


def model(name):
    return os.path.join(MODELS, name)
