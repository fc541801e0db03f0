#!/usr/bin/env bash
# `eval` writes .npy outputs that read back as inputs: a kernel applied to its own output, and
# NumPy (when python3-numpy is present) agrees with the file format.
set -eu
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/k.py" <<'K'
def double(x: f32[M, N]) -> f32[M, N]:
    return x + x

def split(x: f32[M, N]) -> (f32[M, N], f32[N, M]):
    return x, x.T
K
"$bin" eval "$tmp/k.py" --kernel double --shape M=3,N=4 --seed 7 --out "$tmp/a.npy" >/dev/null
"$bin" eval "$tmp/k.py" --kernel double --input x="$tmp/a.npy" --out "$tmp/b.npy" >/dev/null
"$bin" eval "$tmp/k.py" --kernel split --input x="$tmp/a.npy" --out "$tmp/s.npy" --precision f32 >/dev/null
test -f "$tmp/s_0.npy" && test -f "$tmp/s_1.npy"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
a, b = np.load(f"{d}/a.npy"), np.load(f"{d}/b.npy")
assert a.shape == (3, 4) and a.dtype == np.float64, (a.shape, a.dtype)
assert np.array_equal(b, 2 * a)
s0, s1 = np.load(f"{d}/s_0.npy"), np.load(f"{d}/s_1.npy")
assert s0.dtype == np.float32 and s1.shape == (4, 3)
assert np.allclose(s1, a.T, rtol=1e-6)
PY
fi
# A user op from --ops, without touching C++.
cat > "$tmp/ops.toml" <<'T'
[op.softplus]
operands = ["x"]
expr = "log(1 + exp(x))"
T
cat > "$tmp/sp.py" <<'K'
def sp(x: f32[N]) -> f32[N]:
    return softplus(x) - x
K
"$bin" eval "$tmp/sp.py" --ops "$tmp/ops.toml" --shape N=5 --out "$tmp/sp.npy" >/dev/null
if "$bin" check "$tmp/sp.py" 2>/dev/null; then echo "softplus should be unknown without --ops"; exit 1; fi
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
y = np.load(f"{sys.argv[1]}/sp.npy")
# softplus(x) - x = log(1 + exp(-x)) > 0
assert y.shape == (5,) and (y > 0).all(), y
PY
fi
echo ok
