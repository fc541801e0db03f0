#!/usr/bin/env bash
# `tilesweep time`: --json carries every field with integers as integers; the text form names
# the kernel; --trace lists instructions; an unsupported construct is exit 2 with file:line:col.
set -euo pipefail
bin=$1 root=$2
k="$root/tests/nki_import/kernels/matmul_tiled.py"
out=$("$bin" time "$k" --target trn1 --arg lhsT=bf16[512,256] --arg rhs=bf16[512,1024] --json)
/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["kernel"] == "mm_tiled" and d["target"] == "trn1", d
for key in ("hbm_read_bytes", "hbm_write_bytes", "spill_bytes", "sbuf_peak_bytes", "psum_peak_bytes", "instructions"):
    assert isinstance(d[key], int), (key, d[key])
# 2 x 2 x 4 (m, n, k) loads of a [128,128] and a [128,512] bf16 tile; one [256,1024] bf16 store
assert d["hbm_read_bytes"] == 16 * (128 * 128 + 128 * 512) * 2, d
assert d["hbm_write_bytes"] == 256 * 1024 * 2, d
assert set(d["busy_ns"]) == {"tensor", "vector", "scalar", "gpsimd", "dma"}, d
assert d["busy_ns"]["tensor"] > 0 and 0 < d["busy_ns"]["dma"] and d["latency_ns"] >= d["busy_ns"]["tensor"], d
' "$out"
"$bin" time "$k" --arg lhsT=bf16[512,256] --arg rhs=bf16[512,1024] | grep -q "kernel mm_tiled"
# --trace N: N instruction lines (start, end ns, engine, instruction, the kernel's line:col)
trace=$("$bin" time "$k" --arg lhsT=bf16[512,256] --arg rhs=bf16[512,1024] --trace 5 | grep -c " ns  ")
[[ $trace -eq 5 ]] || { echo "--trace 5 printed $trace instruction lines"; exit 1; }
bad=$(mktemp --suffix=.py)
trap 'rm -f "$bad"' EXIT
printf 'import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n@nki.jit\ndef k(a):\n    with x:\n        pass\n' >"$bad"
set +e
err=$("$bin" time "$bad" --arg a=f32[4,4] 2>&1)
code=$?
set -e
[[ $code -eq 2 ]] || { echo "exit $code, expected 2: $err"; exit 1; }
grep -q "$bad:5:5: error: 'with' is not supported" <<<"$err" || { echo "unexpected: $err"; exit 1; }
set +e
err=$("$bin" time "$k" --arg lhsT=bf16[512,256] 2>&1)
code=$?
set -e
[[ $code -eq 2 ]] && grep -q "kernel parameter 'rhs' has no value" <<<"$err" || { echo "missing --arg: $code $err"; exit 1; }
