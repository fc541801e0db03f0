#!/usr/bin/env bash
# Instructions per candidate of two builds of bench_candidates, counted by callgrind: the same
# candidates in both (fixed iterations), only CandidateSpace::materialize (Materialize) or
# CandidateCursor::at (Enumerate) counted, after the fixture's proofs.
# Usage: bench/count_instructions.sh BEFORE_BINARY AFTER_BINARY [BENCHMARK ...]
#   (default benchmarks: Materialize/0 Materialize/1 Enumerate/0 Enumerate/1; needs valgrind)
set -euo pipefail
before=$1 after=$2
shift 2
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(Materialize/0 Materialize/1 Enumerate/0 Enumerate/1)
command -v valgrind >/dev/null || { echo "count_instructions: needs valgrind (apt install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() {  # binary benchmark -> instructions
  local fn='*CandidateSpace::materialize*'
  [[ $2 == Enumerate* ]] && fn='*CandidateCursor::at*'
  valgrind --tool=callgrind --instr-atstart=no --toggle-collect="$fn" \
    --callgrind-out-file="$out/cg" "$1" --benchmark_filter="^$2/" >/dev/null 2>&1
  callgrind_annotate "$out/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
printf '%-16s %14s %14s %8s\n' benchmark before after change
for b in "${benches[@]}"; do
  x=$(count "$before" "$b") y=$(count "$after" "$b")
  awk -v b="$b" -v x="$x" -v y="$y" 'BEGIN { printf "%-16s %14d %14d %+7.1f%%\n", b, x, y, 100 * (y - x) / x }'
done
