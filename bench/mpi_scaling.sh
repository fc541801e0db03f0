#!/usr/bin/env bash
# MPI scaling of a sweep: runs JOB at each rank count (1 thread per rank, ranks bound to cores) and
# prints, per run, the wall time, the run's prepare and search seconds and the per-rank busy time
# (bench/progress_by_rank.py). A SYNTHESIS file (an earlier run's <archive>.synthesis, same binary)
# is copied next to each archive so every run skips the ISA-synthesis searches and the rows time
# the same prepare. The /best tables of all runs must be identical (checked with `tilesweep diff`).
# Usage: bench/mpi_scaling.sh TILESWEEP JOB "RANKS..." [SYNTHESIS]
#   e.g. bench/mpi_scaling.sh build/tilesweep jobs/axon-suite.toml "16 8 12" /tmp/a.h5.synthesis
# Environment: MPIRUN (default mpiexec), TS_RANK (the command the ranks run; default TILESWEEP),
# BUDGET (seconds for all runs; a run that would not fit is skipped, one cut short is reported).
set -uo pipefail
bin=${1:?TILESWEEP}; job=${2:?JOB}; counts=${3:?RANKS}; synthesis=${4:-}
mpirun=${MPIRUN:-mpiexec}; rank=${TS_RANK:-$bin}; budget=${BUDGET:-100000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
start=$(date +%s)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0
first=
for n in $counts; do
  left=$(( budget - ($(date +%s) - start) - 10 ))
  if [ "$left" -lt 60 ]; then echo "ranks $n: skipped ($left s left)"; continue; fi
  a=$work/r$n.h5
  [ -n "$synthesis" ] && cp "$synthesis" "$a.synthesis"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  timeout -s INT "$left" $mpirun -n "$n" --bind-to core $rank run "$job" --archive "$a" --threads 1 >"$work/r$n.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "ranks $n: rc $rc, wall $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s"
  grep -E "^wrote|candidates:" "$work/r$n.log"
  [ -f "$a" ] && python3 "$here/progress_by_rank.py" "$a"
  if [ "$rc" -eq 0 ]; then
    if [ -z "$first" ]; then first=$a first_n=$n
    else echo "/best against $first_n ranks: $($rank diff "$first" "$a" 2>&1 | tail -1)"; fi
  fi
done
echo "archives and logs: $work"
