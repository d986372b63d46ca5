"""vkgraphy beside its peers: ncnn (Vulkan), IREE (Vulkan HAL) and ONNX Runtime (CPU).

Run through bench/peers.sh, which creates the virtual environment (bench/peers_requirements.txt)
and picks the Vulkan driver; this file is the part that needs the peers' Python packages.

    peers.py run --vkgraphy BIN --work DIR [--resnet50 FILE] [--quick] [--models ...] [--runtimes ...]
        every model on every runtime; prints one PEER line per measurement, then the table
    peers.py prepare --work DIR [--resnet50 FILE] [--models ...] [--runtimes ...]
        the static-shape models and the peers' conversions only, one PREPARED line each (for
        bench/gpu_prepare.sh: a machine without PyPI or the converters runs from them)
    peers.py measure RUNTIME ...
        one runtime on one model, in a child process (a crash or a hang of a peer costs only
        its own line); writes the median and the output to files the parent reads
    peers.py ort-latency MODEL ITERATIONS THREADS
        ONNX Runtime's median latency on random inputs ("ort_ms_median N"), for
        bench/reference_vs_onnxruntime.sh

Timing, the same for every runtime: one inference is the wall-clock time from a host (numpy)
input to a host output, as a user of the runtime sees it (for vkgraphy: the per-iteration host
wall time that `vkgraphy run` records, upload and download included); the first WARMUP
inferences, and as many more as WARMUP_MS milliseconds take (--warmup-ms, PEERS_WARMUP_MS: a GPU
raises its clock only after tens of milliseconds of work), are dropped and the median of the next
ITERATIONS is reported. Every runtime is fed
the same input, drawn once from numpy's RandomState(SEED) in [0, 1).
"""
import argparse
import base64
import hashlib
import io
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import traceback
import zipfile

import numpy as np

RUNTIMES = ["vkgraphy-fp32", "vkgraphy-fp16", "ncnn-vulkan", "iree-vulkan", "onnxruntime-cpu"]
REFERENCE = "vkgraphy-fp32"  # ratios are to this runtime
ORACLE = "onnxruntime-cpu"  # outputs are compared with this one
SEED = 1
# A relative L2 error from ONNX Runtime's output above this is a different result, not rounding:
# fp32 runtimes computing the same graph agree to about 1e-5; fp16 storage and arithmetic lose
# far more on some models (a 6625-way softmax), hence a looser bound.
WRONG_REL_L2 = {"fp32": 1e-2, "fp16": 0.5}
IREE_OPSET = 17  # models below this opset are upgraded to it before iree-import-onnx

# PP-OCRv4 det and rec ship inside this wheel; it is downloaded, not installed (its own
# dependencies, OpenCV among them, are not needed to read two .onnx files).
RAPIDOCR_WHEEL = "rapidocr-onnxruntime==1.4.4"
RAPIDOCR_MODELS = {
    "ch_PP-OCRv4_det_infer.onnx": "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
    "ch_PP-OCRv4_rec_infer.onnx": "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
}

VENV_BIN = os.path.dirname(sys.executable)  # iree-import-onnx and iree-compile live beside it


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def nproc():
    return len(os.sched_getaffinity(0))


def make_input(shape):
    return np.random.RandomState(SEED).random_sample(shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Models


def fix_input_shape(src, dst, shape):
    """A copy of src whose single input has the static shape (the PP-OCR models are dynamic);
    output shapes and value_info are cleared so no stale dynamic shape contradicts them."""
    import onnx

    model = onnx.load(src)
    inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    if len(inputs) != 1:
        raise RuntimeError(f"{src}: expected one input, found {len(inputs)}")
    dims = inputs[0].type.tensor_type.shape.dim
    if len(dims) != len(shape):
        raise RuntimeError(f"{src}: input rank {len(dims)} differs from {shape}")
    for d, v in zip(dims, shape):
        d.Clear()
        d.dim_value = v
    for o in model.graph.output:
        for d in o.type.tensor_type.shape.dim:
            d.Clear()
    del model.graph.value_info[:]
    tmp = dst + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, dst)


def rapidocr_models(work):
    """Extracts PP-OCRv4 det and rec from the rapidocr-onnxruntime wheel (downloaded once)."""
    out = os.path.join(work, "rapidocr")
    paths = {name: os.path.join(out, name) for name in RAPIDOCR_MODELS}
    if all(os.path.isfile(p) and sha256(p) == RAPIDOCR_MODELS[n] for n, p in paths.items()):
        return paths
    wheels = os.path.join(work, "wheels")
    os.makedirs(wheels, exist_ok=True)
    log(f"Downloading {RAPIDOCR_WHEEL} (for its PP-OCRv4 models) into {wheels}")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                    "--no-input", "--no-deps", "--only-binary=:all:", "--dest", wheels, RAPIDOCR_WHEEL],
                   check=True, stdout=sys.stderr)
    name, version = RAPIDOCR_WHEEL.split("==")
    wheel = [w for w in os.listdir(wheels) if w.startswith(f"{name.replace('-', '_')}-{version}-")]
    if not wheel:
        raise RuntimeError(f"pip download left no {RAPIDOCR_WHEEL} wheel in {wheels}")
    os.makedirs(out, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheels, wheel[0])) as z:
        members = {os.path.basename(m): m for m in z.namelist() if m.endswith(".onnx")}
        for n in RAPIDOCR_MODELS:
            if n not in members:
                raise RuntimeError(f"{wheel[0]} has no {n}; it holds {sorted(members)}")
            with z.open(members[n]) as f, open(paths[n], "wb") as g:
                shutil.copyfileobj(f, g)
            if sha256(paths[n]) != RAPIDOCR_MODELS[n]:
                raise RuntimeError(f"{n} from {wheel[0]} does not have the expected sha256")
    return paths


MODEL_NAMES = ["resnet50", "ppocrv4-det", "ppocrv4-rec", "transformer"]


def prepare_models(work, resnet50, transformer, names=MODEL_NAMES):
    """[(name, static-shape ONNX path, input name, input shape)] of the models named, in
    MODEL_NAMES order, each copied to work/models."""
    import onnx

    mdir = os.path.join(work, "models")
    os.makedirs(mdir, exist_ok=True)
    specs = [
        ("resnet50", resnet50, None),
        ("ppocrv4-det", "ch_PP-OCRv4_det_infer.onnx", [1, 3, 320, 320]),
        ("ppocrv4-rec", "ch_PP-OCRv4_rec_infer.onnx", [1, 3, 48, 320]),
        ("transformer", transformer, None),
    ]
    models = []
    for name, src, shape in specs:
        if name not in names:
            continue
        dst = os.path.join(mdir, name + ".onnx")
        if shape is None:
            # copy2 keeps the modification time: an unchanged source is not read again (ResNet-50 is
            # 98 MB; model_artifacts hashes the copy once per run).
            same = os.path.isfile(dst) and all(
                getattr(os.stat(dst), k) == getattr(os.stat(src), k) for k in ("st_size", "st_mtime_ns"))
            if not same:
                shutil.copy2(src, dst)
        else:
            # A static-shape copy of a PP-OCR model, made once: its ".source" file names the wheel
            # model's sha256 and the shape, so that a work folder carried to a machine without PyPI
            # (bench/gpu_prepare.sh) needs neither the wheel nor a rewrite.
            source = dst + ".source"
            made_from = f"{RAPIDOCR_MODELS[src]} {shape}"
            if not (os.path.isfile(dst) and os.path.isfile(source) and open(source).read() == made_from):
                fix_input_shape(rapidocr_models(work)[src], dst, shape)
                with open(source, "w") as f:
                    f.write(made_from)
        m = onnx.load(dst, load_external_data=False)
        inits = {t.name for t in m.graph.initializer}
        inputs = [i for i in m.graph.input if i.name not in inits]
        if len(inputs) != 1:
            raise RuntimeError(f"{dst}: the benchmark feeds models of one input; this one has {len(inputs)}")
        dims = [d.dim_value if d.HasField("dim_value") else 0 for d in inputs[0].type.tensor_type.shape.dim]
        if any(d <= 0 for d in dims):
            raise RuntimeError(f"{dst}: input {inputs[0].name} has a dynamic shape {dims}")
        models.append((name, dst, inputs[0].name, dims))
    return models


# ---------------------------------------------------------------------------------------------
# Polygraphy-format JSON (vkgraphy's --load-inputs / --save-outputs)


def encode_array(a):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode(), "polygraphy_class": "ndarray"}


def decode_array(obj):
    return np.load(io.BytesIO(base64.b64decode(obj["array"].encode())), allow_pickle=False)


# ---------------------------------------------------------------------------------------------
# Failures: one line that says why


def first_meaningful_line(text, fallback):
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).strip() for l in text.splitlines()]
    lines = [l for l in lines if l]
    for l in lines:  # our own children say it this way
        if l.startswith("PEERS-ERROR: "):
            reason = l[len("PEERS-ERROR: "):]
            # ncnn and pnnx print the real cause (an unsupported layer) before our message
            for k in lines:
                if re.search(r"not exists or registered|not supported|unsupported", k, re.I):
                    reason += f" ({k})"
                    break
            return reason
    for l in lines:
        if l.startswith("[E]") or re.search(r"\berror\b|\bfailed\b|exception", l, re.I):
            return l
    return lines[-1] if lines else fallback


def one_line(s, limit=240):
    s = " ".join(str(s).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def describe_exit(rc):
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


class StepFailed(Exception):
    pass


def stop_group(p):
    """Ends the child's process group: SIGTERM first, so that a child which is itself this script
    (`measure`) stops the group it started in turn, then SIGKILL for whatever is left."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


def run_step(cmd, what, timeout, cwd=None, env=None):
    """Runs a child in its own process group; returns its stdout+stderr; raises StepFailed with
    one line on failure. On timeout the whole group goes (a converter's own children too)."""
    try:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", start_new_session=True)
    except OSError as e:
        raise StepFailed(f"{what}: {e}")
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(p)
        raise StepFailed(f"{what} timed out after {timeout} s")
    except BaseException:
        stop_group(p)
        raise
    if p.returncode != 0:
        raise StepFailed(f"{what} failed ({describe_exit(p.returncode)}): " + first_meaningful_line(out, "no output"))
    return out


# ---------------------------------------------------------------------------------------------
# Per-runtime measurement (each in a child process: `peers.py measure ...`)


def timed(infer, warmup, iterations, warmup_ms=0.0):
    """`warmup` untimed inferences, more until `warmup_ms` have passed, then `iterations` timed."""
    start, runs = time.perf_counter(), 0
    while runs < warmup or (time.perf_counter() - start) * 1e3 < warmup_ms:
        infer()
        runs += 1
    times, out = [], None
    for _ in range(iterations):
        t0 = time.perf_counter()
        out = infer()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, out


def measure_onnxruntime(a, x):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(a.onnx, so, providers=["CPUExecutionProvider"])
    feed = {a.input_name: x}
    times, out = timed(lambda: sess.run(None, feed)[0], a.warmup, a.iterations, a.warmup_ms)
    return times, out, f"CPU, {a.threads} threads"


def pnnx_executable():
    import importlib.util

    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the pnnx package is not installed in the bench venv")
    exe = os.path.join(list(spec.submodule_search_locations)[0], "pnnx")
    if not os.access(exe, os.X_OK):
        raise RuntimeError(f"pnnx executable {exe} missing or not executable")
    return exe


def convert_pnnx(a):
    """ONNX -> ncnn param/bin with pnnx (fp32 weights in the .bin: ncnn itself decides the
    precision it computes in). Cached in the model's artifact folder."""
    d = a.artifacts
    param, binf = os.path.join(d, "model.ncnn.param"), os.path.join(d, "model.ncnn.bin")
    if os.path.isfile(param) and os.path.isfile(binf):
        return param, binf
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    shutil.copyfile(a.onnx, src)
    shape = "[" + ",".join(map(str, a.shape)) + "]f32"
    cmd = [pnnx_executable(), "model.onnx", f"inputshape={shape}", "fp16=0",
           "pnnxparam=model.pnnx.param", "pnnxbin=model.pnnx.bin", "pnnxpy=model_pnnx.py",
           "pnnxonnx=model.pnnx.onnx", "ncnnparam=model.ncnn.param.tmp", "ncnnbin=model.ncnn.bin.tmp",
           "ncnnpy=model_ncnn.py"]
    log(f"  pnnx {os.path.basename(a.onnx)} inputshape={shape}")
    out = run_step(cmd, "pnnx conversion", a.timeout, cwd=d)
    with open(os.path.join(d, "pnnx.log"), "w") as f:
        f.write(out)
    if not (os.path.isfile(param + ".tmp") and os.path.isfile(binf + ".tmp")):
        raise RuntimeError("pnnx wrote no ncnn model: " + first_meaningful_line(out, "no output"))
    os.replace(binf + ".tmp", binf)
    os.replace(param + ".tmp", param)
    for f in os.listdir(d):  # pnnx's intermediates: several copies of the weights
        if f not in ("model.ncnn.param", "model.ncnn.bin", "pnnx.log"):
            os.remove(os.path.join(d, f))
    return param, binf


def pick_by_name(names, wanted):
    """Index of the device whose name starts with vkgraphy's device name, else None."""
    if wanted:
        for i, n in enumerate(names):
            if n.startswith(wanted) or wanted.startswith(n):
                return i
    return None


def measure_ncnn(a, x):
    import ncnn

    param, binf = convert_pnnx(a)
    count = ncnn.get_gpu_count()
    if count == 0:
        raise RuntimeError("ncnn sees no Vulkan device")
    names = [ncnn.get_gpu_info(i).device_name() for i in range(count)]
    index = pick_by_name(names, a.device_name)
    if index is None:
        index = ncnn.get_default_gpu_index()
        log(f"  ncnn: no device named like vkgraphy's '{a.device_name}'; using its default {names[index]}")
    net = ncnn.Net()
    net.opt.use_vulkan_compute = True
    net.opt.num_threads = a.threads
    if os.environ.get("PEERS_NCNN_FP16", "1") == "0":
        net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = False
    net.set_vulkan_device(index)
    if net.load_param(param) != 0:
        raise RuntimeError("ncnn could not load the param file pnnx wrote")
    if net.load_model(binf) != 0:
        raise RuntimeError("ncnn could not load the bin file pnnx wrote")
    if len(net.input_names()) != 1 or len(net.output_names()) != 1:
        raise RuntimeError(f"ncnn model has inputs {net.input_names()} and outputs {net.output_names()}")
    in_name, out_name = net.input_names()[0], net.output_names()[0]
    # pnnx drops the batch dimension of batch-1 models; ncnn.Mat wraps (does not copy) the array,
    # which therefore has to stay alive while the extractor runs.
    xin = np.ascontiguousarray(x.reshape(x.shape[1:]) if x.shape[0] == 1 and x.ndim > 1 else x)

    def infer():
        ex = net.create_extractor()
        mat = ncnn.Mat(xin)
        if ex.input(in_name, mat) != 0:
            raise RuntimeError("ncnn extractor refused the input")
        ret, out = ex.extract(out_name)
        if ret != 0:
            raise RuntimeError(f"ncnn extract returned {ret}")
        return np.array(out)

    times, out = timed(infer, a.warmup, a.iterations, a.warmup_ms)
    # (ncnn applies its fp16 options only where the device supports fp16, as lavapipe does; its
    # Python API does not say whether it did)
    o = net.opt
    storage, arith = o.use_fp16_storage, o.use_fp16_arithmetic
    precision = ("fp16 storage+arithmetic" if storage and arith else "fp16 arithmetic" if arith else
                 "fp16 storage" if storage else "fp32")
    origin = "ncnn's defaults" if os.environ.get("PEERS_NCNN_FP16", "1") != "0" else "PEERS_NCNN_FP16=0"
    return times, out, f"{names[index]} ({precision}: {origin})"


def compile_iree(a):
    """ONNX -> MLIR (iree-import-onnx) -> Vulkan SPIR-V module (iree-compile). Cached."""
    d = a.artifacts
    vmfb = os.path.join(d, "model.vmfb")
    extra = os.environ.get("PEERS_IREE_COMPILE_FLAGS", "").split()
    flags = ["--iree-hal-target-device=vulkan"] + extra
    stamp = os.path.join(d, "iree-flags.txt")
    flags_text = f"opset>={IREE_OPSET} " + " ".join(flags)
    if os.path.isfile(vmfb) and os.path.isfile(stamp) and open(stamp).read() == flags_text:
        return vmfb
    importer = os.path.join(VENV_BIN, "iree-import-onnx")
    if not os.access(importer, os.X_OK):
        raise RuntimeError(f"iree-base-compiler is not installed beside {sys.executable} (no {importer})")
    os.makedirs(d, exist_ok=True)
    mlir = os.path.join(d, "model.mlir")
    # The ONNX importer lowers some ops (BatchNormalization among them) only in their newer
    # forms: older models are upgraded to opset 17 first, as its --opset-version help suggests.
    import onnx

    opset = max((o.version for o in onnx.load(a.onnx, load_external_data=False).opset_import
                 if o.domain in ("", "ai.onnx")), default=0)
    upgrade = ["--opset-version", str(IREE_OPSET)] if opset < IREE_OPSET else []
    log(f"  iree-import-onnx {os.path.basename(a.onnx)} {' '.join(upgrade)}")
    run_step([importer, a.onnx, *upgrade, "-o", mlir], "iree-import-onnx",
             a.timeout)
    log(f"  iree-compile {' '.join(flags)}")
    run_step([os.path.join(VENV_BIN, "iree-compile"), mlir, *flags, "-o", vmfb + ".tmp"], "iree-compile",
             a.timeout)
    os.replace(vmfb + ".tmp", vmfb)
    os.remove(mlir)  # the imported MLIR holds the weights as text: hundreds of MB for ResNet-50
    with open(stamp, "w") as f:
        f.write(flags_text)
    return vmfb


def measure_iree(a, x):
    import iree.runtime as rt

    vmfb = compile_iree(a)
    driver = rt.get_driver("vulkan")
    devices = driver.query_available_devices()
    if not devices:
        raise RuntimeError("IREE's Vulkan driver sees no device")
    names = [dev["name"] for dev in devices]
    index = pick_by_name(names, a.device_name)
    if index is None:
        index = 0
        log(f"  iree: no device named like vkgraphy's '{a.device_name}'; using {names[0]}")
    device = driver.create_device(devices[index]["device_id"])
    config = rt.Config(device=device)
    module = rt.VmModule.mmap(config.vm_instance, vmfb)
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(module)
    funcs = [n for n in module.function_names if "$" not in n and not n.startswith("__")]
    if len(funcs) != 1:
        raise RuntimeError(f"expected one entry point in the IREE module, found {funcs}")
    fn = ctx.modules[module.name][funcs[0]]
    host_type = int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE)
    staging_usage = int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED)

    def to_host(arr):
        # DeviceArray.to_host() imports a numpy allocation into Vulkan, which fails unless it is
        # page-aligned (minImportedHostPointerAlignment 4096 on lavapipe); copy through a
        # staging buffer instead, as IREE does where import is not offered.
        view = arr._buffer_view
        src = view.get_buffer()
        staging = device.allocator.allocate_buffer(memory_type=host_type, allowed_usage=staging_usage,
                                                   allocation_size=src.byte_length())
        sem = device.create_semaphore(0)
        device.queue_copy(src, staging, wait_semaphores=rt.HalFence.create_at(sem, 0),
                          signal_semaphores=rt.HalFence.create_at(sem, 1))
        rt.HalFence.create_at(sem, 1).wait()
        mapped = staging.map()
        return np.array(mapped.asarray(view.shape, rt.HalElementType.map_to_dtype(view.element_type)))

    def infer():
        out = fn(x)
        if isinstance(out, (list, tuple)):
            out = out[0]
        return to_host(out) if hasattr(out, "_buffer_view") else np.asarray(out)

    times, out = timed(infer, a.warmup, a.iterations, a.warmup_ms)
    return times, out, names[index]


MEASURE = {"onnxruntime-cpu": measure_onnxruntime, "ncnn-vulkan": measure_ncnn, "iree-vulkan": measure_iree}


CONVERT = {"ncnn-vulkan": lambda a: convert_pnnx(a), "iree-vulkan": lambda a: compile_iree(a)}


def cmd_measure(a):
    """--convert-only: the conversion alone (its own time budget); else the timed run."""
    try:
        if a.convert_only:
            if a.runtime in CONVERT:
                CONVERT[a.runtime](a)
            return 0
        x = np.load(a.input)
        times, out, device = MEASURE[a.runtime](a, x)
        precision = "fp16" if "fp16" in device else "fp32"
        np.save(a.result + ".npy", np.asarray(out, dtype=np.float32))
        with open(a.result, "w") as f:
            json.dump({"times_ms": times, "median_ms": statistics.median(times), "device": device,
                       "precision": precision}, f)
        return 0
    except Exception as e:  # noqa: BLE001: every failure becomes the child's one-line reason
        traceback.print_exc()
        msg = one_line(str(e)) or type(e).__name__
        print(f"PEERS-ERROR: {msg}", file=sys.stderr, flush=True)
        return 1


# ---------------------------------------------------------------------------------------------
# vkgraphy: the CLI, as a user runs it


def vkgraphy_device_name(text):
    """'llvmpipe (LLVM 15.0.6, 256 bits)' from '[I] Vulkan device: llvmpipe (LLVM 15.0.6, 256 bits)
    (Mesa 22.3.6 (LLVM 15.0.6))': the device name without the trailing driver version."""
    m = re.search(r"Vulkan device: (.*)", text)
    if not m:
        return None
    name = m.group(1).strip()
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                if name[:i].strip():
                    name = name[:i].strip()
                break
    return name


def measure_vkgraphy(a, model, fp16, x, art):
    name, onnx_path, in_name, shape = model
    os.makedirs(art, exist_ok=True)
    tag = "fp16" if fp16 else "fp32"
    engine = os.path.join(art, f"{tag}.engine")
    shapes = f"{in_name}:[{','.join(map(str, shape))}]"
    # A speed comparison: fp16 where it is faster, on every device (lavapipe's auto policy would make
    # every layer fp16 for accuracy work; builder.md, --fp16-policy).
    fp16_args = ["--fp16", "--fp16-policy", "fastest"] if fp16 else []
    cmd = [a.vkgraphy, "convert", onnx_path, "-o", engine, "--input-shapes", shapes] + fp16_args
    log(f"  vkgraphy convert{' --fp16 --fp16-policy fastest' if fp16 else ''} ({name})")
    t0 = time.perf_counter()
    build_log = run_step(cmd, "vkgraphy convert", a.timeout)
    build_s = time.perf_counter() - t0
    with open(os.path.join(art, f"{tag}.convert.log"), "w") as f:
        f.write(build_log)
    inputs = os.path.join(art, "inputs.json")
    with open(inputs, "w") as f:
        json.dump([{in_name: encode_array(x)}] * a.iterations, f)
    outputs = os.path.join(art, f"{tag}.outputs.json")
    log(f"  vkgraphy run --vk ({warmup_text(a)} + {a.iterations} iterations)")
    run_log = run_step([a.vkgraphy, "run", engine, "--vk", "--warm-up", str(a.warmup), "--warm-up-ms", str(a.warmup_ms),
                        "--load-inputs", inputs, "--save-outputs", outputs], "vkgraphy run", a.run_budget)
    with open(os.path.join(art, f"{tag}.run.log"), "w") as f:
        f.write(run_log)
    with open(outputs) as f:
        doc = json.load(f)
    results = doc["lst"][0][1]
    if len(results) != a.iterations:
        raise StepFailed(f"vkgraphy run recorded {len(results)} iterations, expected {a.iterations}")
    times = [r["runtime"] * 1e3 for r in results]
    first = next(iter(results[-1]["outputs"].values()))
    out = decode_array(first["values"])
    return times, out, vkgraphy_device_name(build_log), build_s


# ---------------------------------------------------------------------------------------------
# The benchmark


def warmup_text(a):
    return f"{a.warmup} warm-up" + (f" (at least {a.warmup_ms:g} ms)" if a.warmup_ms > 0 else "")


def fmt_ms(v):
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def cmd_run(a):
    a.threads = int(os.environ.get("PEERS_THREADS", nproc()))
    a.run_budget = int(os.environ.get("PEERS_RUN_BUDGET", 300 if a.quick else 3600))
    if a.warmup is None:
        a.warmup = 1 if a.quick else 2
    if a.iterations is None:
        a.iterations = 3 if a.quick else 10
    if a.warmup_ms is None:
        a.warmup_ms = float(os.environ.get("PEERS_WARMUP_MS", 0))
    selected = select(a)
    if selected is None:
        return 2
    runtimes, model_names = selected
    models = prepare_models(a.work, a.resnet50, a.transformer, model_names)

    versions = {}
    import importlib.metadata as md
    for pkg in ["onnxruntime", "ncnn", "pnnx", "iree-base-compiler", "iree-base-runtime"]:
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = "not installed"
    print(f"# {warmup_text(a)} + {a.iterations} timed inferences per runtime, median wall time per inference "
          f"(host input to host output); input seed {SEED}, values in [0, 1)")
    print(f"# VK_DRIVER_FILES={os.environ.get('VK_DRIVER_FILES', '(unset)')} "
          f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', '(unset)')}; CPU threads for peers: {a.threads}")
    print("# " + ", ".join(f"{k} {v}" for k, v in versions.items()), flush=True)

    results = {}  # (model, runtime) -> dict(median, diff, skipped)
    devices = {}
    device_name = None
    for model in models:
        name, onnx_path, in_name, shape = model
        log(f"== {name}: {os.path.basename(onnx_path)} input {in_name} {shape}")
        x = make_input(shape)
        art = model_artifacts(a.work, model)
        input_npy = os.path.join(art, "input.npy")
        np.save(input_npy, x)
        outputs = {}
        order = [ORACLE] + [r for r in runtimes if r != ORACLE] if ORACLE in runtimes else runtimes
        for rt in order:
            res = {}
            try:
                if rt.startswith("vkgraphy-"):
                    times, out, dev, build_s = measure_vkgraphy(a, model, rt.endswith("fp16"), x, art)
                    device_name = device_name or dev
                    devices[rt] = dev
                    res["note"] = f"engine built in {build_s:.0f} s"
                    res["precision"] = "fp16" if rt.endswith("fp16") else "fp32"
                else:
                    result = os.path.join(art, f"{rt}.result.json")
                    for p in (result, result + ".npy"):
                        if os.path.exists(p):
                            os.remove(p)
                    cmd = peer_command(a, rt, model, art, input_npy, result, device_name)
                    if rt in CONVERT:
                        convert_peer(a, rt, cmd, art)
                    log(f"  {rt}: {warmup_text(a)} + {a.iterations} inferences (budget {a.run_budget} s)")
                    try:
                        child_log = run_step(cmd, rt, a.run_budget)
                    except StepFailed as e:
                        if "timed out" in str(e):
                            raise StepFailed(f"{rt}: {warmup_text(a)} + {a.iterations} inferences took longer than the "
                                             f"{a.run_budget} s budget{' of --quick' if a.quick else ''} "
                                             f"(PEERS_RUN_BUDGET); not timed")
                        raise
                    with open(os.path.join(art, f"{rt}.log"), "w") as f:
                        f.write(child_log)
                    with open(result) as f:
                        r = json.load(f)
                    times, out, devices[rt] = r["times_ms"], np.load(result + ".npy"), r["device"]
                    res["precision"] = r.get("precision", "fp32")
                res["median"] = statistics.median(times)
                outputs[rt] = np.asarray(out, dtype=np.float32)
                print(f"PEER model={name} runtime={rt} median_ms={res['median']:.3f}", flush=True)
            except Exception as e:  # noqa: BLE001: a peer that fails is reported, never silent
                reason = one_line(e) if isinstance(e, StepFailed) else one_line(f"{type(e).__name__}: {e}")
                res["skipped"] = reason
                print(f"PEER model={name} runtime={rt} skipped={reason}", flush=True)
            results[(name, rt)] = res
        ref = outputs.get(ORACLE)
        if ref is not None:
            ref_max = float(np.max(np.abs(ref))) if ref.size else 0.0
            results[(name, ORACLE)]["ref_max"] = ref_max
        for rt, out in outputs.items():
            if ref is None or rt == ORACLE:
                continue
            if out.size != ref.size:
                results[(name, rt)]["diff"] = f"shape {list(out.shape)} vs {list(ref.shape)}"
            else:
                o = out.reshape(ref.shape).astype(np.float64)
                d = float(np.max(np.abs(o - ref)))
                norm = float(np.linalg.norm(ref.astype(np.float64)))
                rel = float(np.linalg.norm(o - ref)) / norm if norm > 0 else float("inf")
                results[(name, rt)]["diff"] = (d, rel)

    print()
    print("# devices: " + ("; ".join(f"{rt}: {d}" for rt, d in devices.items() if d) or "none (nothing ran)"))
    header = ["model"] + runtimes
    print(f"# Speed: runtime median / {REFERENCE} median (median ms in brackets); below 1.00x the runtime "
          f"is faster than {REFERENCE}, above 1.00x slower.")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for model in models:
        name = model[0]
        base = results.get((name, REFERENCE), {}).get("median")
        cells = [name]
        for rt in runtimes:
            r = results.get((name, rt), {})
            if "median" not in r:
                cells.append("skipped")
                continue
            ratio = f"{r['median'] / base:.2f}x" if base else "n/a"
            cells.append(f"{ratio} ({fmt_ms(r['median'])} ms)")
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"# Same result: max abs difference of each output from {ORACLE}'s; in brackets the relative "
          f"L2 error |out - ref| / |ref|, marked WRONG above {WRONG_REL_L2['fp32']:g} for fp32 runtimes and "
          f"{WRONG_REL_L2['fp16']:g} for fp16 ones (not rounding: a different computation).")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for model in models:
        name = model[0]
        cells = [name]
        for rt in runtimes:
            r = results.get((name, rt), {})
            diff = r.get("diff")
            if "median" not in r:
                cells.append("skipped")
            elif rt == ORACLE:
                cells.append(f"oracle (max abs {r['ref_max']:.3g})" if "ref_max" in r else "oracle")
            elif diff is None:
                cells.append("no oracle")
            elif isinstance(diff, str):
                cells.append(diff)
            else:
                wrong = diff[1] > WRONG_REL_L2[r.get("precision", "fp32")]
                cells.append(f"{diff[0]:.1e} ({diff[1]:.1e}{' WRONG' if wrong else ''})")
        print("| " + " | ".join(cells) + " |")
    skipped = [(k, v["skipped"]) for k, v in results.items() if "skipped" in v]
    for (model, rt), why in skipped:
        print(f"# {model} on {rt} did not run: {why}")
    return 0


def select(a):
    """(runtimes, model names) that a.runtimes and a.models choose, in their canonical order;
    None (after an error message) when either names something unknown."""
    for given, known in ((a.runtimes, RUNTIMES), (a.models, MODEL_NAMES)):
        unknown = [v for v in (given or "").split(",") if v and v not in known]
        if unknown:
            print(f"error: unknown {', '.join(unknown)}; choose from {','.join(known)}", file=sys.stderr)
            return None
    runtimes = [r for r in RUNTIMES if not a.runtimes or r in a.runtimes.split(",")]
    names = [m for m in MODEL_NAMES if not a.models or m in a.models.split(",")]
    if "resnet50" in names and not a.resnet50:
        print("error: resnet50 needs --resnet50 FILE (bench/models/make_resnet50.py makes it)", file=sys.stderr)
        return None
    return runtimes, names


def peer_command(a, rt, model, art, input_npy, result, device_name):
    """The child process that converts for and measures the peer `rt` on `model`."""
    name, onnx_path, in_name, shape = model
    sub = "ncnn" if rt.startswith("ncnn") else "iree" if rt.startswith("iree") else "ort"
    return [sys.executable, os.path.abspath(__file__), "measure", rt, "--onnx", onnx_path,
            "--input-name", in_name, "--shape", ",".join(map(str, shape)), "--input", input_npy,
            "--artifacts", os.path.join(art, sub), "--result", result,
            "--warmup", str(a.warmup), "--warmup-ms", str(a.warmup_ms), "--iterations", str(a.iterations),
            "--threads", str(a.threads), "--timeout", str(a.timeout),
            "--device-name", device_name or ""]


def convert_peer(a, rt, cmd, art):
    """Runs the peer's conversion (cached in its artifact folder) in a child process."""
    log(f"  {rt}: converting")
    child_log = run_step(cmd + ["--convert-only"], rt, 2 * a.timeout + 60)
    with open(os.path.join(art, f"{rt}.convert.log"), "w") as f:
        f.write(child_log)


def model_artifacts(work, model):
    """The model's artifact folder; the peers' cached conversions in it are dropped when the
    model's content changed since they were made."""
    name, onnx_path = model[0], model[1]
    art = os.path.join(work, "artifacts", name)
    os.makedirs(art, exist_ok=True)
    stamp = os.path.join(art, "model.sha256")
    digest = sha256(onnx_path)
    if not os.path.isfile(stamp) or open(stamp).read() != digest:
        for sub in ("ncnn", "iree"):
            shutil.rmtree(os.path.join(art, sub), ignore_errors=True)
        with open(stamp, "w") as f:
            f.write(digest)
    return art


def cmd_prepare(a):
    """The models and the peers' conversions, without measuring: what bench/gpu_prepare.sh
    carries to a machine that cannot convert (no PyPI, no room for the converters)."""
    selected = select(a)
    if selected is None:
        return 2
    runtimes, names = selected
    a.warmup, a.warmup_ms, a.iterations, a.threads = 0, 0.0, 1, 1
    failed = 0
    for model in prepare_models(a.work, a.resnet50, a.transformer, names):
        art = model_artifacts(a.work, model)
        for rt in runtimes:
            if rt not in CONVERT:
                continue
            try:
                convert_peer(a, rt, peer_command(a, rt, model, art, "-", "-", ""), art)
                print(f"PREPARED model={model[0]} runtime={rt}", flush=True)
            except StepFailed as e:
                failed += 1
                print(f"PREPARED model={model[0]} runtime={rt} failed={one_line(e)}", flush=True)
    return 1 if failed else 0


def cmd_ort_latency(a):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in sess.get_inputs():
        dims = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        if i.type != "tensor(float)":
            raise SystemExit(f"input {i.name} is {i.type}; only float inputs are generated")
        feeds[i.name] = make_input(dims)
    times, _ = timed(lambda: sess.run(None, feeds), 1, a.iterations)
    print(f"ort_ms_median {statistics.median(times):.2f}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--vkgraphy", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--resnet50", help="the ResNet-50 ONNX file (needed when resnet50 is measured)")
    r.add_argument("--transformer", default="tests/models/vk/transformer.onnx")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--warmup", type=int)
    r.add_argument("--warmup-ms", type=float, help="warm up for at least this long (default PEERS_WARMUP_MS or 0)")
    r.add_argument("--iterations", type=int)
    q = sub.add_parser("prepare")
    q.add_argument("--work", required=True)
    q.add_argument("--resnet50", help="the ResNet-50 ONNX file (needed when resnet50 is prepared)")
    q.add_argument("--transformer", default="tests/models/vk/transformer.onnx")
    for parser in (r, q):
        parser.add_argument("--models", help="comma-separated subset of " + ",".join(MODEL_NAMES))
        parser.add_argument("--runtimes", help="comma-separated subset of " + ",".join(RUNTIMES))
        parser.add_argument("--timeout", type=int, default=int(os.environ.get("PEERS_TIMEOUT", 1800)))
    m = sub.add_parser("measure")
    m.add_argument("runtime", choices=sorted(MEASURE))
    m.add_argument("--onnx", required=True)
    m.add_argument("--input-name", required=True)
    m.add_argument("--shape", required=True, type=lambda s: [int(v) for v in s.split(",")])
    m.add_argument("--input", required=True)
    m.add_argument("--artifacts", required=True)
    m.add_argument("--result", required=True)
    m.add_argument("--warmup", type=int, required=True)
    m.add_argument("--warmup-ms", type=float, default=0.0)
    m.add_argument("--iterations", type=int, required=True)
    m.add_argument("--threads", type=int, required=True)
    m.add_argument("--timeout", type=int, required=True)
    m.add_argument("--device-name", default="")
    m.add_argument("--convert-only", action="store_true")
    o = sub.add_parser("ort-latency")
    o.add_argument("model")
    o.add_argument("iterations", type=int)
    o.add_argument("threads", type=int)
    a = p.parse_args()
    # A SIGTERM (a time limit around the benchmark) unwinds like an exception, so that run_step
    # kills the converter or runtime in flight, which runs in a process group of its own.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    return {"run": cmd_run, "prepare": cmd_prepare, "measure": cmd_measure, "ort-latency": cmd_ort_latency}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
