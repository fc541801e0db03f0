#!/usr/bin/env bash
# scripts/read_archive.py reads an archive the store wrote (row counts, status, /best) and
# refuses a file that is not an archive with exit 2.
set -eu
writer=$1 script=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$writer" "$tmp/a.h5" 1234
# The /best table is printed by pandas when it is installed, else by the script's own aligner:
# check the cells, not the spacing, and run both ways whatever this machine has (a stub pandas
# that right-aligns its columns stands in for the real one; a stub that fails to import hides it).
mkdir -p "$tmp/no_pandas/pandas" "$tmp/stub_pandas/pandas"
echo 'raise ImportError("hidden by the test")' > "$tmp/no_pandas/pandas/__init__.py"
cat > "$tmp/stub_pandas/pandas/__init__.py" <<'PY'
class DataFrame:
    def __init__(self, rows, columns):
        self.rows = [list(columns)] + [list(r) for r in rows]
    def to_string(self, index=True):
        w = [max(len(str(r[i])) for r in self.rows) for i in range(len(self.rows[0]))]
        return "\n".join(" ".join(str(c).rjust(n) for c, n in zip(r, w)) for r in self.rows)
PY
for pandas in installed none stub; do
  case $pandas in
    installed) path=${PYTHONPATH:-} ;;
    none) path=$tmp/no_pandas ;;
    stub) path=$tmp/stub_pandas ;;
  esac
  PYTHONPATH=$path /usr/bin/python3 "$script" "$tmp/a.h5" > "$tmp/out.txt"
  cat "$tmp/out.txt"
  for want in "status: complete" "candidates: 1234 rows" "best: 6 rows" "proofs: 5 rows" "progress: 4 rows"; do
    grep -qF -- "$want" "$tmp/out.txt" || { echo "missing in output (pandas: $pandas): $want"; exit 1; }
  done
  for cells in 'rmsnorm_matmul +trn1( |$)' 'M=1024,K=512,N=2048( |$)'; do
    grep -qE -- "(^| )$cells" "$tmp/out.txt" || { echo "missing in /best (pandas: $pandas): $cells"; exit 1; }
  done
done
echo "not an archive" > "$tmp/b.h5"
rc=0
/usr/bin/python3 "$script" "$tmp/b.h5" 2> "$tmp/err.txt" || rc=$?
cat "$tmp/err.txt"
test "$rc" = 2 || { echo "expected exit 2 for a non-archive, got $rc"; exit 1; }
grep -qF "error: not a tilesweep archive: '$tmp/b.h5' is not an HDF5 file" "$tmp/err.txt"
# A truncated archive is refused the same way.
head -c 5000 "$tmp/a.h5" > "$tmp/c.h5"
rc=0
/usr/bin/python3 "$script" "$tmp/c.h5" 2> "$tmp/err.txt" || rc=$?
cat "$tmp/err.txt"
test "$rc" = 2 && grep -qF "error: truncated or corrupt HDF5 file: '$tmp/c.h5'" "$tmp/err.txt"
# As a library: decoded text (fixed and variable-length columns), NaN, bools, meta maps.
/usr/bin/python3 - "$script" "$tmp/a.h5" <<'PY'
import importlib.util, math, sys
spec = importlib.util.spec_from_file_location("read_archive", sys.argv[1])
ra = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ra)
meta, t = ra.load(sys.argv[2])
c = t["candidates"]
assert len(c) == 1234 and c[5]["reason"] == "x" * 3000, c[5]["reason"][:20]
assert c[3]["feasible"] == False and math.isnan(c[3]["latency_ns"]) and c[3]["reason"].startswith("SBUF overflow")
assert c[0]["kernel"] == "rmsnorm_matmul" and c[0]["busy_dma_ns"] == 1e9
assert meta["targets"]["trn2"] == "" and meta["phase_seconds"]["prove"] == 1.5 and meta["ranks"] == 4
assert [p["verdict"] for p in t["proofs"]][:3] == ["equivalent", "not equivalent", "unknown"]
PY
echo "read_archive.py: ok"
