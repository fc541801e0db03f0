#!/usr/bin/env bash
# The analysis verbs end to end on two real sweeps of different jobs: merge then select equals
# select of both, diff of an archive with itself is empty, lookup answers exactly and nearest,
# report's three formats parse, and every bad input exits 2 with its message.
set -eu
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=$root/tests/report/data
py=/usr/bin/python3

"$bin" run "$data/a.toml" --archive "$tmp/a.h5" -q >/dev/null
"$bin" run "$data/b.toml" --archive "$tmp/b.h5" -q >/dev/null
cd "$tmp"

# merge + select == select of both (entries, their provenance included)
"$bin" merge a.h5 b.h5 -o m.h5 >/dev/null
"$bin" select m.h5 -o lib_m.h5 --json m.json >/dev/null
"$bin" select a.h5 b.h5 -o lib_ab.h5 --json ab.json --nki-dir nki >/dev/null
$py - <<'PY'
import json
m, ab = json.load(open("m.json")), json.load(open("ab.json"))
assert m["entries"] == ab["entries"], "select of the merged archive differs from select of both"
assert len(m["entries"]) == 6, len(m["entries"])
ok = [e for e in m["entries"] if e["nki"]]
assert ok, [e["nki_error"] for e in m["entries"]]
assert {e["archive"] for e in m["entries"]} <= {"a.h5", "b.h5"}
PY
test "$(ls nki/*.py | wc -l)" -eq 6

# diff
test "$("$bin" diff a.h5 a.h5)" = "no differences"
"$bin" diff a.h5 b.h5 > d.txt
grep -q "^\(regression\|removed\|improvement\|changed\|added\)" d.txt

# lookup: exact and nearest
"$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=256,N=256 | grep -q "exact match"
"$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=300,N=256 > near.txt
grep -q "nearest: same kernel, target and mesh" near.txt
grep -q "entry: softmax trn1 M=256,N=256 mesh 1" near.txt
# ... but never hands out the nearest entry's NKI (built for its own shape) for another shape
grep -q "M=300,N=256 was not swept" near.txt
"$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=300,N=256 --nki --nki-shapes fixed > near_nki.txt
! grep -q "@nki.jit" near_nki.txt
grep -q "cannot re-instantiate the entry's configuration at M=300,N=256: group 0: its 128-row tiles do not divide the 300 rows" near_nki.txt
# ... except that the entry's own generic kernel takes M=300 (a partial last tile of rows)
"$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=300,N=256 --nki > near_generic.txt
grep -q "at M=300,N=256: the entry's kernel itself takes this shape (generic in M, partial last tiles in M); latency simulated at the entry's shape M=256,N=256" near_generic.txt
grep -q "^# partial last tiles: M\|    # partial last tiles: M" near_generic.txt
# ... re-lowers the entry's configuration where its tiles divide the asked shape
"$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=1024,N=512 --nki > re.txt
grep -q "re-instantiated at M=1024,N=512: .* simulated latency" re.txt
# ... generic in the shape as `lower` writes it (--nki-shapes generic, the default), or fixed
grep -q '# generic dims: M' re.txt
grep -q 'M = x.shape\[0\]' re.txt
"$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=256,N=256 --nki | grep -q "^import nki$"
# select --python: a dispatcher module, exact shapes only (run on tests/nki's NumPy NKI)
"$bin" select a.h5 -o lib_py.h5 --python lib_nki.py >/dev/null
PYTHONPATH="$root/tests/nki:." $py - <<'PY'
import sys, numpy as np, nki_numpy
nki, nl, nisa = nki_numpy.modules("current", 2)
sys.modules.update({"nki": nki, "nki.language": nl, "nki.isa": nisa})
import lib_nki
x = np.random.default_rng(0).uniform(-1, 1, (256, 512))
y = np.asarray(lib_nki.kernel("softmax", "trn1", M=256, N=512)(nki_numpy.tile(x, "hbm")))
ref = np.exp(x - x.max(1, keepdims=True))
assert np.allclose(y, ref / ref.sum(1, keepdims=True), atol=1e-6)
try:
    lib_nki.kernel("softmax", "trn1", M=3000, N=512)
    raise SystemExit("an unswept shape must raise")
except LookupError as e:
    assert "nearest entry M=512,N=512" in str(e), e
PY
# select --nki-api legacy: the neuronxcc dialect
"$bin" select a.h5 -o lib_legacy.h5 --nki-dir nki_legacy --nki-api legacy >/dev/null
grep -lq "import neuronxcc.nki as nki" nki_legacy/*.py

# report formats
"$bin" report m.h5 > r.txt
grep -q "latencies are simulated" r.txt
grep -q "Speedup of the best candidate over the heuristic baseline on trn1" r.txt
grep -q "Best simulated latency per kernel, target, shape and mesh" r.txt
grep -q "Total best latency per target and mesh" r.txt
"$bin" report a.h5 --format json | $py -c 'import json,sys; d=json.load(sys.stdin); assert d["simulated"] and d["tables"]'
"$bin" report a.h5 --format csv | $py -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
assert rows[0] == ["table", "row", "column", "value", "kernel", "target", "shape", "mesh"], rows[0]
assert len(rows) > 10 and all(len(r) == 8 for r in rows), rows[:3]
# every speedup and latency value names its full key, so trn1 and trn2 rows never share one
keyed = [r for r in rows if r[0] in ("speedup", "latency") and r[2] != "geomean"]
assert keyed and all(r[4] and r[5] and r[6] and r[7] for r in keyed), [r for r in keyed if not all(r[4:])][:3]
assert len({tuple(r[:3] + r[4:]) for r in keyed}) == len(keyed), "two values share a key"'

# bad input: exit 2 and the message
expect() {  # expect "message" cmd...
  local want=$1; shift
  set +e
  "$@" >out.txt 2>err.txt
  local rc=$?
  set -e
  if [ $rc -ne 2 ] || ! grep -qF -- "$want" err.txt; then
    echo "FAIL: $* -> exit $rc, stderr: $(cat err.txt) (wanted: $want)"
    exit 1
  fi
}
echo "not hdf5" > text.h5
head -c 4000 a.h5 > trunc.h5
expect "error: cannot open archive 'nope.h5': No such file or directory" "$bin" report nope.h5
expect "error: not a tilesweep archive: 'text.h5' is not an HDF5 file" "$bin" report text.h5
expect "error: truncated or corrupt HDF5 file: 'trunc.h5'" "$bin" report trunc.h5
expect "error: not a tilesweep archive: 'lib_ab.h5'" "$bin" diff a.h5 lib_ab.h5
expect "error: cannot open archive 'nope.h5'" "$bin" merge a.h5 nope.h5 -o x.h5
expect "error: cannot open archive 'nope.h5'" "$bin" select nope.h5 -o x.h5
expect "error: not a tilesweep shape library: 'a.h5'" "$bin" lookup a.h5 --kernel softmax --target trn1 --shape M=1,N=1
expect "error: cannot open library 'nope.h5'" "$bin" lookup nope.h5 --kernel softmax --target trn1 --shape M=1,N=1
expect "has no entry for kernel 'sofmax'; did you mean 'softmax'?" "$bin" lookup lib_ab.h5 --kernel sofmax --target trn1 --shape M=1,N=1
expect "has no entry for kernel 'softmax' on target 'trn2'" "$bin" lookup lib_ab.h5 --kernel softmax --target trn2 --shape M=1,N=1
expect "--shape" "$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape M=abc
expect "has no entry of kernel 'softmax' on trn1 (mesh 1) with dims K" "$bin" lookup lib_ab.h5 --kernel softmax --target trn1 --shape K=4
expect "is also an input" "$bin" merge a.h5 b.h5 -o a.h5
test ! -e x.h5
echo ok
