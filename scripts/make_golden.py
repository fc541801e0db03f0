#!/usr/bin/env python3
"""Writes the golden fixtures in tests/golden/<suite>/<kernel>/ from independent NumPy
implementations of the benchmark kernels (written here from the suite definitions, not from the
kernel files): shape.txt, in.<param>.npy (float64, C order, 0-d for scalars) and out.<i>.npy.
Deterministic: rerunning gives byte-identical files. Run with a python3 that has numpy:
    /usr/bin/python3 scripts/make_golden.py
"""
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden")


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def rmsnorm(x, eps):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def rope(x0, x1, cos, sin, axis):
    return np.concatenate([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=axis)


def mamba(delta, u, a, b, c):
    C, M = delta.shape
    S = a.shape[1]
    out = np.zeros((C, M))
    for ci in range(C):
        for si in range(S):
            s = 0.0
            for mi in range(M):
                s = np.exp(delta[ci, mi] * a[ci, si]) * s + delta[ci, mi] * b[si, mi] * u[ci, mi]
                out[ci, mi] += c[si, mi] * s
    return out


def causal_gqa(q, k, v):
    """8 query heads over 2 kv heads; position i sees keys j <= i (np.tril), softmax over keys."""
    S, D = q.shape[1], q.shape[2]
    allowed = np.tril(np.ones((S, S), dtype=bool))
    outs = []
    for h in range(8):
        s = q[h] @ k[h // 4].T / np.sqrt(D)
        s = np.where(allowed, s, -np.inf)
        outs.append(softmax(s, 1) @ v[h // 4])
    return np.stack(outs)


def llama_rmsnorm(x, g, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


def rotate_half(x, cos, sin):
    """Llama's rope: the first and second halves of the last axis rotated by the angles."""
    e = cos.shape[-1]
    x1, x2 = x[..., :e], x[..., e:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def causal_gqa_heads(q, k, v):
    """q [T, H, D], k and v [T, KV, D] -> [H, T, D]; head h reads kv head h // (H // KV)."""
    T, H, D = q.shape
    group = H // k.shape[1]
    allowed = np.tril(np.ones((T, T), dtype=bool))
    outs = []
    for h in range(H):
        s = q[:, h, :] @ k[:, h // group, :].T / np.sqrt(D)
        outs.append(softmax(np.where(allowed, s, -np.inf), 1) @ v[:, h // group, :])
    return np.stack(outs)


def llama_qkv(x, g, w_qkv, eps, H, KV, D):
    qkv = llama_rmsnorm(x, g, eps) @ w_qkv
    T = x.shape[0]
    q = qkv[:, : H * D].reshape(T, H, D)
    k = qkv[:, H * D : (H + KV) * D].reshape(T, KV, D)
    v = qkv[:, (H + KV) * D :].reshape(T, KV, D)
    return q, k, v


def llama_mlp(h, g, w_gate_up, w_down, eps):
    F = w_down.shape[0]
    u = llama_rmsnorm(h, g, eps) @ w_gate_up
    return h + (silu(u[:, :F]) * u[:, F:]) @ w_down


def llama_layer(x, g_attn, w_qkv, cos, sin, w_o, g_mlp, w_gate_up, w_down, eps, H, KV, D):
    q, k, v = llama_qkv(x, g_attn, w_qkv, eps, H, KV, D)
    a = causal_gqa_heads(rotate_half(q, cos, sin), rotate_half(k, cos, sin), v)
    h = x + a.transpose(1, 0, 2).reshape(x.shape) @ w_o
    return llama_mlp(h, g_mlp, w_gate_up, w_down, eps)


def gqa_axon(q, k, v):
    outs = []
    for h in range(8):
        s = q[h] @ k[h // 4].T / np.sqrt(128.0)
        outs.append(softmax(s, 1) @ v[h // 4])
    return np.stack(outs)


def gqa_nki(q, k, v):
    B, N, QH, D = q.shape
    out = np.zeros_like(q)
    for bi in range(B):
        for h in range(QH):
            kh = h // (QH // k.shape[2])
            s = q[bi, :, h, :] @ k[bi, :, kh, :].T / np.sqrt(D)
            out[bi, :, h, :] = softmax(s, 1) @ v[bi, :, kh, :]
    return out


def adamw(theta, g, m, v):
    theta_t = theta - 1e-5 * theta
    m_t = 0.9 * m + 0.1 * g
    v_t = 0.999 * v + 0.001 * g * g
    return theta_t - 0.01 * m_t / (np.sqrt(1000.0 * v_t) + 1e-8)


def maxpool(x):
    M, N = x.shape
    return x.reshape(M // 2, 2, N // 2, 2).max(axis=(1, 3))


# suite, kernel: (dims, [(param, shape as dim names/ints, distribution)], reference)
U, P = "uniform", "positive"
# Llama at a small shape: C = H * D, D = 2 * E, N = 2 * F, (H + 2 * KV) * D = 32 qkv columns.
LLAMA = {"T": 5, "C": 16, "H": 4, "KV": 2, "D": 4, "E": 2, "F": 6, "N": 12}


def llama(names):
    """The Llama dims one piece has."""
    return {k: LLAMA[k] for k in names.split()}


CASES = {
    ("axon", "matmul"): ({"M": 8, "K": 12, "N": 6}, [("x", "MK", U), ("w", "KN", U)], lambda x, w: [x @ w]),
    ("axon", "rmsnorm"): ({"M": 6, "N": 10}, [("x", "MN", U), ("eps", "", 1e-6)], lambda x, eps: [rmsnorm(x, eps)]),
    ("axon", "cumsum"): ({"M": 5, "N": 9}, [("x", "MN", U)], lambda x: [np.cumsum(x, axis=1)]),
    ("axon", "softmax"): ({"M": 6, "N": 11}, [("x", "MN", U)], lambda x: [softmax(x, 1)]),
    ("axon", "rope"): ({"M": 5, "N": 8}, [("x", "MN", U), ("cos", "Mh", U), ("sin", "Mh", U)],
                       lambda x, cos, sin: [rope(x[:, :4], x[:, 4:], cos, sin, 1)]),
    ("axon", "multiply"): ({"M": 4, "N": 7}, [("x", "MN", U), ("y", "MN", U)], lambda x, y: [x * y]),
    ("axon", "maxpool"): ({"M": 6, "N": 8}, [("x", "MN", U)], lambda x: [maxpool(x)]),
    ("axon", "relu"): ({"M": 5, "N": 6}, [("x", "MN", U)], lambda x: [np.maximum(x, 0.0)]),
    ("axon", "silu"): ({"M": 5, "N": 6}, [("x", "MN", U)], lambda x: [silu(x)]),
    ("axon", "glu"): ({"M": 5, "N": 6}, [("a", "MN", U), ("b", "MN", U)], lambda a, b: [a * sigmoid(b)]),
    ("axon", "swiglu"): ({"M": 5, "N": 6}, [("a", "MN", U), ("b", "MN", U)], lambda a, b: [silu(a) * b]),
    ("axon", "rmsnorm_matmul"): ({"M": 6, "K": 8, "N": 5}, [("x", "MK", U), ("w", "KN", U), ("eps", "", 1e-6)],
                                 lambda x, w, eps: [rmsnorm(x, eps) @ w]),
    ("axon", "matmul_add_rmsnorm"): ({"M": 6, "K": 8, "N": 5},
                                     [("x", "MK", U), ("w", "KN", U), ("z", "MN", U), ("eps", "", 1e-6)],
                                     lambda x, w, z, eps: [rmsnorm(x @ w + z, eps)]),
    ("axon", "softmax_matmul"): ({"M": 6, "K": 8, "N": 5}, [("x", "MK", U), ("w", "KN", U)],
                                 lambda x, w: [softmax(x, 1) @ w]),
    ("axon", "transpose_matmul"): ({"K": 7, "M": 6, "N": 5}, [("x", "KM", U), ("w", "KN", U)],
                                   lambda x, w: [x.T @ w]),
    ("axon", "qkv_projection"): ({"M": 6, "K": 8, "N": 5},
                                 [("x", "MK", U), ("wq", "KN", U), ("wk", "KN", U), ("wv", "KN", U)],
                                 lambda x, wq, wk, wv: [x @ wq, x @ wk, x @ wv]),
    ("axon", "gqa"): ({"M": 4, "N": 5}, [("q", [8, "M", 128], U), ("k", [2, "N", 128], U), ("v", [2, "N", 128], U)],
                      lambda q, k, v: [gqa_axon(q, k, v)]),
    ("axon", "silu_mlp"): ({"M": 5, "K": 6, "N": 7},
                           [("x", "MK", U), ("w1", "KN", U), ("w3", "KN", U), ("w2", "NK", U)],
                           lambda x, w1, w3, w2: [(silu(x @ w1) * (x @ w3)) @ w2]),
    ("axon", "swiglu_mlp"): ({"M": 5, "K": 6, "N": 7},
                             [("x", "MK", U), ("w1", "KN", U), ("w3", "KN", U), ("w2", "NK", U), ("beta", "", 1.5)],
                             lambda x, w1, w3, w2, beta: [((x @ w1) * sigmoid(beta * (x @ w1)) * (x @ w3)) @ w2]),
    ("axon", "mm_mm_silu_mul"): ({"M": 5, "K": 6, "N": 7}, [("x", "MK", U), ("w1", "KN", U), ("w2", "KN", U)],
                                 lambda x, w1, w2: [silu(x @ w1) * (x @ w2)]),
    ("nkibench", "adamw"): ({"M": 6, "N": 7}, [("theta", "MN", U), ("g", "MN", U), ("m", "MN", U), ("v", "MN", P)],
                            lambda theta, g, m, v: [adamw(theta, g, m, v)]),
    ("nkibench", "add_rmsnorm_matmul"): ({"M": 6, "K": 8, "N": 5},
                                         [("x", "MK", U), ("z", "MK", U), ("g", "K", U), ("w", "KN", U)],
                                         lambda x, z, g, w: [((x + z) / np.sqrt(np.sum((x + z) ** 2 / 8, axis=-1, keepdims=True) + 1e-5) * g) @ w]),
    ("nkibench", "bmm"): ({"B": 3, "M": 5, "K": 4, "N": 6}, [("a", "BMK", U), ("b", "BKN", U)], lambda a, b: [a @ b]),
    ("nkibench", "bmm_softmax"): ({"B": 3, "M": 5, "K": 4, "N": 6}, [("a", "BMK", U), ("b", "BKN", U)],
                                  lambda a, b: [softmax(a @ b, 2)]),
    ("nkibench", "gqa"): ({"B": 1, "N": 6}, [("q", ["B", "N", 16, 128], U), ("k", ["B", "N", 8, 128], U),
                                             ("v", ["B", "N", 8, 128], U)], lambda q, k, v: [gqa_nki(q, k, v)]),
    ("nkibench", "lora"): ({"M": 6, "K": 8, "N": 5, "R": 3},
                           [("x", "MK", U), ("w", "KN", U), ("a", "KR", U), ("b", "RN", U)],
                           lambda x, w, a, b: [x @ w + (x @ a) @ b]),
    ("nkibench", "mamba"): ({"C": 3, "M": 7, "S": 4},
                            [("delta", "CM", P), ("u", "CM", U), ("a", "CS", U), ("b", "SM", U), ("c", "SM", U)],
                            lambda delta, u, a, b, c: [mamba(delta, u, a, b, c)]),
    ("nkibench", "matmul_add_rmsnorm"): ({"M": 6, "K": 8, "N": 5},
                                         [("x", "MK", U), ("w", "KN", U), ("z", "MN", U), ("g", "N", U)],
                                         lambda x, w, z, g: [(x @ w + z) * g / np.sqrt(np.mean((x @ w + z) ** 2, axis=-1, keepdims=True) + 1e-5)]),
    ("nkibench", "matmul"): ({"M": 8, "K": 12, "N": 6}, [("x", "MK", U), ("w", "KN", U)], lambda x, w: [x @ w]),
    ("nkibench", "rmsnorm_matmul"): ({"M": 6, "K": 8, "N": 5}, [("x", "MK", U), ("w", "KN", U)],
                                     lambda x, w: [(x / np.sqrt(np.sum(x ** 2 / 8, axis=1, keepdims=True))) @ w]),
    ("nkibench", "rope"): ({"D": 8, "L": 6}, [("x", "DL", U), ("cos", "hL", U), ("sin", "hL", U)],
                           lambda x, cos, sin: [rope(x[:4], x[4:], cos, sin, 0)]),
    ("nkibench", "silu"): ({"M": 5, "N": 6}, [("x", "MN", U)], lambda x: [x / (1 + np.exp(-x))]),
    ("nkibench", "swiglu"): ({"M": 5, "K": 6, "N": 7},
                             [("x", "MK", U), ("w_gate", "KN", U), ("w_up", "KN", U), ("w_down", "NK", U)],
                             lambda x, wg, wu, wd: [(silu(x @ wg) * (x @ wu)) @ wd]),
    ("nkibench", "transpose_matmul"): ({"K": 7, "M": 6, "N": 5}, [("lhs", "KM", U), ("rhs", "KN", U)],
                                       lambda lhs, rhs: [lhs.T @ rhs]),
    ("examples", "layernorm_matmul"): ({"T": 5, "D": 8, "H": 6},
                                       [("x", "TD", U), ("gamma", "D", U), ("beta", "D", U), ("w", "DH", U), ("eps", "", 1e-5)],
                                       lambda x, gamma, beta, w, eps: [((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * gamma + beta) @ w]),
    ("examples", "causal_gqa"): ({"S": 6, "D": 4},
                                 [("q", [8, "S", "D"], U), ("k", [2, "S", "D"], U), ("v", [2, "S", "D"], U)],
                                 lambda q, k, v: [causal_gqa(q, k, v)]),
    ("examples", "gelu_mlp"): ({"T": 5, "D": 3},
                               [("x", "TD", U), ("w_in", ["D", 12], U), ("b_in", [12], U), ("w_out", [12, "D"], U), ("b_out", "D", U)],
                               lambda x, w_in, b_in, w_out, b_out: [gelu_tanh(x @ w_in + b_in) @ w_out + b_out]),
    # The Llama decoder layer's kernels (one file, several kernels: folder "<file>.<kernel>").
    ("examples", "llama_layer.decoder_layer"): (
        LLAMA, [("x", "TC", U), ("g_attn", "C", U), ("w_qkv", ["C", 32], U), ("cos", ["T", 1, "E"], U),
                ("sin", ["T", 1, "E"], U), ("w_o", "CC", U), ("g_mlp", "C", U), ("w_gate_up", "CN", U),
                ("w_down", "FC", U), ("eps", "", 1e-5)],
        lambda *a: [llama_layer(*a, H=4, KV=2, D=4)]),
    ("examples", "llama_layer.rmsnorm_qkv"): (
        llama("T C H KV D"), [("x", "TC", U), ("g", "C", U), ("w_qkv", ["C", 32], U), ("eps", "", 1e-5)],
        lambda x, g, w, eps: list(llama_qkv(x, g, w, eps, 4, 2, 4))),
    ("examples", "llama_layer.qkv_projection"): (
        llama("T C H KV D"), [("x", "TC", U), ("g", "C", U), ("w_qkv", ["C", 32], U), ("eps", "", 1e-5)],
        lambda x, g, w, eps: [llama_rmsnorm(x, g, eps) @ w]),
    ("examples", "llama_layer.rope"): (
        llama("T H D E"), [("x", "THD", U), ("cos", ["T", 1, "E"], U), ("sin", ["T", 1, "E"], U)],
        lambda x, cos, sin: [rotate_half(x, cos, sin)]),
    ("examples", "llama_layer.causal_attention"): (
        llama("T H KV D"), [("q", "THD", U), ("k", ["T", "KV", "D"], U), ("v", ["T", "KV", "D"], U)],
        lambda q, k, v: [causal_gqa_heads(q, k, v)]),
    ("examples", "llama_layer.attention_out"): (
        llama("T C"), [("a", "TC", U), ("w_o", "CC", U), ("x", "TC", U)], lambda a, w, x: [x + a @ w]),
    ("examples", "llama_layer.rmsnorm_swiglu"): (
        llama("T C F N"), [("h", "TC", U), ("g", "C", U), ("w_gate_up", "CN", U), ("w_down", "FC", U), ("eps", "", 1e-5)],
        lambda h, g, wgu, wd, eps: [llama_mlp(h, g, wgu, wd, eps)]),
}


def concrete(spec, dims):
    """'MK' -> (dims[M], dims[K]); 'h' is the first dim halved (rope); lists may hold ints."""
    if isinstance(spec, list):
        return tuple(d if isinstance(d, int) else dims[d] for d in spec)
    out = []
    for ch in spec:
        if ch == "h":
            first = dims["N"] if "N" in dims and "M" in dims else dims["D"]
            out.append(first // 2)
        else:
            out.append(dims[ch])
    return tuple(out)


def main():
    for (suite, name), (dims, params, ref) in sorted(CASES.items()):
        rng = np.random.default_rng(abs(hash_name(suite + "/" + name)))
        d = os.path.join(ROOT, suite, name)
        os.makedirs(d, exist_ok=True)
        order = []
        args = []
        for pname, spec, dist in params:
            if isinstance(dist, float):
                arr = np.array(dist, dtype=np.float64)
            else:
                shape = concrete(spec, dims)
                lo, hi = (-1.0, 1.0) if dist == U else (0.1, 1.0)
                arr = rng.uniform(lo, hi, size=shape).astype(np.float64)
                for c in (spec if isinstance(spec, str) else [x for x in spec if isinstance(x, str)]):
                    if c in dims and c not in order:
                        order.append(c)
            np.save(os.path.join(d, "in." + pname + ".npy"), arr.copy(order="C"))  # keeps 0-d scalars 0-d
            args.append(arr)
        for i, out in enumerate(ref(*args)):
            np.save(os.path.join(d, "out.%d.npy" % i), np.asarray(out, dtype=np.float64).copy(order="C"))
        for c in dims:
            if c not in order:
                order.append(c)
        with open(os.path.join(d, "shape.txt"), "w") as f:
            f.write(",".join("%s=%d" % (k, dims[k]) for k in order) + "\n")
    print("wrote %d fixtures under %s" % (len(CASES), os.path.normpath(ROOT)))


def hash_name(s):
    h = 2166136261
    for ch in s.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


if __name__ == "__main__":
    sys.exit(main())
