"""The cuBLAS / cuDNN baseline of a GPU run (bench/gpu.sh), from the PyTorch of that machine.

    torch_baseline.py matmul [--size N] [--iterations N] [--warmup-ms MS]
        torch.matmul N^3 (default 4096) on the GPU in fp32 with TF32 off, and in fp16; prints
        TORCH case="MatMul N^3" dtype=fp32|fp16 median_ms=X tflops=Y
    torch_baseline.py model NAME ONNX [--iterations N] [--warmup N] [--warmup-ms MS]
        the ONNX model through onnx2torch on the GPU, batch 1, in fp32 (TF32 off) and fp16; prints
        TORCH model=NAME runtime=torch-cuda-fp32|torch-cuda-fp16 median_ms=X device_ms=Y
        then the vendor stack at its best, the anchor of vkgraphy's GPU goals: the same module in
        channels-last memory with cuDNN's autotuner on, its whole forward captured once in a CUDA
        graph and replayed, so that no kernel launch is counted against it:
        TORCH model=NAME runtime=torch-cuda-graph-fp32|torch-cuda-graph-fp16 median_ms=X device_ms=Y
        (median_ms: host input copied into the graph's input, replay, output to the host; device_ms:
        CUDA events around the replay alone)
        or, where a step fails, TORCH model=NAME runtime=... skipped=REASON

Timing, as bench/peers.py times the runtimes it compares: median_ms is the wall time from a host
(numpy) input to a host output, the same input (numpy RandomState(1), values in [0, 1)); device_ms
is the median of CUDA events around the module call alone. The matmul medians are CUDA-event
times of the product alone, from which tflops = 2 N^3 / time. Both warm up first for at least
--warmup-ms (matmul: 100 ms by default, as vkgraphy_tactic_bench warms up each tactic on a GPU,
whose clock rises only under load; model: 0, bench/gpu.sh gives the peers' 500). --device cpu runs
the same code on the CPU (a smoke test on a machine without a GPU; no figure to record).
"""
import argparse
import statistics
import sys
import time

import numpy as np


def one_line(text):
    return " ".join(str(text).split())[:300]


def sync_of(torch, device):
    return torch.cuda.synchronize if device == "cuda" else (lambda: None)


def cuda_timer(torch, device):
    """A function timing a callable in ms: CUDA events on a GPU, perf_counter on the CPU."""
    if device == "cuda":
        def t(fn):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
    else:
        def t(fn):
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
    return t


def warm_up(fn, sync, runs, ms):
    """`runs` calls of `fn`, and more until `ms` milliseconds have passed (synchronized)."""
    start, done = time.perf_counter(), 0
    while done < runs or (time.perf_counter() - start) * 1e3 < ms:
        fn()
        sync()
        done += 1


def precise_fp32(torch):
    """fp32 as fp32: no TF32 in cuBLAS or cuDNN (the issue's baseline for fp32 GEMM)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")


def cmd_matmul(a, torch):
    precise_fp32(torch)
    timer = cuda_timer(torch, a.device)
    n = a.size
    gen = torch.Generator(device="cpu").manual_seed(1)
    for name, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
        try:
            x = (torch.rand(n, n, generator=gen) * 2 - 1).to(a.device, dtype)
            y = (torch.rand(n, n, generator=gen) * 2 - 1).to(a.device, dtype)
            warm_up(lambda: torch.matmul(x, y), sync_of(torch, a.device), 3, a.warmup_ms)
            times = [timer(lambda: torch.matmul(x, y)) for _ in range(a.iterations)]
            ms = statistics.median(times)
            print(f'TORCH case="MatMul {n}^3" dtype={name} median_ms={ms:.3f} tflops={2 * n**3 / ms / 1e9:.2f}',
                  flush=True)
        except Exception as e:  # noqa: BLE001: a baseline that fails says why
            print(f'TORCH case="MatMul {n}^3" dtype={name} skipped={one_line(e)}', flush=True)
    return 0


def model_input(path):
    import onnx

    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    if len(inputs) != 1:
        raise RuntimeError(f"{path}: one input expected, found {len(inputs)}")
    dims = [d.dim_value for d in inputs[0].type.tensor_type.shape.dim]
    if any(d <= 0 for d in dims):
        raise RuntimeError(f"{path}: input {inputs[0].name} has a dynamic shape {dims}")
    return np.random.RandomState(1).random_sample(dims).astype(np.float32)


def cmd_model(a, torch):
    precise_fp32(torch)
    try:
        from onnx2torch import convert

        x = model_input(a.onnx)
        module = convert(a.onnx).eval().to(a.device)
    except Exception as e:  # noqa: BLE001
        for rt in ("fp32", "fp16"):
            print(f"TORCH model={a.name} runtime=torch-{a.device}-{rt} skipped=onnx2torch: {one_line(e)}", flush=True)
        return 0
    timer = cuda_timer(torch, a.device)
    sync = sync_of(torch, a.device)
    for rt, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
        label = f"TORCH model={a.name} runtime=torch-{a.device}-{rt}"
        try:
            mod = module.to(dtype)
            with torch.inference_mode():
                def host_to_host():
                    out = mod(torch.from_numpy(x).to(a.device, dtype))
                    first = out[0] if isinstance(out, (list, tuple)) else out
                    return first.float().cpu().numpy()

                wall, dev = [], []
                dx = torch.from_numpy(x).to(a.device, dtype)
                warm_up(host_to_host, sync, a.warmup, a.warmup_ms)
                for _ in range(a.iterations):
                    sync()
                    t0 = time.perf_counter()
                    host_to_host()
                    t1 = time.perf_counter()
                    dev.append(timer(lambda: mod(dx)))
                    wall.append((t1 - t0) * 1e3)
            print(f"{label} median_ms={statistics.median(wall):.3f} device_ms={statistics.median(dev):.3f}",
                  flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"{label} skipped={one_line(e)}", flush=True)
    return cmd_model_graph(a, torch, module, x)


def captured(torch, mod, x):
    """The module's forward on the static input `x` captured in a CUDA graph: (graph, static output).
    Warmed up on a side stream first, as capture requires (cuDNN's autotuner picks its kernels there)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            mod(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = mod(x)
    return graph, out[0] if isinstance(out, (list, tuple)) else out


def cmd_model_graph(a, torch, module, x):
    """The CUDA-graph anchor: channels-last, cuDNN autotuned, replayed (module docstring)."""
    torch.backends.cudnn.benchmark = True
    timer = cuda_timer(torch, a.device)
    for rt, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
        label = f"TORCH model={a.name} runtime=torch-{a.device}-graph-{rt}"
        if a.device != "cuda":
            print(f"{label} skipped=CUDA graphs need a CUDA device", flush=True)
            continue
        try:
            fmt = torch.channels_last if x.ndim == 4 else torch.contiguous_format
            mod = module.to(dtype).to(memory_format=fmt)
            with torch.inference_mode():
                static_in = torch.from_numpy(x).to(a.device, dtype).contiguous(memory_format=fmt)
                graph, static_out = captured(torch, mod, static_in)
                host_in = torch.from_numpy(x)

                def host_to_host():
                    static_in.copy_(host_in)
                    graph.replay()
                    return static_out.float().cpu().numpy()

                warm_up(host_to_host, torch.cuda.synchronize, a.warmup, a.warmup_ms)
                wall, dev = [], []
                for _ in range(a.iterations):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    host_to_host()
                    wall.append((time.perf_counter() - t0) * 1e3)
                    dev.append(timer(graph.replay))
            print(f"{label} median_ms={statistics.median(wall):.3f} device_ms={statistics.median(dev):.3f}",
                  flush=True)
        except Exception as e:  # noqa: BLE001: a baseline that fails says why
            print(f"{label} skipped={one_line(e)}", flush=True)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("matmul")
    m.add_argument("--size", type=int, default=4096)
    m.add_argument("--iterations", type=int, default=20)
    m.add_argument("--warmup-ms", type=float, default=100.0)
    m.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    o = sub.add_parser("model")
    o.add_argument("name")
    o.add_argument("onnx")
    o.add_argument("--warmup", type=int, default=3)
    o.add_argument("--warmup-ms", type=float, default=0.0)
    o.add_argument("--iterations", type=int, default=20)
    o.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = p.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"TORCH skipped=PyTorch is not installed ({one_line(e)})", flush=True)
        return 1
    if a.device == "cuda" and not torch.cuda.is_available():
        print("TORCH skipped=PyTorch sees no CUDA device", flush=True)
        return 1
    return cmd_matmul(a, torch) if a.cmd == "matmul" else cmd_model(a, torch)


if __name__ == "__main__":
    sys.exit(main())
