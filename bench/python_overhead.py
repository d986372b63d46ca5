#!/usr/bin/env python3
"""The Python module's per-inference cost against the command line's, side by side in one run.

PP-OCRv4 det at 1x3x320x320 (from the rapidocr wheel ./setup.sh downloads) is built once into an
engine file; `vkgraphy run ENGINE --vk` then runs it N times and reports its host wall time per
inference, and `vkgraphy.load_engine(ENGINE).infer(feed)` runs the same engine on the same
inputs N times in this process, timed around the call (numpy in, numpy out). Both medians, and
the ratio, are printed; lavapipe is selected as in the tests.

    .venv/bin/python bench/python_overhead.py [--iterations 200] [--model PATH --input-shapes x:[...]]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "vkgraphy")
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if "VK_DRIVER_FILES" not in os.environ and os.path.exists(LAVAPIPE_ICD):
    os.environ["VK_DRIVER_FILES"] = LAVAPIPE_ICD

import vkgraphy  # noqa: E402


def det_model(tmp):
    wheels = os.path.join(ROOT, ".venv", "model-wheels")
    wheel = next((os.path.join(wheels, f) for f in sorted(os.listdir(wheels)) if f.startswith("rapidocr_onnxruntime-")),
                 None) if os.path.isdir(wheels) else None
    if wheel is None:
        sys.exit("error: no rapidocr wheel in .venv/model-wheels (run ./setup.sh)")
    path = os.path.join(tmp, "det.onnx")
    with zipfile.ZipFile(wheel) as z, open(path, "wb") as f:
        f.write(z.read("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"))
    return path, "x:[1,3,320,320]"


def cli_host_ms(engine, inputs, iterations):
    proc = subprocess.run([BIN, "run", engine, "--vk", "--load-inputs", inputs, "--warm-up", "10", "-v"],
                          capture_output=True, text=True, check=True)
    walls = [float(m) for m in re.findall(r"iteration \d+ took ([0-9.]+) ms", proc.stdout + proc.stderr)]
    if len(walls) != iterations:
        sys.exit(f"error: expected {iterations} timed iterations from vkgraphy run, found {len(walls)}")
    return walls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--model")
    parser.add_argument("--input-shapes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, shapes = (args.model, args.input_shapes) if args.model else det_model(tmp)
        engine_path = os.path.join(tmp, "model.engine")
        subprocess.run([BIN, "convert", model, "--input-shapes", shapes, "-o", engine_path], check=True,
                       capture_output=True)
        inputs = os.path.join(tmp, "inputs.json")
        feeds = vkgraphy.generate_inputs(model, input_shapes=dict([_shape(shapes)]), iterations=args.iterations,
                                         save_inputs=inputs)
        cli = cli_host_ms(engine_path, inputs, args.iterations)
        engine = vkgraphy.load_engine(engine_path)
        for _ in range(10):
            engine.infer(feeds[0])
        py, device = [], []
        for feed in feeds:
            t0 = time.perf_counter()
            engine.infer(feed)
            py.append((time.perf_counter() - t0) * 1e3)
            device.append(engine.last_device_time * 1e3)
    c, p, d = statistics.median(cli), statistics.median(py), statistics.median(device)
    print(f"model: {os.path.basename(model)} {shapes}, {args.iterations} iterations, device: {engine.device}")
    print(f"vkgraphy run (CLI), host wall time per inference: median {c:.3f} ms")
    print(f"vkgraphy.Engine.infer (Python), wall time per call:   median {p:.3f} ms (device time {d:.3f} ms)")
    print(f"Python / CLI: {p / c:.3f} ({(p / c - 1) * 100:+.1f}%)")


def _shape(text):
    name, dims = text.split(":", 1)
    return name, tuple(int(d) for d in dims.strip("[]").split(","))


if __name__ == "__main__":
    main()
