"""Shared helpers for the command-line scenario tests (run by ctest, see tests/CMakeLists.txt)."""
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("VKGRAPHY_BIN", "build/vkgraphy")
SOURCE_DIR = os.environ.get("VKGRAPHY_SOURCE_DIR", ".")
MODELS = os.path.join(SOURCE_DIR, "tests", "models", "polygraphy")


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

    def vkgraphy(self, *args, expect=0, timeout=300):
        proc = subprocess.run([BIN, *map(str, args)], cwd=self.tmp, capture_output=True, text=True, timeout=timeout)
        out = proc.stdout + proc.stderr
        self.assertGreaterEqual(proc.returncode, 0, f"vkgraphy crashed (signal {-proc.returncode}):\n{out}")
        if expect is not None:
            self.assertEqual(proc.returncode, expect, f"vkgraphy {' '.join(map(str, args))}\n{out}")
        return out
