#!/usr/bin/env bash
# Axon's ablation (its Table 6: no algebraic transform, no loop fusion) on our search: per kernel
# and shape, the best candidate of the whole space against the best with the kernel as written
# (no algebra: variant v0 only) and the best with no fused nest (no fusion), both as
# `tilesweep score --json` reports them in its baselines. One TSV line per row:
#   kernel  shape  best_us  no_algebra_us  no_fusion_us  full/no_algebra  full/no_fusion
# (a ratio below 1: the ablated search is slower, as in Axon's table).
# Usage: bench/ablation.sh [build/tilesweep] [trn1] [cube|all] > ablation.tsv
#   cube: M=K=N in {2048, 4096, 8192} (gqa: M=N); all: Axon's 27 M x K x N (gqa: 9 M x N)
# Needs /usr/bin/python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tilesweep}
target=${2:-trn1}
which=${3:-cube}
sizes=(2048 4096 8192)
shapes() {  # $1: dims (MKN or MN)
  local m k n
  for m in "${sizes[@]}"; do
    if [[ $1 == MN ]]; then
      for n in "${sizes[@]}"; do
        [[ $which == cube && $m != "$n" ]] && continue
        echo "M=$m,N=$n"
      done
    else
      for k in "${sizes[@]}"; do for n in "${sizes[@]}"; do
        [[ $which == cube && ($m != "$k" || $k != "$n") ]] && continue
        echo "M=$m,K=$k,N=$n"
      done; done
    fi
  done
}
for spec in rmsnorm_matmul:MKN qkv_projection:MKN gqa:MN silu_mlp:MKN; do
  kernel=${spec%%:*}
  for shape in $(shapes "${spec##*:}"); do
    json=$("$bin" score "$root/jobs/kernels/axon/$kernel.py" --target "$target" --shape "$shape" \
      --json 2>/dev/null || echo '{}')
    echo "$json" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read() or "{}")
b = d.get("baselines", {})
def us(v):
    return "-" if v is None else "%.2f" % (v / 1000)
def ratio(v):
    return "-" if v is None or "best_ns" not in d else "%.2f" % (d["best_ns"] / v)
best = d.get("best_ns")
print(sys.argv[1], sys.argv[2], us(best), us(b.get("no_algebra_ns")), us(b.get("no_fusion_ns")),
      ratio(b.get("no_algebra_ns")), ratio(b.get("no_fusion_ns")), sep="\t")
' "$kernel" "$shape"
  done
done
