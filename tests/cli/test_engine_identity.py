"""The same engines before and after a change that should not change them (a refactoring of the
builder, the graph optimizer or the tactics): every test model built with fixed tactic selections
(no timing: the first valid tactic in heuristic order, and seeded random choices in fp32 and
fp16), summarized as `inspect model` shows the engine (layers, fused nodes, tactics, precisions,
dispatches, memory), against tests/models/engine_identity.txt.

A change that means to change engines regenerates the file and shows the difference in review:

    VKGRAPHY_UPDATE_IDENTITY=1 python3 -m unittest test_engine_identity   (from tests/cli, on lavapipe)

The goldens are lavapipe's (tactics decline by device features and limits); on another device
the test is skipped."""
import difflib
import os
import re
import subprocess
import tempfile
import unittest

from vkgraphy_cli import BIN, SOURCE_DIR

MODEL_DIRS = ["polygraphy", "vk", "fuzz"]
GOLDEN = os.path.join(SOURCE_DIR, "tests", "models", "engine_identity.txt")
SELECTIONS = {
    "heuristic": ["--builder-optimization-level", "0"],
    "random7": ["--tactic-selection", "random:7"],
    "random7-fp16": ["--tactic-selection", "random:7", "--fp16"],
}
INPUT_SHAPES = {"residual_block.onnx": ["--input-shapes", "gpu_0/data_0:[1,3,224,224]"]}
# The lines of `inspect model` that say what the engine is; the device and version lines are left out.
KEPT = re.compile(r"^\s*(Layer \d+|Fused nodes:|Memory slots:|\{|->)")


def models():
    for d in MODEL_DIRS:
        folder = os.path.join(SOURCE_DIR, "tests", "models", d)
        for f in sorted(os.listdir(folder)):
            if f.endswith(".onnx"):
                yield d, f


def summary(model_path, flags, work):
    """The engine's summary lines, or the first line of the build's error."""
    engine = os.path.join(work, "m.engine")
    if os.path.exists(engine):
        os.remove(engine)
    build = subprocess.run([BIN, "convert", model_path, "-o", engine, *flags], capture_output=True, text=True,
                           timeout=300)
    if build.returncode != 0:
        errors = [line for line in (build.stdout + build.stderr).splitlines() if line.startswith("[E]")]
        first = errors[0] if errors else "(no message)"
        return [f"build failed: {first.replace(SOURCE_DIR, '<src>')}"]
    shown = subprocess.run([BIN, "inspect", "model", engine], capture_output=True, text=True, timeout=120)
    if shown.returncode != 0:
        return ["inspect failed"]
    return [line.rstrip() for line in shown.stdout.splitlines() if KEPT.match(line)]


def current_engines():
    lines = []
    with tempfile.TemporaryDirectory() as work:
        for d, f in models():
            for name, flags in SELECTIONS.items():
                lines.append(f"== {d}/{f} | {name}")
                lines += summary(os.path.join(SOURCE_DIR, "tests", "models", d, f), flags + INPUT_SHAPES.get(f, []),
                                 work)
    return lines


def on_lavapipe():
    proc = subprocess.run([BIN, "inspect", "device"], capture_output=True, text=True, timeout=60)
    return "(selected by default)" in proc.stdout and re.search(r"\] llvmpipe", proc.stdout) is not None


class TestEngineIdentity(unittest.TestCase):
    def test_engines_match_the_goldens(self):
        if not on_lavapipe():
            self.skipTest("the goldens are lavapipe's engines")
        got = current_engines()
        if os.environ.get("VKGRAPHY_UPDATE_IDENTITY"):
            with open(GOLDEN, "w") as f:
                f.write("\n".join(got) + "\n")
        with open(GOLDEN) as f:
            want = f.read().splitlines()
        if got != want:
            diff = "\n".join(list(difflib.unified_diff(want, got, "golden", "now", lineterm="", n=2))[:80])
            self.fail(f"engines differ from tests/models/engine_identity.txt (VKGRAPHY_UPDATE_IDENTITY=1 "
                      f"regenerates it when the change is meant):\n{diff}")
        builds = sum(1 for line in got if line.startswith("=="))
        failed = sum(1 for line in got if line.startswith("build failed"))
        self.assertGreater(builds - failed, 120, "too few models build: the comparison would say little")


if __name__ == "__main__":
    unittest.main()
