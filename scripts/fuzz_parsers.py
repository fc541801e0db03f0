#!/usr/bin/env python3
"""Mutation fuzzing of tilesweep's input parsers: kernel files, job files and op-semantics files.

Each case takes a seed input from the repository (the suite kernels, the example jobs, ops.toml),
applies one to three random edits (delete, duplicate, truncate, swap lines, splice tokens that
parsers find hard: brackets, operators, huge or odd numbers, keys, quotes, control bytes) and runs
the verb that parses it:

  kernel  -> tilesweep check FILE
  ops     -> tilesweep check --ops FILE jobs/kernels/axon/softmax.py
  job     -> tilesweep run FILE --dry-run --archive TMP/out.h5

The verdict per case is the exit code: 0 (accepted) or 2 (a reported input error) are correct;
anything else -- 1 (an internal error), a signal (a crash: 128+N or negative in Python), or an
error message without a location for a file input -- is a finding. A case that runs past the
timeout is counted apart (an accepted job's dry run proves and synthesizes; that is not a parser
fault, but it is listed). Findings are copied to OUT/findings/ with their output.

Usage: scripts/fuzz_parsers.py [--cases N] [--seed S] [--binary build/tilesweep] [--out DIR]
Only the Python standard library is needed.
"""
import argparse
import collections
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOKENS = [
    "(", ")", "[", "]", "{", "}", ":", ",", "=", "==", "**", "*", "-", "+", "/", "//", ".", "..",
    "\n", "\t", " ", "#", '"', "'", '"""', "\\", "\x00", "\xff", "é", "0", "-1", "1e400", "-0.0",
    "nan", "inf", "99999999999999999999999", "0x10", "1_000", "N", "M", "K", "x", "def ", "return ",
    "f32", "bf16", "f64[", "sum(", "exp(", "reshape(", "transpose(", "->", "@", "[[kernel]]", "[search]",
    "shapes = ", "file = ", "targets = ", "= [", "= {", "true", "[[", "]]", "[op.x]", "semantics = ",
]


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        n = len(text)
        kind = rng.choice(["delete", "duplicate", "insert", "insert", "truncate", "swap", "repeat"])
        a = rng.randrange(n + 1) if n else 0
        b = min(n, a + rng.randint(1, 40))
        if kind == "delete":
            text = text[:a] + text[b:]
        elif kind == "duplicate":
            text = text[:b] + text[a:b] + text[b:]
        elif kind == "insert":
            text = text[:a] + rng.choice(TOKENS) + text[a:]
        elif kind == "truncate":
            text = text[:a]
        elif kind == "repeat":  # long or deep input
            text = text[:a] + rng.choice(TOKENS) * rng.choice([50, 600, 5000]) + text[a:]
        else:
            lines = text.split("\n")
            if len(lines) > 1:
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


def seeds():
    kernels = []
    for folder, _, files in os.walk(os.path.join(ROOT, "jobs", "kernels")):
        kernels += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    jobs = [os.path.join(ROOT, "jobs", f) for f in ("quick.toml", "axon-suite.toml", "mesh-tp.toml")]
    ops = [os.path.join(ROOT, "src", "semantics", "ops.toml")]
    return {"kernel": sorted(kernels), "job": jobs, "ops": ops}


def command(kind, path, binary, work):
    if kind == "kernel":
        return [binary, "check", "-q", path]
    if kind == "ops":
        return [binary, "check", "-q", "--ops", path, os.path.join(ROOT, "jobs", "kernels", "axon", "softmax.py")]
    return [binary, "run", path, "--dry-run", "--quiet", "--archive", os.path.join(work, "out.h5")]


def verdict(rc, output, path):
    if rc in (0, 2):
        if rc == 2 and os.path.basename(path) not in output:
            return "error without the file's name"
        return None
    if rc < 0 or rc >= 128:
        return f"crash (signal {-rc if rc < 0 else rc - 128})"
    return f"exit {rc}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tilesweep"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "fuzz"))
    ap.add_argument("--timeout", type=float, default=20.0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pool = seeds()
    os.makedirs(os.path.join(args.out, "findings"), exist_ok=True)
    counts = collections.Counter()
    findings = []
    with tempfile.TemporaryDirectory() as work:
        os.symlink(os.path.join(ROOT, "jobs", "kernels"), os.path.join(work, "kernels"))
        for case in range(args.cases):
            kind = rng.choices(["kernel", "job", "ops"], weights=[6, 2, 2])[0]
            seed_path = rng.choice(pool[kind])
            with open(seed_path, encoding="utf-8") as f:
                text = f.read()
            if kind == "ops":  # the built-in ops under new names, so the unedited seed is accepted
                text = text.replace("[op.", "[op.fz_")
            text = mutate(text, rng)
            ext = ".py" if kind == "kernel" else ".toml"
            path = os.path.join(work, f"case{case}{ext}")
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            for stale in ("out.h5", "out.h5.journal", "out.h5.proofs"):
                if os.path.exists(os.path.join(work, stale)):
                    os.remove(os.path.join(work, stale))
            try:
                p = subprocess.run(command(kind, path, args.binary, work), capture_output=True, timeout=args.timeout,
                                   cwd=work)
                rc, output = p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")
            except subprocess.TimeoutExpired:
                counts[(kind, "timeout")] += 1
                continue
            counts[(kind, f"exit {rc}")] += 1
            bad = verdict(rc, output, path)
            if bad:
                name = f"{kind}-{case}{ext}"
                shutil.copy(path, os.path.join(args.out, "findings", name))
                with open(os.path.join(args.out, "findings", name + ".out"), "w") as f:
                    f.write(f"{bad}\n{' '.join(command(kind, name, 'tilesweep', '.'))}\n{output}")
                findings.append((name, bad, output.strip().splitlines()[-1:] if output.strip() else []))
    print(f"cases: {args.cases} (seed {args.seed})")
    for kind in ("kernel", "job", "ops"):
        row = {k[1]: v for k, v in counts.items() if k[0] == kind}
        print(f"  {kind:6} " + ", ".join(f"{k}: {v}" for k, v in sorted(row.items())))
    print(f"findings: {len(findings)}")
    for name, bad, last in findings:
        print(f"  {name}: {bad}: {last[0][:160] if last else ''}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
