#!/usr/bin/env python3
"""Writes the golden fixtures tests/golden/<suite>/<kernel>/ for every benchmark kernel and the
user-style examples, from NumPy implementations written here from the suite definitions (the kernel
files are not read):

    shape.txt        one line "M=6,K=8,N=5": every symbolic dim, in order of first appearance in
                     the kernel's parameter list
    in.<param>.npy   every parameter, float64, C order; scalars are 0-d arrays (defaults included)
    out.<i>.npy      output i, float64

Inputs are drawn from np.random.default_rng(seed) with a seed derived from "<suite>/<kernel>", so
rerunning gives byte-identical files. Run with a python3 that has numpy:

    /usr/bin/python3 scripts/make_golden.py
"""
import os
import re
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))

# ---------------------------------------------------------------------------------------------
# Reference implementations (float64).


def sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


def silu(t):
    return t / (1.0 + np.exp(-t))


def softmax(t, axis):
    e = np.exp(t - np.max(t, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def rmsnorm_rows(t, eps):
    return t / np.sqrt(np.mean(t * t, axis=1, keepdims=True) + eps)


def gelu_tanh(t):
    return 0.5 * t * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (t + 0.044715 * t * t * t)))


def rotate_halves(x, cos, sin, axis):
    x0, x1 = np.split(x, 2, axis=axis)
    return np.concatenate([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=axis)


def maxpool_2x2(x):
    m, n = x.shape
    out = np.empty((m // 2, n // 2))
    for i in range(m // 2):
        for j in range(n // 2):
            out[i, j] = np.max(x[2 * i : 2 * i + 2, 2 * j : 2 * j + 2])
    return out


def gqa_axon(q, k, v):
    """q [8, M, 128], k, v [2, N, 128]; query head h uses key/value head h // 4."""
    out = np.empty_like(q)
    for h in range(8):
        s = q[h] @ k[h // 4].T / np.sqrt(128.0)
        out[h] = softmax(s, 1) @ v[h // 4]
    return out


def gqa_nki(q, k, v):
    """q [B, N, 16, 128], k, v [B, N, 8, 128]; query head h uses key/value head h // 2."""
    batch, _, qh, d = q.shape
    group = qh // k.shape[2]
    out = np.empty_like(q)
    for bi in range(batch):
        for h in range(qh):
            s = q[bi, :, h, :] @ k[bi, :, h // group, :].T / np.sqrt(d)
            out[bi, :, h, :] = softmax(s, 1) @ v[bi, :, h // group, :]
    return out


def adamw(theta, g, m, v):
    theta_t = theta - 1e-5 * theta
    m_t = 0.9 * m + 0.1 * g
    v_t = 0.999 * v + 0.001 * g * g
    return theta_t - 0.01 * m_t / (np.sqrt(1000.0 * v_t) + 1e-8)


def mamba(delta, u, a, b, c):
    """delta, u [C, M], a [C, S], b, c [S, M]: a sequential scan over M for every (channel, state)."""
    nc, nm = delta.shape
    ns = a.shape[1]
    out = np.zeros((nc, nm))
    for ci in range(nc):
        for si in range(ns):
            state = 0.0
            for mi in range(nm):
                d_a = np.exp(delta[ci, mi] * a[ci, si])
                d_bu = delta[ci, mi] * b[si, mi] * u[ci, mi]
                state = d_a * state + d_bu
                out[ci, mi] += c[si, mi] * state
    return out


def nki_add_rmsnorm_matmul(x, z, g, w):
    k = x.shape[1]
    y = x + z
    y = y / np.sqrt(np.sum(y * y / k, axis=-1, keepdims=True) + 1e-5) * g
    return y @ w


def nki_matmul_add_rmsnorm(x, w, z, g):
    y = x @ w + z
    return y * g / np.sqrt(np.mean(y * y, axis=-1, keepdims=True) + 1e-5)


def nki_rmsnorm_matmul(x, w):
    k = x.shape[1]
    return (x / np.sqrt(np.sum(x * x / k, axis=1, keepdims=True))) @ w


def layernorm_matmul(x, gamma, beta, w, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps) * gamma + beta) @ w


def gelu_mlp(x, w_in, b_in, w_out, b_out):
    return gelu_tanh(x @ w_in + b_in) @ w_out + b_out


# ---------------------------------------------------------------------------------------------
# Cases. A parameter is (name, shape, init): shape is a tuple of ints and dim expressions
# ("N // 2", "4 * D"), or None for a scalar; init is a float (a scalar's value) or a distribution
# (low, high) for rng.uniform.

U = (-1.0, 1.0)      # default
WIDE = (-4.0, 4.0)   # reaches the nonlinear parts of silu / softmax
POS = (0.1, 1.0)     # strictly positive (AdamW's v, Mamba's delta)
MMK = ("M", "K")
MKN = ("K", "N")
MMN = ("M", "N")

CASES = [
    # --- Axon ---
    ("axon", "matmul", dict(M=9, K=12, N=7), [("x", MMK, U), ("w", MKN, U)], lambda x, w: [x @ w]),
    ("axon", "rmsnorm", dict(M=6, N=10), [("x", MMN, U), ("eps", None, 1e-6)],
     lambda x, eps: [rmsnorm_rows(x, eps)]),
    ("axon", "cumsum", dict(M=5, N=9), [("x", MMN, U)], lambda x: [np.cumsum(x, axis=1)]),
    ("axon", "softmax", dict(M=6, N=11), [("x", MMN, WIDE)], lambda x: [softmax(x, 1)]),
    ("axon", "rope", dict(M=5, N=12), [("x", MMN, U), ("cos", ("M", "N // 2"), U), ("sin", ("M", "N // 2"), U)],
     lambda x, cos, sin: [rotate_halves(x, cos, sin, 1)]),
    ("axon", "multiply", dict(M=4, N=7), [("x", MMN, U), ("y", MMN, U)], lambda x, y: [x * y]),
    ("axon", "maxpool", dict(M=6, N=10), [("x", MMN, U)], lambda x: [maxpool_2x2(x)]),
    ("axon", "relu", dict(M=5, N=6), [("x", MMN, U)], lambda x: [np.where(x > 0, x, 0.0)]),
    ("axon", "silu", dict(M=5, N=6), [("x", MMN, WIDE)], lambda x: [x * sigmoid(x)]),
    ("axon", "glu", dict(M=5, N=6), [("a", MMN, U), ("b", MMN, WIDE)], lambda a, b: [a * sigmoid(b)]),
    ("axon", "swiglu", dict(M=5, N=6), [("a", MMN, WIDE), ("b", MMN, U)], lambda a, b: [silu(a) * b]),
    ("axon", "rmsnorm_matmul", dict(M=6, K=8, N=5), [("x", MMK, U), ("w", MKN, U), ("eps", None, 1e-6)],
     lambda x, w, eps: [rmsnorm_rows(x, eps) @ w]),
    ("axon", "matmul_add_rmsnorm", dict(M=6, K=8, N=5),
     [("x", MMK, U), ("w", MKN, U), ("z", MMN, U), ("eps", None, 1e-6)],
     lambda x, w, z, eps: [rmsnorm_rows(x @ w + z, eps)]),
    ("axon", "softmax_matmul", dict(M=6, K=8, N=5), [("x", MMK, WIDE), ("w", MKN, U)],
     lambda x, w: [softmax(x, 1) @ w]),
    ("axon", "transpose_matmul", dict(K=7, M=6, N=5), [("x", ("K", "M"), U), ("w", MKN, U)],
     lambda x, w: [x.T @ w]),
    ("axon", "qkv_projection", dict(M=6, K=8, N=5),
     [("x", MMK, U), ("wq", MKN, U), ("wk", MKN, U), ("wv", MKN, U)],
     lambda x, wq, wk, wv: [x @ wq, x @ wk, x @ wv]),
    ("axon", "gqa", dict(M=4, N=6), [("q", (8, "M", 128), U), ("k", (2, "N", 128), U), ("v", (2, "N", 128), U)],
     lambda q, k, v: [gqa_axon(q, k, v)]),
    ("axon", "silu_mlp", dict(M=5, K=6, N=7), [("x", MMK, U), ("w1", MKN, U), ("w3", MKN, U), ("w2", ("N", "K"), U)],
     lambda x, w1, w3, w2: [(silu(x @ w1) * (x @ w3)) @ w2]),
    ("axon", "swiglu_mlp", dict(M=5, K=6, N=7),
     [("x", MMK, U), ("w1", MKN, U), ("w3", MKN, U), ("w2", ("N", "K"), U), ("beta", None, 1.5)],
     lambda x, w1, w3, w2, beta: [((x @ w1) * sigmoid(beta * (x @ w1)) * (x @ w3)) @ w2]),
    ("axon", "mm_mm_silu_mul", dict(M=5, K=6, N=7), [("x", MMK, U), ("w1", MKN, U), ("w2", MKN, U)],
     lambda x, w1, w2: [silu(x @ w1) * (x @ w2)]),
    # --- NKIBench ---
    ("nkibench", "adamw", dict(M=6, N=7), [("theta", MMN, U), ("g", MMN, U), ("m", MMN, U), ("v", MMN, POS)],
     lambda theta, g, m, v: [adamw(theta, g, m, v)]),
    ("nkibench", "add_rmsnorm_matmul", dict(M=6, K=8, N=5),
     [("x", MMK, U), ("z", MMK, U), ("g", ("K",), U), ("w", MKN, U)],
     lambda x, z, g, w: [nki_add_rmsnorm_matmul(x, z, g, w)]),
    ("nkibench", "bmm", dict(B=3, M=5, K=4, N=6), [("a", ("B", "M", "K"), U), ("b", ("B", "K", "N"), U)],
     lambda a, b: [np.matmul(a, b)]),
    ("nkibench", "bmm_softmax", dict(B=3, M=5, K=4, N=6), [("a", ("B", "M", "K"), U), ("b", ("B", "K", "N"), U)],
     lambda a, b: [softmax(np.matmul(a, b), 2)]),
    ("nkibench", "gqa", dict(B=2, N=5),
     [("q", ("B", "N", 16, 128), U), ("k", ("B", "N", 8, 128), U), ("v", ("B", "N", 8, 128), U)],
     lambda q, k, v: [gqa_nki(q, k, v)]),
    ("nkibench", "lora", dict(M=6, K=8, N=5, R=3), [("x", MMK, U), ("w", MKN, U), ("a", ("K", "R"), U), ("b", ("R", "N"), U)],
     lambda x, w, a, b: [x @ w + (x @ a) @ b]),
    ("nkibench", "mamba", dict(C=3, M=7, S=4),
     [("delta", ("C", "M"), POS), ("u", ("C", "M"), U), ("a", ("C", "S"), (-1.0, 0.5)), ("b", ("S", "M"), U),
      ("c", ("S", "M"), U)],
     lambda delta, u, a, b, c: [mamba(delta, u, a, b, c)]),
    ("nkibench", "matmul_add_rmsnorm", dict(M=6, K=8, N=5), [("x", MMK, U), ("w", MKN, U), ("z", MMN, U), ("g", ("N",), U)],
     lambda x, w, z, g: [nki_matmul_add_rmsnorm(x, w, z, g)]),
    ("nkibench", "matmul", dict(M=9, K=12, N=7), [("x", MMK, U), ("w", MKN, U)], lambda x, w: [x @ w]),
    ("nkibench", "rmsnorm_matmul", dict(M=6, K=8, N=5), [("x", MMK, U), ("w", MKN, U)],
     lambda x, w: [nki_rmsnorm_matmul(x, w)]),
    ("nkibench", "rope", dict(D=8, L=6), [("x", ("D", "L"), U), ("cos", ("D // 2", "L"), U), ("sin", ("D // 2", "L"), U)],
     lambda x, cos, sin: [rotate_halves(x, cos, sin, 0)]),
    ("nkibench", "silu", dict(M=5, N=6), [("x", MMN, WIDE)], lambda x: [x * sigmoid(x)]),
    ("nkibench", "swiglu", dict(M=5, K=6, N=7),
     [("x", MMK, U), ("w_gate", MKN, U), ("w_up", MKN, U), ("w_down", ("N", "K"), U)],
     lambda x, wg, wu, wd: [(silu(x @ wg) * (x @ wu)) @ wd]),
    ("nkibench", "transpose_matmul", dict(K=7, M=6, N=5), [("lhs", ("K", "M"), U), ("rhs", MKN, U)],
     lambda lhs, rhs: [lhs.T @ rhs]),
    # --- examples (in no suite) ---
    ("examples", "layernorm_matmul", dict(T=5, D=8, H=6),
     [("x", ("T", "D"), U), ("gamma", ("D",), U), ("beta", ("D",), U), ("w", ("D", "H"), U), ("eps", None, 1e-5)],
     lambda x, gamma, beta, w, eps: [layernorm_matmul(x, gamma, beta, w, eps)]),
    ("examples", "gelu_mlp", dict(T=5, D=4),
     [("x", ("T", "D"), WIDE), ("w_in", ("D", "4 * D"), U), ("b_in", ("4 * D",), U), ("w_out", ("4 * D", "D"), U),
      ("b_out", ("D",), U)],
     lambda x, w_in, b_in, w_out, b_out: [gelu_mlp(x, w_in, b_in, w_out, b_out)]),
]

# ---------------------------------------------------------------------------------------------

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dim_value(d, dims):
    if isinstance(d, int):
        return d
    if not re.fullmatch(r"[A-Za-z0-9_ +*/-]+", d):
        raise ValueError("bad dim expression %r" % d)
    return int(eval(d, {"__builtins__": {}}, dict(dims)))  # only names, ints, + - * //


def seed_of(text):
    """FNV-1a, 32 bits: stable across runs and Python versions (unlike hash())."""
    h = 2166136261
    for ch in text.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def write_case(suite, name, dims, params, ref):
    for v in dims.values():
        assert 2 <= v <= 48, (suite, name, dims)
    d = os.path.join(ROOT, suite, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):  # drop stale files (e.g. of a renamed parameter)
        if f.endswith(".npy") or f == "shape.txt":
            os.remove(os.path.join(d, f))
    rng = np.random.default_rng(seed_of(suite + "/" + name))
    order, args = [], []
    for pname, shape, init in params:
        if shape is None:
            arr = np.array(float(init), dtype=np.float64)
        else:
            for part in shape:
                for ident in NAME.findall(part) if isinstance(part, str) else []:
                    if ident not in order:
                        order.append(ident)
            lo, hi = init
            arr = rng.uniform(lo, hi, size=tuple(dim_value(p, dims) for p in shape))
        arr = np.array(arr, dtype=np.float64, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        np.save(os.path.join(d, "in.%s.npy" % pname), arr)
        args.append(arr)
    assert sorted(order) == sorted(dims), (suite, name, order, dims)
    outs = ref(*args)
    for i, out in enumerate(outs):
        out = np.array(out, dtype=np.float64, order="C")
        assert np.all(np.isfinite(out)), (suite, name, i)
        np.save(os.path.join(d, "out.%d.npy" % i), out)
    with open(os.path.join(d, "shape.txt"), "w") as f:
        f.write(",".join("%s=%d" % (k, dims[k]) for k in order) + "\n")


def main():
    names = set()
    for suite, name, dims, params, ref in CASES:
        assert (suite, name) not in names
        names.add((suite, name))
        write_case(suite, name, dims, params, ref)
    for suite in sorted({s for s, _ in names}):
        for extra in sorted(set(os.listdir(os.path.join(ROOT, suite))) - {n for s, n in names if s == suite}):
            print("warning: %s/%s has no case in this script" % (suite, extra), file=sys.stderr)
    print("wrote %d fixtures under %s" % (len(CASES), ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
