"""Seeded generator of random valid ONNX graphs for differential fuzzing (tests/fuzz/fuzz_engine.py).

    graph_gen.py --seed S --index I -o model.onnx    writes graph I of seed S (the same bytes every time)
    graph_gen.py --self-test [--seed S --count N]     checks N graphs: onnx.checker (full_check=True),
                                                       ONNX Runtime runs them, declared shapes hold

Run it with the tests' virtual environment (.venv: onnx 1.18, onnxruntime, numpy). The graphs are
opset 17, IR 8, float32 with fully static shapes: chains and branches (a tensor read by several
nodes, joined again by Add/Mul/Concat/...) of Conv (1-D and 2-D, groups, depthwise, dilations,
strides, asymmetric pads), ConvTranspose, MatMul (broadcast batch dimensions), Gemm, elementwise
binary ops with broadcasting, activations (the fusable ones, the Gelu patterns, x*Sigmoid(x)),
BatchNormalization, Reshape, Transpose, Slice (steps, negative indices), Concat, Split, Resize,
pooling, reductions, Softmax, LSTM/GRU/RNN and If (a bool input or a condition computed at run time).
Values stay bounded (inputs in [-1, 1], weights scaled by 1/sqrt(fan-in), divisors away from zero)
so that an fp16 engine does not overflow.

Each graph comes with `features`: short tags of what it holds ("op:LSTM", "lstm:hidden>=256",
"if:runtime-cond", ...), which the driver's KNOWN_FAILURES match on.
"""
import argparse
import hashlib
import math
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
# The range of generated float inputs (the driver passes it to vkgraphy as --val-range).
INPUT_RANGE = (-1.0, 1.0)
MAX_ELEMENTS = 6144          # largest activation tensor the generator makes
PRIMES = [7, 13, 31]


def graph_seed(seed, index):
    """The seed of graph `index` of run `seed`: any graph can be made again alone."""
    digest = hashlib.sha256(f"vkgraphy-fuzz:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def numel(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


class Graph:
    """A graph under construction: nodes, initializers, inputs, and the float tensors available
    as operands, each with its static shape."""

    def __init__(self, rng, nrng, prefix=""):
        self.rng = rng            # random.Random: structure
        self.nrng = nrng          # numpy Generator: values
        self.prefix = prefix
        self.nodes = []
        self.inits = []
        self.inputs = []          # ValueInfoProtos
        self.input_meta = []      # (name, dtype, shape)
        self.shapes = {}          # float tensor name -> shape
        self.consumers = {}       # tensor -> number of readers
        self.order = []           # float tensors in creation order
        self.counter = 0
        self.features = set()
        self.ops = []
        self.rnn = []             # one dict per LSTM/GRU/RNN: op, seq, batch, input, hidden, dirs

    # -- names, constants, nodes ------------------------------------------------------------
    def name(self, base):
        self.counter += 1
        return f"{self.prefix}{base}{self.counter}"

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def weight(self, base, shape, fan_in, gain=1.0):
        w = self.nrng.standard_normal(shape) * (gain / math.sqrt(max(fan_in, 1)))
        return self.const(base, w.astype(np.float32))

    def uniform(self, base, shape, lo, hi):
        return self.const(base, self.nrng.uniform(lo, hi, shape).astype(np.float32))

    def ints(self, base, values):
        return self.const(base, np.array(values, dtype=np.int64))

    def node(self, op, inputs, outputs=None, **attrs):
        nm = self.name(op.lower() + "_")
        outputs = outputs or [self.name("t")]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=nm, **attrs))
        for i in inputs:
            if i:
                self.consumers[i] = self.consumers.get(i, 0) + 1
        self.ops.append(op)
        self.features.add(f"op:{op}")
        return outputs

    def add_float(self, t, shape):
        assert all(d > 0 for d in shape), (t, shape)
        self.shapes[t] = list(shape)
        self.order.append(t)
        return t

    def add_input(self, base, shape, dtype=TensorProto.FLOAT):
        n = self.name(base)
        self.inputs.append(helper.make_tensor_value_info(n, dtype, shape))
        self.input_meta.append((n, dtype, list(shape)))
        if dtype == TensorProto.FLOAT:
            self.add_float(n, shape)
        return n


# ---------------------------------------------------------------------------------------------
# Shape helpers
# ---------------------------------------------------------------------------------------------
def rand_dim(rng, lo, hi, prime_p=0.3):
    if rng.random() < prime_p:
        ps = [p for p in PRIMES if lo <= p <= hi]
        if ps:
            return rng.choice(ps)
    return rng.randint(lo, hi)


def conv_out(size, k, s, p0, p1, d):
    return (size + p0 + p1 - ((k - 1) * d + 1)) // s + 1


def pool_out(size, k, s, p0, p1, d, ceil_mode):
    """The output size; 0 for a ceil_mode case whose last window would start in the right padding,
    where ONNX's shape inference, ONNX Runtime and PyTorch disagree (the generator avoids it)."""
    eff = (k - 1) * d + 1
    num = size + p0 + p1 - eff
    if ceil_mode:
        out = -(-num // s) + 1
        if (out - 1) * s >= size + p0:
            return 0
        return out
    return num // s + 1


def broadcast_shape(a, b):
    r = max(len(a), len(b))
    a = [1] * (r - len(a)) + list(a)
    b = [1] * (r - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y))
    return out


def broadcast_operand_shape(rng, shape):
    """A shape that broadcasts against `shape` without changing it."""
    kind = rng.random()
    if kind < 0.15:
        return []
    if kind < 0.3:
        return [shape[-1]]
    if kind < 0.45 and len(shape) >= 3:
        return [shape[1]] + [1] * (len(shape) - 2)   # per channel, without the batch dim
    out = [d if rng.random() < 0.5 else 1 for d in shape]
    if rng.random() < 0.5:
        out = out[rng.randint(0, len(out) - 1):]    # fewer leading dims
    return out


def factorizations(n, rank, rng):
    """A random shape of `rank` dims with product n."""
    dims = []
    rest = n
    for _ in range(rank - 1):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = rng.choice(divs)
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    return dims


# ---------------------------------------------------------------------------------------------
# Op emitters: each takes the graph and an operand, returns the new tensor or None when it does
# not apply to that operand (the caller then tries another op).
# ---------------------------------------------------------------------------------------------
def emit_activation(g, x, kind=None):
    rng = g.rng
    shape = g.shapes[x]
    kind = kind or rng.choice(["Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid", "HardSwish",
                               "GeluErf", "GeluTanh", "SiLU", "Elu", "Abs", "Neg"])
    g.features.add(f"act:{kind}")
    if kind in ("Relu", "Sigmoid", "Tanh", "HardSwish", "Abs", "Neg"):
        (y,) = g.node(kind, [x])
    elif kind == "LeakyRelu":
        (y,) = g.node(kind, [x], alpha=round(rng.uniform(0.01, 0.3), 3))
    elif kind == "Elu":
        (y,) = g.node(kind, [x], alpha=round(rng.uniform(0.5, 1.5), 3))
    elif kind == "HardSigmoid":
        (y,) = g.node(kind, [x], alpha=round(rng.uniform(0.1, 0.4), 3), beta=round(rng.uniform(0.3, 0.7), 3))
    elif kind == "Clip":
        lo = round(rng.uniform(-1.0, 0.0), 3)
        hi = round(rng.uniform(0.1, 1.5), 3)
        form = rng.randint(0, 2)
        ins = [x, g.const("clip_lo", np.array(lo, np.float32)) if form != 2 else "",
               g.const("clip_hi", np.array(hi, np.float32)) if form != 1 else ""]
        while ins[-1] == "":
            ins.pop()
        (y,) = g.node("Clip", ins)
    elif kind == "SiLU":
        (s,) = g.node("Sigmoid", [x])
        (y,) = g.node("Mul", [x, s])
    elif kind == "GeluErf":
        (d,) = g.node("Div", [x, g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))])
        (e,) = g.node("Erf", [d])
        (p,) = g.node("Add", [e, g.const("one", np.array(1.0, np.float32))])
        (m,) = g.node("Mul", [x, p])
        (y,) = g.node("Mul", [m, g.const("half", np.array(0.5, np.float32))])
    else:  # GeluTanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        (x3,) = g.node("Pow", [x, g.const("three", np.array(3.0, np.float32))])
        (a,) = g.node("Mul", [x3, g.const("c", np.array(0.044715, np.float32))])
        (b,) = g.node("Add", [x, a])
        (c,) = g.node("Mul", [b, g.const("k", np.array(math.sqrt(2 / math.pi), np.float32))])
        (t,) = g.node("Tanh", [c])
        (p,) = g.node("Add", [t, g.const("one", np.array(1.0, np.float32))])
        (m,) = g.node("Mul", [x, p])
        (y,) = g.node("Mul", [m, g.const("half", np.array(0.5, np.float32))])
    return g.add_float(y, shape)


def emit_binary_const(g, x):
    rng = g.rng
    shape = g.shapes[x]
    op = rng.choice(["Add", "Sub", "Mul", "Div", "Max", "Min"])
    cshape = broadcast_operand_shape(rng, shape)
    if op == "Div":
        mag = g.nrng.uniform(0.5, 2.0, cshape)
        val = (mag * np.where(g.nrng.random(cshape) < 0.5, -1, 1)).astype(np.float32)
    elif op == "Mul":
        val = g.nrng.uniform(-1.5, 1.5, cshape).astype(np.float32)
    else:
        val = g.nrng.uniform(-1.0, 1.0, cshape).astype(np.float32)
    c = g.const("k", val)
    ins = [x, c] if (op == "Div" or rng.random() < 0.7) else [c, x]
    (y,) = g.node(op, ins)
    g.features.add(f"binary:{op}")
    return g.add_float(y, broadcast_shape(shape, cshape))


def emit_batchnorm(g, x):
    shape = g.shapes[x]
    if len(shape) < 2:
        return None
    c = shape[1]
    ins = [x, g.uniform("bn_s", [c], 0.5, 1.5), g.uniform("bn_b", [c], -0.5, 0.5),
           g.uniform("bn_m", [c], -0.5, 0.5), g.uniform("bn_v", [c], 0.5, 2.0)]
    (y,) = g.node("BatchNormalization", ins, epsilon=round(g.rng.choice([1e-5, 1e-3, 0.1]), 6))
    return g.add_float(y, shape)


def emit_conv(g, x):
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) not in (3, 4):
        return None
    n, c = shape[0], shape[1]
    spatial = shape[2:]
    for _ in range(20):
        k = [rng.randint(1, 5) for _ in spatial]
        if len(spatial) == 2 and rng.random() < 0.6:
            k = [k[0], k[0]]
        s = [rng.choice([1, 1, 1, 2, 3]) for _ in spatial]
        d = [rng.choice([1, 1, 1, 2]) for _ in spatial]
        pads = [rng.randint(0, (kk - 1) * dd) if rng.random() < 0.8 else 0 for kk, dd in zip(k, d)]
        pads_end = [p if rng.random() < 0.7 else rng.randint(0, (kk - 1) * dd) for p, kk, dd in zip(pads, k, d)]
        out_sp = [conv_out(sz, kk, ss, p0, p1, dd) for sz, kk, ss, p0, p1, dd in zip(spatial, k, s, pads, pads_end, d)]
        if min(out_sp) < 1:
            continue
        mode = rng.random()
        if mode < 0.2:
            group = c                          # depthwise
            m = c * rng.choice([1, 1, 1, 2])
            g.features.add("conv:depthwise")
        elif mode < 0.35:
            divs = [v for v in range(2, c + 1) if c % v == 0]
            if not divs:
                group = 1
                m = rand_dim(rng, 1, 24)
            else:
                group = rng.choice(divs)
                m = group * rng.randint(1, max(1, 16 // group))
                g.features.add("conv:grouped")
        else:
            group = 1
            m = rand_dim(rng, 1, 24)
        out = [n, m] + out_sp
        if numel(out) > MAX_ELEMENTS or m * (c // group) * numel(k) > 20000:
            continue
        fan_in = (c // group) * numel(k)
        ins = [x, g.weight("conv_w", [m, c // group] + k, fan_in)]
        if rng.random() < 0.7:
            ins.append(g.uniform("conv_b", [m], -0.2, 0.2))
        (y,) = g.node("Conv", ins, kernel_shape=k, strides=s, dilations=d, pads=pads + pads_end, group=group)
        g.features.add(f"conv:{len(spatial)}d")
        return g.add_float(y, out)
    return None


def emit_conv_transpose(g, x):
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) not in (3, 4):
        return None
    n, c = shape[0], shape[1]
    spatial = shape[2:]
    for _ in range(20):
        k = [rng.randint(1, 4) for _ in spatial]
        s = [rng.choice([1, 2, 2, 3]) for _ in spatial]
        d = [rng.choice([1, 1, 1, 2]) for _ in spatial]
        pads = [rng.randint(0, (kk - 1) * dd) for kk, dd in zip(k, d)]
        pads_end = [rng.randint(0, (kk - 1) * dd) for kk, dd in zip(k, d)]
        # ONNX allows output_padding < max(stride, dilation); ONNX Runtime only < stride
        opad = [rng.randint(0, ss - 1) if rng.random() < 0.3 else 0 for ss in s]
        out_sp = [ss * (sz - 1) + op + ((kk - 1) * dd + 1) - p0 - p1
                  for sz, ss, op, kk, dd, p0, p1 in zip(spatial, s, opad, k, d, pads, pads_end)]
        if min(out_sp) < 1:
            continue
        divs = [v for v in range(1, c + 1) if c % v == 0]
        group = rng.choice(divs) if rng.random() < 0.3 else 1
        m_per = rng.randint(1, max(1, 12 // group))
        out = [n, m_per * group] + out_sp
        if numel(out) > MAX_ELEMENTS:
            continue
        fan_in = (c // group) * numel(k)
        ins = [x, g.weight("convt_w", [c, m_per] + k, math.sqrt(fan_in * numel(k) / max(numel(s), 1)))]
        if rng.random() < 0.6:
            ins.append(g.uniform("convt_b", [m_per * group], -0.2, 0.2))
        attrs = dict(kernel_shape=k, strides=s, dilations=d, pads=pads + pads_end, group=group)
        if any(opad):
            attrs["output_padding"] = opad
        (y,) = g.node("ConvTranspose", ins, **attrs)
        if group > 1:
            g.features.add("convtranspose:grouped")
        return g.add_float(y, out)
    return None


def emit_matmul(g, x):
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) < 2:
        return None
    k = shape[-1]
    for _ in range(10):
        nout = rand_dim(rng, 1, 40)
        form = rng.random()
        if form < 0.5 or len(shape) > 4:
            wshape = [k, nout]
        elif form < 0.75:
            # broadcast batch dims on the weight side: [B, K, N] against x's [..., M, K]
            batch = [rng.choice([1, 2, 3]) for _ in range(rng.randint(1, 2))]
            lead = shape[:-2]
            wshape = batch + [k, nout]
            if broadcast_shape(lead, batch) is None:
                wshape = [1] * len(lead) + [k, nout]
            g.features.add("matmul:broadcast-batch")
        else:
            # activation x activation: x @ transpose(x W) (attention-like)
            if len(shape) < 3 or shape[-2] * shape[-2] * numel(shape[:-2]) > MAX_ELEMENTS:
                continue
            w = g.weight("mm_w", [k, k], k)
            (xw,) = g.node("MatMul", [x, w])
            perm = list(range(len(shape)))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            (xt,) = g.node("Transpose", [xw], perm=perm)
            (y,) = g.node("MatMul", [x, xt])
            out = shape[:-1] + [shape[-2]]
            g.add_float(xw, shape)
            g.features.add("matmul:two-activations")
            yy = g.add_float(y, out)
            # the product grows with k: scale it back
            (z,) = g.node("Mul", [yy, g.const("mm_scale", np.array(1.0 / math.sqrt(k), np.float32))])
            return g.add_float(z, out)
        lead = broadcast_shape(shape[:-2], wshape[:-2])
        out = lead + [shape[-2], nout]
        if numel(out) > MAX_ELEMENTS:
            continue
        (y,) = g.node("MatMul", [x, g.weight("mm_w", wshape, k)])
        return g.add_float(y, out)
    return None


def emit_gemm(g, x):
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) != 2:
        return None
    trans_a = rng.randint(0, 1)
    m, k = (shape[1], shape[0]) if trans_a else shape
    nout = rand_dim(rng, 1, 48)
    if m * nout > MAX_ELEMENTS:
        return None
    trans_b = rng.randint(0, 1)
    alpha = round(rng.choice([1.0, 1.0, 0.5, 1.7]), 3)
    beta = round(rng.choice([1.0, 1.0, 0.25, 2.0]), 3)
    ins = [x, g.weight("gemm_b", [nout, k] if trans_b else [k, nout], k)]
    if rng.random() < 0.8:
        cshape = rng.choice([[nout], [1, nout], [m, 1], [m, nout], []])
        ins.append(g.uniform("gemm_c", cshape, -0.5, 0.5))
        g.features.add(f"gemm:bias{len(cshape)}d")
    (y,) = g.node("Gemm", ins, transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
    g.features.add(f"gemm:t{trans_a}{trans_b}")
    return g.add_float(y, [m, nout])


def emit_reshape(g, x):
    rng = g.rng
    shape = g.shapes[x]
    n = numel(shape)
    rank = rng.randint(1, 4) if rng.random() < 0.3 else rng.choice([2, 3, 4])
    target = factorizations(n, rank, rng)
    spec = list(target)
    if rng.random() < 0.4:
        spec[rng.randrange(rank)] = -1
    if rng.random() < 0.3:
        i = rng.randrange(min(rank, len(shape)))
        if target[i] == shape[i] and spec[i] != -1:
            spec[i] = 0
    (y,) = g.node("Reshape", [x, g.ints("shape", spec)])
    return g.add_float(y, target)


def emit_transpose(g, x):
    shape = g.shapes[x]
    if len(shape) < 2:
        return None
    perm = list(range(len(shape)))
    while perm == list(range(len(shape))):
        g.rng.shuffle(perm)
    (y,) = g.node("Transpose", [x], perm=perm)
    return g.add_float(y, [shape[p] for p in perm])


def emit_slice(g, x):
    rng = g.rng
    shape = g.shapes[x]
    axes = rng.sample(range(len(shape)), rng.randint(1, len(shape)))
    starts, ends, steps, out = [], [], [], list(shape)
    for a in axes:
        dim = shape[a]
        step = rng.choice([1, 1, 1, 2, 3, -1, -2])
        if step > 0:
            st = rng.randint(0, dim - 1)
            en = rng.randint(st + 1, dim)
            size = len(range(st, en, step))
            if rng.random() < 0.4:
                st -= dim                            # negative index
            if rng.random() < 0.3 and en == dim:
                en = 2 ** 62                         # "to the end"
            elif en < dim and rng.random() < 0.3:
                en -= dim
        else:
            st = rng.randint(0, dim - 1)
            en = rng.randint(-1, st - 1)
            size = len(range(st, en, step))
            if en == -1:
                en = -(2 ** 62)                      # "through index 0"
            elif rng.random() < 0.4:
                en -= dim
            if rng.random() < 0.4:
                st -= dim
        if size < 1:
            return None
        starts.append(st)
        ends.append(en)
        steps.append(step)
        out[a] = size
        if step != 1:
            g.features.add("slice:step")
    if rng.random() < 0.3:
        axes = [a - len(shape) for a in axes]
    ins = [x, g.ints("starts", starts), g.ints("ends", ends), g.ints("axes", axes)]
    if any(s != 1 for s in steps) or rng.random() < 0.5:
        ins.append(g.ints("steps", steps))
    (y,) = g.node("Slice", ins)
    return g.add_float(y, out)


def emit_split(g, x):
    rng = g.rng
    shape = g.shapes[x]
    axes = [a for a in range(len(shape)) if shape[a] >= 2]
    if not axes:
        return None
    a = rng.choice(axes)
    parts = rng.randint(2, min(3, shape[a]))
    ins = [x]
    if shape[a] % parts == 0 and rng.random() < 0.3:
        sizes = [shape[a] // parts] * parts          # equal parts: no split input
        g.features.add("split:equal")
    else:
        cuts = sorted(rng.sample(range(1, shape[a]), parts - 1))
        sizes = [b - c for b, c in zip(cuts + [shape[a]], [0] + cuts)]
        ins.append(g.ints("split", sizes))
    outs = [g.name("t") for _ in sizes]
    axis = a - len(shape) if rng.random() < 0.3 else a
    g.node("Split", ins, outs, axis=axis)
    ys = []
    for o, sz in zip(outs, sizes):
        s = list(shape)
        s[a] = sz
        ys.append(g.add_float(o, s))
    return rng.choice(ys)


def emit_resize(g, x):
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) != 4:
        return None
    mode = rng.choice(["nearest", "linear"])
    for _ in range(10):
        if rng.random() < 0.5:
            sc = [rng.choice([1, 2, 3]) for _ in range(2)]
            g.features.add("resize:integer-scale")
        else:
            sc = [rng.choice([0.5, 0.75, 1.5, 2.5, 1.25, 0.6]) for _ in range(2)]
            g.features.add("resize:fractional-scale")
        use_sizes = rng.random() < 0.3
        out_sp = [int(math.floor(d * s)) for d, s in zip(shape[2:], sc)]
        if min(out_sp) < 1 or numel(shape[:2] + out_sp) > MAX_ELEMENTS:
            continue
        attrs = {"mode": mode}
        if mode == "nearest":
            attrs["nearest_mode"] = rng.choice(["round_prefer_floor", "floor", "ceil", "round_prefer_ceil"])
            attrs["coordinate_transformation_mode"] = rng.choice(["half_pixel", "asymmetric", "align_corners"])
        else:
            attrs["coordinate_transformation_mode"] = rng.choice(["half_pixel", "asymmetric", "align_corners",
                                                                  "pytorch_half_pixel"])
        if attrs["coordinate_transformation_mode"] in ("align_corners", "pytorch_half_pixel") and \
                any(d * s != o for d, s, o in zip(shape[2:], sc, out_sp)):
            # With scales, the length these modes divide by is input x scale: ONNX's reference
            # implementation (and vkgraphy) take it unrounded, ONNX Runtime takes the output's
            # (integer) size; the spec leaves it open. Sizes say the same to both.
            use_sizes = True
        if use_sizes:
            ins = [x, "", "", g.ints("sizes", shape[:2] + out_sp)]
        else:
            ins = [x, "", g.const("scales", np.array([1.0, 1.0] + sc, np.float32))]
        (y,) = g.node("Resize", ins, **attrs)
        g.features.add(f"resize:{mode}")
        return g.add_float(y, shape[:2] + out_sp)
    return None


def emit_pool(g, x):
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) not in (3, 4):
        return None
    spatial = shape[2:]
    if rng.random() < 0.25:
        op = rng.choice(["GlobalAveragePool", "GlobalMaxPool"])
        (y,) = g.node(op, [x])
        return g.add_float(y, shape[:2] + [1] * len(spatial))
    op = rng.choice(["MaxPool", "AveragePool"])
    for _ in range(10):
        k = [rng.randint(1, min(4, sz)) for sz in spatial]
        s = [rng.randint(1, 3) for _ in spatial]
        p0 = [rng.randint(0, kk - 1) if rng.random() < 0.5 else 0 for kk in k]
        p1 = [rng.randint(0, kk - 1) if rng.random() < 0.5 else 0 for kk in k]
        ceil_mode = rng.randint(0, 1)
        out_sp = [pool_out(sz, kk, ss, a, b, 1, ceil_mode) for sz, kk, ss, a, b in zip(spatial, k, s, p0, p1)]
        if min(out_sp) < 1:
            continue
        attrs = dict(kernel_shape=k, strides=s, pads=p0 + p1, ceil_mode=ceil_mode)
        if op == "AveragePool":
            attrs["count_include_pad"] = rng.randint(0, 1)
        (y,) = g.node(op, [x], **attrs)
        if ceil_mode:
            g.features.add("pool:ceil")
        return g.add_float(y, shape[:2] + out_sp)
    return None


def emit_reduce(g, x):
    rng = g.rng
    shape = g.shapes[x]
    op = rng.choice(["ReduceMean", "ReduceSum", "ReduceMax"])
    axes = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
    keep = rng.randint(0, 1)
    if not keep and len(axes) == len(shape):
        keep = 1                       # keep at least a 1-element tensor of rank > 0
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in axes]
    ax = [a - len(shape) if rng.random() < 0.3 else a for a in axes]
    if op == "ReduceSum":
        (y,) = g.node(op, [x, g.ints("axes", ax)], keepdims=keep)
        y = g.add_float(y, out)
        # keep sums bounded
        count = numel([shape[a] for a in axes])
        (z,) = g.node("Mul", [y, g.const("rs_scale", np.array(1.0 / math.sqrt(count), np.float32))])
        g.features.add(f"reduce:{op}:keepdims{keep}")
        return g.add_float(z, out)
    (y,) = g.node(op, [x], axes=ax, keepdims=keep)
    g.features.add(f"reduce:{op}:keepdims{keep}")
    return g.add_float(y, out)


def emit_softmax(g, x):
    shape = g.shapes[x]
    axis = g.rng.randint(-len(shape), len(shape) - 1)
    op = g.rng.choice(["Softmax", "Softmax", "LogSoftmax"])
    (y,) = g.node(op, [x], axis=axis)
    return g.add_float(y, shape)


def emit_recurrent(g, x):
    """LSTM / GRU / RNN over x viewed as [seq, batch, input]."""
    rng = g.rng
    shape = g.shapes[x]
    if len(shape) != 3:
        return None
    seq, batch, isz = shape
    if seq > 8 or batch > 4 or isz > 64:
        return None
    op = rng.choice(["LSTM", "LSTM", "GRU", "RNN"])
    direction = rng.choice(["forward", "reverse", "bidirectional"])
    dirs = 2 if direction == "bidirectional" else 1
    h = rng.choice([1, 2, 5, 8, 13, 16, 31, 32, 48, 64, 96, 128, 200, 256, 512]) if rng.random() < 0.7 \
        else rng.randint(1, 64)
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    if h >= 256 and (seq * batch > 8 or isz > 32):
        h = rng.choice([96, 128, 200])
    ins = [x, g.weight(f"{op.lower()}_W", [dirs, gates * h, isz], isz),
           g.weight(f"{op.lower()}_R", [dirs, gates * h, h], h)]
    with_b = rng.random() < 0.7
    ins.append(g.uniform(f"{op.lower()}_B", [dirs, 2 * gates * h], -0.3, 0.3) if with_b else "")
    with_lens = rng.random() < 0.3
    ins.append(g.const("seq_lens", np.array([rng.randint(1, seq) for _ in range(batch)], np.int32))
               if with_lens else "")
    init_h = rng.random() < 0.5
    if init_h:
        ins.append(g.add_input("h0", [dirs, batch, h]) if rng.random() < 0.4
                   else g.uniform("h0_", [dirs, batch, h], -0.5, 0.5))
    else:
        ins.append("")
    init_c = op == "LSTM" and rng.random() < 0.5
    if init_c:
        ins.append(g.add_input("c0", [dirs, batch, h]) if rng.random() < 0.4
                   else g.uniform("c0_", [dirs, batch, h], -0.5, 0.5))
    while ins[-1] == "":
        ins.pop()
    y, yh = g.name("Y"), g.name("Yh")
    outs = [y, yh]
    if op == "LSTM":
        outs.append(g.name("Yc"))
    attrs = dict(hidden_size=h, direction=direction)
    if op == "GRU":
        attrs["linear_before_reset"] = rng.randint(0, 1)
    g.node(op, ins, outs, **attrs)
    g.features.update({f"rnn:{op}", f"rnn:{op}:{direction}", f"rnn:hidden={h}"})
    if h >= 256:
        g.features.add(f"rnn:{op}:hidden>=256")
    if with_b:
        g.features.add(f"rnn:{op}:bias")
    if with_lens:
        g.features.add(f"rnn:{op}:sequence_lens")
    if init_h:
        g.features.add(f"rnn:{op}:initial_h")
    if init_c:
        g.features.add(f"rnn:{op}:initial_c")
    flags = [f for f, on in (("B", with_b), ("lens", with_lens), ("h0", init_h), ("c0", init_c)) if on]
    g.features.add(f"rnn-node:{op}:{direction}:{','.join(flags) or '-'}")
    g.rnn.append({"op": op, "seq": seq, "batch": batch, "input": isz, "hidden": h, "dirs": dirs})
    g.add_float(y, [seq, dirs, batch, h])
    g.add_float(yh, [dirs, batch, h])
    if op == "LSTM":
        g.add_float(outs[2], [dirs, batch, h])
    # continue from Y as [seq, batch, dirs*h], or Y_h, or Y_c
    choice = rng.random()
    if choice < 0.5 and numel([seq, batch, dirs * h]) <= MAX_ELEMENTS:
        (t,) = g.node("Transpose", [y], perm=[0, 2, 1, 3])
        g.add_float(t, [seq, batch, dirs, h])
        (r,) = g.node("Reshape", [t, g.ints("shape", [seq, batch, dirs * h])])
        return g.add_float(r, [seq, batch, dirs * h])
    if choice < 0.8 or op != "LSTM":
        return yh
    return outs[2]


def emit_if(g, x, cond=None, depth=0):
    """If over x: both branches static-shaped, with the same output shapes (one or two outputs);
    the condition a bool input or computed at run time from an input or from an intermediate
    tensor; sometimes a branch holds another If on the same condition."""
    rng = g.rng
    shape = g.shapes[x]
    if cond is None:
        form = rng.random()
        if form < 0.4:
            cond = g.add_input("cond", rng.choice([[], [1]]), TensorProto.BOOL)
            g.features.add("if:bool-input")
        else:
            # computed at run time: from an input, or from the tensor the If reads (an intermediate)
            inputs = [n for n, dt, _ in g.input_meta if dt == TensorProto.FLOAT]
            src = rng.choice(inputs) if form < 0.7 or x in inputs else x
            red = rng.choice(["ReduceSum", "ReduceMean", "ReduceMax"])
            (s,) = g.node(red, [src], keepdims=0)
            threshold = 0.0 if red != "ReduceMax" else 0.5
            (cond,) = g.node(rng.choice(["Greater", "Less"]), [s, g.const("thr", np.array(threshold, np.float32))])
            g.features.add("if:runtime-cond")
            g.features.add("if:cond-from-input" if src in inputs else "if:cond-from-intermediate")
    n_out = 2 if rng.random() < 0.25 else 1
    if n_out == 2:
        g.features.add("if:two-outputs")
    branches = []
    for which in ("then", "else"):
        sub = Graph(rng, g.nrng, prefix=f"{g.prefix}{which}{g.counter}_")
        sub.add_float(x, shape)
        t = x
        for _ in range(rng.randint(1, 3)):
            op = rng.choice([emit_activation, emit_binary_const, emit_batchnorm, emit_softmax, same_shape_conv])
            t2 = op(sub, t)
            if t2 is not None and sub.shapes[t2] == shape:
                t = t2
        if depth == 0 and rng.random() < 0.15:
            t = emit_if(sub, t, cond=cond, depth=1)
            g.features.add("if:nested")
        if t == x:
            (t,) = sub.node("Identity", [x])
            sub.add_float(t, shape)
        outs = [t]
        if n_out == 2:
            outs.append(emit_activation(sub, t if rng.random() < 0.5 else x))
        if rng.random() < 0.5:
            inits, sub.inits = sub.inits, []
            g.inits.extend(inits)          # weights in the outer graph, read from the branch
        branches.append(helper.make_graph(sub.nodes, f"{which}_branch", [],
                                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape) for o in outs],
                                          sub.inits))
        g.features.update(sub.features)
        g.ops.extend(sub.ops)
    ys = [g.name("t") for _ in range(n_out)]
    g.node("If", [cond], ys, then_branch=branches[0], else_branch=branches[1])
    for y in ys:
        g.add_float(y, shape)
    return ys[0]


def same_shape_conv(g, x):
    shape = g.shapes[x]
    if len(shape) != 4:
        return None
    c = shape[1]
    k = g.rng.choice([1, 3])
    group = g.rng.choice([1, c])
    ins = [x, g.weight("conv_w", [c, c // group, k, k], (c // group) * k * k), g.uniform("conv_b", [c], -0.2, 0.2)]
    (y,) = g.node("Conv", ins, kernel_shape=[k, k], pads=[k // 2] * 4, group=group)
    return g.add_float(y, shape)


# ---------------------------------------------------------------------------------------------
# Joins of two tensors
# ---------------------------------------------------------------------------------------------
def emit_join(g, a, b):
    """A node reading a and b (Add/Sub/Mul/Max/Min with broadcasting, or Concat), None if their
    shapes do not allow one."""
    rng = g.rng
    sa, sb = g.shapes[a], g.shapes[b]
    if len(sa) == len(sb) and rng.random() < 0.4:
        diff = [i for i in range(len(sa)) if sa[i] != sb[i]]
        if len(diff) <= 1:
            axis = diff[0] if diff else rng.randrange(len(sa))
            out = list(sa)
            out[axis] = sa[axis] + sb[axis]
            if numel(out) <= MAX_ELEMENTS * 2:
                ax = axis - len(sa) if rng.random() < 0.3 else axis
                (y,) = g.node("Concat", [a, b], axis=ax)
                g.features.add("join:Concat")
                return g.add_float(y, out)
    out = broadcast_shape(sa, sb)
    if out is None or numel(out) > MAX_ELEMENTS:
        return None
    op = rng.choice(["Add", "Add", "Mul", "Sub", "Max", "Min"])
    (y,) = g.node(op, [a, b])
    g.features.add(f"join:{op}")
    if out != sa and out != sb:
        g.features.add("join:two-sided-broadcast")
    return g.add_float(y, out)


def emit_branch_and_join(g, x):
    """x -> two paths -> a join: a tensor read by several nodes."""
    rng = g.rng
    shape = g.shapes[x]
    paths = []
    for _ in range(2):
        t = x
        for _ in range(rng.randint(0, 2)):
            op = rng.choice([emit_activation, emit_binary_const, emit_batchnorm, same_shape_conv, emit_reduce,
                             emit_softmax])
            t2 = op(g, t)
            if t2 is not None:
                t = t2
        paths.append(t)
    if paths[0] == paths[1]:
        paths[1] = emit_activation(g, x)
    y = emit_join(g, paths[0], paths[1])
    if y is None:
        # shapes did not fit (a reduction on one side): join each with x instead
        y = emit_join(g, x, emit_activation(g, x))
    g.features.add("graph:branch")
    return y


# ---------------------------------------------------------------------------------------------
# Whole graphs
# ---------------------------------------------------------------------------------------------
OPS_BY_RANK = {
    # (emitter, weight)
    "any": [(emit_activation, 10), (emit_binary_const, 8), (emit_reshape, 4), (emit_transpose, 4), (emit_slice, 5),
            (emit_split, 3), (emit_reduce, 4), (emit_softmax, 4), (emit_branch_and_join, 10), (emit_if, 2)],
    4: [(emit_conv, 14), (emit_conv_transpose, 5), (emit_batchnorm, 5), (emit_resize, 6), (emit_pool, 7),
        (emit_matmul, 3)],
    3: [(emit_matmul, 8), (emit_recurrent, 8), (emit_conv, 4), (emit_batchnorm, 2), (emit_pool, 2)],
    2: [(emit_gemm, 12), (emit_matmul, 6), (emit_batchnorm, 2)],
    1: [],
}


def random_input_shape(rng):
    kind = rng.random()
    if kind < 0.5:
        for _ in range(20):
            s = [rng.choice([1, 1, 2]), rand_dim(rng, 1, 16), rand_dim(rng, 3, 20), rand_dim(rng, 3, 20)]
            if numel(s) <= 3000:
                return s
        return [1, 3, 8, 8]
    if kind < 0.8:
        return [rand_dim(rng, 1, 8), rand_dim(rng, 1, 4), rand_dim(rng, 1, 48)]   # [seq, batch, features]
    return [rand_dim(rng, 1, 24), rand_dim(rng, 1, 48)]


FOCUS_RANK = {"conv": 4, "conv_transpose": 4, "resize": 4, "pool": 4, "batchnorm": 4, "recurrent": 3, "matmul": 3,
              "gemm": 2}


def generate(seed, index=None, max_ops=None, focus=None):
    """(onnx.ModelProto, info dict) for graph `index` of `seed` (or for the seed itself when index
    is None). info: inputs [(name, 'float32'|'bool', shape)], outputs, features, ops. focus: an
    emitter's name without "emit_" (recurrent, if, conv, ...): the graph starts with that op and
    draws it ten times as often."""
    gs = graph_seed(seed, index) if index is not None else seed
    rng = random.Random(gs)
    nrng = np.random.default_rng(gs)
    g = Graph(rng, nrng)
    focus_emitter = globals()[f"emit_{focus}"] if focus else None
    shape = random_input_shape(rng)
    while focus in FOCUS_RANK and len(shape) != FOCUS_RANK[focus]:
        shape = random_input_shape(rng)
    x = g.add_input("x", shape)
    if focus_emitter:
        y = focus_emitter(g, x)
        x = y if y is not None else x
    if rng.random() < 0.25:
        g.add_input("x", random_input_shape(rng))
    steps = max_ops or rng.randint(2, 7)
    current = x
    for _ in range(steps):
        # mostly a chain from the latest tensor; sometimes an older one (another consumer of it)
        if rng.random() < 0.25 and len(g.order) > 1:
            current = rng.choice(g.order)
        rank = len(g.shapes[current])
        menu = OPS_BY_RANK["any"] + OPS_BY_RANK.get(rank, [])
        if rank > 4:
            menu = [(emit_reshape, 10), (emit_transpose, 2), (emit_activation, 4), (emit_reduce, 4)]
        emitters, weights = zip(*menu)
        if focus_emitter:
            weights = [w * 10 if e is focus_emitter else w for e, w in zip(emitters, weights)]
        for _ in range(8):
            emitter = rng.choices(emitters, weights)[0]
            y = emitter(g, current)
            if y is not None:
                current = y
                break
        # bound the rank / size drift
        if len(g.shapes[current]) > 4:
            current = emit_reshape(g, current)
    # occasionally join the second input (or an older tensor) into the result
    for t in list(g.order):
        if t != current and g.consumers.get(t, 0) == 0 and rng.random() < 0.5:
            y = emit_join(g, current, t)
            if y is not None:
                current = y
    outputs = [t for t in g.order if g.consumers.get(t, 0) == 0 and t not in [n for n, _, _ in g.input_meta]]
    if current not in outputs:
        outputs.append(current)
    outputs = outputs[-3:] if current in outputs[-3:] else outputs[-2:] + [current]
    # inputs nothing reads (a second input left unused, a recurrent state) still feed something
    for name, dt, shape in g.input_meta:
        if dt == TensorProto.FLOAT and g.consumers.get(name, 0) == 0:
            (r,) = g.node("ReduceMean", [name], keepdims=0)
            g.add_float(r, [])
            outputs.append(r)
    graph = helper.make_graph(g.nodes, f"fuzz_{seed}_{index}", g.inputs,
                              [helper.make_tensor_value_info(t, TensorProto.FLOAT, g.shapes[t]) for t in outputs],
                              g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="vkgraphy-fuzz")
    model.ir_version = IR_VERSION
    info = {
        "seed": seed, "index": index,
        "inputs": [(n, "bool" if dt == TensorProto.BOOL else "float32", s) for n, dt, s in g.input_meta],
        "outputs": [(t, g.shapes[t]) for t in outputs],
        "features": sorted(g.features),
        "rnn": g.rnn,
        "ops": g.ops,
        "nodes": len(g.ops),
    }
    return model, info


# ---------------------------------------------------------------------------------------------
# Inputs as vkgraphy (and Polygraphy's DataLoader) generate them, and ONNX Runtime
# ---------------------------------------------------------------------------------------------
def dataloader_inputs(info, seed, iteration, ranges):
    """The inputs `vkgraphy run --seed seed --val-range ...` feeds in `iteration` (docs/data-formats.md:
    numpy RandomState(seed + iteration), input by input in model order). ranges: {name: (lo, hi)},
    None for the default."""
    rs = np.random.RandomState(seed + iteration)
    feed = {}
    for name, dtype, shape in info["inputs"]:
        lo, hi = ranges.get(name, ranges.get(None, (0.0, 1.0)))
        if dtype == "bool":
            feed[name] = np.asarray(rs.randint(bool(lo), bool(hi) + 1, tuple(shape), bool))
        else:
            feed[name] = np.asarray(rs.random_sample(tuple(shape)) * (hi - lo) + lo).astype(np.float32)
    return feed


def ort_run(model_bytes, feed):
    import onnxruntime as ort
    ort.set_default_logger_severity(4)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feed)))


def check(model, info):
    """Raises unless the model passes onnx.checker (full_check) and runs in ONNX Runtime with the
    declared output shapes and finite values."""
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    data = model.SerializeToString()
    feed = dataloader_inputs(info, 1, 0, {None: INPUT_RANGE, **{n: (0, 1) for n, d, _ in info["inputs"] if d == "bool"}})
    outs = ort_run(data, feed)
    for name, shape in info["outputs"]:
        got = outs[name]
        if list(got.shape) != list(shape):
            raise AssertionError(f"output {name}: ONNX Runtime gives shape {list(got.shape)}, declared {shape}")
        if not np.all(np.isfinite(got)):
            raise AssertionError(f"output {name}: not finite")
        if np.max(np.abs(got), initial=0) > 1e3:
            raise AssertionError(f"output {name}: values up to {np.max(np.abs(got))} (unbounded)")
    return outs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("-o", "--output", help="write the model here")
    ap.add_argument("--self-test", action="store_true", help="check --count graphs from --seed")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--show", action="store_true", help="print the graph's features and ops")
    ap.add_argument("--focus", help="start with this op family and draw it ten times as often (recurrent, if, conv, "
                                    "conv_transpose, matmul, gemm, resize, pool, ...)")
    args = ap.parse_args(argv)
    if args.self_test:
        failures = 0
        feats = {}
        sizes = []
        for i in range(args.count):
            model, info = generate(args.seed, i, focus=args.focus)
            again, _ = generate(args.seed, i, focus=args.focus)
            if model.SerializeToString() != again.SerializeToString():
                print(f"graph {i}: not reproducible")
                failures += 1
            try:
                check(model, info)
            except Exception as e:  # noqa: BLE001 - report every kind of failure
                failures += 1
                print(f"graph {i}: {type(e).__name__}: {str(e)[:400]}")
            for f in info["features"]:
                feats[f] = feats.get(f, 0) + 1
            sizes.append(model.ByteSize())
        print(f"self-test: {args.count} graphs from seed {args.seed}, {failures} failed; "
              f"{len(feats)} features; model sizes median {int(np.median(sizes))} B, max {max(sizes)} B")
        if args.show:
            for f, n in sorted(feats.items()):
                print(f"  {f}: {n}")
        return 1 if failures else 0
    model, info = generate(args.seed, args.index, focus=args.focus)
    if args.output:
        onnx.save(model, args.output)
    if args.show or not args.output:
        print(info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
