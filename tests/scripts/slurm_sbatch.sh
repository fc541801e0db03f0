#!/usr/bin/env bash
# scripts/slurm/sweep.sbatch without a cluster: a stand-in `srun` starts the ranks with mpiexec.
# The first submission is cut off by SIGTERM mid-search (as Slurm does at the time limit);
# resubmitting the same command resumes it; /best then equals a one-rank run's.
#   slurm_sbatch.sh REPO TILESWEEP DUMP_BEST
set -uo pipefail
repo=$1 ts=$2 dump=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
job=$repo/tests/scripts/data/slurm.toml
fail() { echo "FAIL: $*"; exit 1; }

mkdir "$tmp/bin"
cat > "$tmp/bin/srun" <<'SRUN'
#!/usr/bin/env bash
# Slurm's options are dropped; the ranks run on this machine. With $CUT_WHEN set: SIGTERM once
# that file (the journal) is non-empty, i.e. mid-search.
args=()
for a in "$@"; do [[ $a == --kill-on-bad-exit* ]] || args+=("$a"); done
[[ -z ${CUT_WHEN:-} ]] && exec mpiexec -n 2 --oversubscribe "${args[@]}"
mpiexec -n 2 --oversubscribe "${args[@]}" &
pid=$!
for _ in $(seq 1200); do [[ -s $CUT_WHEN ]] && break; kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
pkill -TERM -P "$pid"  # Slurm signals the tasks themselves (mpiexec would kill them after 1 s)
wait "$pid"
SRUN
chmod +x "$tmp/bin/srun"
submit() { PATH="$tmp/bin:$PATH" TILESWEEP_BIN=$ts SLURM_CPUS_PER_TASK=1 bash "$repo/scripts/slurm/sweep.sbatch" \
             "$job" --archive "$tmp/a.h5" --quiet; }

"$ts" run "$job" --quiet --threads 1 --archive "$tmp/ref.h5" > "$tmp/ref.out" 2>&1 || fail "reference run: $(cat "$tmp/ref.out")"
"$dump" "$tmp/ref.h5" | grep -v '^candidates' > "$tmp/ref.txt" || fail "dump_best ref"

CUT_WHEN=$tmp/a.h5.journal submit > "$tmp/first.out" 2>&1
[[ -f $tmp/a.h5.journal ]] || fail "the first submission left no journal: $(cat "$tmp/first.out")"
grep -q '(partial)' "$tmp/first.out" || fail "the first submission was not cut off: $(cat "$tmp/first.out")"
submit > "$tmp/second.out" 2>&1 || fail "resubmission: $(cat "$tmp/second.out")"
grep -q 'complete' "$tmp/second.out" || fail "resubmission did not complete: $(cat "$tmp/second.out")"
"$dump" "$tmp/a.h5" | grep -v '^candidates' > "$tmp/a.txt" || fail "dump_best: $(cat "$tmp/a.txt")"
diff "$tmp/ref.txt" "$tmp/a.txt" > "$tmp/diff.txt" || fail "/best differs from the one-rank run: $(cat "$tmp/diff.txt")"
echo "ok: $(head -1 "$tmp/first.out" | cut -c1-120) / resumed: $(tail -1 "$tmp/second.out" | cut -c1-120)"
