#!/usr/bin/env python3
"""Real models from PyPI wheels (tests/model_wheels.txt) at realistic shapes: vkgraphy's fp32 and
fp16 engines against ONNX Runtime CPU, on the same inputs, in one run. Not part of CI.

    .venv/bin/python bench/real_models.py [--iterations N] [--vkgraphy build/vkgraphy]

Needs the test venv (./setup.sh: onnxruntime, polygraphy and the model wheels). For each model:
polygraphy writes the inputs and ONNX Runtime's golden outputs; vkgraphy builds its engine
(optimization level 3, timing tactics), checks its outputs against the golden, then reports
the median device time over N iterations drawn by the same data loader; ONNX Runtime is timed in this process (median of N runs
after a warm-up). One line per measurement:
    REAL-BENCH model=<name> runtime=<vkgraphy-fp32|vkgraphy-fp16|onnxruntime-cpu> median_ms=<x> [matches=<yes|no>]
"""
import argparse
import io
import json
import base64
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WHEELS = os.path.join(ROOT, ".venv", "model-wheels")
POLYGRAPHY = os.path.join(ROOT, ".venv", "bin", "polygraphy")
SILERO = ["--input-shapes", "input:[1,512]", "state:[2,1,128]", "--val-range", "sr:[16000,16000]", "input:[-0.5,0.5]"]
MODELS = {  # name: (wheel prefix, member, polygraphy data args, vkgraphy build args, fp16 atol)
    "silero_vad": ("silero_vad-", "silero_vad/data/silero_vad.onnx", SILERO, ["--freeze-inputs", "sr"], "0.1"),
    "pp_ocrv4_det_320": ("rapidocr_onnxruntime-", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
                         ["--input-shapes", "x:[1,3,320,320]"], [], "0.05"),
    "pp_ocrv4_rec_48x320": ("rapidocr_onnxruntime-", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
                            ["--input-shapes", "x:[1,3,48,320]"], [], "0.05"),
    "pp_ocr_cls_48x192": ("rapidocr_onnxruntime-", "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
                          ["--input-shapes", "x:[1,3,48,192]"], [], "0.05"),
}


def extract(prefix, member, work):
    wheels = [f for f in os.listdir(WHEELS) if f.startswith(prefix)]
    if not wheels:
        sys.exit(f"no {prefix} wheel in {WHEELS}: run ./setup.sh")
    dst = os.path.join(work, os.path.basename(member))
    with zipfile.ZipFile(os.path.join(WHEELS, wheels[0])) as z, open(dst, "wb") as f:
        f.write(z.read(member))
    return dst


def feeds(path):
    def decode(o):
        return np.load(io.BytesIO(base64.b64decode(o["array"])), allow_pickle=False)
    with open(path) as f:
        return {k: decode(v) for k, v in json.load(f)[0].items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--vkgraphy", default=os.path.join(ROOT, "build", "vkgraphy"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="real_models_") as work:
        for name, (prefix, member, data, build, fp16_atol) in MODELS.items():
            model = extract(prefix, member, work)
            inputs, golden = os.path.join(work, name + "_in.json"), os.path.join(work, name + "_golden.json")
            subprocess.run([POLYGRAPHY, "run", model, "--onnxrt", *data, "--save-inputs", inputs, "--save-outputs",
                            golden], check=True, capture_output=True)
            session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            feed = feeds(inputs)
            session.run(None, feed)
            times = []
            for _ in range(args.iterations):
                t = time.perf_counter()
                session.run(None, feed)
                times.append((time.perf_counter() - t) * 1e3)
            print(f"REAL-BENCH model={name} runtime=onnxruntime-cpu median_ms={statistics.median(times):.3f}", flush=True)
            for runtime, extra, tol in (("vkgraphy-fp32", [], ["--atol", "1e-4", "--rtol", "1e-3"]),
                                        ("vkgraphy-fp16", ["--fp16"], ["--atol", fp16_atol, "--rtol", "0"])):
                # Checked once on polygraphy's inputs, timed on the same data loader's N iterations.
                check = subprocess.run([args.vkgraphy, "run", model, "--vk", *extra, *build, "--load-inputs", inputs,
                                        "--load-outputs", golden, *tol], capture_output=True, text=True)
                matches = "yes" if "All outputs matched" in check.stdout + check.stderr else "no"
                timed = subprocess.run([args.vkgraphy, "run", model, "--vk", *extra, *build, *data, "--iterations",
                                        str(args.iterations)], capture_output=True, text=True)
                m = re.search(r"Latency \(device time, \d+ iteration\(s\)\): mean [0-9.]+ ms, median ([0-9.]+) ms",
                              timed.stdout + timed.stderr)
                median = m.group(1) if m else "nan"
                print(f"REAL-BENCH model={name} runtime={runtime} median_ms={median} matches={matches}", flush=True)


if __name__ == "__main__":
    main()
