#!/usr/bin/env bash
# Online-softmax rows (issue 19): per (kernel, shape) one search with every candidate listed
# (`tilesweep score --threads 1 --top 1000000 --json`), one TSV line each:
#   kernel  shape  best_without_online_us  best_us  attainable_us  %attainable_before  %after
#   form_after (W: the key tile)  online_candidates  candidates  seconds
# The online tilings only add candidates, so "without online" is the space before them.
# Usage: bench/online_rows.sh [build/tilesweep] [trn2] "file shape" ... > rows.tsv
# (needs /usr/bin/python3; TS_SCORE_TIMEOUT seconds per search, default 900)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tilesweep}
target=${2:-trn2}
shift 2 || true
for run in "$@"; do
  read -r file shape <<<"$run"
  json=$(timeout "${TS_SCORE_TIMEOUT:-900}" "$bin" score "$root/jobs/kernels/$file" --target "$target" \
    --shape "$shape" --threads 1 --top 1000000 --json 2>/dev/null || echo '{}')
  echo "$json" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read() or "{}")
name, shape = sys.argv[1], sys.argv[2]
if not d.get("top"):
    print(name, shape, *["-"] * 9, sep="\t")
    sys.exit()
top = d["top"]
plain = [c for c in top if " online=" not in c["config"]]
att = d["attainable_ns"] / 1000
def form(c):
    cfg = c["config"]
    return (("fused" if " fused " in cfg else "unfused") + ("+stream" if " stream" in cfg else "")
            + ("+online W=" + cfg.split(" online=")[1].split()[0] if " online=" in cfg else ""))
before = plain[0]["latency_ns"] / 1000 if plain else float("nan")
after = top[0]["latency_ns"] / 1000
print(name, shape, "%.2f" % before, "%.2f" % after, "%.2f" % att, "%.1f" % (100 * att / before),
      "%.1f" % (100 * att / after), form(top[0]), len(top) - len(plain), d["candidates_scored"],
      "%.1f" % d["seconds"], sep="\t")' "$(basename "$file" .py)" "$shape"
done
