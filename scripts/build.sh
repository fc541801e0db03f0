#!/usr/bin/env bash
# Configures and builds tilesweep in ./build (or $TILESWEEP_BUILD_DIR). Used by test.sh and run.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TILESWEEP_BUILD_DIR:-$root/build}
jobs=${TILESWEEP_JOBS:-$(nproc 2>/dev/null || echo 2)}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$jobs" "$@"
