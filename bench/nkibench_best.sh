#!/usr/bin/env bash
# Best candidate per NKIBench kernel at its benchmark shape (jobs/nkibench.toml, max_block 8) on
# one target: `tilesweep score --json` per kernel, one TSV line each ("-" when it did not finish):
#   kernel  shape  best_us  candidates_scored  seconds  %roofline  %attainable
# %roofline: AccelOpt's per-core constants (sim/roofline.h); %attainable: the target's own peaks.
# Usage: bench/nkibench_best.sh [build/tilesweep] [trn1] [kernel,kernel,..] > best.tsv
# (needs /usr/bin/python3; TS_SCORE_TIMEOUT seconds per kernel, default 900)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tilesweep}
target=${2:-trn1}
only=${3:-}
/usr/bin/python3 - "$root/jobs/nkibench.toml" <<'PY' |
import sys, tomllib
job = tomllib.load(open(sys.argv[1], "rb"))
for k in job["kernel"]:
    shape = ",".join(f"{d}={v}" for d, v in k["shapes"][0].items())
    print(k["file"], shape)
PY
while read -r file shape; do
  name=$(basename "$file" .py)
  [[ -n "$only" && ",$only," != *",$name,"* ]] && continue
  json=$(timeout "${TS_SCORE_TIMEOUT:-900}" "$bin" score "$root/jobs/$file" --target "$target" --shape "$shape" --max-block 8 --json 2>/dev/null || echo '{}')
  echo "$json" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read() or "{}")
name, shape = sys.argv[1], sys.argv[2]
if "best_ns" not in d:
    print(name, shape, *["-"] * 5, sep="\t")
else:
    best = d["best_ns"]
    print(name, shape, "%.2f" % (best / 1000), d["candidates_scored"], "%.1f" % d["seconds"],
          "%.1f" % (100 * d["roofline_ns"] / best), "%.1f" % (100 * d["attainable_ns"] / best), sep="\t")
' "$name" "$shape"
done
