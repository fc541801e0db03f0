#!/usr/bin/env python3
"""Numerical sanity check of the rule files tests/verify/{true,false}_identities.py.

Every kernel pair `<rule>_lhs`, `<rule>_rhs` is run with NumPy (float64) on seeded random
inputs at several random shapes:

  true pairs   must agree to 1e-9 (relative) on every trial, with at least one trial whose
               outputs are all finite (NaN/inf must appear at the same places on both sides);
  false pairs  must disagree (beyond that tolerance on finite values, or NaN/inf at different
               places) on at least one trial.

It also checks the files' conventions: both sides of every rule exist, with identical parameter
lists and return annotations; a comment line above each pair; at least 45 true and 25 false
rules; at most 3 `# needs: exp-add` rules.

The kernel language is a subset of Python syntax, so a kernel is run by executing the file with
postponed annotations in a namespace whose ops are NumPy functions and whose dims are bound to
the trial's sizes. Usage: /usr/bin/python3 scripts/check_identities.py [--seed S] [--rules DIR]
Exits 0 when every check passes, 1 otherwise.
"""
from __future__ import annotations

import __future__
import argparse
import ast
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "tests" / "verify"
MIN_TRUE, MIN_FALSE, MAX_EXP_ADD = 45, 25, 3
RTOL = 1e-9
DTYPES = {"f32", "bf16", "f16", "f8"}


# ---------------------------------------------------------------- the ops, in NumPy

def _reduce(fn):
    def op(x, axis, keepdims=False):
        return fn(np.asarray(x), axis=axis, keepdims=keepdims)
    return op


def _scan(a, b, axis):
    a, b = np.moveaxis(np.asarray(a, float), axis, 0), np.moveaxis(np.asarray(b, float), axis, 0)
    out, s = np.empty_like(b), np.zeros_like(b[0])
    for i in range(b.shape[0]):
        s = a[i] * s + b[i]
        out[i] = s
    return np.moveaxis(out, 0, axis)


def _iota(n, axis=0, ndim=None):
    ndim = max(2, axis + 1) if ndim is None else ndim
    shape = [1] * ndim
    shape[axis] = n
    return np.arange(n, dtype=float).reshape(shape)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


OPS = {
    "matmul": np.matmul,
    "transpose": lambda x, axes=None: np.transpose(x, axes),
    "reshape": lambda x, shape: np.reshape(x, shape),
    "concat": lambda xs, axis=0: np.concatenate(xs, axis=axis),
    "broadcast_to": lambda x, shape: np.broadcast_to(x, shape),
    "repeat": lambda x, repeats, axis: np.repeat(x, repeats, axis=axis),
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "reciprocal": lambda x: 1.0 / x,
    "square": lambda x: x * x,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": _sigmoid,
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "gelu": lambda x: 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))),
    "maximum": np.maximum, "minimum": np.minimum,
    "sum": _reduce(np.sum), "mean": _reduce(np.mean), "max": _reduce(np.max), "min": _reduce(np.min),
    "cumsum": lambda x, axis: np.cumsum(x, axis=axis),
    "scan": _scan,
    # masks are 0/1 values in the operands' dtype (the kernel language's comparisons)
    "less": lambda a, b: (np.asarray(a) < b).astype(float),
    "less_equal": lambda a, b: (np.asarray(a) <= b).astype(float),
    "greater": lambda a, b: (np.asarray(a) > b).astype(float),
    "greater_equal": lambda a, b: (np.asarray(a) >= b).astype(float),
    "equal": lambda a, b: (np.asarray(a) == b).astype(float),
    "not_equal": lambda a, b: (np.asarray(a) != b).astype(float),
    "where": lambda c, a, b: np.where(np.asarray(c) != 0, a, b),
    "iota": _iota,
    "astype": lambda x, dtype: np.asarray(x, dtype=float),
    "inf": np.inf,
    # dtype names, for x.astype(f32): the check runs in float64 (no rounding)
    "f32": np.float64, "bf16": np.float64, "f16": np.float64, "f8": np.float64,
}


# ---------------------------------------------------------------- reading a rule file

@dataclass
class Param:
    name: str
    annotation: str            # source text, e.g. "f32[M, 2 * H]"
    dims: list | None          # ast nodes of the dims; None for a scalar
    default: str | None


@dataclass
class Kernel:
    name: str
    line: int
    params: list
    ret: str | None
    ret_shapes: list | None    # list (one per output) of lists of dim ast nodes
    comment_above: bool


@dataclass
class Rule:
    name: str
    lhs: Kernel | None = None
    rhs: Kernel | None = None
    needs: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def _dims_of(node):
    """The dim expressions of a type annotation `f32[...]`, or None for a scalar `f32`."""
    if isinstance(node, ast.Name) and node.id in DTYPES:
        return None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in DTYPES:
        s = node.slice
        return list(s.elts) if isinstance(s, ast.Tuple) else [s]
    raise ValueError(f"not a tensor type: {ast.unparse(node)}")


def _is_kernel(fn):
    args = fn.args.args
    return bool(args) and all(a.annotation is not None for a in args)


def read_rules(path):
    src = path.read_text()
    lines = src.splitlines()
    tree = ast.parse(src, str(path))
    rules, problems = {}, []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not _is_kernel(fn):
            continue
        defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + [ast.unparse(d) for d in fn.args.defaults]
        params = [Param(a.arg, ast.unparse(a.annotation), _dims_of(a.annotation), d)
                  for a, d in zip(fn.args.args, defaults)]
        ret_shapes = None
        if fn.returns is not None:
            outs = fn.returns.elts if isinstance(fn.returns, ast.Tuple) else [fn.returns]
            ret_shapes = [_dims_of(o) or [] for o in outs]
        prev = fn.lineno - 2  # 0-based index of the line above the def
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        k = Kernel(fn.name, fn.lineno, params, ast.unparse(fn.returns) if fn.returns else None, ret_shapes,
                   prev >= 0 and lines[prev].lstrip().startswith("#"))
        base, _, side = fn.name.rpartition("_")
        if side not in ("lhs", "rhs") or not base:
            problems.append(f"{path.name}:{fn.lineno}: kernel {fn.name} is not <rule>_lhs or <rule>_rhs")
            continue
        r = rules.setdefault(base, Rule(base))
        if getattr(r, side) is not None:
            r.problems.append(f"two kernels named {fn.name}")
        setattr(r, side, k)
        if side == "lhs":
            # the comment block above the pair: look for `# needs: ...`
            i = prev
            while i >= 0 and lines[i].lstrip().startswith("#"):
                text = lines[i].strip()
                if text.startswith("# needs:"):
                    r.needs += [w.strip() for w in text[len("# needs:"):].split(",") if w.strip()]
                i -= 1
    for r in rules.values():
        if r.lhs is None or r.rhs is None:
            r.problems.append("missing _lhs" if r.lhs is None else "missing _rhs")
            continue
        sig = lambda k: [(p.name, p.annotation, p.default) for p in k.params]
        if sig(r.lhs) != sig(r.rhs):
            r.problems.append(f"parameter lists differ: {sig(r.lhs)} vs {sig(r.rhs)}")
        if r.lhs.ret is None or r.rhs.ret is None:
            r.problems.append("missing return annotation")
        elif r.lhs.ret != r.rhs.ret:
            r.problems.append(f"return annotations differ: {r.lhs.ret} vs {r.rhs.ret}")
        if not r.lhs.comment_above:
            r.problems.append("no comment line above the pair")
    flags = __future__.annotations.compiler_flag
    ns = dict(OPS)
    exec(compile(src, str(path), "exec", flags=flags, dont_inherit=True), ns)
    return list(rules.values()), problems, ns


# ---------------------------------------------------------------- running a pair

def _dim_names(rule):
    names = []
    for p in rule.lhs.params:
        for d in p.dims or []:
            for n in ast.walk(d):
                if isinstance(n, ast.Name) and n.id not in names:
                    names.append(n.id)
    return names


def _eval_dim(node, dims):
    v = eval(compile(ast.Expression(node), "<dim>", "eval"), {"__builtins__": {}}, dict(dims))
    if not isinstance(v, int) or v < 1:
        raise ValueError(f"dim {ast.unparse(node)} = {v}")
    return v


def _inputs(rule, dims, rng, dist):
    lo, hi = (-2.0, 2.0) if dist == "signed" else (0.25, 2.0)
    out = {}
    for p in rule.lhs.params:
        if p.dims is None:
            out[p.name] = float(rng.uniform(lo, hi))
        else:
            out[p.name] = rng.uniform(lo, hi, size=tuple(_eval_dim(d, dims) for d in p.dims))
    return out


def _run(kernel, ns, dims, inputs):
    for n, v in dims.items():
        if n in OPS:
            raise ValueError(f"dim {n} shadows an op")
        ns[n] = v
    with np.errstate(all="ignore"):
        out = ns[kernel.name](**inputs)
    outs = list(out) if isinstance(out, tuple) else [out]
    return [np.asarray(o, dtype=np.float64) for o in outs]


def _compare(ls, rs):
    """(max relative error over finite values, same NaN/inf pattern, all finite)."""
    worst, same_pattern, finite = 0.0, True, True
    for l, r in zip(ls, rs):
        fl, fr = np.isfinite(l), np.isfinite(r)
        finite &= bool(fl.all() and fr.all())
        if not np.array_equal(fl, fr) or not np.array_equal(l[~fl], r[~fr], equal_nan=True):
            same_pattern = False
        both = fl & fr
        if both.any():
            a, b = l[both], r[both]
            scale = max(1.0, float(np.abs(a).max()), float(np.abs(b).max()))
            err = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-3 * scale)
            worst = max(worst, float(err.max()))
    return worst, same_pattern, finite


def _shape_str(dims):
    return ",".join(f"{k}={v}" for k, v in sorted(dims.items()))


def check_rule(rule, ns, want_equal, seed):
    """Returns (ok, detail)."""
    names = _dim_names(rule)
    rng = np.random.default_rng([seed, sum(map(ord, rule.name))])
    shapes = [dict(zip(names, rng.integers(1, 4, len(names)).tolist()))]
    shapes += [dict(zip(names, rng.integers(2, 7, len(names)).tolist())) for _ in range(2)]
    tries = 1 if want_equal else 6   # a false rule may need a few draws (e.g. a negative scale)
    worst, any_finite, trials = 0.0, False, 0
    for dims in shapes:
        for dist in ("signed", "positive"):
            for _ in range(tries):
                inputs = _inputs(rule, dims, rng, dist)
                ls, rs = _run(rule.lhs, ns, dims, inputs), _run(rule.rhs, ns, dims, inputs)
                trials += 1
                if len(ls) != len(rs) or any(l.shape != r.shape for l, r in zip(ls, rs)):
                    return False, f"output shapes differ at {_shape_str(dims)}: " \
                                  f"{[l.shape for l in ls]} vs {[r.shape for r in rs]}"
                want = [tuple(_eval_dim(d, dims) for d in s) for s in rule.lhs.ret_shapes or []]
                if want and [l.shape for l in ls] != want:
                    return False, f"output shape {[l.shape for l in ls]} is not the annotated {want} " \
                                  f"at {_shape_str(dims)}"
                err, same_pattern, finite = _compare(ls, rs)
                if want_equal:
                    if err > RTOL or not same_pattern:
                        what = f"rel err {err:.2e}" if err > RTOL else "NaN/inf at different places"
                        return False, f"{what} at {_shape_str(dims)} ({dist} inputs)"
                    worst = max(worst, err)
                    any_finite |= finite
                elif err > RTOL or not same_pattern:
                    # NaN/inf on one side only: defined vs undefined, a difference (README, `prove`)
                    what = f"rel err {err:.2e}" if err > RTOL else "NaN/inf at different places"
                    return True, f"differs ({what}) at {_shape_str(dims)}, {dist} inputs, " \
                                 f"trial {trials}"
    if want_equal:
        if not any_finite:
            return False, "no trial with all outputs finite"
        return True, f"{trials} trials, max rel err {worst:.1e}"
    return False, f"agreed on all {trials} trials"


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--rules", type=Path, default=RULES, help="folder holding the two rule files")
    args = ap.parse_args()

    failures = 0
    counts = {}
    rows = []
    files = (("true_identities.py", True), ("false_identities.py", False), ("unknown_identities.py", True))
    for fname, want_equal in files:
        path = args.rules / fname
        rules, file_problems, ns = read_rules(path)
        counts[fname] = len(rules)
        for p in file_problems:
            rows.append((fname, "-", "FAIL", p))
            failures += 1
        for r in sorted(rules, key=lambda r: r.lhs.line if r.lhs else 0):
            if r.problems:
                ok, detail = False, "; ".join(r.problems)
            else:
                try:
                    ok, detail = check_rule(r, ns, want_equal, args.seed)
                except Exception as e:  # a kernel NumPy cannot run is a problem with the file
                    ok, detail = False, f"error: {type(e).__name__}: {e}"
            if r.needs:
                detail += f"  [needs: {', '.join(r.needs)}]"
            rows.append((fname, r.name, "ok" if ok else "FAIL", detail))
            failures += not ok
        n_exp = sum("exp-add" in r.needs for r in rules)
        minimum = {"true_identities.py": MIN_TRUE, "false_identities.py": MIN_FALSE}.get(fname, 1)
        if len(rules) < minimum:
            rows.append((fname, "-", "FAIL", f"{len(rules)} rules, want at least {minimum}"))
            failures += 1
        if n_exp > (MAX_EXP_ADD if fname == "unknown_identities.py" else 0):
            rows.append((fname, "-", "FAIL", f"{n_exp} rules marked needs: exp-add"))
            failures += 1

    w = max(len(r[1]) for r in rows)
    print(f"{'file':<20} {'rule':<{w}}  {'check':<5} detail")
    print("-" * (w + 80))
    for fname, name, verdict, detail in rows:
        print(f"{fname:<20} {name:<{w}}  {verdict:<5} {detail}")
    print("-" * (w + 80))
    print(f"true rules: {counts['true_identities.py']}, false rules: {counts['false_identities.py']}, "
          f"true but unknown to the prover: {counts['unknown_identities.py']}, problems: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
