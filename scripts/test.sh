#!/usr/bin/env bash
# Set-up, configure, build and run the default test suite (every ctest label except `slow`).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TILESWEEP_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build"
# Every test runs once: a flaky test is a bug to fix, not to rerun.
ctest --output-on-failure -j "${TILESWEEP_JOBS:-2}" -LE slow "$@"
