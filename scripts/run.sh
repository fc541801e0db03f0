#!/usr/bin/env bash
# Set-up, build, and run the main job on its embedded default: check every bundled kernel and
# evaluate each with the reference interpreter at a small shape, then print a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TILESWEEP_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target tilesweep >/dev/null
ts="$build/tilesweep"

checked=0 evaluated=0 failed=0
start=$(date +%s%N)
for f in "$root"/jobs/kernels/*/*.py; do
  rel=${f#"$root"/}
  if ! "$ts" check --quiet "$f" >/dev/null; then
    echo "FAIL check $rel"; failed=$((failed + 1)); continue
  fi
  checked=$((checked + 1))
  kernel=$(basename "$f" .py)
  if out=$("$ts" eval "$f" --kernel "$kernel" --default-dim 16 --seed 1 2>&1); then
    evaluated=$((evaluated + 1))
    printf '%-40s %s\n' "$rel" "$(echo "$out" | sed -n 2p | sed 's/^ *//')"
  else
    echo "FAIL eval $rel: $out"; failed=$((failed + 1))
  fi
done
end=$(date +%s%N)
printf '\nsummary: %d kernel files checked, %d evaluated (all dims = 16), %d failed, %d ms\n' \
  "$checked" "$evaluated" "$failed" $(( (end - start) / 1000000 ))
[[ $failed -eq 0 ]]
