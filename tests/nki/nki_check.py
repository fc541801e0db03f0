"""Runs emitted NKI kernels on the NumPy implementation of the documented API (nki_numpy.py) and
compares them with the reference interpreter (`tilesweep eval`), per dialect; first checks
statically that each kernel uses only documented names, keywords and forms of its dialect.

  nki_check.py TILESWEEP REPO_ROOT [--kernels axon/softmax,...|all] [--files K.py,...]
               [--targets trn1,trn2,trn3] [--dialects current,legacy] [--show N] [--seed S]
               [--precision auto|f64|f32|bf16] [--dims K=384,..] [--with TEXT] [--work DIR]

The reference is `tilesweep eval --precision P`: with `auto`, bf16 for a kernel with bf16 or f8 tensors
(the emitted kernel then keeps bf16 tiles, fp32 PSUM), f32 for the kernels in F32_REFERENCE (an
ill-conditioned computation where fp32 itself differs from f64 by more than the tolerance), f64
otherwise. Tolerances per reference precision in TOLERANCE.

Prints one line per (kernel, target, dialect) and a total; exits 1 on any mismatch, undocumented
construct or run failure. Needs /usr/bin/python3 with numpy (scripts/setup.sh installs it).
"""
import argparse
import ast
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nki_numpy  # noqa: E402

ACT = set(nki_numpy.ACT)
ALU = set(nki_numpy.ALU)
COMMON_NL = {"ndarray", "shared_hbm", "hbm", "sbuf", "psum", "float32", "bfloat16", "float16", "float8_e4m3"} | ACT | ALU
NL = {"current": COMMON_NL | {"greater_equal"},
      "legacy": COMMON_NL | {"zeros", "affine_range", "sequential_range", "arange", "load_transpose2d"}}
# Documented parameters per nisa function (positional order first), from each version's reference.
NISA = {
    "current": {
        "dma_copy": ["dst", "src", "priority", "oob_mode", "dge_mode", "engine", "name"],
        "dma_transpose": ["dst", "src", "axes", "priority", "dge_mode", "oob_mode", "name"],
        "tensor_copy": ["dst", "src", "engine", "name"],
        "memset": ["dst", "value", "engine", "name"],
        "nc_matmul": ["dst", "stationary", "moving", "is_stationary_onezero", "is_moving_onezero", "is_transpose",
                      "accumulate", "tile_position", "tile_size", "perf_mode", "name"],
        "nc_transpose": ["dst", "data", "engine", "name"],
        "tensor_tensor": ["dst", "data1", "data2", "op", "engine", "name"],
        "tensor_scalar": ["dst", "data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1", "engine", "name"],
        "tensor_reduce": ["dst", "op", "data", "axis", "negate", "keepdims", "name"],
        "tensor_partition_reduce": ["dst", "op", "data", "name"],
        "activation": ["dst", "op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd", "name"],
        "activation_reduce": ["dst", "op", "data", "reduce_op", "reduce_res", "bias", "scale", "name"],
        "iota": ["dst", "pattern", "offset", "channel_multiplier", "name"],
        "affine_select": ["dst", "pattern", "channel_multiplier", "on_true_tile", "on_false_value", "cmp_op", "offset",
                          "name"],
        "tensor_tensor_scan": ["dst", "data0", "data1", "initial", "op0", "op1", "reverse0", "reverse1", "name"],
        "reciprocal": ["dst", "data", "name"],
        "scalar_tensor_tensor": ["dst", "data", "op0", "operand0", "op1", "operand1", "reverse0", "reverse1", "name"],
        "tensor_scalar_reduce": ["dst", "data", "op0", "operand0", "reduce_op", "reduce_res", "reverse0", "reduce_cmd",
                                 "reduce_init", "name"],
    },
    "legacy": {
        "dma_copy": ["dst", "src", "mask", "dge_mode"],
        "dma_transpose": ["src", "axes", "mask", "dtype"],
        "tensor_copy": ["src", "mask", "dtype", "engine"],
        "memset": ["shape", "value", "dtype", "mask", "engine"],
        "nc_matmul": ["stationary", "moving", "is_stationary_onezero", "is_moving_onezero", "is_transpose",
                      "tile_position", "tile_size", "mask", "perf_mode"],
        "nc_transpose": ["data", "mask", "dtype", "engine"],
        "tensor_tensor": ["data1", "data2", "op", "dtype", "mask", "engine"],
        "tensor_scalar": ["data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1", "dtype", "mask", "engine"],
        "tensor_reduce": ["op", "data", "axis", "mask", "dtype", "negate", "keepdims"],
        "tensor_partition_reduce": ["op", "data", "mask", "dtype"],
        "activation": ["op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd", "mask", "dtype"],
        "activation_reduce": ["op", "data", "reduce_op", "reduce_res", "bias", "scale", "mask", "dtype"],
        "iota": ["expr", "dtype", "mask"],
        "affine_select": ["pred", "on_true_tile", "on_false_value", "mask", "dtype"],
        "tensor_tensor_scan": ["data0", "data1", "initial", "op0", "op1", "reverse0", "reverse1", "dtype", "mask"],
        "reciprocal": ["data", "dtype", "mask"],
        "scalar_tensor_tensor": ["data", "op0", "operand0", "op1", "operand1", "reverse0", "reverse1", "dtype", "mask"],
        "tensor_scalar_reduce": ["data", "op0", "operand0", "reduce_op", "reduce_res", "reverse0", "dtype", "mask"],
    },
}
NISA_VALUES = {"current": {"engine"}, "legacy": {"tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine"}}
ENGINES = {"tensor", "vector", "scalar", "gpsimd"}
# Tensor views: legacy nki.tensor (reshape, broadcast_to); current nki.language.NkiTensor
# (reshape, broadcast(dim, size): a size-1 dim repeated).
TENSOR_ATTRS = {"current": {"shape", "reshape", "broadcast"}, "legacy": {"shape", "reshape", "broadcast_to"}}
# (float: Python's own, evaluated when the kernel is traced: a mask's fill float('inf'))
# min(): the current API's partial tiles ("Deprecation of masking" in the migration guide: slices
# cut short with min); legacy partial tiles are masks (mask= on the call, nl.arange indices).
BUILTINS = {"current": {"range", "tuple", "float", "min"}, "legacy": {"tuple", "float"}}
DEFAULT_DIMS = {"B": 2, "R": 64, "S": 16, "N": 384}
# Per kernel: mamba's reference scan is evaluated from its definition (a sum of products over
# j <= f: cubic in M), so M stays small: 32 (3x: 96, seconds) instead of 256 (3x: hours).
# The attention kernels' references (the interpreter's softmax(q k^T) v) take minutes at the
# defaults and 3x them: half-size sequences.
KERNEL_DIMS = {"nkibench/mamba": {"C": 128, "M": 32}, "axon/gqa": {"M": 128, "N": 128},
               "nkibench/gqa": {"N": 128}}
NKI_DTYPE = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f8": "float8_e4m3"}
# Kernels whose f32 result differs from f64 by more than the f64 tolerance: mamba's scan reaches
# 3.6e12 and fp32 differs from f64 there by 1.7% (the f32 interpreter by exactly as much as the
# emitted kernels), so they are checked against the f32 interpreter.
F32_REFERENCE = {"nkibench/mamba"}
# Per reference precision: (rtol, atol) elementwise, or ("norm", t): max |out - ref| <= t * max |ref|.
# bf16: the emitted kernel rounds every instruction's result to bf16, the interpreter once per op
# (see interpreter.h), so an input of a contraction differs by a bf16 ulp here and there and the
# sum by some ulps of the output's scale, not of each element (measured: 0.4-0.7% of max |ref|,
# while bf16 itself is 0.5% off f64 on rmsnorm_matmul / swiglu_mlp).
# f8 (a kernel with f8 tensors, checked against the bf16 reference, which stores f8 values as
# float8_e4m3): the variants are equal over the reals, not in f8, so a candidate may round a value
# to f8 where the reference does not (a cast moved past the matmul) or the other way round: one
# e4m3 rounding is up to 2^-4 of the value, 2^-4 of max |ref| at most, plus the bf16 slack.
TOLERANCE = {"f64": (2e-3, 2e-4), "f32": (2e-3, 2e-4), "bf16": ("norm", 2e-2), "f8": ("norm", 2.0 ** -4 + 2e-2)}


def close(out, ref, tolerance):
    if tolerance[0] == "norm":
        scale = np.nanmax(np.abs(ref)) if ref.size else 0.0
        return bool(np.all(np.isnan(out) == np.isnan(ref))) and \
            bool(np.nanmax(np.abs(out - ref), initial=0.0) <= tolerance[1] * scale)
    return np.allclose(out, ref, rtol=tolerance[0], atol=tolerance[1], equal_nan=True)
GEN = {"trn1": 2, "trn2": 3, "trn3": 4}


def undocumented(source, dialect):
    """The constructs of `source` that `dialect`'s documentation does not have, as strings."""
    bad = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            want = "nki" if dialect == "current" else "neuronxcc.nki"
            for a in node.names:
                if not a.name.startswith(want) or (dialect == "current" and a.name.startswith("neuronxcc")):
                    bad.append(f"import {a.name}")
        elif isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id == "nl" and node.attr not in NL[dialect]:
                bad.append(f"nl.{node.attr}")
            elif isinstance(base, ast.Name) and base.id == "nisa":
                if node.attr not in NISA[dialect] and node.attr not in NISA_VALUES[dialect]:
                    bad.append(f"nisa.{node.attr}")
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "nisa":
                if dialect != "current" or base.attr != "engine" or node.attr not in ENGINES:
                    bad.append(f"nisa.{base.attr}.{node.attr}")
            elif isinstance(base, ast.Name) and base.id == "nki":
                if node.attr != "jit":
                    bad.append(f"nki.{node.attr}")
            elif not (isinstance(base, ast.Name) and base.id in ("nl", "nisa", "nki")) and \
                    not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "nisa"):
                if node.attr not in TENSOR_ATTRS[dialect]:
                    bad.append(f".{node.attr}")
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "nisa":
                params = NISA[dialect].get(f.attr)
                if params is None:
                    continue
                if len(node.args) > len(params):
                    bad.append(f"nisa.{f.attr} with {len(node.args)} positional arguments")
                for kw in node.keywords:
                    if kw.arg not in params:
                        bad.append(f"nisa.{f.attr}({kw.arg}=)")
                if dialect == "current" and not any(kw.arg == "dst" for kw in node.keywords) and not node.args:
                    bad.append(f"nisa.{f.attr} without dst=")
            elif isinstance(f, ast.Name) and f.id not in BUILTINS[dialect]:
                bad.append(f"{f.id}()")
        elif isinstance(node, ast.Assign) and dialect == "current":
            if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) and \
                    isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == "nisa":
                bad.append(f"the value of nisa.{node.value.func.attr} used (the current API returns nothing)")
    return bad


def generic_dims(path):
    """The dims an emitted kernel reads from its arguments' shapes (its `# generic dims:` line)."""
    m = re.search(r"^\s*# generic dims:(.*)$", open(path).read(), re.M)
    return [d.strip() for d in m.group(1).split(",") if d.strip()] if m else []


def partial_dims(path):
    """The generic dims whose last tile may be partial (the `# partial last tiles:` line)."""
    m = re.search(r"^\s*# partial last tiles:(.*)$", open(path).read(), re.M)
    return [d.strip() for d in m.group(1).split(",") if d.strip()] if m else []


def kernel_signature(path):
    """(name, [(param, dims-or-None, default, dtype)]) of the annotated kernel in `path`."""
    text = open(path).read()
    defs = re.findall(r"^def (\w+)\((.*)\)\s*(?:->|:)", text, re.M)
    name, params = defs[-1]
    out = []
    for m in re.finditer(r"(\w+)\s*:\s*(\w+)(?:\[([^\]]*)\])?(?:\s*=\s*([-+0-9.eE]+))?", params):
        dims = [d.strip() for d in m.group(3).split(",")] if m.group(3) else None
        out.append((m.group(1), dims, float(m.group(4)) if m.group(4) else None, m.group(2)))
    return name, out


def shape_of(dims, env):
    return tuple(int(eval(d, {}, dict(env))) for d in dims)


def reference(ts, path, env, params, work, seed, precision="f64"):
    """Inputs (tensors as HBM tiles of their dtype, scalars as floats) and the interpreter's
    outputs at `precision`."""
    rng = np.random.default_rng(seed)
    shape = ",".join(f"{k}={v}" for k, v in env.items())
    for old in glob.glob(os.path.join(work, f"ref_{precision}*.npy")):
        os.remove(old)
    args, cmd = [], [ts, "eval", path, "--shape", shape, "--precision", precision,
                     "--out", os.path.join(work, f"ref_{precision}.npy")]
    for name, dims, default, dtype in params:
        if dims is None:
            value = default if default is not None else 0.75
            np.save(os.path.join(work, f"in_{name}.npy"), np.array(value, dtype=np.float64))
            args.append(value)
        else:
            a = rng.uniform(-1, 1, shape_of(dims, env))
            np.save(os.path.join(work, f"in_{name}.npy"), a)
            args.append(nki_numpy.tile(a, "hbm", NKI_DTYPE.get(dtype, "float32")))
        cmd += ["--input", f"{name}={os.path.join(work, f'in_{name}.npy')}"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    outs = sorted(glob.glob(os.path.join(work, f"ref_{precision}*.npy")))
    return args, [np.load(o).astype(np.float64) for o in outs]


def reference_precision(choice, kname, params):
    if choice != "auto":
        return choice
    if any(dims is not None and dtype in ("bf16", "f8") for _, dims, _, dtype in params):
        return "bf16"
    return "f32" if kname in F32_REFERENCE else "f64"


def run_kernel(source, dialect, target, args):
    nki, nl, nisa = nki_numpy.modules(dialect, GEN[target])
    saved = {k: sys.modules.get(k) for k in ("nki", "nki.language", "nki.isa", "neuronxcc", "neuronxcc.nki",
                                              "neuronxcc.nki.language", "neuronxcc.nki.isa")}
    try:
        if dialect == "current":
            sys.modules.update({"nki": nki, "nki.language": nl, "nki.isa": nisa})
        else:
            import types
            pkg = types.ModuleType("neuronxcc")
            pkg.nki = nki
            sys.modules.update({"neuronxcc": pkg, "neuronxcc.nki": nki, "neuronxcc.nki.language": nl,
                                "neuronxcc.nki.isa": nisa})
        scope = {}
        exec(compile(source, "<nki>", "exec"), scope)
        fn = [v for k, v in scope.items() if callable(v) and not k.startswith("_") and k not in ("nki", "nl", "nisa")][-1]
        call = [a.copy() if isinstance(a, nki_numpy.Tile) else a for a in args]
        out = fn(*call)
        return out if isinstance(out, tuple) else (out,)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def check_file(path, dialect, target, args, refs, tolerance=TOLERANCE["f64"]):
    """'' when the kernel is documented and matches, else why not (and the kind)."""
    source = open(path).read()
    bad = undocumented(source, dialect)
    if bad:
        return "undocumented", ", ".join(sorted(set(bad)))
    try:
        outs = run_kernel(source, dialect, target, args)
    except nki_numpy.RuleError as e:
        return "rule", str(e)
    except Exception as e:  # a kernel that does not run is a failure of the check, with its trace
        return "error", f"{type(e).__name__}: {e} @ {traceback.extract_tb(e.__traceback__)[-1].lineno}"
    if len(outs) != len(refs):
        return "mismatch", f"{len(outs)} outputs, want {len(refs)}"
    for o, r in zip(outs, refs):
        o = np.asarray(o, dtype=np.float64)
        # NaN where the reference has NaN (adamw's sqrt of a negative random v) is agreement.
        if o.shape != r.shape or not close(o, r, tolerance):
            err = np.nanmax(np.abs(o - r)) if o.shape == r.shape else f"shape {o.shape} vs {r.shape}"
            return "mismatch", f"max abs error {err}"
    return "", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilesweep")
    ap.add_argument("root")
    ap.add_argument("--kernels", default="axon/rmsnorm_matmul,axon/softmax")
    ap.add_argument("--targets", default="trn2")
    ap.add_argument("--dialects", default="current,legacy")
    ap.add_argument("--show", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="")
    ap.add_argument("--files", default="", help="kernel files to check besides --kernels (comma-separated paths)")
    ap.add_argument("--precision", default="auto", choices=["auto", "f64", "f32", "bf16"],
                    help="the reference's `eval --precision` (auto: see the module docstring)")
    ap.add_argument("--dims", default="", help="dim values overriding the defaults, e.g. K=384,N=512")
    ap.add_argument("--with", dest="with_text", default="",
                    help="check only the emitted kernels whose source contains this text (e.g. 'zero-filled'); "
                         "none of the --show candidates having it is an error")
    ap.add_argument("--old-binary", action="store_true",
                    help="a tilesweep from before --nki-api (legacy output only, scalars as 1-element tensors): "
                         "for before/after counts")
    o = ap.parse_args()
    files = sorted(glob.glob(os.path.join(o.root, "jobs/kernels/axon/*.py")) +
                   glob.glob(os.path.join(o.root, "jobs/kernels/nkibench/*.py")))
    if o.kernels != "all":
        files = [os.path.join(o.root, "jobs/kernels", k + ".py") for k in o.kernels.split(",") if k]
    files += [f for f in o.files.split(",") if f]
    work = o.work or tempfile.mkdtemp(prefix="nki_check_")
    totals = {"checked": 0, "ok": 0, "undocumented": 0, "mismatch": 0, "rule": 0, "error": 0, "not_emitted": 0,
              "generic_checked": 0, "partial_checked": 0}
    for path in files:
        kname = os.path.relpath(path, os.path.join(o.root, "jobs/kernels"))[:-3]
        if kname.startswith(".."):
            kname = os.path.basename(path)[:-3]
        name, params = kernel_signature(path)
        env = dict(KERNEL_DIMS.get(kname, {}))
        env.update({k: int(v) for k, v in (a.split("=") for a in o.dims.split(",") if a)})
        for _, dims, _, _ in params:
            for d in dims or []:
                for sym in re.findall(r"[A-Za-z_]\w*", d):
                    env.setdefault(sym, DEFAULT_DIMS.get(sym, 256))
        kwork = os.path.join(work, kname.replace("/", "_"))
        os.makedirs(kwork, exist_ok=True)
        precision = reference_precision(o.precision, kname, params)
        f8 = any(dims is not None and dtype == "f8" for _, dims, _, dtype in params)
        tolerance = TOLERANCE["f8" if f8 and precision == "bf16" else precision]
        args, refs = reference(o.tilesweep, path, env, params, kwork, o.seed, precision)
        other_shapes = {}  # generic dims -> (args, refs) at 3x them
        shape = ",".join(f"{k}={v}" for k, v in env.items())
        for target in o.targets.split(","):
            for dialect in o.dialects.split(","):
                d = os.path.join(kwork, f"{target}_{dialect}")
                cmd = [o.tilesweep, "lower", path, "--target", target, "--shape", shape, "--show", str(o.show),
                       "--seed", str(o.seed), "--emit-nki", d, "--cache", os.path.join(kwork, "proofs")] + \
                    ([] if o.old_binary else ["--nki-api", dialect])
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"{kname} {target} {dialect}: lower failed: {r.stderr.strip()[:300]}")
                    totals["error"] += 1
                    continue
                notes = [l for l in r.stdout.splitlines() if "NKI not written" in l]
                totals["not_emitted"] += len(notes)
                counts = {}
                call = [np.array([a]) if o.old_binary and not isinstance(a, np.ndarray) else a for a in args]
                emitted = sorted(glob.glob(os.path.join(d, "*.py")))
                if o.with_text:
                    emitted = [f for f in emitted if o.with_text in open(f).read()]
                    if not emitted:
                        print(f"{kname} {target} {dialect}: no emitted candidate has {o.with_text!r}")
                        totals["error"] += 1
                        continue
                for f in emitted:
                    kind, why = check_file(f, dialect, target, call, refs, tolerance)
                    totals["checked"] += 1
                    totals[kind or "ok"] += 1
                    counts[kind or "ok"] = counts.get(kind or "ok", 0) + 1
                    if kind:
                        print(f"  {kname} {target} {dialect} {os.path.basename(f)}: {kind}: {why}")
                        continue
                    # A kernel generic in some dims runs again, unchanged, at 3x those dims; at
                    # 3x - 1 those whose last tile may be partial (so that it is).
                    generic = generic_dims(f)
                    if not generic or o.old_binary:
                        continue
                    partial = partial_dims(f)
                    env3 = {k: v * 3 - (k in partial) if k in generic else v for k, v in env.items()}
                    key = tuple(sorted(generic)) + tuple(sorted(d + "-1" for d in partial))
                    if key not in other_shapes:
                        w3 = os.path.join(kwork, "x3_" + "_".join(key))
                        os.makedirs(w3, exist_ok=True)
                        other_shapes[key] = reference(o.tilesweep, path, env3, params, w3, o.seed, precision)
                    args3, refs3 = other_shapes[key]
                    kind, why = check_file(f, dialect, target, args3, refs3, tolerance)
                    totals["generic_checked"] += 1
                    totals["partial_checked"] += bool(partial)
                    counts["at 3x " + ",".join(key)] = counts.get("at 3x " + ",".join(key), 0) + 1
                    if kind:
                        totals[kind] += 1
                        print(f"  {kname} {target} {dialect} {os.path.basename(f)} at {env3}: {kind}: {why}")
                for n in notes:
                    print(f"  {kname} {target} {dialect}: {n.strip()}")
                print(f"{kname} {target} {dialect} (reference {precision}): " +
                      ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("total: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if not o.work:
        shutil.rmtree(work, ignore_errors=True)
    bad = sum(totals[k] for k in ("undocumented", "mismatch", "rule", "error"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
