"""A NumPy implementation of the NKI API subset tilesweep emits, in both dialects, written from
the NKI documentation (not from any NKI implementation):

  current  the `nki` package of Neuron SDK 2.27+ (NKI 0.2+): the nki.isa stubs and docstrings
           (aws-neuron-sdk nki/api/nki/isa/__init__.py), nki.language (nki/api/nki/language),
           the Beta 1 -> Beta 2 migration guide (nki/deep-dives/nki-migration-guide).
  legacy   neuronxcc.nki of SDK <= 2.26: general/nki/api/nki.isa.rst and nki.language.rst of
           the 2.26 documentation (value-returning nisa calls).

Only documented functions and keywords exist here: anything else is an AttributeError /
TypeError when the kernel runs (and the static check in nki_check.py names it first). Rules
checked while running: partition dim <= 128 for on-chip tiles; nc_matmul stationary free <= 128,
moving free <= 512 (NeuronCore-v2/v3; 4096 on v4), inputs in SBUF, dst in PSUM and fp32;
GpSimd never touches PSUM; tensor_tensor / scalar_tensor_tensor / tensor_tensor_scan inputs not
both in PSUM; dma_copy / dma_transpose element counts; tensor_scalar's unused op1 is None.
"""
import math
import types

import numpy as np


class RuleError(Exception):
    """A documented rule the kernel breaks."""


class Tile(np.ndarray):
    """An array in HBM, SBUF or PSUM (`buffer`), with the documented tensor methods."""

    def __array_finalize__(self, obj):
        self.buffer = getattr(obj, "buffer", "sbuf")
        self.nki_dtype = getattr(obj, "nki_dtype", "float32")

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, np.ndarray) and not isinstance(k, Tile) and k.dtype.kind in "iu" for k in keys):
            return Indexed(self, keys)  # legacy nl.arange indexing: resolved under the call's mask
        for d, k in enumerate(k for k in keys if k is not Ellipsis):
            if isinstance(k, slice) and d < self.ndim and k.stop is not None and k.stop > self.shape[d]:
                raise RuleError(f"slice {k.start}:{k.stop} of dim {d} of a tensor of shape {self.shape} "
                                "(an out-of-bounds access)")
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        # A write stores the tile's dtype (the legacy API's `t[...] = nisa.call(...)` included).
        super().__setitem__(key, round_to(np.asarray(value, dtype=np.float64), self.nki_dtype))

    def broadcast_to(self, shape):
        out = np.broadcast_to(np.asarray(self), shape).view(Tile)
        out.buffer, out.nki_dtype = self.buffer, self.nki_dtype
        return out

    def broadcast(self, dim, size):
        if self.shape[dim] != 1:
            raise RuleError(f"broadcast of dim {dim} of size {self.shape[dim]} (must be 1)")
        shape = list(self.shape)
        shape[dim] = size
        return self.broadcast_to(tuple(shape))

    @property
    def T(self):  # not documented on HBM tensors; the emitter must not use it
        raise RuleError(".T on a tensor is not a documented NKI construct")


class Indexed:
    """A tensor indexed with nl.arange expressions (legacy API, "NKI programming model: tensor
    indexing, masks"): the elements are picked when a call moves them, only where its mask holds."""

    def __init__(self, tensor, keys):
        if any(isinstance(k, slice) or k is Ellipsis for k in keys) or len(keys) != tensor.ndim:
            raise RuleError("arange indexing mixed with slices (not emitted, not modeled)")
        self.tensor, self.keys = tensor, [np.asarray(k) for k in keys]

    def positions(self, shape, where):
        """The index of every element where `where` holds, in bounds, one array per dim."""
        out = []
        for d, k in enumerate(self.keys):
            i = np.broadcast_to(k, shape)[where]
            if i.size and (i.min() < 0 or i.max() >= self.tensor.shape[d]):
                raise RuleError(f"an index {i.max()} of dim {d} of a tensor of shape {self.tensor.shape} "
                                "outside the mask (an out-of-bounds access)")
            out.append(i)
        return tuple(out)


def masked_copy(dst, src, mask):
    """dma_copy between arange-indexed tensors: the elements where `mask` holds."""
    if not (isinstance(dst, Indexed) and isinstance(src, Indexed)):
        raise RuleError("a masked copy indexes both sides with nl.arange here")
    shape = np.broadcast_shapes(*[k.shape for k in dst.keys + src.keys],
                                () if mask is None else np.shape(mask))
    where = np.ones(shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), shape)
    values = np.asarray(src.tensor)[src.positions(shape, where)]
    dst.tensor[dst.positions(shape, where)] = values


def tile(array, buffer, dtype="float32"):
    t = np.array(array, dtype=np.float64).view(Tile)
    t.buffer, t.nki_dtype = buffer, dtype
    return t


def round_to(values, dtype):
    """Values rounded to an NKI dtype (round to nearest even), kept as float64."""
    v = np.asarray(values, dtype=np.float64)
    if dtype in ("float32", "tfloat32"):
        return v.astype(np.float32).astype(np.float64)
    if dtype == "bfloat16":
        bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
        return np.where(np.isnan(v), v, out)  # a NaN must not round into inf
    if dtype == "float16":
        return v.astype(np.float16).astype(np.float64)
    if dtype == "float8_e4m3":
        return round_binary(v, 3, -6, 448.0)
    return v.astype(np.float32).astype(np.float64)


def round_binary(v, fraction_bits, min_exp, largest):
    """Round to nearest even with `fraction_bits` bits after the leading one, normals from
    2^min_exp, subnormals below, an infinity past `largest` (float8_e4m3: 3, -6, 448 as the
    NKI data type table gives it: 1 sign, 4 exponent, 3 mantissa bits)."""
    finite = np.isfinite(v) & (v != 0)
    _, e = np.frexp(np.where(finite, v, 1.0))  # |v| in [2^(e-1), 2^e)
    ulp = np.ldexp(1.0, np.maximum(e - 1, min_exp) - fraction_bits)
    r = np.rint(v / ulp) * ulp  # rint: ties to even
    r = np.where(np.abs(r) > largest, np.copysign(np.inf, v), r)
    return np.where(finite, r, v)


def write(dst, value, accumulate=False):
    """dst = value (or +=), cast to dst's dtype; shapes must hold the same elements."""
    value = np.asarray(value, dtype=np.float64)
    if value.size != dst.size:
        raise RuleError(f"writing {value.shape} into a tile of shape {dst.shape}")
    value = value.reshape(dst.shape)
    base = np.asarray(dst) if accumulate else 0.0
    dst[...] = round_to(base + value, dst.nki_dtype)


def check_partition(*tiles):
    for t in tiles:
        if isinstance(t, Tile) and t.buffer in ("sbuf", "psum") and t.ndim >= 1 and t.shape[0] > 128:
            raise RuleError(f"an on-chip tile of {t.shape[0]} partitions (at most 128)")


def psum(t):
    return isinstance(t, Tile) and t.buffer == "psum"


def check_engine(engine, *tiles):
    if engine == "gpsimd" and any(psum(t) for t in tiles):
        raise RuleError("GpSimd Engine cannot access PSUM")


def not_both_psum(a, b, what):
    if psum(a) and psum(b):
        raise RuleError(f"{what}: the two inputs cannot both be in PSUM")


def scalar_or_vector(operand, data):
    """A compile-time scalar or a [P, 1] tile, broadcast along the free dim."""
    if isinstance(operand, np.ndarray):
        if operand.shape[0] != data.shape[0] or operand.size != operand.shape[0]:
            raise RuleError(f"a per-partition operand of shape {operand.shape} for data {data.shape}")
        return np.asarray(operand).reshape((data.shape[0],) + (1,) * (data.ndim - 1))
    return float(operand)


class Op:
    """An nl operator or activation function, as a value passed to op=/op0=/func."""

    def __init__(self, name, fn, kind):
        self.name, self.fn, self.kind = name, fn, kind

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self):
        return "nl." + self.name


def _gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


ALU = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum, "max": np.maximum, "min": np.minimum,
}
ACT = {
    "copy": lambda x: x, "exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "silu": lambda x: x / (1 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0), "gelu": _gelu,
    "tanh": np.tanh, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x,
    "square": np.square, "log": np.log, "abs": np.abs, "sin": np.sin,
}
REDUCE = {"add": np.sum, "max": np.max, "min": np.min, "maximum": np.max, "minimum": np.min, "multiply": np.prod}


def alu(op, a, b, reverse=False):
    if not isinstance(op, Op) or op.kind != "alu":
        raise RuleError(f"{op!r} is not an ALU operator")
    return op.fn(b, a) if reverse else op.fn(a, b)


def reduce_free(op, x):
    if not isinstance(op, Op) or op.name not in REDUCE:
        raise RuleError(f"{op!r} is not a reduction operator")
    return REDUCE[op.name](x.reshape(x.shape[0], -1), axis=1, keepdims=True)


def activate(op, data, bias, scale):
    if not isinstance(op, Op) or op.kind != "act":
        raise RuleError(f"{op!r} is not an activation function")
    x = np.asarray(data, dtype=np.float64)
    s = scalar_or_vector(scale, data)
    b = 0.0 if bias is None else scalar_or_vector(bias, data)
    return op.fn(x * s + b)


def matmul_rules(stationary, moving, dst, gen):
    if stationary.buffer != "sbuf" or moving.buffer != "sbuf":
        raise RuleError("nc_matmul reads stationary and moving from SBUF")
    if dst is not None and (dst.buffer != "psum" or dst.nki_dtype != "float32"):
        raise RuleError("nc_matmul writes a float32 PSUM tile")
    if stationary.shape[0] != moving.shape[0] or stationary.shape[0] > 128:
        raise RuleError(f"nc_matmul partition dims {stationary.shape[0]}, {moving.shape[0]}")
    if stationary[0].size > 128:
        raise RuleError(f"nc_matmul stationary free size {stationary[0].size} > 128")
    limit = 4096 if gen >= 4 else 512
    if moving[0].size > limit:
        raise RuleError(f"nc_matmul moving free size {moving[0].size} > {limit}")
    s = np.asarray(stationary).reshape(stationary.shape[0], -1)
    m = np.asarray(moving).reshape(moving.shape[0], -1)
    return s.T @ m


def make_language(dialect):
    nl = types.ModuleType("nl")
    for name, fn in ALU.items():
        setattr(nl, name, Op(name, fn, "alu"))
    for name, fn in ACT.items():
        setattr(nl, name, Op(name, fn, "act"))
    nl.greater_equal = Op("greater_equal", np.greater_equal, "cmp")
    for name in ("float32", "bfloat16", "float16", "float8_e4m3"):
        setattr(nl, name, name)
    for name in ("sbuf", "psum", "hbm", "shared_hbm"):
        setattr(nl, name, name)

    def ndarray(shape, dtype, buffer=None, name=""):
        t = tile(np.full(shape, np.nan), buffer or "sbuf", dtype)
        check_partition(t)
        return t

    nl.ndarray = ndarray
    if dialect == "legacy":
        nl.zeros = lambda shape, dtype, buffer=None, name="": tile(np.zeros(shape), buffer or "sbuf", dtype)
        nl.affine_range = lambda *a: range(*a)
        nl.sequential_range = lambda *a: range(*a)
        nl.arange = lambda n: np.arange(n)  # an index along one axis; [:, None] places it

        def load_transpose2d(src, dtype=None, mask=None):
            if src.ndim != 2:
                raise RuleError("load_transpose2d takes a 2-d HBM tensor")
            return np.asarray(src).T.copy()

        nl.load_transpose2d = load_transpose2d
    return nl


def make_isa(dialect, gen):
    nisa = types.ModuleType("nisa")
    legacy = dialect == "legacy"
    if legacy:
        for e in ("tensor", "vector", "scalar", "gpsimd"):
            setattr(nisa, e + "_engine", e)
    else:
        nisa.engine = types.SimpleNamespace(tensor="tensor", vector="vector", scalar="scalar", gpsimd="gpsimd",
                                            unknown="unknown")

    def out(dst, value, accumulate=False):
        """Current API: write into dst, return nothing. Legacy: return the value."""
        if legacy:
            return np.asarray(value, dtype=np.float64)
        check_partition(dst)
        write(dst, value, accumulate)
        return None

    def dma_copy(dst, src, **kw):
        if legacy and (isinstance(dst, Indexed) or isinstance(src, Indexed)):
            return masked_copy(dst, src, kw.get("mask"))
        if np.asarray(src).size != np.asarray(dst).size:
            raise RuleError(f"dma_copy of {np.asarray(src).shape} into {dst.shape}")
        check_partition(dst, src)
        write(dst, src)

    nisa.dma_copy = dma_copy

    if legacy:
        def dma_transpose(src, axes=None, mask=None, dtype=None):
            return np.asarray(src).T.copy()

        def tensor_copy(src, mask=None, dtype=None, engine=None):
            check_engine(engine, src)
            return np.asarray(src).copy()

        def memset(shape, value, dtype, mask=None, engine=None):
            return np.full(shape, float(value))

        def nc_matmul(stationary, moving, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
                      tile_position=(), tile_size=(), mask=None, perf_mode=None):
            return matmul_rules(stationary, moving, None, gen)

        def nc_transpose(data, mask=None, dtype=None, engine=None):
            return np.asarray(data).T.copy()

        def tensor_tensor(data1, data2, op, dtype=None, mask=None, engine=None):
            not_both_psum(data1, data2, "tensor_tensor")
            check_engine(engine, data1, data2)
            return alu(op, np.asarray(data1), np.asarray(data2))

        def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, dtype=None,
                          mask=None, engine=None):
            check_engine(engine, data, operand0)
            return ts_compute(data, op0, operand0, reverse0, op1, operand1, reverse1)

        def tensor_reduce(op, data, axis, mask=None, dtype=None, negate=False, keepdims=False):
            r = reduce_free(op, np.asarray(data))
            return -r if negate else r

        def tensor_partition_reduce(op, data, mask=None, dtype=None):
            return REDUCE[op.name](np.asarray(data), axis=0, keepdims=True)

        def activation(op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=None, mask=None,
                       dtype=None):
            return activate(op, data, bias, scale)

        def activation_reduce(op, data, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None):
            r = activate(op, data, bias, scale)
            write(reduce_res, reduce_free(reduce_op, r))
            return r

        def iota(expr, dtype, mask=None):
            return np.asarray(expr, dtype=np.float64)

        def affine_select(pred, on_true_tile, on_false_value, mask=None, dtype=None):
            return np.where(np.asarray(pred), np.asarray(on_true_tile), float(on_false_value))

        def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, dtype=None, mask=None):
            return scan(data0, data1, initial, op0, op1, reverse0, reverse1)

        def reciprocal(data, dtype=None, mask=None):
            return 1.0 / np.asarray(data)

        def scalar_tensor_tensor(data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None,
                                 mask=None):
            not_both_psum(data, operand1, "scalar_tensor_tensor")
            return stt(data, op0, operand0, op1, operand1, reverse0, reverse1)

        def tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None, mask=None):
            r = ts_compute(data, op0, operand0, reverse0, None, None, False)
            write(reduce_res, reduce_free(reduce_op, r))
            return r
    else:
        def dma_transpose(dst, src, axes=None, **kw):
            if np.asarray(src).ndim != 2:
                raise RuleError("dma_transpose here takes a 2-d source")
            write(dst, np.asarray(src).T)

        def tensor_copy(dst, src, engine=None, name=None):
            check_engine(engine, dst, src)
            return out(dst, np.asarray(src))

        def memset(dst, value, engine=None, name=None):
            check_engine(engine, dst)
            return out(dst, np.full(dst.shape, float(value)))

        def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
                      accumulate=None, tile_position=(), tile_size=(), perf_mode=None, name=None):
            return out(dst, matmul_rules(stationary, moving, dst, gen), bool(accumulate))

        def nc_transpose(dst, data, engine=None, name=None):
            if isinstance(data, Tile) and data.nki_dtype != dst.nki_dtype:
                raise RuleError("nc_transpose: dst must have the same data type as data")
            return out(dst, np.asarray(data).T)

        def tensor_tensor(dst, data1, data2, op, engine=None, name=None):
            not_both_psum(data1, data2, "tensor_tensor")
            check_engine(engine, dst, data1, data2)
            return out(dst, alu(op, np.asarray(data1), np.asarray(data2)))

        def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                          engine=None, name=None):
            check_engine(engine, dst, data, operand0)
            return out(dst, ts_compute(data, op0, operand0, reverse0, op1, operand1, reverse1))

        def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None):
            r = reduce_free(op, np.asarray(data))
            return out(dst, -r if negate else r)

        def tensor_partition_reduce(dst, op, data, name=None):
            return out(dst, REDUCE[op.name](np.asarray(data), axis=0, keepdims=True))

        def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=None,
                       name=None):
            return out(dst, activate(op, data, bias, scale))

        def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
            r = activate(op, data, bias, scale)
            out(dst, r)
            write(reduce_res, reduce_free(reduce_op, r))

        def iota(dst, pattern, offset=0, channel_multiplier=0, name=None):
            return out(dst, affine_values(dst, pattern, offset, channel_multiplier))

        def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=None, offset=0,
                          name=None):
            if cmp_op is None or cmp_op.name != "greater_equal":
                raise RuleError("affine_select: only cmp_op=nl.greater_equal is modeled")
            pred = affine_values(dst, pattern, offset, channel_multiplier) >= 0
            return out(dst, np.where(pred, np.asarray(on_true_tile), float(on_false_value)))

        def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, name=None):
            return out(dst, scan(data0, data1, initial, op0, op1, reverse0, reverse1))

        def reciprocal(dst, data, name=None):
            return out(dst, 1.0 / np.asarray(data))

        def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, name=None):
            not_both_psum(data, operand1, "scalar_tensor_tensor")
            return out(dst, stt(data, op0, operand0, op1, operand1, reverse0, reverse1))

        def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res, reverse0=False, reduce_cmd=None,
                                 reduce_init=None, name=None):
            r = ts_compute(data, op0, operand0, reverse0, None, None, False)
            out(dst, r)
            write(reduce_res, reduce_free(reduce_op, r))

    for f in (dma_transpose, tensor_copy, memset, nc_matmul, nc_transpose, tensor_tensor, tensor_scalar,
              tensor_reduce, tensor_partition_reduce, activation, activation_reduce, iota, affine_select,
              tensor_tensor_scan, reciprocal, scalar_tensor_tensor, tensor_scalar_reduce):
        setattr(nisa, f.__name__, f)
    return nisa


def ts_compute(data, op0, operand0, reverse0, op1, operand1, reverse1):
    if (op1 is None) != (operand1 is None):
        raise RuleError("tensor_scalar: op1 and operand1 are both given or both None")
    r = alu(op0, np.asarray(data), scalar_or_vector(operand0, data), reverse0)
    if op1 is not None:
        r = alu(op1, r, scalar_or_vector(operand1, data), reverse1)
    return r


def stt(data, op0, operand0, op1, operand1, reverse0, reverse1):
    r = alu(op0, np.asarray(data), scalar_or_vector(operand0, data), reverse0)
    return alu(op1, r, np.asarray(operand1).reshape(r.shape), reverse1)


def scan(data0, data1, initial, op0, op1, reverse0, reverse1):
    d0, d1 = np.asarray(data0), np.asarray(data1)
    if psum(data0) and psum(data1):
        raise RuleError("tensor_tensor_scan: the two inputs cannot both be in PSUM")
    res = np.empty_like(d0)
    prev = np.broadcast_to(scalar_or_vector(initial, d0), (d0.shape[0], 1))[:, 0]
    for i in range(d0.shape[1]):
        prev = alu(op1, alu(op0, d0[:, i], prev, reverse0), d1[:, i], reverse1)
        res[:, i] = prev
    return res


def affine_values(dst, pattern, offset, channel_multiplier):
    p = dst.shape[0]
    free = np.zeros(1)
    for step, num in pattern:
        free = (free[:, None] + step * np.arange(num)[None, :]).reshape(-1)
    return (offset + channel_multiplier * np.arange(p)[:, None] + free[None, :]).reshape(dst.shape)


def modules(dialect, gen):
    """(nki, nl, nisa) modules for `dialect` on NeuronCore generation `gen` (2: trn1, 3: trn2, 4: trn3)."""
    nki = types.ModuleType("nki")
    nki.jit = lambda f: f
    nl, nisa = make_language(dialect), make_isa(dialect, gen)
    nki.language, nki.isa = nl, nisa
    return nki, nl, nisa
