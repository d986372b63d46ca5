"""Differential fuzzing of the Vulkan engine: random valid ONNX graphs (graph_gen.py), each run with
`vkgraphy run MODEL --vk --ref` under builder configurations, the reference backend checked against
ONNX Runtime on the same inputs. The engine is tested like a compiler: the same seed gives the same
graphs, every failure prints the command that reproduces it.

    fuzz_engine.py --seed S --count N [--start I] [--configs ci|all|NAME,...] [--rotate]
                   [--focus FAMILY] [--out DIR] [--keep-failures DIR] [--jobs 1] [--timeout 60]
                   [--vkgraphy BIN] [-q]

Run it with the tests' virtual environment (.venv: onnx, onnxruntime, numpy). With --rotate graph i
runs configuration i mod C (CI: a few hundred graphs in a few minutes); without it every graph runs
every configuration (the soak, tests/fuzz/soak.sh). Exit code 0 when every run passed (or failed
as a KNOWN_FAILURES entry says it does), 1 when anything failed, 2 on a bad command line, 130 when
stopped (Ctrl-C, SIGTERM: the summary of the graphs done is printed).

Failure kinds:
  engine-mismatch   vkgraphy's comparison failed (exit 1) and the reference agrees with ONNX Runtime
  ref-vs-ort        the reference backend disagrees with ONNX Runtime on the same inputs (and with
                    onnx.reference, ONNX's reference implementation: where onnx.reference agrees
                    with vkgraphy's reference, the run passes with a NOTE line instead)
  build-error       vkgraphy exited with another code (2, 3, 4: the build or the run refused the model)
  crash             vkgraphy died on a signal or ran past --timeout
  harness           the generated inputs differ from what vkgraphy fed (its data loader), or ONNX
                    Runtime could not run the graph (a generator bug)
Tolerances are relative to each output's magnitude (its largest |value| in ONNX Runtime's result):
fp32 configurations atol = 1e-3 * max(magnitude, 0.01) and rtol 1e-3; fp16 ones atol = 3e-2 *
max(magnitude, 0.25) and rtol 3e-2; the reference against ONNX Runtime 1e-4 * max(magnitude,
0.01) and 1e-4 (elementwise, passing where either bound holds, as Polygraphy compares).
"""
import argparse
import base64
import fnmatch
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import graph_gen  # noqa: E402

SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
DEFAULT_BIN = os.environ.get("VKGRAPHY_BIN", os.path.join(SOURCE_DIR, "build", "vkgraphy"))
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

# name -> (global options, run options, precision). "{k}" is replaced by a per-graph seed.
CONFIGS = {
    "default": ([], [], "fp32"),                                            # every rewrite on, timed (level 3)
    "no-fusion": ([], ["--no-fusion"], "fp32"),
    "opt0": ([], ["--builder-optimization-level", "0"], "fp32"),
    "opt1": ([], ["--builder-optimization-level", "1"], "fp32"),
    "opt5": ([], ["--builder-optimization-level", "5"], "fp32"),
    "random": ([], ["--tactic-selection", "random:{k}"], "fp32"),
    "no-fusion-random": ([], ["--no-fusion", "--tactic-selection", "random:{k}"], "fp32"),
    "staging-random": (["--vk-force-staging", "--vk-disable-texel-buffers"], ["--tactic-selection", "random:{k}"],
                       "fp32"),
    "fp16": ([], ["--fp16"], "fp16"),
    "fp16-opt1": ([], ["--fp16", "--builder-optimization-level", "1"], "fp16"),
    "fp16-random": ([], ["--fp16", "--tactic-selection", "random:{k}"], "fp16"),
}
# The CI rotation leaves out the configurations that time every candidate (opt5, fp16 at level 3):
# a few seconds each on lavapipe.
CONFIG_SETS = {
    "ci": ["default", "random", "no-fusion", "fp16-random", "opt0", "no-fusion-random", "fp16-opt1",
           "staging-random", "opt1", "random"],
    "all": list(CONFIGS),
}

TOLERANCE = {"fp32": 1e-3, "fp16": 3e-2}
REF_VS_ORT_TOLERANCE = 1e-4
# The least magnitude a tolerance is relative to: an output can be small where the tensors it came
# from were not (a difference, a product, a mean), and fp16 rounds those at about 5e-4 each.
MAGNITUDE_FLOOR = {"fp32": 1e-2, "fp16": 0.25}

# Failures known today, each matched by the graph's features (graph_gen tags; globs, "a|b" for
# either; all must be present), optionally a predicate on the graph's info ("when"), the
# configurations (globs; absent: any) and the failure kinds. A matching failure
# is reported as KNOWN and does not fail the run; a graph an entry matches that passes is counted
# per entry, so an entry whose bug was fixed shows up as "matched N runs, all passed": remove it.
def recurrent_work(info):
    """The largest multiply-add count one direction of a recurrent node does over its sequence:
    seq * gates * hidden * (hidden + input)."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}
    return max((r["seq"] * gates[r["op"]] * r["hidden"] * (r["hidden"] + r["input"]) for r in info.get("rnn", [])),
               default=0)


KNOWN_FAILURES = [
    # Empty today. The fuzzer's first runs found recurrent.workgroup32.f32 wrong on long sequences
    # (LSTM H=512 from its second step; tests/models/fuzz/lstm_h128_seq32_workgroup32.onnx); fixed
    # on 2026-11-28 before an entry was needed. An entry looks like:
    # {"name": "recurrent-workgroup32-long-sequences",
    #  "reason": "recurrent.workgroup32.f32 goes wrong once steps x gates x H x (H + I) reaches ~2^21",
    #  "features": ["op:LSTM|op:GRU|op:RNN"],
    #  "when": lambda info: recurrent_work(info) >= 2 ** 20,
    #  "configs": ["*"], "kinds": ["engine-mismatch"]},
]


def _feature_match(info, pattern):
    """A feature pattern: globs separated by | (any of them)."""
    return any(fnmatch.fnmatch(f, alt) for alt in pattern.split("|") for f in info["features"])


def entry_applies(entry, info, config):
    if entry.get("configs") and not any(fnmatch.fnmatch(config, c) for c in entry["configs"]):
        return False
    if not all(_feature_match(info, pat) for pat in entry["features"]):
        return False
    return entry.get("when", lambda _: True)(info)


def known_entry(info, config, kind):
    for entry in KNOWN_FAILURES:
        if (not entry.get("kinds") or kind in entry["kinds"]) and entry_applies(entry, info, config):
            return entry
    return None


def entries_matching_graph(info, config):
    return [e["name"] for e in KNOWN_FAILURES if entry_applies(e, info, config)]


# -- data files (docs/data-formats.md) ----------------------------------------------------------
def decode_array(obj):
    if obj.get("polygraphy_class") != "ndarray":
        obj = obj["values"]
    return np.load(io.BytesIO(base64.b64decode(obj["array"].encode(), validate=True)), allow_pickle=False)


def load_outputs(path):
    with open(path) as f:
        data = json.load(f)
    return {runner: [{n: decode_array(o) for n, o in it["outputs"].items()} for it in its]
            for runner, its in data["lst"]}


def load_inputs(path):
    with open(path) as f:
        return [{n: decode_array(o) for n, o in feed.items()} for feed in json.load(f)]


def max_errors(got, want, floor=MAGNITUDE_FLOOR["fp32"]):
    """(max |got - want|, the same divided by want's magnitude) over every output both have."""
    worst = (0.0, 0.0, None)
    for name, w in want.items():
        if name not in got:
            continue
        g = got[name].astype(np.float64)
        w = w.astype(np.float64)
        if g.shape != w.shape:
            return float("inf"), float("inf"), name
        err = float(np.max(np.abs(g - w), initial=0.0)) if np.all(np.isfinite(g)) else float("inf")
        mag = max(float(np.max(np.abs(w), initial=0.0)), floor)
        if err / mag > worst[1]:
            worst = (err, err / mag, name)
    return worst


def within(got, want, tol, floor=MAGNITUDE_FLOOR["fp32"]):
    """Polygraphy's elementwise check: each element within tol * magnitude (absolute) or tol (relative)."""
    for name, w in want.items():
        if name not in got:
            return False, f"output {name} missing"
        g = got[name].astype(np.float64)
        w = w.astype(np.float64)
        if g.shape != w.shape:
            return False, f"output {name}: shape {list(g.shape)}, expected {list(w.shape)}"
        mag = max(float(np.max(np.abs(w), initial=0.0)), floor)
        diff = np.abs(g - w)
        rel = diff / np.maximum(np.abs(w), 2.2e-16)
        bad = ~((diff <= tol * mag) | (rel <= tol))
        if np.any(bad):
            return False, f"output {name}: max abs error {float(np.max(diff)):.3g} (magnitude {mag:.3g})"
    return True, ""


# -- one graph ------------------------------------------------------------------------------------
class GraphCase:
    def __init__(self, seed, index, workdir, focus=None):
        self.seed, self.index = seed, index
        self.model, self.info = graph_gen.generate(seed, index, focus=focus)
        self.path = os.path.join(workdir, f"seed{seed}_g{index}.onnx")
        with open(self.path, "wb") as f:
            f.write(self.model.SerializeToString())
        self.iterations = 2 if any(f.startswith("if:") for f in self.info["features"]) else 1
        self.ranges = {None: graph_gen.INPUT_RANGE}
        self.val_range = [f"[{graph_gen.INPUT_RANGE[0]},{graph_gen.INPUT_RANGE[1]}]"]
        for name, dtype, _ in self.info["inputs"]:
            if dtype == "bool":
                self.ranges[name] = (0, 1)
                self.val_range.append(f"{name}:[0,1]")
        self.k = graph_gen.graph_seed(seed, index) % 100000
        self.feeds = [graph_gen.dataloader_inputs(self.info, 1, it, self.ranges) for it in range(self.iterations)]
        self.ort_error = None
        try:
            data = self.model.SerializeToString()
            self.ort = [graph_gen.ort_run(data, feed) for feed in self.feeds]
        except Exception as e:  # noqa: BLE001 - a generator bug, reported as such
            self.ort, self.ort_error = None, f"{type(e).__name__}: {e}"
        self.magnitude = {}
        for outs in self.ort or []:
            for name, arr in outs.items():
                mag = float(np.max(np.abs(arr), initial=0.0)) if arr.size else 0.0
                self.magnitude[name] = max(self.magnitude.get(name, 0.0), mag)

    def command(self, binary, config, model_path=None):
        global_args, run_args, precision = CONFIGS[config]
        tol = TOLERANCE[precision]
        args = [binary, *global_args, "run", model_path or self.path, "--vk", "--ref", "--val-range", *self.val_range]
        if self.iterations > 1:
            args += ["--iterations", str(self.iterations)]
        args += [a.replace("{k}", str(self.k)) for a in run_args]
        floor = MAGNITUDE_FLOOR[precision]
        args += ["--rtol", f"{tol:g}", "--atol", f"{tol * floor:g}"]
        for name, mag in sorted(self.magnitude.items()):
            args += ["--atol", f"{name}:{tol * max(mag, floor):.4g}"]
        return args


def shell_join(args):
    return " ".join(shlex.quote(a) for a in args)


def run_one(case, config, binary, timeout, scratch):
    """One vkgraphy run: a dict with kind (None when it passed), detail and the command."""
    tag = f"g{case.index}_{config}"
    in_json = os.path.join(scratch, tag + "_in.json")
    out_json = os.path.join(scratch, tag + "_out.json")
    args = case.command(binary, config)
    result = {"index": case.index, "config": config, "kind": None, "detail": "", "command": args}
    if case.ort_error:
        result.update(kind="harness", detail=f"ONNX Runtime cannot run the graph: {case.ort_error[:300]}")
        return result
    started = time.monotonic()
    full = args + ["--save-inputs", in_json, "--save-outputs", out_json,
                   "--save-tactics", os.path.join(scratch, tag + "_tactics.json")]
    for attempt in range(13):
        try:
            proc = subprocess.run(full, capture_output=True, text=True, timeout=timeout, cwd=scratch)
            break
        except subprocess.TimeoutExpired:
            result.update(kind="crash", detail=f"timed out after {timeout} s", seconds=time.monotonic() - started)
            return result
        except OSError as e:
            # the binary is being rebuilt (missing, not yet executable, busy): wait for it, a minute at most
            if attempt == 12:
                result.update(kind="crash", detail=f"cannot start {binary}: {e}", seconds=time.monotonic() - started)
                return result
            time.sleep(5)
            started = time.monotonic()
    result["seconds"] = time.monotonic() - started
    out = proc.stdout + proc.stderr
    rc = proc.returncode
    if rc < 0:
        result.update(kind="crash", detail=f"signal {-rc}: {last_lines(out)}")
        return result
    if rc not in (0, 1):
        result.update(kind="build-error", detail=f"exit {rc}: {error_lines(out)}")
        return result
    # The reference against ONNX Runtime, on the inputs vkgraphy fed.
    try:
        feeds = load_inputs(in_json)
        runs = load_outputs(out_json)
    except (OSError, ValueError, KeyError) as e:
        result.update(kind="crash", detail=f"exit {rc} without readable data files: {e}; {last_lines(out)}")
        return result
    for it, (mine, fed) in enumerate(zip(case.feeds, feeds)):
        for name, arr in mine.items():
            if name not in fed or fed[name].shape != arr.shape or not np.array_equal(fed[name], arr):
                result.update(kind="harness", detail=f"iteration {it}: input {name} differs from numpy "
                                                     f"RandomState(seed + iteration) (docs/data-formats.md)")
                return result
    vk_runner = next((r for r in runs if r.startswith("vk")), None)
    ref_runner = next((r for r in runs if r.startswith("ref")), None)
    if vk_runner is None or ref_runner is None or len(runs[ref_runner]) != len(case.ort) or \
            len(runs[vk_runner]) != len(case.ort):
        result.update(kind="crash", detail=f"exit {rc}, but the outputs file holds runners {list(runs)} with "
                                           f"{[len(v) for v in runs.values()]} iteration(s); {last_lines(out)}")
        return result
    for it, ort_out in enumerate(case.ort):
        ok, why = within(runs[ref_runner][it], ort_out, REF_VS_ORT_TOLERANCE)
        if not ok and onnx_reference_agrees(case, feeds[it], runs[ref_runner][it]):
            # ONNX Runtime against ONNX's own reference implementation, vkgraphy with the latter:
            # a corner the spec leaves to rounding (a nearest-mode Resize coordinate an ulp from its
            # boundary); noted, not a vkgraphy failure.
            result["note"] = f"iteration {it}: ONNX Runtime differs from onnx.reference, which the reference matches: {why}"
            ok = True
        if not ok:
            precision = CONFIGS[config][2]
            vk_ok, _ = within(runs[vk_runner][it], ort_out, TOLERANCE[precision], MAGNITUDE_FLOOR[precision])
            result.update(kind="ref-vs-ort", detail=f"iteration {it}: reference vs ONNX Runtime, {why}"
                                                    f"{' (the engine agrees with ONNX Runtime)' if vk_ok else ''}")
            return result
    if rc == 1:
        err, rel, name = max(
            (max_errors(runs[vk_runner][it], runs[ref_runner][it]) for it in range(len(runs[vk_runner]))),
            key=lambda e: e[1])
        result.update(kind="engine-mismatch", detail=f"max abs error {err:.4g} on output '{name}' "
                                                     f"({rel:.3g} of its magnitude); {failed_lines(out)}")
    return result


def onnx_reference_agrees(case, feed, ref_out):
    """Whether onnx.reference.ReferenceEvaluator (ONNX's reference implementation, a third oracle)
    gives what vkgraphy's reference gave on `feed`."""
    try:
        from onnx.reference import ReferenceEvaluator
        names = list(ref_out)
        got = dict(zip(names, ReferenceEvaluator(case.model).run(names, feed)))
    except Exception:  # noqa: BLE001 - no third opinion
        return False
    return within(ref_out, {n: np.asarray(v) for n, v in got.items()}, REF_VS_ORT_TOLERANCE)[0]


def last_lines(out, n=3):
    lines = [l for l in out.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])[:400]


def error_lines(out):
    lines = [l.strip() for l in out.splitlines() if l.startswith(("[E]", "[!]"))]
    return (" | ".join(lines[:3]) or last_lines(out))[:400]


def failed_lines(out):
    lines = [l.strip() for l in out.splitlines() if "FAILED | Output" in l]
    return " | ".join(lines[:2])[:300]


# -- the driver -------------------------------------------------------------------------------------
def parse_configs(text):
    names = []
    for part in text.split(","):
        part = part.strip()
        if part in CONFIG_SETS:
            names += CONFIG_SETS[part]
        elif part in CONFIGS:
            names.append(part)
        else:
            raise SystemExit(f"fuzz_engine.py: unknown configuration '{part}' (known: "
                             f"{', '.join(list(CONFIG_SETS) + list(CONFIGS))})")
    return names


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=20, help="graphs to generate")
    ap.add_argument("--start", type=int, default=0, help="index of the first graph (to rerun one: --start I --count 1)")
    ap.add_argument("--configs", default="ci", help="comma-separated configurations or sets (ci, all); "
                                                    f"known: {', '.join(CONFIGS)}")
    ap.add_argument("--rotate", action="store_true", help="graph i runs configuration i mod C (default: every one)")
    ap.add_argument("--out", help="keep every generated model and data file in this folder")
    ap.add_argument("--keep-failures", help="copy each failing model here, with a .txt of its repro command")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per vkgraphy run")
    ap.add_argument("--vkgraphy", default=DEFAULT_BIN, help="the vkgraphy binary (default: $VKGRAPHY_BIN or build/vkgraphy)")
    ap.add_argument("--focus", help="graph_gen.py's --focus: graphs start with this op family and draw it ten "
                                    "times as often (recurrent, if, conv, conv_transpose, matmul, gemm, resize, pool, ...)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    args = ap.parse_args(argv)
    configs = parse_configs(args.configs)
    if not args.rotate:
        configs = list(dict.fromkeys(configs))     # the ci set names "random" twice: twice its share in rotation
    if not os.access(args.vkgraphy, os.X_OK):
        raise SystemExit(f"fuzz_engine.py: {args.vkgraphy} is not an executable (build it, or pass --vkgraphy)")
    if "VK_DRIVER_FILES" not in os.environ and "VK_ICD_FILENAMES" not in os.environ and os.path.exists(LAVAPIPE_ICD):
        os.environ["VK_DRIVER_FILES"] = LAVAPIPE_ICD
    binary = os.path.abspath(args.vkgraphy)

    tmp = None
    if args.out:
        workdir = os.path.abspath(args.out)
        os.makedirs(workdir, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="vkgraphy_fuzz_")
        workdir = tmp.name
    if args.keep_failures:
        os.makedirs(args.keep_failures, exist_ok=True)

    started = time.monotonic()
    counts = {"graphs": 0, "runs": 0, "passed": 0, "known": 0, "oracle-notes": 0}
    kinds = {}
    known_seen = {}          # entry name -> [matched runs, failed runs]
    per_config = {}          # config -> [runs, seconds, failed or known]
    failures = []
    lock = threading.Lock()

    def task(index, config_list):
        case = GraphCase(args.seed, index, workdir, args.focus)
        results = [run_one(case, config, binary, args.timeout, workdir) for config in config_list]
        if not args.out:
            # without --out, keep nothing but what a failure needs until it is reported
            for config in (r["config"] for r in results if r["kind"] is None):
                for suffix in ("_in.json", "_out.json", "_tactics.json"):
                    path = os.path.join(workdir, f"g{index}_{config}{suffix}")
                    if os.path.exists(path):
                        os.remove(path)
        return case, results

    def report(case, results):
        with lock:
            counts["graphs"] += 1
            for r in results:
                counts["runs"] += 1
                t = per_config.setdefault(r["config"], [0, 0.0, 0])
                t[0] += 1
                t[1] += r.get("seconds", 0.0)
                t[2] += r["kind"] is not None
                for name in entries_matching_graph(case.info, r["config"]):
                    known_seen.setdefault(name, [0, 0])[0] += 1
                if r.get("note"):
                    counts["oracle-notes"] += 1
                    print(f"NOTE  graph {case.index} {r['config']}: {r['note'][:300]}", flush=True)
                if r["kind"] is None:
                    counts["passed"] += 1
                    if not args.quiet:
                        print(f"pass  graph {case.index:5d} {r['config']:17s} {r.get('seconds', 0):5.2f} s "
                              f"{case.info['nodes']:2d} nodes", flush=True)
                    continue
                entry = known_entry(case.info, r["config"], r["kind"])
                if entry:
                    counts["known"] += 1
                    known_seen.setdefault(entry["name"], [0, 0])[1] += 1
                    print(f"KNOWN {r['kind']} graph {case.index} {r['config']} ({entry['name']}): {r['detail'][:200]}",
                          flush=True)
                    continue
                kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
                failures.append((case, r))
                # the model: the kept copy, else the file the "graph:" command below writes
                repro_model = case.path if args.out else os.path.basename(case.path)
                if args.keep_failures:
                    repro_model = os.path.join(os.path.abspath(args.keep_failures),
                                               f"seed{args.seed}_g{case.index}_{r['config']}.onnx")
                    shutil.copyfile(case.path, repro_model)
                cmd = shell_join(case.command(binary, r["config"], repro_model))
                # the tactics this build chose: a timed or random choice made again exactly
                replay = os.path.join(workdir, f"g{case.index}_{r['config']}_tactics.json")
                same = ""
                if os.path.exists(replay):
                    if args.keep_failures:
                        shutil.copyfile(replay, repro_model[:-5] + ".tactics.json")
                        replay = repro_model[:-5] + ".tactics.json"
                    same = f"\n      same tactics: {cmd} --load-tactics {shlex.quote(replay)}"
                regen = (f"{sys.executable} {os.path.join(HERE, 'graph_gen.py')} --seed {args.seed} "
                         f"--index {case.index}{focus} -o {os.path.basename(case.path)}")
                rerun = (f"{sys.executable} {os.path.abspath(__file__)} --seed {args.seed} --start {case.index} "
                         f"--count 1 --configs {r['config']}{focus}")
                print(f"FAIL  {r['kind']}: seed {args.seed} graph {case.index} config {r['config']}: {r['detail']}\n"
                      f"      features: {' '.join(case.info['features'])}\n"
                      f"      repro:    {cmd}{same}\n"
                      f"      graph:    {regen}\n"
                      f"      rerun:    {rerun}", flush=True)
                if args.keep_failures:
                    with open(repro_model[:-5] + ".txt", "w") as f:
                        f.write(f"{r['kind']}: {r['detail']}\nfeatures: {' '.join(case.info['features'])}\n"
                                f"repro: {cmd}{same.replace(chr(10) + '      ', chr(10))}\ngraph: {regen}\n"
                                f"rerun: {rerun}\n")

    focus = f" --focus {args.focus}" if args.focus else ""
    plan = []
    for n in range(args.count):
        index = args.start + n
        plan.append((index, [configs[index % len(configs)]] if args.rotate else configs))
    # Ctrl-C or SIGTERM (a soak stopped early) still prints the summary of the graphs done.
    def stop(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, stop)
    interrupted = False
    try:
        if args.jobs <= 1:
            for index, cl in plan:
                report(*task(index, cl))
        else:
            with ThreadPoolExecutor(args.jobs) as pool:
                futures = [pool.submit(task, index, cl) for index, cl in plan]
                try:
                    for fut in futures:
                        report(*fut.result())
                except KeyboardInterrupt:
                    for fut in futures:
                        fut.cancel()
                    raise
    except KeyboardInterrupt:
        interrupted = True
    elapsed = time.monotonic() - started

    failed = sum(kinds.values())
    by_kind = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"
    print(f"\nFUZZ SUMMARY | seed {args.seed}{' | focus ' + args.focus if args.focus else ''} | "
          f"graphs {counts['graphs']} (indices {args.start}-{args.start + args.count - 1}"
          f"{', INTERRUPTED' if interrupted else ''}) | configs {','.join(dict.fromkeys(configs))}"
          f"{' (rotated)' if args.rotate else ''} | runs {counts['runs']} | passed {counts['passed']} | "
          f"failed {failed} ({by_kind}) | known failures {counts['known']} | "
          f"ONNX Runtime vs onnx.reference notes {counts['oracle-notes']} | {elapsed:.1f} s")
    print("per configuration: " + ", ".join(f"{c} {n} runs {sec / max(n, 1):.2f} s/run {bad} failed"
                                            for c, (n, sec, bad) in per_config.items()))
    for name, (matched, failed_runs) in sorted(known_seen.items()):
        note = " -- all passed: is it fixed? remove the entry" if failed_runs == 0 else ""
        print(f"KNOWN_FAILURES '{name}': matched {matched} run(s), {failed_runs} failed{note}")
    if tmp:
        tmp.cleanup()
    return 1 if failed else 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
