#!/usr/bin/env bash
# Fault-injection trials for `tilesweep run` (issue 23). Each kind of fault is tried N times; a
# trial holds when the run either gives the reference /best (the same job run once, idle, at
# the start) or fails cleanly — exit 2 with a message saying why, within its time limit — and
# never hangs, crashes or changes /best silently. Prints one table row per kind: trials, held,
# failed; then the reason of every failed trial. Exit 0 when every trial held.
#
#   scripts/fault_trials.sh [--trials N] [--kinds a,b] [--job FILE] [--tilesweep BIN] [--dump-best BIN]
#
# Defaults: 5 trials of every kind, tests/sweep/data/small.toml, the binaries in ./build. The
# ctest version (scripts.fault_trials) runs 1 trial of each kind on tests/sweep/data/other.toml.
#
# Kinds (one function trial_<kind> each; add a kind by writing its function and listing it in
# KINDS). A trial function gets a fresh folder; it returns 0 when the run held, else prints the
# reason and returns 1. The helpers below (run_limited, same_best, expect_clean_error) are
# what they build on.
#   sigkill     kill -9 at a random moment of the search (odd trials: the one-rank run; even:
#               every rank of a 2-rank run), then --resume on 2 ranks: the reference /best, the
#               reference row counts (no duplicates)
#   concurrent  two 2-rank runs started together on one --archive: one completes with the
#               reference /best, the other exits 2 naming the conflict
#   locked      the journal locked by another process (flock -x): 2 ranks exit 2, "in use"
#   loaded      four CPU burners while a 2-rank run works: the reference /best
#   corrupt_journal, corrupt_archive, corrupt_library, full_disk: see "storage trial kinds" below.
# A trial function may return 77: it could not run here (no tmpfs without root); it is counted as
# skipped, neither held nor failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
trials=5 kinds= job=$root/tests/sweep/data/small.toml
ts=$root/build/tilesweep dump=$root/build/tests/sweep/sweep_dump_best
KINDS=(sigkill concurrent locked loaded corrupt_journal corrupt_archive corrupt_library full_disk)
while [[ $# -gt 0 ]]; do
  case $1 in
    --trials) trials=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --job) job=$2; shift 2 ;;
    --tilesweep) ts=$2; shift 2 ;;
    --dump-best) dump=$2; shift 2 ;;
    *) echo "usage: $0 [--trials N] [--kinds a,b] [--job FILE] [--tilesweep BIN] [--dump-best BIN]" >&2; exit 2 ;;
  esac
done
[[ -n $kinds ]] && IFS=, read -r -a KINDS <<< "$kinds"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
burners=()
stop_burners() { local p; for p in "${burners[@]}"; do kill "$p" 2>/dev/null; done; burners=(); }
trap 'stop_burners; rm -rf "$tmp"' EXIT

# ---- helpers ----------------------------------------------------------------------------------
limit=300  # seconds any one run may take; a run past it is a hang
run_limited() { timeout -k 5 "$limit" "$@"; }
one_rank() { run_limited "$ts" run "$job" --quiet --archive "$@"; }
two_ranks() { run_limited mpiexec -n 2 "$ts" run "$job" --quiet --archive "$@"; }
# /best of ARCHIVE (rank- and time-independent; dump_best checks the invariants), or a failure.
best_of() { "$dump" "$1" 2>&1; }
# same_best ARCHIVE: 0 when /best and the row counts are the reference's.
same_best() {
  local got
  got=$(best_of "$1") || { echo "dump_best $1: $got"; return 1; }
  diff <(echo "$got") "$tmp/reference.best" > "$1.diff" || { echo "/best differs: $(head -5 "$1.diff")"; return 1; }
}
# expect_clean_error OUTPUT_FILE RC WANT_REGEX: the run exited 2 and said why.
expect_clean_error() {
  [[ $2 -eq 2 ]] || { echo "exit $2 (want 2): $(tail -3 "$1")"; return 1; }
  grep -qE "$3" "$1" || { echo "no message matching '$3': $(tail -3 "$1")"; return 1; }
}
journal_size() { stat -c %s "$1.journal" 2>/dev/null || echo 0; }

# ---- trial kinds ------------------------------------------------------------------------------
trial_sigkill() {
  local dir=$1 n=$2 a=$1/k.h5 pid start
  if (( n % 2 )); then
    "$ts" run "$job" --quiet --archive "$a" > "$dir/run.out" 2>&1 &
  else
    mpiexec -n 2 "$ts" run "$job" --quiet --archive "$a" > "$dir/run.out" 2>&1 &
  fi
  pid=$!
  # A random moment of the search: once the journal has grown by 0-6 KB of units, 0-0.3 s more.
  start=$(journal_size "$a")
  local grow=$((RANDOM % 6000)) pause=0.$((RANDOM % 4))
  while kill -0 $pid 2>/dev/null && [[ $(journal_size "$a") -le $((start + grow)) ]]; do sleep 0.02; done
  sleep "$pause"
  if (( n % 2 )); then kill -9 $pid 2>/dev/null; else pkill -9 -P $pid 2>/dev/null; fi
  wait $pid 2>/dev/null
  two_ranks "$a" --resume > "$dir/resume.out" 2>&1 || { echo "resume failed: $(tail -3 "$dir/resume.out")"; return 1; }
  same_best "$a"
}

trial_concurrent() {
  local dir=$1 a=$1/c.h5 p1 p2 r1 r2
  two_ranks "$a" > "$dir/c1.out" 2>&1 & p1=$!
  two_ranks "$a" > "$dir/c2.out" 2>&1 & p2=$!
  wait $p1; r1=$?
  wait $p2; r2=$?
  local codes
  codes=$(printf '%s\n' $r1 $r2 | sort | tr '\n' ' ')
  [[ $codes == "0 2 " ]] || { echo "exit codes $r1 and $r2 (want 0 and 2): $(tail -2 "$dir/c1.out" "$dir/c2.out")"; return 1; }
  local refused=$dir/c1.out
  [[ $r1 -eq 2 ]] || refused=$dir/c2.out
  expect_clean_error "$refused" 2 "error on rank 0: (journal .* is in use|another run wrote|archive .* already exists)" || return 1
  same_best "$a"
}

trial_locked() {
  local dir=$1 a=$1/l.h5 rc
  exec 9>> "$a.journal"
  flock -x 9 || { echo "cannot lock"; return 1; }
  two_ranks "$a" --resume > "$dir/l.out" 2>&1; rc=$?
  exec 9>&-
  expect_clean_error "$dir/l.out" $rc "error on rank 0: journal .* is in use by another tilesweep process"
}

trial_loaded() {
  local dir=$1 a=$1/b.h5 i
  for i in 1 2 3 4; do yes > /dev/null & burners+=($!); done
  two_ranks "$a" > "$dir/b.out" 2>&1 || { stop_burners; echo "loaded run failed: $(tail -3 "$dir/b.out")"; return 1; }
  stop_burners
  same_best "$a"
}

# ---- storage trial kinds (issue 23: damaged files, a full disk) ------------------------------
#   corrupt_journal  one random byte of the reference run's journal flipped (trial 1: in the
#                    header), then --resume (odd trials one rank, even two): the reference /best,
#                    and the run says it dropped exactly one damaged frame
#   corrupt_archive  one random byte of the reference archive flipped: `report` refuses it with
#                    exit 2 naming the file, or (a byte HDF5 never reads) prints the reference's
#                    report — never a crash, never another answer
#   corrupt_library  the same for a shape library selected from the reference, read by
#                    `lookup --nki` (the NKI source must never change silently)
#   full_disk        a tmpfs (private mount namespace) that holds the journal and the old archive
#                    but not a new one: --resume exits 2 "No space left on device" (writing the
#                    archive, or already probing its folder), the old
#                    archive unchanged, no partial file; merge -o into a full one the same.
#                    Skipped (exit 77 from the trial) where a tmpfs cannot be mounted.
random_offset() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }
flip_byte() {  # flip_byte FILE OFFSET
  /usr/bin/python3 -c 'import sys
p, o = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[o] ^= 1 << (o % 8); open(p, "wb").write(b)' "$1" "$2"
}
# refused_or_same OUT RC REFERENCE_OUT FILE: exit 2 naming FILE, or exit 0 with the reference's output.
refused_or_same() {
  if [[ $2 -eq 2 ]]; then
    grep -qE "^error: (damaged (archive|library)|truncated or corrupt HDF5 file|not a tilesweep (archive|shape library)):? '$4'" "$1" \
      || { echo "exit 2 without naming the damaged file: $(head -c 400 "$1")"; return 1; }
    return 0
  fi
  [[ $2 -eq 0 ]] || { echo "exit $2 (want 2, or 0 with the same answer): $(head -c 400 "$1")"; return 1; }
  diff -q "$1" "$3" > /dev/null || { echo "a flipped byte changed the answer silently: $(diff "$1" "$3" | head -4)"; return 1; }
}

trial_corrupt_journal() {
  local dir=$1 n=$2 a=$1/j.h5 size at rc
  cp "$tmp/reference.h5.journal" "$a.journal"
  cp "$tmp/reference.h5.proofs" "$a.proofs" 2> /dev/null
  size=$(stat -c %s "$a.journal")
  at=$(( n == 1 ? 30 : $(random_offset "$size") ))
  flip_byte "$a.journal" "$at"
  if (( n % 2 )); then one_rank "$a" --resume > "$dir/r.out" 2>&1; else two_ranks "$a" --resume > "$dir/r.out" 2>&1; fi
  rc=$?
  [[ $rc -eq 0 ]] || { echo "resume after a flip at byte $at: exit $rc: $(tail -3 "$dir/r.out")"; return 1; }
  grep -qE "dropped (1 damaged frame\(s\)|a torn last frame)" "$dir/r.out" || { echo "flip at byte $at not reported: $(tail -3 "$dir/r.out")"; return 1; }
  same_best "$a"
}

trial_corrupt_archive() {
  local dir=$1 a=$1/a.h5 rc
  cp "$tmp/reference.h5" "$a"
  "$ts" report "$a" --format csv > "$dir/ref.out" 2>&1 || { echo "report of the intact copy failed"; return 1; }
  local at; at=$(random_offset "$(stat -c %s "$a")")
  flip_byte "$a" "$at"
  run_limited "$ts" report "$a" --format csv > "$dir/bad.out" 2>&1; rc=$?
  refused_or_same "$dir/bad.out" $rc "$dir/ref.out" "$a" || { echo "(byte $at)"; return 1; }
}

trial_corrupt_library() {
  local dir=$1 lib=$1/lib.h5 rc key
  "$ts" select "$tmp/reference.h5" -o "$lib" --json "$dir/lib.json" > "$dir/select.out" 2>&1 \
    || { echo "select failed: $(tail -2 "$dir/select.out")"; return 1; }
  key=$(/usr/bin/python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["entries"][0]; print(e["kernel"], e["target"], e["shape"], e["mesh"])' "$dir/lib.json")
  read -r k t s m <<< "$key"
  local lookup=(lookup -k "$k" -t "$t" -s "$s" --mesh "$m" --nki)
  "$ts" "${lookup[@]}" "$lib" > "$dir/ref.out" 2>&1 || { echo "lookup of the intact library failed: $(tail -2 "$dir/ref.out")"; return 1; }
  local at; at=$(random_offset "$(stat -c %s "$lib")")
  flip_byte "$lib" "$at"
  run_limited "$ts" "${lookup[@]}" "$lib" > "$dir/bad.out" 2>&1; rc=$?
  refused_or_same "$dir/bad.out" $rc "$dir/ref.out" "$lib" || { echo "(byte $at)"; return 1; }
}

trial_full_disk() {
  local dir=$1
  unshare -m true 2> /dev/null || return 77
  cp "$tmp/reference.h5" "$dir/b.h5"
  unshare -m bash -s "$ts" "$job" "$tmp/reference.h5" "$dir" <<'SH'
ts=$1 job=$2 ref=$3 dir=$4 full=$4/full
mkdir -p "$full"
need=$(( $(stat -c %s "$ref.journal") + $(stat -c %s "$ref") + $(stat -c %s "$ref.proofs" 2> /dev/null || echo 0) ))
mount -t tmpfs -o size=$(( (need / 4096 + 3) * 4096 )) tmpfs "$full" 2> /dev/null || exit 77
cp "$ref" "$full/a.h5"; cp "$ref.journal" "$full/a.h5.journal"; cp "$ref.proofs" "$full/a.h5.proofs" 2> /dev/null
timeout -k 5 300 "$ts" run "$job" --quiet --resume --archive "$full/a.h5" > "$dir/r.out" 2>&1; rc=$?
[[ $rc -eq 2 ]] && grep -qE "^error: (cannot write archive '$full/a.h5'|--archive: cannot write in folder '$full'): No space left on device" "$dir/r.out" \
  || { echo "resume on a full disk: exit $rc: $(tail -3 "$dir/r.out")"; exit 1; }
cmp -s "$ref" "$full/a.h5" || { echo "the old archive changed"; exit 1; }
dd if=/dev/zero of="$full/fill" bs=4k count=100000 2> /dev/null
timeout 60 "$ts" merge "$ref" "$dir/b.h5" -o "$full/m.h5" > "$dir/m.out" 2>&1; rc=$?
[[ $rc -eq 2 ]] && grep -q "No space left on device" "$dir/m.out" || { echo "merge on a full disk: exit $rc: $(tail -3 "$dir/m.out")"; exit 1; }
left=$(ls "$full" | grep -v -x -e a.h5 -e a.h5.journal -e a.h5.proofs -e a.h5.synthesis -e fill)
[[ -z $left ]] || { echo "partial files left: $left"; exit 1; }
SH
}

# ---- driver and table -------------------------------------------------------------------------
declare -A held failed skipped
reasons=()
print_table() {
  printf '%-16s %7s %5s %7s %8s\n' kind trials held failed skipped
  local k
  for k in "${KINDS[@]}"; do
    printf '%-16s %7d %5d %7d %8d\n' "$k" $((held[$k] + failed[$k] + skipped[$k])) "${held[$k]}" "${failed[$k]}" \
      "${skipped[$k]}"
  done
  for k in "${reasons[@]}"; do echo "failed: $k"; done
}

one_rank "$tmp/reference.h5" > "$tmp/reference.out" 2>&1 || { echo "reference run failed: $(cat "$tmp/reference.out")"; exit 1; }
best_of "$tmp/reference.h5" > "$tmp/reference.best" || { echo "reference /best: $(cat "$tmp/reference.best")"; exit 1; }
for k in "${KINDS[@]}"; do
  declare -F "trial_$k" > /dev/null || { echo "unknown kind '$k' (kinds: ${KINDS[*]})"; exit 2; }
  held[$k]=0 failed[$k]=0 skipped[$k]=0
  for ((n = 1; n <= trials; n++)); do
    dir=$tmp/$k-$n
    mkdir -p "$dir"
    if why=$("trial_$k" "$dir" "$n" 2>&1); then
      held[$k]=$((held[$k] + 1))
    elif [[ $? -eq 77 ]]; then
      skipped[$k]=$((skipped[$k] + 1))
    else
      failed[$k]=$((failed[$k] + 1))
      reasons+=("$k #$n: $why")
    fi
  done
done
print_table
(( ${#reasons[@]} == 0 ))
