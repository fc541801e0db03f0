#!/usr/bin/env bash
# The `tilesweep run` cases, one per ctest test: run_cases.sh CASE TILESWEEP DUMP_BEST DATA_DIR
#   one_rank    a run without mpiexec writes a complete archive meeting the invariants
#   ranks       mpiexec -n 2 and -n 4 --oversubscribe give the same /best as one rank
#   resume      kill -9 at several moments, then --resume: same /best, no duplicate rows
#   bad_inputs  exit 2 with the message: missing job, existing archive, another job's journal
#   dry_run     the unit table and the total, no archive written
#   sigint      SIGINT: exit 130, a partial archive; --resume completes it
#   rank_error  a failure on one rank: "error on rank N: ...", the job aborts with code 2
set -uo pipefail
case_name=$1 ts=$2 dump=$3 data=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
job=$data/small.toml
fail() { echo "FAIL: $*"; exit 1; }

# run_ok ARCHIVE [mpiexec args...] -- [run args...]: a run that must succeed.
sweep() { "$ts" run "$job" --quiet --archive "$@"; }
mpi_sweep() { local n=$1; shift; mpiexec -n "$n" --oversubscribe "$ts" run "$job" --quiet --archive "$@"; }
best() { "$dump" "$1" > "$1.best" || fail "dump_best $1: $(cat "$1.best")"; grep -v '^candidates' "$1.best"; }

reference() {
  sweep "$tmp/ref.h5" > "$tmp/ref.out" 2>&1 || fail "one-rank run: $(cat "$tmp/ref.out")"
  best "$tmp/ref.h5" > "$tmp/ref.txt"
  grep -q '^status complete$' "$tmp/ref.txt" || fail "status not complete"
}

expect_error() {  # expect_error MESSAGE_PART COMMAND...
  local want=$1; shift
  "$@" > "$tmp/err.out" 2>&1; local rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc (want 2) from $*: $(cat "$tmp/err.out")"
  grep -qF -- "$want" "$tmp/err.out" || fail "message lacks '$want': $(cat "$tmp/err.out")"
}

case $case_name in
one_rank)
  reference
  [[ $(grep -c ' 1 idx=' "$tmp/ref.txt") -eq 10 ]] || fail "want 10 /best rows: $(cat "$tmp/ref.txt")"
  /usr/bin/python3 "$(dirname "$0")/../../scripts/read_archive.py" "$tmp/ref.h5" > "$tmp/py.txt" || fail "read_archive.py"
  grep -q 'status: complete' "$tmp/py.txt" || fail "read_archive.py: $(cat "$tmp/py.txt")"
  ;;
ranks)
  reference
  for n in 2 4; do
    mpi_sweep $n "$tmp/r$n.h5" > "$tmp/r$n.out" 2>&1 || fail "$n ranks: $(cat "$tmp/r$n.out")"
    best "$tmp/r$n.h5" > "$tmp/r$n.txt"
    diff "$tmp/ref.txt" "$tmp/r$n.txt" || fail "/best of $n ranks differs from 1 rank"
  done
  "$ts" run "$job" --quiet --threads 1 --archive "$tmp/t1.h5" > /dev/null 2>&1 || fail "--threads 1"
  diff "$tmp/ref.txt" <(best "$tmp/t1.h5") || fail "/best with --threads 1 differs"
  ;;
resume)
  reference
  a=$tmp/killed.h5
  # Kill -9 once before the search and then at several moments of it: each time after the
  # journal has grown (units landed), plus a delay, so kills land mid-search.
  for delay in prepare 0 0.1 0.2; do
    if [[ -f $a.journal ]]; then flag=--resume; else flag=; fi
    "$ts" run "$job" --quiet $flag --archive "$a" > /dev/null 2>&1 &
    pid=$!
    if [[ $delay == prepare ]]; then
      sleep 0.5
    else
      start=$(stat -c %s "$a.journal" 2>/dev/null || echo 0)
      while kill -0 $pid 2>/dev/null && [[ $(stat -c %s "$a.journal" 2>/dev/null || echo 0) -le $((start + 2000)) ]]; do
        sleep 0.02
      done
      sleep $delay
    fi
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
  done
  [[ -f $a.journal ]] || fail "no journal after the killed runs"
  # Finish with two ranks.
  mpi_sweep 2 "$a" --resume > "$tmp/res.out" 2>&1 || fail "resume: $(cat "$tmp/res.out")"
  best "$a" > "$tmp/res.txt"
  diff "$tmp/ref.txt" "$tmp/res.txt" || fail "/best after kill -9 and --resume differs"
  diff <(grep '^candidates' "$tmp/ref.h5.best") <(grep '^candidates' "$a.best") || fail "row counts differ"
  # Resuming a complete run redoes nothing and changes nothing.
  sweep "$a" --resume > "$tmp/res2.out" 2>&1 || fail "second resume: $(cat "$tmp/res2.out")"
  diff "$tmp/ref.txt" <(best "$a") || fail "/best after a second --resume differs"
  ;;
bad_inputs)
  expect_error "cannot open '$tmp/nope.toml'" "$ts" run "$tmp/nope.toml"
  sweep "$tmp/a.h5" > /dev/null 2>&1 || fail "first run"
  expect_error "already exists; use --resume" sweep "$tmp/a.h5"
  expect_error "belongs to a different job" "$ts" run "$data/other.toml" --quiet --resume --archive "$tmp/a.h5"
  expect_error "already exists; use --resume" mpiexec -n 2 --oversubscribe "$ts" run "$job" --archive "$tmp/a.h5"
  ;;
dry_run)
  "$ts" run "$job" --dry-run --archive "$tmp/d.h5" > "$tmp/d.out" 2>&1 || fail "dry run: $(cat "$tmp/d.out")"
  grep -qE '^rmsnorm +trn1 +M=1024,N=2048 +[0-9]+ +[0-9]+$' "$tmp/d.out" || fail "no rmsnorm row: $(cat "$tmp/d.out")"
  grep -qE '^softmax +trn1 +M=4096,N=2048 +[0-9]+ +[0-9]+$' "$tmp/d.out" || fail "no softmax row"
  grep -qE '^total: [0-9]+ candidates in [0-9]+ units over 10 ' "$tmp/d.out" || fail "no total: $(cat "$tmp/d.out")"
  [[ ! -e $tmp/d.h5 && ! -e $tmp/d.h5.journal ]] || fail "dry run wrote files"
  ;;
sigint)
  reference
  a=$tmp/int.h5
  "$ts" run "$job" --quiet --archive "$a" > "$tmp/int.out" 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null && [[ $(stat -c %s "$a.journal" 2>/dev/null || echo 0) -le 3000 ]]; do sleep 0.02; done
  kill -INT $pid
  wait $pid; rc=$?
  [[ $rc -eq 130 ]] || fail "exit $rc after SIGINT (want 130): $(cat "$tmp/int.out")"
  grep -q 'interrupted by signal 2' "$tmp/int.out" || fail "no interruption message: $(cat "$tmp/int.out")"
  { "$dump" "$a" 2>/dev/null || true; } | grep -q '^status partial$' || fail "the archive is not partial"
  sweep "$a" --resume > "$tmp/int2.out" 2>&1 || fail "resume after SIGINT: $(cat "$tmp/int2.out")"
  diff "$tmp/ref.txt" <(best "$a") || fail "/best after SIGINT and --resume differs"
  ;;
rank_error)
  TILESWEEP_FAIL_UNIT=1 mpiexec -n 2 --oversubscribe "$ts" run "$job" --quiet --archive "$tmp/e.h5" > "$tmp/e.out" 2>&1
  rc=$?
  [[ $rc -ne 0 ]] || fail "a failing unit did not fail the run"
  grep -qE 'error on rank [01]: injected failure in unit 1' "$tmp/e.out" || fail "no rank error: $(cat "$tmp/e.out")"
  [[ ! -e $tmp/e.h5 ]] || fail "an aborted run wrote an archive"
  ;;
*) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
