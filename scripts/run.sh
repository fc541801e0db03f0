#!/usr/bin/env bash
# Set-up, build, and run the main job: the quick sweep (jobs/quick.toml) on two MPI ranks, then a
# summary of its archive's /best table. Starts over each time (removes the old archive and its
# journal); set TILESWEEP_RANKS to change the rank count.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TILESWEEP_BUILD_DIR:-$root/build}
ranks=${TILESWEEP_RANKS:-2}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target tilesweep >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$root"
archive=results/quick.h5
rm -f "$archive" "$archive.journal"
start=$(date +%s%N)
mpiexec -n "$ranks" --oversubscribe "$build/tilesweep" run jobs/quick.toml --archive "$archive"
end=$(date +%s%N)
echo
/usr/bin/python3 scripts/read_archive.py "$archive"
printf '\nsummary: %s written by %d ranks in %d ms\n' "$archive" "$ranks" $(( (end - start) / 1000000 ))
