"""Shared helpers for the command-line scenario tests (run by ctest, see tests/CMakeLists.txt)."""
import json
import os
import subprocess
import tempfile
import unittest

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


def model(name):
    return os.path.join(MODELS, name)


class CliTestCase(unittest.TestCase):
    """Runs the vkgraphy binary in a fresh temporary folder per test."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="vkgraphy_cli_")
        self.tmp = self._tmp.name

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
