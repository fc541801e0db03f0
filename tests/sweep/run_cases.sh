#!/usr/bin/env bash
# The `tilesweep run` cases, one per ctest test: run_cases.sh CASE TILESWEEP DUMP_BEST DATA_DIR
#   one_rank    a run without mpiexec writes a complete archive meeting the invariants; a
#               schema-1 copy of it (forged with h5py) reads the same
#   ranks       mpiexec -n 2 and -n 4 --oversubscribe give the same /best as one rank
#   resume      kill -9 at several moments, then --resume: same /best, no duplicate rows
#   bad_inputs  exit 2 with the message: missing job, existing archive, another job's journal
#   dry_run     the quick form (spaces, no counts, no prepare), --exact's unit table and total, no
#               file written; with <archive>.synthesis at hand the counts unasked
#   sigint      SIGINT: exit 130, a partial archive; --resume completes it
#   pids        mpiexec -n 2: <archive>.pids names both ranks; signalling them interrupts this
#               run only (another run beside it completes); --resume completes it
#   rank_error  a failure on one rank: "error on rank N: ...", the job aborts with code 2
#   locked_journal  2 ranks, the journal locked by another process (flock -x): "error on rank 0:
#               ... in use", exit 2 within the timeout (it used to hang: rank 0 in MPI_Finalize,
#               the worker in MPI_Probe)
#   concurrent  two 2-rank runs started together on one --archive: one completes (its /best is
#               the reference), the other exits 2 naming the conflict; neither hangs
#   full_disk   2 ranks, --archive on a full file system (a full 64 KiB tmpfs where mount works,
#               else a path under /proc): exit 2 with the reason, no hang
#   sigterm_unit  SIGTERM while a unit of seconds is in flight: the run stops within 5 s (exit
#               143, a partial archive keeping the finished units); --resume completes it
#   load        the same job with four CPU burners running: the identical /best
#   prune       [search] prune = false (every candidate simulated) and the default pruning give the
#               same /best (baselines and counts included) and the same /candidates rows, on 1
#               and 2 ranks, small.toml and mesh.toml; the pruned run says how many it skipped
#   mesh        data/mesh.toml (matmul on meshes "1" and "2x2"): a /best row per mesh, none
#               beating its roofline, a sharded best paying its collectives; 1 and 2 ranks
#               agree; dry run, read_archive.py, select and report show the mesh rows
set -uo pipefail
case_name=$1 ts=$2 dump=$3 data=$4
tmp=$(mktemp -d)
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

# Runs a command under a time limit: a hang is a failure, never a stuck test.
limited() { timeout -k 5 "$1" "${@:2}"; }
burners=()
stop_burners() { local p; for p in "${burners[@]}"; do kill "$p" 2>/dev/null; done; burners=(); }
trap 'stop_burners; mountpoint -q "$tmp/full" 2>/dev/null && umount "$tmp/full"; rm -rf "$tmp"' EXIT

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
  # A schema-1 archive (before meshes: no sharding / compute_ns columns) still reads, the same.
  /usr/bin/python3 - "$tmp/ref.h5" "$tmp/v1.h5" <<'PY' || fail "could not forge a schema-1 archive"
import shutil, sys
import h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    del f["meta"].attrs["checksums"]  # an older tilesweep wrote none
    f["meta"].attrs["schema_version"] = np.int64(1)
    for name, drop in (("candidates", {"sharding", "compute_ns"}),
                       ("best", {"sharding", "compute_ns", "collective_ns", "attainable_ns"}),
                       ("progress", {"sharding"})):
        t = f[name][()]
        keep = [n for n in t.dtype.names if n not in drop]
        v1 = np.empty(t.shape, dtype=[(n, t.dtype[n]) for n in keep])
        for n in keep:
            v1[n] = t[n]
        del f[name]
        f.create_dataset(name, data=v1, maxshape=(None,), chunks=True)
PY
  diff "$tmp/ref.txt" <(best "$tmp/v1.h5") || fail "the schema-1 copy reads differently"
  /usr/bin/python3 "$(dirname "$0")/../../scripts/read_archive.py" "$tmp/v1.h5" > "$tmp/py1.txt" || fail "read_archive.py v1: $(cat "$tmp/py1.txt")"
  diff <(grep -v '^archive:\|schema' "$tmp/py.txt") <(grep -v '^archive:\|schema' "$tmp/py1.txt") || fail "read_archive.py reads the schema-1 copy differently"
  "$ts" report "$tmp/v1.h5" > /dev/null 2>&1 || fail "report of a schema-1 archive"
  ;;
prune)
  # /candidates without the rank and unit columns (who scored a row), in archive order.
  rows() { /usr/bin/python3 - "$1" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    t = f["candidates"][()]
    names = [n for n in t.dtype.names if n not in ("rank", "unit")]
    for r in t:
        print(" ".join(str(r[n]) for n in names))
PY
  }
  for j in small mesh; do
    job=$data/$j.toml
    { cat "$job"; grep -q '^\[search\]' "$job" || echo '[search]'; } > "$tmp/$j-off.toml"
    sed -i 's/^\[search\]$/[search]\nprune = false/' "$tmp/$j-off.toml"
    sed -i "s#\.\./\.\./\.\./#$(cd "$data/../../.." && pwd)/#" "$tmp/$j-off.toml"
    "$ts" run "$tmp/$j-off.toml" --quiet --archive "$tmp/$j-off.h5" > "$tmp/$j-off.out" 2>&1 ||
      fail "$j prune = false: $(cat "$tmp/$j-off.out")"
    grep -q ' 0 pruned' "$tmp/$j-off.out" || fail "$j prune = false pruned: $(cat "$tmp/$j-off.out")"
    sweep "$tmp/$j-on.h5" > "$tmp/$j-on.out" 2>&1 || fail "$j pruned: $(cat "$tmp/$j-on.out")"
    grep -qE ' [1-9][0-9]* pruned' "$tmp/$j-on.out" || fail "$j: nothing pruned: $(cat "$tmp/$j-on.out")"
    mpi_sweep 2 "$tmp/$j-on2.h5" > "$tmp/$j-on2.out" 2>&1 || fail "$j 2 ranks: $(cat "$tmp/$j-on2.out")"
    grep "pruned" "$tmp/$j-on.out" > "$tmp/$j-on.count"
    grep "pruned" "$tmp/$j-on2.out" | diff "$tmp/$j-on.count" - || fail "$j: 2 ranks prune other counts"
    "$dump" "$tmp/$j-off.h5" > "$tmp/$j-off.best" || fail "dump_best $j off"
    for on in on on2; do
      "$dump" "$tmp/$j-$on.h5" > "$tmp/$j-$on.best" || fail "dump_best $j $on"
      diff "$tmp/$j-off.best" "$tmp/$j-$on.best" || fail "$j: /best with pruning ($on) differs"
      diff <(rows "$tmp/$j-off.h5") <(rows "$tmp/$j-$on.h5") || fail "$j: /candidates with pruning ($on) differ"
    done
  done
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
  # A job whose [output] folder cannot be written still runs with --archive elsewhere, and its
  # dry run writes nothing; without either the [output] folder is refused (regression).
  unwritable=$data/../../jobs/unwritable_archive.toml
  expect_error "cannot create its folder '/proc/tilesweep'" "$ts" run "$unwritable" --quiet
  "$ts" run "$unwritable" --dry-run > "$tmp/u.out" 2>&1 || fail "dry run of a job with an unwritable [output]: $(cat "$tmp/u.out")"
  "$ts" run "$unwritable" --quiet --archive "$tmp/u.h5" > "$tmp/u.out" 2>&1 || fail "--archive did not override [output]: $(cat "$tmp/u.out")"
  [[ -s $tmp/u.h5 ]] || fail "no archive at --archive"
  ;;
check)
  # check_samples: the best 2 kept rows of every (kernel, target, shape) run by the functional
  # interpreter against the reference; every one passes and is marked in /candidates.
  sed -e 's|^keep = .*|keep = "top:4"\ncheck_samples = 2|' -e 's|^shapes = { M = \[256, 1024\], N = \[256, 2048\] }|shapes = { M = 256, N = 512 }|' \
      -e 's|^shapes = { M = \[256, 1024, 4096\], N = \[256, 2048\] }|shapes = { M = 256, N = [256, 512] }|' \
      -e "s|\.\./\.\./\.\./jobs|$(cd "$data/../../.." && pwd)/jobs|" "$job" > "$tmp/check.toml"
  "$ts" run "$tmp/check.toml" --quiet --archive "$tmp/c.h5" > "$tmp/c.out" 2>&1 || fail "check run: $(cat "$tmp/c.out")"
  grep -qE '^checked 6 candidates against the reference interpreter: 6 pass, 0 mismatch$' "$tmp/c.out" ||
    fail "want 6 checked, all passing: $(cat "$tmp/c.out")"
  /usr/bin/python3 - "$tmp/c.h5" <<'PY' || fail "the check column does not say 6 passes"
import sys
import h5py
c = h5py.File(sys.argv[1], "r")["candidates"][()]
assert sorted(c["check"].tolist()).count(1) == 6 and 0 not in c["check"].tolist(), c["check"]
PY
  ;;
dry_run)
  # The quick form (no proof, no synthesis): the spaces from the job alone, no counts.
  "$ts" run "$job" --dry-run --archive "$tmp/d.h5" > "$tmp/q.out" 2>&1 || fail "quick dry run: $(cat "$tmp/q.out")"
  grep -qE '^rmsnorm +trn1 +M=1024,N=2048 +1 +-$' "$tmp/q.out" || fail "no quick rmsnorm row: $(cat "$tmp/q.out")"
  grep -qE '^total: 10 spaces \(kernel, target, shape, mesh, sharding\) of 10 .*; [0-9]+ distinct ISA synthesis queries' \
    "$tmp/q.out" || fail "no quick total: $(cat "$tmp/q.out")"
  grep -qF 'candidates and work units: not counted' "$tmp/q.out" || fail "the quick form does not say what it skips"
  ! grep -q '^prepare ' "$tmp/q.out" || fail "the quick dry run ran the prepare: $(cat "$tmp/q.out")"
  expect_error "--exact requires --dry-run" "$ts" run "$job" --exact --archive "$tmp/d.h5"
  "$ts" run "$job" --dry-run --exact --archive "$tmp/d.h5" > "$tmp/d.out" 2>&1 || fail "dry run: $(cat "$tmp/d.out")"
  grep -qE '^rmsnorm +trn1 +M=1024,N=2048 +1 +- +[0-9]+ +[0-9]+$' "$tmp/d.out" || fail "no rmsnorm row: $(cat "$tmp/d.out")"
  grep -qE '^softmax +trn1 +M=4096,N=2048 +1 +- +[0-9]+ +[0-9]+$' "$tmp/d.out" || fail "no softmax row"
  grep -qE '^total: [0-9]+ candidates in [0-9]+ units over 10 ' "$tmp/d.out" || fail "no total: $(cat "$tmp/d.out")"
  [[ ! -e $tmp/d.h5 && ! -e $tmp/d.h5.journal && ! -e $tmp/d.h5.synthesis ]] || fail "dry run wrote files"
  # With an earlier run's synthesis records at hand the exact form is quick, and taken unasked.
  sweep "$tmp/d.h5" > /dev/null 2>&1 || fail "run"
  "$ts" run "$job" --dry-run --archive "$tmp/d.h5" > "$tmp/d2.out" 2>&1 || fail "dry run after a run: $(cat "$tmp/d2.out")"
  grep -qE '^total: [0-9]+ candidates in [0-9]+ units over 10 ' "$tmp/d2.out" || fail "no counts with records at hand: $(cat "$tmp/d2.out")"
  ;;
pids)
  # `<archive>.pids` names this run's ranks (2 under mpiexec): signalling them interrupts this
  # run (a partial archive, --resume completes it) and leaves another run on the node alone.
  # (A job whose search lasts seconds: small.toml's ended before the pids could be signalled.)
  job=$data/pids.toml
  a=$tmp/p.h5
  "$ts" run "$job" --quiet --archive "$tmp/other.h5" > "$tmp/other.out" 2>&1 &
  other=$!
  mpiexec -n 2 --oversubscribe "$ts" run "$job" --archive "$a" > "$tmp/p.out" 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null && [[ ! -s $a.pids ]]; do sleep 0.02; done
  [[ -s $a.pids ]] || fail "no $a.pids: $(cat "$tmp/p.out")"
  [[ $(wc -l < "$a.pids") -eq 2 ]] || fail "want 2 ranks in the pids file: $(cat "$a.pids")"
  pids=$(cut -d' ' -f3 "$a.pids")
  for p in $pids; do
    tr '\0' ' ' < /proc/$p/cmdline | grep -qF "run $job --archive $a" || fail "pid $p is not a rank of this run"
  done
  [[ $(cut -d' ' -f1 "$a.pids" | tr '\n' ' ') == "0 1 " ]] || fail "ranks not in order: $(cat "$a.pids")"
  # The line reaches p.out through mpiexec's output forwarding, which may lag the pids file under
  # load (it failed once that way): wait for it, up to 60 s.
  line="2 rank(s); to interrupt this run (a partial archive, continue with --resume): kill -INT $(echo $pids)"
  for _ in $(seq 3000); do grep -qF "$line" "$tmp/p.out" && break; sleep 0.02; done
  grep -qF "$line" "$tmp/p.out" || fail "no interrupt line naming the pids: $(cat "$tmp/p.out")"
  kill -INT $pids
  wait $pid; rc=$?
  [[ $rc -ne 0 ]] || grep -q '(complete)' "$tmp/p.out" || fail "exit 0 without a complete archive: $(cat "$tmp/p.out")"
  [[ ! -e $a.pids ]] || fail "the pids file outlived the run"
  "$dump" "$a" > "$tmp/p.best" 2>&1
  grep -qE '^status (partial|complete)$' "$tmp/p.best" || fail "no archive after the interrupt: $(cat "$tmp/p.best")"
  "$ts" run "$job" --quiet --resume --archive "$a" > "$tmp/p2.out" 2>&1 || fail "resume: $(cat "$tmp/p2.out")"
  grep -q '(complete)' "$tmp/p2.out" || fail "resume did not complete: $(cat "$tmp/p2.out")"
  wait $other || fail "the other run was disturbed: $(cat "$tmp/other.out")"
  grep -q '(complete)' "$tmp/other.out" || fail "the other run did not complete: $(cat "$tmp/other.out")"
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
locked_journal)
  # This shell holds the lock (on its own open file): the run opens the file anew and is refused.
  exec 9>> "$tmp/l.h5.journal"
  flock -x 9 || fail "cannot lock the journal"
  expect_error "error on rank 0: journal '$tmp/l.h5.journal' is in use by another tilesweep process" \
    limited 120 mpiexec -n 2 --oversubscribe "$ts" run "$job" --quiet --resume --archive "$tmp/l.h5"
  exec 9>&-
  [[ ! -e $tmp/l.h5 ]] || fail "a refused run wrote an archive"
  ;;
concurrent)
  reference
  a=$tmp/c.h5
  limited 180 mpiexec -n 2 --oversubscribe "$ts" run "$job" --quiet --archive "$a" > "$tmp/c1.out" 2>&1 &
  p1=$!
  limited 180 mpiexec -n 2 --oversubscribe "$ts" run "$job" --quiet --archive "$a" > "$tmp/c2.out" 2>&1 &
  p2=$!
  wait $p1; r1=$?
  wait $p2; r2=$?
  [[ $(printf '%s\n' $r1 $r2 | sort | tr '\n' ' ') == "0 2 " ]] ||
    fail "want one run to succeed and one to exit 2, got $r1 and $r2: $(cat "$tmp/c1.out" "$tmp/c2.out")"
  # grep reads the files itself: `cat | grep -q` under pipefail fails when grep exits before cat
  # has written everything (SIGPIPE), a flaky failure seen once in CI.
  grep -qE "error on rank 0: (journal .* is in use by another tilesweep process|another run wrote|archive .* already exists)" \
    "$tmp/c1.out" "$tmp/c2.out" ||
    fail "the refused run does not say why: $(cat "$tmp/c1.out" "$tmp/c2.out")"
  diff "$tmp/ref.txt" <(best "$a") || fail "/best of the run that went through differs from the reference"
  ;;
full_disk)
  mkdir -p "$tmp/full"
  if mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
    head -c 1M /dev/zero > "$tmp/full/filler" 2>/dev/null  # fills it: ENOSPC from here on
    a=$tmp/full/out/a.h5 want="No space left on device"
  else
    echo "note: cannot mount a tmpfs here; an unwritable path under /proc stands in for a full disk"
    a=/proc/self/tilesweep-test/a.h5 want="cannot create folder"
  fi
  expect_error "$want" limited 120 mpiexec -n 2 --oversubscribe "$ts" run "$job" --quiet --archive "$a"
  grep -q "error on rank 0: --archive: " "$tmp/err.out" || fail "no rank error: $(cat "$tmp/err.out")"
  ;;
sigterm_unit)
  job=$data/long_unit.toml
  a=$tmp/t.h5
  "$ts" run "$job" --quiet --archive "$a" > "$tmp/t.out" 2>&1 &
  pid=$!
  # The journal's header lands after the prepare; the two small units (~0.1 s) follow, then
  # the long units (seconds each) are in flight.
  while kill -0 $pid 2>/dev/null && [[ $(stat -c %s "$a.journal" 2>/dev/null || echo 0) -eq 0 ]]; do sleep 0.05; done
  sleep 1.5
  kill -0 $pid 2>/dev/null || fail "the run ended before the long unit: $(cat "$tmp/t.out")"
  start=$(date +%s.%N)
  kill -TERM $pid
  wait $pid; rc=$?
  took=$(echo "$(date +%s.%N) - $start" | bc)
  [[ $rc -eq 143 ]] || fail "exit $rc after SIGTERM (want 143): $(cat "$tmp/t.out")"
  # 5 s on an idle machine; on a loaded one (other tests, builds) the bound scales with the
  # one-minute load per core, so that contention alone does not fail it.
  cores=$(nproc) load=$(cut -d' ' -f1 /proc/loadavg)
  bound=$(echo "scale=1; f = $load / $cores; if (f < 1) f = 1; 5 * f" | bc)
  (( $(echo "$took < $bound" | bc) )) ||
    fail "the run took $took s to stop after SIGTERM (bound $bound s at load $load on $cores cores)"
  grep -q 'interrupted by signal 15' "$tmp/t.out" || fail "no interruption message: $(cat "$tmp/t.out")"
  "$dump" "$a" > "$tmp/t.best" 2>&1
  grep -q '^status partial$' "$tmp/t.best" || fail "the archive is not partial: $(cat "$tmp/t.best")"
  grep -qE '^matmul trn1 M=256,K=256,N=256 1 idx=[0-9]+ ' "$tmp/t.best" || fail "the finished units were lost: $(cat "$tmp/t.best")"
  "$ts" run "$job" --quiet --resume --archive "$a" > "$tmp/t2.out" 2>&1 || fail "resume: $(cat "$tmp/t2.out")"
  # Every unit done, however many the job's candidates make (a new search dimension adds some).
  grep -qE ': ([0-9]+) of \1 units' "$tmp/t2.out" || fail "resume did not complete: $(cat "$tmp/t2.out")"
  # The prime shapes' candidates all run into the simulator's budget: the run says so.
  grep -qF 'warning: 2 (kernel, target, shape, mesh) have no feasible candidate' "$tmp/t2.out" ||
    fail "no warning about the shapes without a feasible candidate: $(cat "$tmp/t2.out")"
  ;;
load)
  job=$data/other.toml  # one small shape: the prepare, where budgets decide, is most of the run
  reference
  for i in 1 2 3 4; do yes > /dev/null & burners+=($!); done
  sweep "$tmp/load.h5" > "$tmp/load.out" 2>&1 || fail "loaded run: $(cat "$tmp/load.out")"
  stop_burners
  diff "$tmp/ref.txt" <(best "$tmp/load.h5") || fail "/best under load differs from the idle run's"
  ;;
mesh)
  job=$data/mesh.toml
  "$ts" run "$job" --dry-run --exact --archive "$tmp/md.h5" > "$tmp/md.out" 2>&1 || fail "mesh dry run: $(cat "$tmp/md.out")"
  grep -qE '^job sweep-mesh-test .* mesh 1, 2x2 \(torus topology\)' "$tmp/md.out" || fail "dry run header: $(cat "$tmp/md.out")"
  grep -qE '^matmul +trn1 +M=128,K=8192,N=128 +1 +- +[0-9]+ +[0-9]+$' "$tmp/md.out" || fail "no mesh-1 row: $(cat "$tmp/md.out")"
  grep -qE '^matmul +trn1 +M=128,K=8192,N=128 +2x2 +K:x\*y\+rs +[0-9]+ +[0-9]+ +M=128,K=2048,N=128$' "$tmp/md.out" ||
    fail "no K:x*y+rs row with its local shape: $(cat "$tmp/md.out")"
  grep -qE '^total: [0-9]+ candidates in [0-9]+ units over [0-9]+ spaces .* of 4 ' "$tmp/md.out" || fail "dry run total"
  reference
  rows=$(grep -c '^matmul ' "$tmp/ref.txt")
  [[ $rows -eq 4 ]] || fail "want 4 /best rows (2 shapes x meshes 1, 2x2): $(cat "$tmp/ref.txt")"
  for shape in M=128,K=8192,N=128 M=512,K=512,N=512; do
    grep -qE "^matmul trn1 $shape 1 idx=[0-9]+ shard=- " "$tmp/ref.txt" || fail "no mesh-1 row for $shape"
    grep -qE "^matmul trn1 $shape 2x2 idx=[0-9]+ shard=[^- ]" "$tmp/ref.txt" || fail "no sharded 2x2 row for $shape"
  done
  # dump_best checks latency >= roofline and latency = compute + collectives; here the long-K
  # shape's best splits K and pays an all-reduce or reduce-scatter.
  grep -E '^matmul trn1 M=128,K=8192,N=128 2x2 idx=[0-9]+ shard=[^ ]*K:' "$tmp/ref.txt" |
    grep -qvE ' coll=0\.000000 ' || fail "the long-K 2x2 best pays no collective: $(cat "$tmp/ref.txt")"
  # The mesh spreads the work: its best beats one device's on both shapes.
  /usr/bin/python3 - "$tmp/ref.txt" <<'PY' || fail "2x2 not faster than one device: $(cat "$tmp/ref.txt")"
import re, sys
lat = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "matmul":
        lat[(f[2], f[3])] = float(re.search(r" lat=([0-9.]+)", line).group(1))
for shape in ("M=128,K=8192,N=128", "M=512,K=512,N=512"):
    assert lat[(shape, "2x2")] < lat[(shape, "1")], shape
PY
  mpi_sweep 2 "$tmp/r2.h5" > "$tmp/r2.out" 2>&1 || fail "2 ranks: $(cat "$tmp/r2.out")"
  diff "$tmp/ref.txt" <(best "$tmp/r2.h5") || fail "/best of 2 ranks differs from 1 rank"
  /usr/bin/python3 "$(dirname "$0")/../../scripts/read_archive.py" "$tmp/ref.h5" > "$tmp/py.txt" || fail "read_archive.py"
  grep -qE 'matmul +trn1 +M=128,K=8192,N=128 +2x2 +K:' "$tmp/py.txt" || fail "read_archive.py lacks the sharding: $(cat "$tmp/py.txt")"
  "$ts" select "$tmp/ref.h5" --output "$tmp/lib.h5" > "$tmp/sel.out" 2>&1 || fail "select: $(cat "$tmp/sel.out")"
  "$ts" lookup "$tmp/lib.h5" --kernel matmul --target trn1 --shape M=512,K=512,N=512 --mesh 2x2 > "$tmp/lk.out" 2>&1 ||
    fail "lookup --mesh 2x2: $(cat "$tmp/lk.out")"
  grep -qE '^  entry: matmul trn1 M=512,K=512,N=512 mesh 2x2, sharding ' "$tmp/lk.out" ||
    fail "lookup shows no sharding: $(cat "$tmp/lk.out")"
  /usr/bin/python3 - "$tmp/lib.h5" "$tmp/ref.txt" <<'PY' || fail "the library's shardings differ from /best's"
import sys
import h5py
want = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "matmul":
        want[(f[2], f[3])] = f[5].removeprefix("shard=").replace("-", "")
e = h5py.File(sys.argv[1], "r")["entries"][()]
got = {(r["shape"].decode(), r["mesh"].decode()): r["sharding"].decode() for r in e}
assert got == want, (got, want)
PY
  "$ts" report "$tmp/ref.h5" > "$tmp/rep.out" 2>&1 || fail "report: $(cat "$tmp/rep.out")"
  grep -q '2x2' "$tmp/rep.out" || fail "report shows no mesh row: $(cat "$tmp/rep.out")"
  # Mesh entries get NKI source: the per-device kernel at the sharding's local shape.
  "$ts" select "$tmp/ref.h5" --output "$tmp/lib2.h5" --nki-dir "$tmp/nki" > "$tmp/sel2.out" 2>&1 ||
    fail "select --nki-dir: $(cat "$tmp/sel2.out")"
  [[ $(ls "$tmp"/nki/*.py | wc -l) -eq 4 ]] || fail "want 4 NKI files: $(ls "$tmp/nki") $(cat "$tmp/sel2.out")"
  grep -l 'per-device kernel of M=128,K=8192,N=128 on mesh 2x2 with sharding K:' "$tmp"/nki/*.py > /dev/null ||
    fail "no per-device NKI kernel for the long-K 2x2 entry"
  for f in "$tmp"/nki/*.py; do /usr/bin/python3 -m py_compile "$f" || fail "NKI source does not compile: $f"; done
  ;;
*) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
