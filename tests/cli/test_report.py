"""`--report FILE.html` (docs/cli.md, "HTML reports"): the self-contained page
that convert, run and the debug tools write. Each page is checked twice: as
text (no reference to anything outside the file) and as rendered by headless
Chromium (Debian's `chromium`), whose DOM must hold the layer table, the
charts, the candidate details, the error chart and the iterations table.

Chromium is a required part of the test environment (setup.sh installs it):
without it these tests fail, unless VKGRAPHY_ALLOW_NO_CHROMIUM=1, which turns
the rendering checks into skips."""
import html.parser
import os
import shutil
import subprocess
import unittest

import onnx
from onnx import TensorProto, helper, numpy_helper
import numpy as np

from vkgraphy_cli import CliTestCase

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ALLOW_NO_CHROMIUM = os.environ.get("VKGRAPHY_ALLOW_NO_CHROMIUM") == "1"

# Node names with characters HTML must escape.
CONV = 'conv<1>&"a"'
RELU = "relu'1'"
SIG = "sig<2>"


def make_model(path):
    """X[1,3,8,8] -> Conv(+bias) -> Relu -> Sigmoid -> Y: Conv and Relu fuse into one layer."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    nodes = [
        helper.make_node("Conv", ["X", "w", "b"], ["c"], name=CONV, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name=RELU),
        helper.make_node("Sigmoid", ["r"], ["Y"], name=SIG),
    ]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 8, 8])
    graph = helper.make_graph(nodes, "report_test", [x], [y], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], ""

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def find_all(self, tag=None, cls=None, id=None):
        out = []
        for c in self.children:
            if ((tag is None or c.tag == tag) and (cls is None or cls in c.classes())
                    and (id is None or c.attrs.get("id") == id)):
                out.append(c)
            out.extend(c.find_all(tag, cls, id))
        return out

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


class DomParser(html.parser.HTMLParser):
    VOID = {"meta", "br", "link", "img", "input", "hr", "col", "area", "base", "wbr", "source"}

    def __init__(self):
        super().__init__()
        self.root = self.current = Element("#root", [], None)

    def handle_starttag(self, tag, attrs):
        e = Element(tag, attrs, self.current)
        self.current.children.append(e)
        if tag not in self.VOID:
            self.current = e

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, attrs, self.current))

    def handle_endtag(self, tag):
        e = self.current
        while e is not None and e.tag != tag:
            e = e.parent
        if e is not None and e.parent is not None:
            self.current = e.parent

    def handle_data(self, data):
        self.current.text += data


class ReportTestCase(CliTestCase):
    def setUp(self):
        super().setUp()
        self.model = self.path("model.onnx")
        make_model(self.model)

    def check_self_contained(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("<!DOCTYPE html>"), text[:100])
        for bad in ("http:", "https:", "src=", "@import", "<link", "<script", "url(", "@font-face"):
            self.assertNotIn(bad, text, f"{name} refers to something outside the file: {bad}")
        # Every name is escaped: the raw node names never appear.
        for raw in (CONV, SIG):
            self.assertNotIn(raw, text)
        return text

    def render(self, name):
        """The DOM as headless Chromium renders it."""
        if not CHROMIUM:
            if ALLOW_NO_CHROMIUM:
                self.skipTest("chromium is not installed (VKGRAPHY_ALLOW_NO_CHROMIUM=1): rendering not checked")
            self.fail("chromium is not installed: setup.sh installs it (apt-get install chromium); set "
                      "VKGRAPHY_ALLOW_NO_CHROMIUM=1 to skip the rendering checks")
        # --no-sandbox: the tests run as root in CI; --disable-dev-shm-usage: containers with a small /dev/shm.
        proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                               "--no-first-run", "--user-data-dir=" + self.path("chromium-profile"), "--dump-dom",
                               "file://" + self.path(name)], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        parser = DomParser()
        parser.feed(proc.stdout)
        body = parser.root.find_all("body")
        self.assertEqual(len(body), 1, proc.stdout[:2000])
        return parser.root

    def check_engine(self, dom, layers, with_candidates=True):
        """The layer table, one row per engine layer; the time chart, one bar per layer; candidate details."""
        table = dom.find_all("table", id="layers")
        self.assertEqual(len(table), 1)
        rows = table[0].find_all("tr", cls="layer")
        self.assertEqual(len(rows), layers)
        chart = dom.find_all("svg", cls="time-chart")
        self.assertEqual(len(chart), 1)
        self.assertEqual(len(chart[0].find_all("rect", cls="bar")), layers)
        details = dom.find_all("details", cls="candidates")
        if with_candidates:
            self.assertEqual(len(details), layers)
            for d in details:
                self.assertGreaterEqual(len(d.find_all("tr", cls="candidate")), 1)
                self.assertEqual(len(d.find_all("tr", cls="chosen")), 1)
        else:
            self.assertEqual(details, [])
        return rows


class TestConvertReport(ReportTestCase):
    def test_engine_layers_candidates_and_time_chart(self):
        self.vkgraphy("convert", self.model, "-o", "m.engine", "--validate-tactics", "--report", "convert.html")
        self.check_self_contained("convert.html")
        dom = self.render("convert.html")
        rows = self.check_engine(dom, 2)
        # The fused layer lists its ONNX nodes (unescaped again by the browser).
        first = rows[0].all_text()
        self.assertIn(CONV, first)
        self.assertIn(RELU, first)
        self.assertIn(SIG, rows[1].all_text())
        # --validate-tactics: every candidate table has the validation error column.
        for d in dom.find_all("details", cls="candidates"):
            self.assertIn("validation error", d.all_text())

    def test_unwritable_path_is_a_clear_error(self):
        with open(self.path("file"), "w") as f:
            f.write("x")
        out = self.vkgraphy("convert", self.model, "-o", "m.engine", "--builder-optimization-level", "0",
                            "--report", "file/r.html", expect=2)
        self.assertIn("--report: cannot write 'file/r.html': 'file' is not a folder", out)
        self.assertFalse(os.path.exists(self.path("file/r.html")))
        os.mkdir(self.path("folder"))
        out = self.vkgraphy("convert", self.model, "-o", "m.engine", "--report", "folder", expect=2)
        self.assertIn("is a folder", out)


class TestRunReport(ReportTestCase):
    def test_compare_profile_and_loaded_engine(self):
        self.vkgraphy("run", self.model, "--vk", "--ref", "--profile", "--deterministic", "--report", "run.html")
        self.check_self_contained("run.html")
        dom = self.render("run.html")
        self.check_engine(dom, 2)
        self.assertIn("--profile", dom.find_all("section", id="engine")[0].all_text())
        charts = dom.find_all("svg", cls="error-chart")
        self.assertEqual(len(charts), 1)
        self.assertEqual(len(charts[0].find_all("rect", cls="bar")), 1)  # the one output
        self.assertEqual(len(dom.find_all("tr", cls="error-row")), 1)

        # A loaded engine has layers but no candidates: the page says so.
        self.vkgraphy("convert", self.model, "-o", "m.engine", "--builder-optimization-level", "0")
        self.vkgraphy("run", "m.engine", "--vk", "--report", "loaded.html")
        self.check_self_contained("loaded.html")
        dom = self.render("loaded.html")
        self.check_engine(dom, 2, with_candidates=False)
        self.assertIn("loaded from a file", dom.find_all("section", id="engine")[0].all_text())

    def test_mark_all_charts_the_error_per_layer(self):
        # --no-fusion: every node is a layer and every tensor a layer's output.
        self.vkgraphy("run", self.model, "--vk", "--ref", "--no-fusion", "--builder-optimization-level", "0",
                      "--vk-outputs", "mark", "all", "--onnx-outputs", "mark", "all", "--report", "all.html")
        self.check_self_contained("all.html")
        dom = self.render("all.html")
        self.check_engine(dom, 3, with_candidates=False)
        charts = dom.find_all("svg", cls="error-chart")
        self.assertEqual(len(charts), 1)
        self.assertEqual(len(charts[0].find_all("rect", cls="bar")), 3)
        names = [r.find_all("td")[0].all_text() for r in dom.find_all("tr", cls="error-row")]
        self.assertEqual([n.split(" ")[0] for n in names], ["c", "r", "Y"])  # in the engine's layer order


    def test_isolate_layers_charts_introduced_and_inherited_error(self):
        self.vkgraphy("run", self.model, "--vk", "--ref", "--isolate-layers", "--builder-optimization-level", "0",
                      "--report", "iso.html")
        self.check_self_contained("iso.html")
        dom = self.render("iso.html")
        self.check_engine(dom, 2, with_candidates=False)
        charts = dom.find_all("svg", cls="error-chart")
        self.assertEqual(len(charts), 1)
        self.assertEqual(len(charts[0].find_all("rect", cls="bar")), 2)  # one per engine layer
        self.assertEqual(len(charts[0].find_all("rect", cls="intro")), 2)
        table = dom.find_all("table", cls="errors")[0]
        self.assertIn("introduced", table.all_text())
        self.assertIn("inherited", table.all_text())


class TestDebugReport(ReportTestCase):
    def test_debug_build_iterations(self):
        # The check fails the first time and passes the second.
        check = ["sh", "-c", "test -e seen || { touch seen; exit 1; }"]
        self.vkgraphy("debug", "build", self.model, "--until", "2", "--tactic-selection", "random:1",
                      "--save-tactics", "replay.json", "--artifacts", "replay.json", "--report", "debug.html",
                      "--check", *check, expect=5)
        self.check_self_contained("debug.html")
        dom = self.render("debug.html")
        self.check_engine(dom, 2, with_candidates=False)
        table = dom.find_all("table", id="iterations")
        self.assertEqual(len(table), 1)
        rows = table[0].find_all("tr", cls="iteration")
        self.assertEqual(len(rows), 2)
        self.assertIn("fail", rows[0].classes())
        self.assertIn("pass", rows[1].classes())
        self.assertIn("build 0", rows[0].all_text())
        self.assertIn(os.path.join("bad", "replay_iter0_"), rows[0].all_text())
        self.assertIn(os.path.join("good", "replay_iter1_"), rows[1].all_text())
        self.assertIn("tactics that differ from the first build", table[0].all_text())
        # Iteration 0 is the first build: nothing changed.
        self.assertEqual(rows[0].find_all("ul"), [])

        # diff-tactics on the sorted replays: the suspects table (empty when both builds chose alike).
        self.vkgraphy("debug", "diff-tactics", "--dir", "vkgraphy_artifacts", "--report", "diff.html", expect=None)
        self.check_self_contained("diff.html")
        dom = self.render("diff.html")
        self.assertEqual(len(dom.find_all("table", id="suspects")), 1)

    def test_debug_build_side_by_side_reports_what_one_at_a_time_reports(self):
        # Random tactics: iterations differ from the first build; the jobs' engines are read back for the table.
        base = ["debug", "build", self.model, "--until", "4", "--tactic-selection", "random:3"]
        self.vkgraphy(*base, "--report", "serial.html", "--check", "true")
        os.remove(self.path("vkgraphy_debug_replay.json"))
        self.vkgraphy(*base, "--jobs", "2", "--report", "jobs.html", "--check", "true")
        changes = {}
        for name in ("serial.html", "jobs.html"):
            self.check_self_contained(name)
            dom = self.render(name)
            self.check_engine(dom, 2, with_candidates=False)
            rows = dom.find_all("table", id="iterations")[0].find_all("tr", cls="iteration")
            self.assertEqual(len(rows), 4)
            changes[name] = [[u.all_text() for u in row.find_all("ul")] for row in rows]
        self.assertEqual(changes["jobs.html"], changes["serial.html"])
        self.assertTrue(any(changes["serial.html"]), "random tactics changed nothing: the comparison shows nothing")

    def test_debug_repeat_iterations(self):
        self.vkgraphy("debug", "repeat", "--until", "3", "--report", "repeat.html", "--check", "true")
        self.check_self_contained("repeat.html")
        dom = self.render("repeat.html")
        self.assertEqual(len(dom.find_all("tr", cls="iteration")), 3)
        self.assertEqual(dom.find_all("table", id="layers"), [])
        # Resumed from the debug replay: the iterations it holds say they were not made again.
        self.vkgraphy("debug", "repeat", "--until", "4", "--load-debug-replay", "vkgraphy_debug_replay.json",
                      "--report", "resumed.html", "--check", "true")
        rows = self.render("resumed.html").find_all("tr", cls="iteration")
        self.assertEqual(len(rows), 4)
        for row in rows[:3]:
            self.assertIn("(from debug replay)", row.all_text())
            self.assertIn("not made again: the result is the one the debug replay recorded", row.all_text())
        self.assertNotIn("not made again", rows[3].all_text())


if __name__ == "__main__":
    unittest.main()
