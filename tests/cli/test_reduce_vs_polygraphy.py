"""`vkgraphy debug reduce` and the real `polygraphy debug reduce` with the same fake checker
(fake_reduce_checker.py, counting its runs) on reducable.onnx (each failing node),
branchy.onnx and PP-OCRv4 det, in bisect and linear modes. Prints one `REDUCE` line per
case (the table of docs/debug.md) and asserts that vkgraphy's result is never larger and,
at the same size, takes no more checks, although it checks the original model first (a
model that passes is reported, not reduced), which Polygraphy does not."""
import os
import subprocess
import sys
import unittest

import onnx

from checker_server import CheckerServer
from vkgraphy_cli import BIN, VENV, VENV_PYTHON, VK_MODELS, CliTestCase, model, wheel_member

POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")
CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_reduce_checker.py")
CHECKER_SERVER = CheckerServer(VENV_PYTHON)  # the fake checker's checks in one process (checker_server.py)


def setUpModule():
    CHECKER_SERVER.start()


def tearDownModule():
    CHECKER_SERVER.stop()


def det_model(dst_dir):
    det = onnx.load_from_string(
        wheel_member("rapidocr_onnxruntime-1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"))
    for i, node in enumerate(det.graph.node):  # the exporter leaves nodes unnamed: the checker needs names
        node.name = node.name or f"{node.op_type}_{i}"
    dst = os.path.join(dst_dir, "det.onnx")
    onnx.save(det, dst)
    return dst


class TestReduceVsPolygraphy(CliTestCase):
    def reduce_with(self, tool, path, fail_nodes, mode, extra):
        counter = self.path(f"{tool}.count")
        open(counter, "w").close()
        debug_model = "polygraphy_debug.onnx" if tool == "polygraphy" else "vkgraphy_debug.onnx"
        check = ["sh", "-c", f'echo x >> {counter}; exec "$@"', "sh", VENV_PYTHON, CHECKER, debug_model, "--fail-node",
                 *fail_nodes]
        cmd = [POLYGRAPHY if tool == "polygraphy" else BIN, "debug", "reduce", path, "-o", f"{tool}_reduced.onnx",
               "--mode", mode, *extra, "--check", *check]
        proc = subprocess.run(cmd, cwd=self.tmp, capture_output=True, text=True, timeout=900)
        self.assertEqual(proc.returncode, 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
        with open(counter) as f:
            checks = len(f.readlines())
        nodes = len(onnx.load(self.path(f"{tool}_reduced.onnx")).graph.node)
        return nodes, checks

    def compare(self, label, path, fail_nodes, extra=(), modes=("bisect", "linear")):
        for mode in modes:
            with self.subTest(model=label, fail=fail_nodes, mode=mode):
                pg = self.reduce_with("polygraphy", path, fail_nodes, mode, list(extra))
                vk = self.reduce_with("vkgraphy", path, fail_nodes, mode, list(extra))
                print(f"REDUCE model={label} fail={'+'.join(fail_nodes)} mode={mode} "
                      f"polygraphy_nodes={pg[0]} polygraphy_checks={pg[1]} vkgraphy_nodes={vk[0]} vkgraphy_checks={vk[1]}",
                      file=sys.stderr)
                self.assertLessEqual(vk[0], pg[0], "vkgraphy's reduced model is larger")
                if vk[0] == pg[0]:
                    self.assertLessEqual(vk[1], pg[1], "vkgraphy takes more checks for a result of the same size")

    def test_reducable_each_failing_node(self):
        path = model("reducable.onnx")
        for node in onnx.load(path).graph.node:
            self.compare("reducable", path, [node.name])

    def test_branchy(self):
        path = os.path.join(VK_MODELS, "branchy.onnx")
        nodes = [n.name for n in onnx.load(path).graph.node]
        self.compare("branchy", path, [nodes[len(nodes) // 2]])

    def test_pp_ocrv4_det(self):
        path = det_model(self.tmp)
        nodes = [n.name for n in onnx.load(path).graph.node if n.op_type == "Conv"]  # Constants fold away
        # Bisect only: linear mode checks each of its ~400 nodes, minutes for each tool.
        self.compare("pp_ocrv4_det", path, [nodes[len(nodes) // 3]], extra=["--model-input-shapes", "x:[1,3,64,64]"],
                     modes=("bisect",))


if __name__ == "__main__":
    unittest.main()
