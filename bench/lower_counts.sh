#!/usr/bin/env bash
# Candidate counts per stage for every suite kernel at one mid-size shape (every dim = $DIM,
# default 1024) on a target (default trn1): `tilesweep lower` per kernel, as a markdown table.
# Usage: bench/lower_counts.sh [build/tilesweep] [trn1] [1024]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tilesweep}
target=${2:-trn1}
dim=${3:-1024}
echo "| suite | kernel | variants | instruction choices | tile configs | feasible candidates | seconds | no program for |"
echo "|---|---|---|---|---|---|---|---|"
for f in "$root"/jobs/kernels/axon/*.py "$root"/jobs/kernels/nkibench/*.py; do
  dims=$("$bin" check "$f" 2>/dev/null | grep -m1 '^  dims:' | sed 's/^  dims: //; s/ //g' | tr ',' '\n' | sed "s/$/=$dim/" | paste -sd, -)
  start=$(date +%s.%N)
  out=$("$bin" lower "$f" --target "$target" --shape "$dims" 2>&1 || true)
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  v=$(echo "$out" | sed -n 's/^  variants: \([0-9]*\) proved.*/\1/p')
  ic=$(echo "$out" | sed -n 's/^  instruction choices: \([0-9]*\).*/\1/p')
  tc=$(echo "$out" | sed -n 's/^  tile configs: \([0-9]*\).*/\1/p')
  c=$(echo "$out" | sed -n 's/^  candidates: \([0-9]*\).*/\1/p')
  why=$(echo "$out" | grep -m1 'no program:' | sed 's/^  no program: //; s/|/\\|/g' | cut -c1-90 || true)
  [[ -z "$v" ]] && why=$(echo "$out" | head -1 | cut -c1-90)
  printf '| %s | %s | %s | %s | %s | %s | %.1f | %s |\n' "$(basename "$(dirname "$f")")" "$(basename "$f" .py)" "${v:--}" "${ic:--}" "${tc:--}" "${c:--}" "$secs" "$why"
done
