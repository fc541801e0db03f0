#!/usr/bin/env bash
# Re-runs the calibration set through `tilesweep time`: bench/calibration/run.sh [BUILD_DIR] [TARGET]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
exec /usr/bin/python3 "$here/run.py" "$build/tilesweep" "${2:-trn1}"
