#!/usr/bin/env bash
# Attention-shaped kernels at their benchmark shapes and at 16K / 32K keys (issue 19, split
# reductions): `tilesweep score --json --threads 1` per (kernel, shape), one TSV line each:
#   kernel  shape  best_us  attainable_us  %attainable  form  candidates  seconds
# form: fused / unfused, "+stream" when the best streams a reduction along free tiles, "+online"
# when it streams a matmul's row with the online softmax's corrections ("-" in every column when
# the search did not finish or found no program).
# Usage: bench/long_rows.sh [build/tilesweep] [trn2] > long_rows.tsv
# (needs /usr/bin/python3; TS_SCORE_TIMEOUT seconds per search, default 900)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tilesweep}
target=${2:-trn2}
runs=(
  "axon/softmax.py M=4096,N=4096"
  "axon/softmax.py M=4096,N=16384"
  "axon/softmax.py M=4096,N=32768"
  "axon/softmax_matmul.py M=4096,K=4096,N=4096"
  "axon/softmax_matmul.py M=4096,K=16384,N=128"
  "axon/softmax_matmul.py M=4096,K=32768,N=128"
  "nkibench/bmm_softmax.py B=16,M=4096,K=64,N=4096"
  "nkibench/bmm_softmax.py B=16,M=4096,K=64,N=16384"
  "nkibench/bmm_softmax.py B=16,M=4096,K=64,N=32768"
  "axon/gqa.py M=4096,N=4096"
  "axon/gqa.py M=4096,N=16384"
  "axon/gqa.py M=4096,N=32768"
  "nkibench/gqa.py B=1,N=4096"
  "nkibench/gqa.py B=1,N=16384"
  "nkibench/gqa.py B=1,N=32768"
)
for run in "${runs[@]}"; do
  read -r file shape <<<"$run"
  json=$(timeout "${TS_SCORE_TIMEOUT:-900}" "$bin" score "$root/jobs/kernels/$file" --target "$target" \
    --shape "$shape" --threads 1 --top 1 --json 2>/dev/null || echo '{}')
  echo "$json" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read() or "{}")
name, shape = sys.argv[1], sys.argv[2]
if not d.get("top"):
    print(name, shape, *["-"] * 6, sep="\t")
else:
    best = d["top"][0]
    config = best["config"]
    form = (("fused" if " fused " in config else "unfused") + ("+stream" if " stream" in config else "")
            + ("+online" if " online=" in config else ""))
    print(name, shape, "%.2f" % (d["best_ns"] / 1000), "%.2f" % (d["attainable_ns"] / 1000),
          "%.1f" % best["percent_of_attainable"], form, d["candidates_scored"], "%.1f" % d["seconds"],
          sep="\t")' "$(basename "$file" .py)" "$shape"
done
