"""bf16 vs f32 error table: for kernels with bf16 tensors, the error against the f64 reference of
`tilesweep eval --precision f32`, `--precision bf16` (the NeuronCore model: bf16 storage, fp32
PSUM) and of emitted NKI candidates run on the NumPy NKI (bf16 tiles, fp32 PSUM, every
instruction's result rounded to its tile's dtype).

  bf16_table.py TILESWEEP REPO_ROOT KERNEL.py... [--shape M=256,K=256,N=384] [--target trn2]
                [--show 2] [--seed 1]

Prints a Markdown table: max abs error and max abs error / max |reference| per row.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nki_check  # noqa: E402


def errors(out, ref):
    out = np.asarray(out, dtype=np.float64)
    err = np.max(np.abs(out - ref))
    return err, err / np.max(np.abs(ref))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilesweep")
    ap.add_argument("root")
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--shape", default="M=256,K=256,N=384")
    ap.add_argument("--target", default="trn2")
    ap.add_argument("--show", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    env = dict((k, int(v)) for k, v in (item.split("=") for item in o.shape.split(",")))
    print(f"| kernel ({o.shape}, {o.target}) | computed as | max abs error | max abs error / max abs |")
    print("|---|---|---|---|")
    for path in o.kernels:
        name, params = nki_check.kernel_signature(path)
        work = tempfile.mkdtemp(prefix="bf16_table_")
        refs = {}
        for p in ("f64", "f32", "bf16"):
            args, refs[p] = nki_check.reference(o.tilesweep, path, env, params, work, o.seed, p)
        label = os.path.basename(path)[:-3]
        for p in ("f32", "bf16"):
            e, r = errors(refs[p][0], refs["f64"][0])
            print(f"| {label} | `eval --precision {p}` | {e:.4g} | {r:.3g} |")
        for dialect in ("current", "legacy"):
            d = os.path.join(work, dialect)
            subprocess.run([o.tilesweep, "lower", path, "--target", o.target, "--shape", o.shape, "--show",
                            str(o.show), "--seed", str(o.seed), "--emit-nki", d, "--nki-api", dialect],
                           check=True, capture_output=True, text=True)
            for f in sorted(glob.glob(os.path.join(d, "*.py"))):
                outs = nki_check.run_kernel(open(f).read(), dialect, o.target, args)
                e, r = errors(outs[0], refs["f64"][0])
                eb, rb = errors(outs[0], refs["bf16"][0])
                print(f"| {label} | NKI {dialect} {os.path.basename(f)[:-3]} (vs eval bf16: {eb:.3g}, {rb:.3g}) "
                      f"| {e:.4g} | {r:.3g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
